// compute/export --checkpoint --long (issue 38 item 6, model/head_maps.h): an input beyond the stack's 2048 tokens
// runs with each head computed on demand; compute writes one head's map, export its pooled overview (the engine's
// numbers, bit for bit); --text-file reads the input; bad values exit 2 naming what is valid.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "attnscope/core/limits.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/forward.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

// gpt-oss's fixture takes 131072 positions, has a tokenizer, sinks and a window of 8 on layer 0.
const std::string fixture = "gpt_oss_dequantized_bf16";

// The ids in a file as `--ids $(cat …)` would take them: written to a file, passed through the shell.
std::string ids_file_arg(const std::vector<int32_t>& ids, const std::string& name) {
  const fs::path p = fresh_dir("cli_long_ids") / name;
  write_file_atomic(p, ids_arg(ids));
  return "\"$(cat " + quoted(p) + ")\"";
}

}  // namespace

TEST_CASE("cli long: compute --long writes one head's map beyond the stack's limit, the engine's bits") {
  const int T = limits::max_tokens + 52;
  const std::vector<int32_t> ids = long_fixture_ids(T);
  const std::string base = "compute --checkpoint " + quoted(model_fixture(fixture)) + " --ids " + ids_file_arg(ids, "a.txt");
  // Without --long the stack's limit refuses it.
  const fs::path refused = fresh_dir("cli_long_refused");
  const CliRun stack = run_cli(base + " --out " + quoted(refused));
  CHECK(stack.exit_code == 2);
  CHECK(contains(stack.err, "attnscope's limit is " + std::to_string(limits::max_tokens)));
  const fs::path out = fresh_dir("cli_long_compute");
  const CliRun r = run_cli(base + " --long --layer 1 --head 2 --out " + quoted(out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, std::to_string(T) + " tokens, attention per head on demand"));
  CHECK(!fs::exists(out / "attentions.npy"));
  const NpyArray head = read_npy(out / "head.npy");
  REQUIRE(head.shape == std::vector<int64_t>{T, T});
  const auto m = model::open(model_fixture(fixture));
  model::ForwardOptions o;
  o.keep = model::AttentionKeep::on_demand;
  const model::ForwardResult f = model::forward(*m, ids, o);
  const Mat expected = f.head_maps->head(1, 2);
  CHECK(std::memcmp(head.data.data(), expected.data(), size_t(T) * T * sizeof(float)) == 0);
  const auto model_json = nlohmann::json::parse(read_file(out / "model.json", 1 << 20));
  CHECK(model_json["kept_bytes"].get<int64_t>() == f.head_maps->kept_bytes());
  const auto tokens = nlohmann::json::parse(read_file(out / "tokens.json", 1 << 24));
  CHECK(tokens["ids"].size() == size_t(T));
}

TEST_CASE("cli long: export --long --what head:N writes the pooled overview, named by its pooling") {
  const int T = limits::max_tokens + 100;
  const std::vector<int32_t> ids = long_fixture_ids(T);
  const std::string base = "export --checkpoint " + quoted(model_fixture(fixture)) + " --ids " +
                           ids_file_arg(ids, "b.txt") + " --long --layer 0 --what head:3";
  const auto m = model::open(model_fixture(fixture));
  model::ForwardOptions o;
  o.keep = model::AttentionKeep::on_demand;
  const model::ForwardResult f = model::forward(*m, ids, o);
  for (const char* pool : {"max", "mean"}) {
    CAPTURE(pool);
    const fs::path dir = fresh_dir(std::string("cli_long_export_") + pool);
    const CliRun r = run_cli(base + " --pool " + pool + " --pixels 64 --format npy --out " + quoted(dir / "o.npy"));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const model::PooledMap p = model::pool_head(*f.head_maps, 0, 3, model::parse_pooling(pool, "pool"), 64);
    CHECK(contains(r.out, p.label()));
    const NpyArray a = read_npy(dir / "o.npy");
    REQUIRE(a.shape == std::vector<int64_t>{p.rows, p.cols});
    int differing = 0;
    for (int i = 0; i < p.rows; ++i)
      for (int j = 0; j < p.cols; ++j) {
        const float v = a.data[size_t(i) * size_t(p.cols) + size_t(j)];
        if (p.is_masked(i, j) ? !std::isnan(v) : v != p.values(i, j)) ++differing;
      }
    CHECK(differing == 0);
  }
  for (const char* format : {"png", "svg", "csv"}) {
    CAPTURE(format);
    const fs::path file = fresh_dir(std::string("cli_long_fig_") + format) / (std::string("o.") + format);
    const CliRun r = run_cli(base + " --pixels 256 --format " + format + " --out " + quoted(file));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(fs::file_size(file) > 0);
    if (std::string(format) == "svg") CHECK(contains(read_file(file, 1 << 26), "max-pooled 9\u00d79"));
  }
  // Chinese titles
  const fs::path zh = fresh_dir("cli_long_zh") / "o.svg";
  const CliRun r = run_cli(base + " --pixels 256 --format svg --language zh --out " + quoted(zh));
  CHECK(r.exit_code == 0);
  CHECK(contains(read_file(zh, 1 << 26), "9×9 最大池化"));
}

