// `attnscope export --query-set I,J,… | --key-set I,J,… [--set-reduce sum|mean]` (token_set.h): each head gets
// one more row (queries: the selected rows summed or averaged over the keys) or column (keys: each query's
// attention to the selected keys), equal to the sum or mean of the plain export's rows or columns; bad sets
// exit 2 naming the valid tokens, and leave no file behind. The figure draws the strip, labelled.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "attnscope/io/npy.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {
const std::string scene = "--text " + shell_quote("The cat sat on the mat.") + " --kind gqa --heads 4 --groups 2 --causal";

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("cli export token set: the extra row or column is the sum or mean of the plain export's rows or columns") {
  const fs::path dir = fresh_dir("cli_export_token_set_ok");
  const fs::path all = dir / "all.npy";
  REQUIRE(run_cli("export --what heads --format npy " + scene + " --out " + shell_quote(all.string())).exit_code == 0);
  const NpyArray whole = read_npy(all);
  REQUIRE(whole.shape == std::vector<int64_t>{4, 7, 7});
  auto at = [&](int h, int i, int j) { return double(whole.data[size_t((h * 7 + i) * 7 + j)]); };
  for (const std::string reduce : {"sum", "mean"}) {
    CAPTURE(reduce);
    const double n = reduce == "mean" ? 3.0 : 1.0;
    const fs::path q = dir / ("q_" + reduce + ".npy"), k = dir / ("k_" + reduce + ".npy");
    CliRun r = run_cli("export --what heads --format npy --query-set 6,2,4 --set-reduce " + reduce + " " + scene + " --out " +
                       shell_quote(q.string()));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    r = run_cli("export --what heads --format npy --key-set 0,1,2 --set-reduce " + reduce + " " + scene + " --out " +
                shell_quote(k.string()));
    REQUIRE(r.exit_code == 0);
    const NpyArray rows = read_npy(q), cols = read_npy(k);
    REQUIRE(rows.shape == std::vector<int64_t>{4, 8, 7});
    REQUIRE(cols.shape == std::vector<int64_t>{4, 7, 8});
    for (int h = 0; h < 4; ++h)
      for (int t = 0; t < 7; ++t) {
        for (int j = 0; j < 7; ++j) CHECK(rows.data[size_t((h * 8 + t) * 7 + j)] == float(at(h, t, j)));  // the heads unchanged
        CHECK(rows.data[size_t((h * 8 + 7) * 7 + t)] == doctest::Approx((at(h, 2, t) + at(h, 4, t) + at(h, 6, t)) / n).epsilon(1e-6));
        CHECK(cols.data[size_t((h * 7 + t) * 8 + 7)] == doctest::Approx((at(h, t, 0) + at(h, t, 1) + at(h, t, 2)) / n).epsilon(1e-6));
      }
  }
  // CSV: the row is labelled with the set, and the figure draws its strip with that label and the caption names it.
  const fs::path csv = dir / "q.csv", svg = dir / "q.svg";
  REQUIRE(run_cli("export --what head:1 --format csv --query-set 2,4 " + scene + " --out " + shell_quote(csv.string())).exit_code == 0);
  CHECK(read_text(csv).find("\"Σ of 2 queries (2, 4)\"") != std::string::npos);
  REQUIRE(run_cli("export --what heads --format svg --key-set 1,3 --set-reduce mean " + scene + " --out " + shell_quote(svg.string()))
              .exit_code == 0);
  CHECK(read_text(svg).find("mean of 2 keys") != std::string::npos);
  const fs::path zh = dir / "zh.svg";
  REQUIRE(run_cli("export --what heads --format svg --language zh --query-set 1,3 " + scene + " --out " + shell_quote(zh.string()))
              .exit_code == 0);
  CHECK(read_text(zh).find("2 个查询之和 Σ") != std::string::npos);
}

