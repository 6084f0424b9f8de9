// End-to-end tests of `export --what qk-attribution`: the CSV's table sums to the score `compute --layer N` writes
// in scores.npy (Gemma 2: to the score before its soft-cap), each row and column total is its entries' sum, and
// bad cells exit 2 naming the valid range, leaving no file.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

struct Csv {
  std::vector<std::string> header;               // "query part \ key part", key labels…, "total"
  std::vector<std::string> rows;                 // query labels…, "total"
  std::vector<std::vector<double>> values;       // [rows][columns] (the totals included)
};

Csv read_csv(const fs::path& p) {
  Csv csv;
  std::istringstream in(read_file(p, 1 << 24));
  std::string line;
  const auto split = [](const std::string& s) {
    std::vector<std::string> cells;
    std::stringstream ss(s);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    return cells;
  };
  std::getline(in, line);
  csv.header = split(line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells = split(line);
    csv.rows.push_back(cells.front());
    std::vector<double> v;
    for (size_t c = 1; c < cells.size(); ++c) v.push_back(std::stod(cells[c]));
    csv.values.push_back(std::move(v));
  }
  return csv;
}

void check_refused(const std::string& args, const std::string& message, const fs::path& out) {
  CAPTURE(args);
  const CliRun r = run_cli(args);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "error: "));
  CHECK(contains(r.err, message));
  CHECK(count_files(out) == 0);
}

}  // namespace

TEST_CASE("cli qk-attribution: the CSV's table sums to the score compute writes") {
  for (const std::string name : {"qwen2_gqa", "gpt2_prefix_f32", "deepseek_v2_mla_moe_bf16", "gemma2_softcap_f32"}) {
    INFO(name);
    const fs::path out = fresh_dir("cli_qk_" + name);
    const auto ids = fixture_ids(name);
    const int T = int(ids.size()), layer = 1, i = T - 1, j = T - 3;
    const auto config = nlohmann::json::parse(read_file(model_fixture(name) / "config.json", 1 << 20));
    const int heads = config.value("num_attention_heads", config.value("n_head", 0));
    const int h = heads - 1;
    const std::string base = "--checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids);
    CliRun r = run_cli("compute " + base + " --layer " + std::to_string(layer) + " --out " + quoted(out / "run"));
    REQUIRE(r.exit_code == 0);
    const NpyArray scores = read_npy(out / "run" / "scores.npy");
    const double drawn = scores.data[size_t((int64_t(h) * T + i) * T + j)];
    r = run_cli("export " + base + " --what qk-attribution --layer " + std::to_string(layer) + " --head " +
                std::to_string(h) + " --query " + std::to_string(i) + " --key " + std::to_string(j) +
                " --format csv --out " + quoted(out / "why.csv"));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "QK attribution of layer 1 head " + std::to_string(h)));
    const Csv csv = read_csv(out / "why.csv");
    REQUIRE(csv.header.size() >= 3);
    CHECK(csv.header.front() == "query part \\ key part");
    CHECK(csv.header.back() == "total");
    CHECK(csv.rows.front() == "embedding");
    CHECK(csv.rows.back() == "total");
    CHECK(csv.header[1] == "embedding");
    CHECK(std::find(csv.rows.begin(), csv.rows.end(), "L0.H0 attn") != csv.rows.end());
    CHECK(std::find(csv.rows.begin(), csv.rows.end(), "L0 MLP") != csv.rows.end());
    const size_t columns = csv.header.size() - 1;  // the key parts and the total
    double sum = 0;
    for (size_t p = 0; p + 1 < csv.rows.size(); ++p) {
      REQUIRE(csv.values[p].size() == columns);
      double row = 0;
      for (size_t c = 0; c + 1 < columns; ++c) row += csv.values[p][c];
      CHECK(std::abs(row - csv.values[p].back()) <= 1e-6 * std::max(1.0, std::abs(row)));
      sum += row;
    }
    const double total = csv.values.back().back();
    CHECK(std::abs(sum - total) <= 1e-6 * std::max(1.0, std::abs(sum)));
    const double cap = config.value("attn_logit_softcapping", 0.0);
    const double score = cap > 0 ? std::tanh(total / cap) * cap : total;
    INFO("total " << total << ", compute's score " << drawn);
    CHECK(std::abs(score - drawn) <= 1e-4 * std::max(1e-2, std::abs(drawn)));
    CHECK(contains(r.out, "before the soft-cap") == (cap > 0));
    // the printed largest entry is the CSV's entry of largest size
    double largest = 0;
    size_t lp = 0, lk = 0;
    for (size_t p = 0; p + 1 < csv.rows.size(); ++p)
      for (size_t c = 0; c + 1 < columns; ++c)
        if (std::abs(csv.values[p][c]) > std::abs(largest)) largest = csv.values[p][c], lp = p, lk = c;
    CHECK(contains(r.out, "largest (query part x key part): " + csv.rows[lp] + " x " + csv.header[lk + 1] + " "));
  }
}