TEST_CASE("cli long: --text-file reads the input through the checkpoint's tokenizer") {
  const fs::path dir = fresh_dir("cli_long_text");
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sat on the mat. ";
  write_file_atomic(dir / "page.txt", text);
  const CliRun r = run_cli("export --checkpoint " + quoted(model_fixture(fixture)) + " --text-file " +
                           quoted(dir / "page.txt") + " --long --layer 1 --what head:0 --format npy --out " +
                           quoted(dir / "o.npy"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const CliRun same = run_cli("export --checkpoint " + quoted(model_fixture(fixture)) + " --text " + shell_quote(text) +
                              " --long --layer 1 --what head:0 --format npy --out " + quoted(dir / "p.npy"));
  REQUIRE(same.exit_code == 0);
  CHECK(read_file(dir / "o.npy", 1 << 26) == read_file(dir / "p.npy", 1 << 26));
}

TEST_CASE("cli long: bad values exit 2 naming what is valid") {
  const fs::path dir = fresh_dir("cli_long_bad");
  const std::string ck = "--checkpoint " + quoted(model_fixture(fixture)) + " --ids 1,2,3,4,5";
  const std::string ex = "export " + ck + " --long --format npy --out " + quoted(dir / "o.npy");
  struct Bad {
    std::string args, message;
  };
  const std::vector<Bad> bad{
      {ex + " --what head:0 --layer 0 --pool median", "--pool takes max or mean, got 'median'"},
      {ex + " --what head:0 --layer 0 --pixels 0", "--pixels must be at least 1, got 0"},
      {ex + " --what head:0 --layer 2", "--layer 2 does not exist: the model has 2 layers (0–1)"},
      {ex + " --what head:0", "give the layer of the head with --layer N"},
      {ex + " --what head:4 --layer 0", "head 4 does not exist: layer 0 has 4 heads (0–3)"},
      {ex + " --what conv --layer 0", "with --long, --what is head:N"},
      {ex + " --what head:0 --layer 0 --ablate 0.1", "--ablate needs every layer's attention at once"},
      {"export " + ck + " --what heads --layer 0 --pool max --format npy --out " + quoted(dir / "o.npy"),
       "--pool goes with --long"},
      {"export --text hi --what heads --pixels 5 --format npy --out " + quoted(dir / "o.npy"),
       "--pixels goes with a checkpoint's long input"},
      {"compute --text hi --long --out " + quoted(dir / "c"), "--long goes with a checkpoint's long input"},
      {"compute " + ck + " --long --layer 0 --out " + quoted(dir / "c"), "--layer and --head go together"},
      {"compute " + ck + " --long --layer 0 --head 7 --out " + quoted(dir / "c"), "head 7 does not exist"},
      {"compute " + ck + " --long --rollout --out " + quoted(dir / "c"), "--rollout needs every layer's attention"},
      {"compute " + ck + " --head 1 --layer 0 --out " + quoted(dir / "c"), "--head goes with --long"},
      {"compute --checkpoint " + quoted(model_fixture(fixture)) + " --text-file " + quoted(dir / "missing.txt") +
           " --long --out " + quoted(dir / "c"),
       "missing.txt"},
      {"compute --checkpoint " + quoted(model_fixture(fixture)) + " --text hi --text-file " + quoted(dir / "x.txt") +
           " --out " + quoted(dir / "c"),
       "give the input as --text or as --text-file, not both"},
      {"compute --checkpoint " + quoted(model_fixture("qwen3_next_f32")) + " --ids 1,2,3 --long --out " + quoted(dir / "c"),
       "need softmax layers"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.args);
    const CliRun r = run_cli(b.args);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, b.message));
  }
  CHECK(!fs::exists(dir / "o.npy"));
  CHECK(!fs::exists(dir / "c"));
}