TEST_CASE("cli export token set: bad sets exit 2 naming the valid tokens, and write nothing") {
  const fs::path dir = fresh_dir("cli_export_token_set_bad");
  struct Case {
    std::string flags, says;
  };
  const Case cases[] = {
      {"--what heads --query-set 3,7", "--query-set: token 7 is outside this input of 7 tokens: valid tokens 0-6"},
      {"--what head:0 --key-set 99", "--key-set: token 99 is outside this input of 7 tokens: valid tokens 0-6"},
      {"--what heads --query-set 1,,2", "token numbers from 0 separated by commas"},
      {"--what heads --query-set=-1", "token numbers from 0 separated by commas"},
      {"--what heads --query-set a", "token numbers from 0 separated by commas"},
      {"--what heads --query-set 1 --key-set 2", "give one of them"},
      {"--what heads --query-set 1 --set-reduce max", "--set-reduce takes sum or mean"},
      {"--what heads --set-reduce mean", "give --query-set or --key-set"},
      {"--what relpos --query-set 1", "applies to --what heads, head:N, model or rollout"},
      {"--what qk-attribution --key-set 1", "apply to --what heads, head:N or rollout"},
      {"--what heads --every-query", "--every-query goes with --what rollout"},
  };
  for (const Case& c : cases) {
    const fs::path out = dir / "x.png";
    const CliRun r = run_cli("export " + c.flags + " --format png " + scene + " --out " + shell_quote(out.string()));
    INFO(c.flags << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("cli export token set: --what model carries the set under (or right of) every layer's heads") {
  // Attentions computed elsewhere (the precomputed fixture): [L, H, T, T] read back from the plain export.
  const fs::path dir = fresh_dir("cli_export_token_set_model");
  const fs::path fixture = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models/precomputed";
  const std::string model = "export --attentions " + shell_quote((fixture / "attentions.npy").string()) + " --tokens " +
                            shell_quote((fixture / "tokens.json").string()) + " --config " +
                            shell_quote((fixture / "config.json").string()) + " --what model";
  const fs::path all = dir / "all.npy";
  CliRun r = run_cli(model + " --format npy --out " + shell_quote(all.string()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const NpyArray whole = read_npy(all, 4);
  REQUIRE(whole.shape.size() == 4);
  const int L = int(whole.shape[0]), H = int(whole.shape[1]), T = int(whole.shape[2]);
  REQUIRE(T >= 4);
  auto at = [&](int l, int h, int i, int j) { return double(whole.data[size_t(((l * H + h) * T + i) * T + j)]); };
  for (const std::string reduce : {"sum", "mean"}) {
    CAPTURE(reduce);
    const double n = reduce == "mean" ? 2.0 : 1.0;
    const fs::path q = dir / ("q_" + reduce + ".npy"), k = dir / ("k_" + reduce + ".npy");
    r = run_cli(model + " --format npy --query-set 3,1 --set-reduce " + reduce + " --out " + shell_quote(q.string()));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    r = run_cli(model + " --format npy --key-set 0,2 --set-reduce " + reduce + " --out " + shell_quote(k.string()));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const NpyArray rows = read_npy(q, 4), cols = read_npy(k, 4);
    REQUIRE(rows.shape == std::vector<int64_t>{L, H, T + 1, T});
    REQUIRE(cols.shape == std::vector<int64_t>{L, H, T, T + 1});
    int compared = 0;
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t, ++compared) {
          for (int j = 0; j < T; ++j) CHECK(rows.data[size_t(((l * H + h) * (T + 1) + t) * T + j)] == float(at(l, h, t, j)));
          CHECK(rows.data[size_t(((l * H + h) * (T + 1) + T) * T + t)] ==
                doctest::Approx((at(l, h, 1, t) + at(l, h, 3, t)) / n).epsilon(1e-6));
          CHECK(cols.data[size_t(((l * H + h) * T + t) * (T + 1) + T)] ==
                doctest::Approx((at(l, h, t, 0) + at(l, h, t, 2)) / n).epsilon(1e-6));
        }
    CHECK(compared == L * H * T);
  }
  // The figure: every thumbnail one row taller (the caption names the set); a token past the input exits 2.
  const fs::path svg = dir / "q.svg", bad = dir / "bad.png";
  r = run_cli(model + " --format svg --query-set 1,3 --set-reduce mean --out " + shell_quote(svg.string()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(read_text(svg).find("mean of 2 queries: 1, 3") != std::string::npos);
  r = run_cli(model + " --format png --key-set " + std::to_string(T) + " --out " + shell_quote(bad.string()));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--key-set: token " + std::to_string(T) + " is outside this input of " + std::to_string(T) + " tokens") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(bad));
}