TEST_CASE("cli qk-attribution: bad cells exit 2 naming the valid range") {
  const fs::path none = fresh_dir("cli_qk_refused");
  const auto ids = fixture_ids("qwen2_gqa");  // 12 tokens, 2 layers, 4 heads
  const std::string base = "export --checkpoint " + quoted(model_fixture("qwen2_gqa")) + " --ids " + ids_arg(ids) +
                           " --what qk-attribution --format csv --out " + quoted(none / "a.csv");
  check_refused(base + " --layer 1 --head 4 --query 5 --key 2", "head 4 is outside layer 1: its heads are 0 to 3", none);
  check_refused(base + " --layer 1 --head 0 --query 12 --key 2", "query 12 is outside the input: its positions are 0 to 11", none);
  check_refused(base + " --layer 1 --head 0 --query 5 --key 7", "key 7 is not seen by query 5 in layer 1: it sees keys 0 to 5", none);
  check_refused(base + " --layer 2 --head 0 --query 5 --key 2", "layer", none);
  check_refused(base + " --layer 1 --head 0 --key 2", "--query is missing", none);
  check_refused(base + " --layer 1 --head 0 --query x --key 2", "--query is the query's token position", none);
  check_refused("export --checkpoint " + quoted(model_fixture("qwen2_gqa")) + " --ids " + ids_arg(ids) +
                    " --what qk-attribution --layer 1 --head 0 --query 5 --key 2 --format npy --out " + quoted(none / "a.npy"),
                "--format csv", none);
  check_refused("export --checkpoint " + quoted(model_fixture("qwen2_gqa")) + " --ids " + ids_arg(ids) +
                    " --what heads --layer 1 --head 0 --format csv --out " + quoted(none / "h.csv"),
                "--head applies to --what qk-attribution", none);
  const auto next = fixture_ids("qwen3_next_f32");
  check_refused("export --checkpoint " + quoted(model_fixture("qwen3_next_f32")) + " --ids " + ids_arg(next) +
                    " --what qk-attribution --layer 0 --head 0 --query 5 --key 2 --format csv --out " + quoted(none / "b.csv"),
                "layer 0 is a Gated DeltaNet layer: it has no softmax scores", none);
  const fs::path dir = model_fixture("precomputed");
  check_refused("export --attentions " + quoted(dir / "attentions.npy") + " --tokens " + quoted(dir / "tokens.json") +
                    " --what qk-attribution --layer 1 --head 0 --query 5 --key 2 --format csv --out " + quoted(none / "c.csv"),
                "needs --checkpoint DIR", none);
}

TEST_CASE("cli qk-attribution: with --ablate the table splits the ablated pass's score") {
  const std::string name = "gpt2_prefix_f32";  // 2 layers of 4 heads
  const fs::path out = fresh_dir("cli_qk_ablate");
  const auto ids = fixture_ids(name);
  const int T = int(ids.size()), i = T - 1, j = 1;
  const std::string base = "--checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids) + " --ablate 0.1,0.3";
  CliRun r = run_cli("compute " + base + " --layer 1 --out " + quoted(out / "run"));
  REQUIRE(r.exit_code == 0);
  const NpyArray scores = read_npy(out / "run" / "scores.npy");  // the ablated pass's scores
  const double drawn = scores.data[size_t((int64_t(2) * T + i) * T + j)];
  r = run_cli("export " + base + " --what qk-attribution --layer 1 --head 2 --query " + std::to_string(i) +
              " --key " + std::to_string(j) + " --format csv --out " + quoted(out / "why.csv"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Csv csv = read_csv(out / "why.csv");
  const double total = csv.values.back().back();
  CHECK(std::abs(total - drawn) <= 1e-4 * std::max(1.0, std::abs(drawn)));
  // the switched-off heads' rows and columns are zeros (their outputs were replaced by zeros)
  for (size_t r2 = 0; r2 < csv.rows.size(); ++r2)
    for (size_t c = 0; c + 1 < csv.header.size(); ++c) {
      const bool off = csv.rows[r2].rfind("L0.H1 ", 0) == 0 || csv.rows[r2].rfind("L0.H3 ", 0) == 0 ||
                       csv.header[c + 1].rfind("L0.H1 ", 0) == 0 || csv.header[c + 1].rfind("L0.H3 ", 0) == 0;
      if (off) CHECK(csv.values[r2][c] == 0.0);
    }
  // and the score differs from the intact model's
  r = run_cli("compute --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids) + " --layer 1 --out " +
              quoted(out / "intact"));
  REQUIRE(r.exit_code == 0);
  const NpyArray intact = read_npy(out / "intact" / "scores.npy");
  CHECK(std::abs(intact.data[size_t((int64_t(2) * T + i) * T + j)] - drawn) > 1e-4);
}
