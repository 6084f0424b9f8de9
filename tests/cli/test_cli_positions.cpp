// `compute` and `export` with windows, sinks and positions: the files, the figure's sink column and
// masked keys, and the bad values that must exit 2 with what is valid.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/positions.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {
const std::string text = "--text 'The cat sat on the mat.' ";  // 7 tokens
}

TEST_CASE("cli positions: compute with a window, sinks, sink logits and YaRN RoPE writes what the engine computes") {
  const fs::path out = fresh_dir("cli_positions_compute") / "out";
  const CliRun r = run_cli("compute " + text + "--window 3 --sinks 1 --sink-logits --positions rope --rope-layout interleaved "
                           "--rope-base 500 --rope-scaling yarn:4 --rope-context 4 --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  Scene s;
  s.input.text = "The cat sat on the mat.";
  ModelSettings& m = s.model;
  m.window = 3, m.sinks = 1, m.sink_logits = true, m.positions = PositionScheme::rope;
  m.rope_layout = RopeLayout::interleaved, m.rope_base = 500, m.rope_scaling = RopeScaling::yarn, m.rope_factor = 4;
  m.rope_original_context = 4;
  const Analysis a = analyse(s);
  check_close(read_npy_matrix(out / "sink_share.npy"), a.attention->result.sink_share, 0, "sink_share.npy");
  check_close(read_npy_matrix(out / "output.npy"), a.attention->result.output, 0, "output.npy");
  const NpyArray probs = read_npy(out / "probs.npy");
  REQUIRE(probs.shape == std::vector<int64_t>{8, 7, 7});
  CHECK(probs.data[size_t(6 * 7 + 2)] == 0);  // query 6 no longer sees key 2 (window 3), …
  CHECK(probs.data[size_t(6 * 7 + 0)] > 0);   // … but still the sink key 0

  const auto positions = nlohmann::json::parse(read_file(out / "positions.json", 1 << 22));
  CHECK(positions["scheme"] == "rope");
  CHECK(positions["rope"]["scaling"] == "yarn");
  CHECK(positions["rope"]["theta"].size() == 4);
  CHECK(positions["max_distance"] == 16);  // max(T − 1, 4 × original context)
  CHECK(positions["rope"]["decay"]["value"].size() == 17);
  const auto trace = nlohmann::json::parse(read_file(out / "trace.json", 1 << 20));
  CHECK(trace["settings"]["window"] == 3);
  CHECK(trace["settings"]["positions"] == "rope");
  CHECK(trace["settings"]["sink_logit_values"].get<std::vector<double>>() == a.attention->options.sink_logits);
  bool angles = false;
  for (const auto& step : trace["steps"]) angles |= step["text"] == "RoPE angles: [T, d_k/2] = [7, 4]";
  CHECK(angles);
}

TEST_CASE("cli positions: a window alone is causal, and trace.json's settings say so") {
  // --window W implies the causal mask (i − W < j ≤ i); the settings name what was computed.
  const fs::path dir = fresh_dir("cli_positions_window_causal");
  const CliRun r = run_cli("compute " + text + "--window 3 --out " + shell_quote((dir / "w").string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const NpyArray probs = read_npy(dir / "w" / "probs.npy");
  REQUIRE(probs.shape.size() == 3);
  const int64_t H = probs.shape[0], T = probs.shape[1];
  REQUIRE(T == 7);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) {
        const float p = probs.data[size_t((h * T + i) * T + j)];
        if (j > i || j <= i - 3) CHECK(p == 0);
        else CHECK(p > 0);
      }
  const auto trace = nlohmann::json::parse(read_file(dir / "w" / "trace.json", 1 << 20));
  CHECK(trace["settings"]["window"] == 3);
  CHECK(trace["settings"]["causal"] == true);
  // Without a window the flag decides, as before.
  REQUIRE(run_cli("compute " + text + "--out " + shell_quote((dir / "n").string())).exit_code == 0);
  CHECK(nlohmann::json::parse(read_file(dir / "n" / "trace.json", 1 << 20))["settings"]["causal"] == false);
}

TEST_CASE("cli positions: ALiBi writes its slopes to positions.json; NoPE writes no positions.json") {
  const fs::path dir = fresh_dir("cli_positions_alibi");
  REQUIRE(run_cli("compute " + text + "--causal --positions alibi --heads 4 --out " + shell_quote((dir / "a").string())).exit_code == 0);
  const auto positions = nlohmann::json::parse(read_file(dir / "a" / "positions.json", 1 << 22));
  CHECK(positions["alibi"]["slopes"].get<std::vector<double>>() == alibi_slopes(4));
  REQUIRE(run_cli("compute " + text + "--out " + shell_quote((dir / "n").string())).exit_code == 0);
  CHECK(!fs::exists(dir / "n" / "positions.json"));
  CHECK(!fs::exists(dir / "n" / "sink_share.npy"));
}

TEST_CASE("cli positions: export takes the window, sink and position flags (PNG and CSV)") {
  const fs::path dir = fresh_dir("cli_positions_export");
  const CliRun r = run_cli("export " + text + "--window 2 --sinks 1 --sink-logits --what head:0 --format csv --out " +
                           shell_quote((dir / "h.csv").string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const CliRun png = run_cli("export " + text + "--window 2 --sinks 1 --sink-logits --positions alibi --what heads --format png --out " +
                             shell_quote((dir / "h.png").string()));
  INFO(png.err);
  CHECK(png.exit_code == 0);
  CHECK(fs::file_size(dir / "h.png") > 1000);
}

TEST_CASE("cli positions: bad windows, sinks and RoPE settings exit 2 with what is valid, writing nothing") {
  const fs::path dir = fresh_dir("cli_positions_bad");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--window 0", "--window must be at least 1"},
      {"--window -3", "--window must be at least 1"},
      {"--sinks 2", "add --window W"},
      {"--window 2 --sinks -1", "0 or more"},
      {"--window 2 --sinks 8", "only 7 tokens"},
      {"--positions sinusoidal", "nope, rope, alibi, relpos"},
      {"--positions rope --rope-scaling dynamic:2", "unknown scaling 'dynamic'"},
      {"--positions rope --rope-scaling yarn:1", "> 1"},
      {"--positions rope --rope-scaling yarn", "needs a factor"},
      {"--positions rope --rope-scaling linear:x", "--rope-scaling"},
      {"--positions rope --rope-base 1", "--rope-base must be a number > 1"},
      {"--positions rope --rope-layout diagonal", "half, interleaved"},
      {"--rope-base 500", "add --positions rope"},
      {"--positions rope --rope-context 64", "add --rope-scaling yarn:F"},
      {"--positions rope --rope-scaling ntk:2 --rope-context 64", "ntk:F only raises the base"},
      {"--positions rope --rope-scaling linear:2 --rope-context 64", "add --rope-scaling yarn:F"},
      {"--positions rope --rope-scaling yarn:2 --rope-context 0", "at least 1"},
      {"--positions rope --heads 4 --d-model 12", "even"},
  };
  for (const auto& item : cases) {  // not a structured binding: clang cannot capture those in CAPTURE
    const std::string& flags = item.first;
    const std::string& message = item.second;
    CAPTURE(flags);
    const fs::path out = dir / "out";
    const CliRun r = run_cli("compute " + text + flags + " --out " + shell_quote(out.string()));
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find(message) != std::string::npos, r.err);
    CHECK(!fs::exists(out));
  }
}
