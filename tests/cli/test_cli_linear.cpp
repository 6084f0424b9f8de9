// `compute` and `export` with the kinds without a softmax (--kind linear | retention | mamba2 | deltanet |
// gated-deltanet, --decay, --no-normalizer): the explicit matrices and the final states written, equal to the
// engine's and consistent with each other (matrix · V = head_out), the trace's state bytes, the figure's
// signed colour bar; bad values exit 2 naming what is valid and write nothing.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

// A 3D .npy file [A, B, D] as A matrices.
Tensor3 read_npy_tensor3(const fs::path& path) {
  const NpyArray a = read_npy(path);
  REQUIRE(a.shape.size() == 3);
  Tensor3 t;
  const size_t block = size_t(a.shape[1] * a.shape[2]);
  for (int64_t i = 0; i < a.shape[0]; ++i)
    t.push_back(Eigen::Map<const Mat>(a.data.data() + size_t(i) * block, a.shape[1], a.shape[2]));
  return t;
}

}  // namespace

TEST_CASE("cli compute: every kind without a softmax writes its matrices, states and gates, equal to the engine's") {
  struct Case {
    const char* kind;
    AttentionKind scene_kind;
    std::vector<std::string> gates;
  };
  const Case cases[] = {{"linear", AttentionKind::linear, {}},
                        {"retention", AttentionKind::retention, {"decay.npy"}},
                        {"mamba2", AttentionKind::mamba2, {"step.npy", "decay.npy"}},
                        {"deltanet", AttentionKind::deltanet, {"beta.npy"}},
                        {"gated-deltanet", AttentionKind::gated_deltanet, {"beta.npy", "decay.npy"}}};
  for (const Case& c : cases) {
    CAPTURE(c.kind);
    const fs::path out = fresh_dir(std::string("cli_linear_") + c.kind) / "out";
    const CliRun r = run_cli(std::string("compute --text 'The cat sat on the mat because it was tired.' --kind ") + c.kind +
                             " --heads 4 --d-model 32 --seed 5 --out " + shell_quote(out.string()));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(fs::exists(out / "probs.npy"));   // not probabilities
    CHECK_FALSE(fs::exists(out / "scores.npy"));  // no scores at all
    for (const std::string& g : c.gates) CHECK(read_npy(out / g).shape == std::vector<int64_t>{4, 11});
    const NpyArray matrix = read_npy(out / "matrix.npy"), state = read_npy(out / "state.npy");
    CHECK(matrix.shape == std::vector<int64_t>{4, 11, 11});
    CHECK(state.shape == std::vector<int64_t>{4, 8, 8});
    Scene s;
    s.input.text = "The cat sat on the mat because it was tired.";
    s.model.kind = c.scene_kind, s.model.heads = 4, s.model.d_model = 32, s.model.seed = 5;
    const Analysis a = analyse(s);
    const Tensor3 m = read_npy_tensor3(out / "matrix.npy"), v = read_npy_tensor3(out / "v.npy"),
                  head_out = read_npy_tensor3(out / "head_out.npy"), states = read_npy_tensor3(out / "state.npy");
    for (int h = 0; h < 4; ++h) {
      check_close(m[size_t(h)], a.attention->result.probs[size_t(h)], 0, "matrix.npy");
      check_close(states[size_t(h)], a.attention->linear_layer.state[size_t(h)], 0, "state.npy");
      Mat mv = m[size_t(h)] * v[size_t(h)];
      if (c.scene_kind == AttentionKind::mamba2) mv += v[size_t(h)];  // D = 1
      check_close(mv, head_out[size_t(h)], 1e-5 * std::max(1.0f, head_out[size_t(h)].cwiseAbs().maxCoeff()),
                  "matrix · V = head_out");
    }
    check_close(read_npy_matrix(out / "output.npy"), a.attention->result.output, 0, "output.npy");
    const auto trace = nlohmann::json::parse(read_file(out / "trace.json", 1 << 20));
    CHECK(trace["settings"]["kind"] == c.kind);
    CHECK(trace["settings"]["causal"] == true);
    CHECK(trace["variant"]["name"] == c.kind);
    CHECK(trace["state_bytes_per_layer"]["fp32"] == 4 * 8 * 8 * 4);
    CHECK(trace["kv_cache_bytes_per_token_per_layer"]["fp32"] == 0);
  }
}

TEST_CASE("cli compute: --decay and --no-normalizer reach the layer") {
  const fs::path out = fresh_dir("cli_linear_decay") / "out";
  CliRun r = run_cli("compute --text 'a b c d e' --kind retention --decay 0.25 --no-scale --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto trace = nlohmann::json::parse(read_file(out / "trace.json", 1 << 20));
  for (const auto& g : trace["variant"]["decay"]) CHECK(g.get<double>() == 0.25);
  const Tensor3 m = read_npy_tensor3(out / "matrix.npy"), q = read_npy_tensor3(out / "q.npy"), k = read_npy_tensor3(out / "k.npy");
  // M[t, s] = 0.25^(t−s)·q_t·k_s
  CHECK(m[0](4, 1) == doctest::Approx(std::pow(0.25, 3) * q[0].row(4).dot(k[0].row(1))).epsilon(1e-5));
  const fs::path out2 = fresh_dir("cli_linear_norm") / "out";
  r = run_cli("compute --text 'a b c d e' --kind linear --no-normalizer --out " + shell_quote(out2.string()));
  REQUIRE(r.exit_code == 0);
  const auto trace2 = nlohmann::json::parse(read_file(out2 / "trace.json", 1 << 20));
  CHECK(trace2["variant"]["normalize"] == false);
  CHECK(trace2["variant"]["head_kind"] == "linear");
  // φ(q)·φ(k) > 0: every weight on or below the diagonal is positive, and rows do not sum to 1.
  const Tensor3 m2 = read_npy_tensor3(out2 / "matrix.npy");
  CHECK(m2[0](3, 1) > 0);
  CHECK(std::abs(m2[0].row(3).sum() - 1.0f) > 1e-3f);
}

TEST_CASE("cli compute and export: bad values for the kinds without a softmax exit 2, naming what is valid") {
  struct Case {
    const char* args;
    const char* says;
  };
  const Case cases[] = {
      {"--kind mamba", "valid: single, mha, mqa, gqa, mla, and without a softmax linear, retention, mamba2"},
      {"--kind retention --decay 0", "--decay must be a number in (0, 1]"},
      {"--kind retention --decay nan", "--decay must be a number in (0, 1]"},
      {"--kind mha --decay 0.5", "--decay sets retention's decay gamma: add --kind retention"},
      {"--kind retention --no-normalizer", "--no-normalizer applies to linear attention"},
      {"--kind deltanet --window 4", "--window is for softmax attention"},
      {"--kind linear --differential", "--differential is for softmax attention"},
      {"--kind gated-deltanet --sink-logits", "--sink-logits is for softmax attention"},
      {"--kind mamba2 --positions alibi", "choose positions absolute or nope"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const fs::path out = fresh_dir("cli_linear_bad") / "out";
    const CliRun r = run_cli(std::string("compute --text 'a b c' ") + c.args + " --out " + shell_quote(out.string()));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, c.says));
    CHECK_FALSE(fs::exists(out));
  }
  // A figure of scores has nothing to draw.
  const fs::path png = fresh_dir("cli_linear_export") / "heads.png";
  const CliRun scores = run_cli("export --text 'a b c' --kind deltanet --scores --what heads --format png --out " + shell_quote(png.string()));
  CHECK(scores.exit_code == 2);
  CHECK(contains(scores.err, "heads without a softmax have no scores"));
  CHECK_FALSE(fs::exists(png));
  const CliRun fixed = run_cli("export --text 'a b c' --kind linear --scale-mode fixed --what heads --format png --out " + shell_quote(png.string()));
  CHECK(fixed.exit_code == 2);
  CHECK(contains(fixed.err, "as are the matrices of heads without a softmax"));
}

TEST_CASE("cli export: a Gated DeltaNet figure is drawn on the diverging scale, its bar naming the weight") {
  const fs::path dir = fresh_dir("cli_linear_figure");
  const CliRun r = run_cli("export --text 'The cat sat on the mat.' --kind gated-deltanet --what heads --format svg --out " +
                           shell_quote((dir / "heads.svg").string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string svg = read_file(dir / "heads.svg", 1 << 24);
  CHECK(contains(svg, "Gated DeltaNet weight"));
  CHECK(contains(svg, "Gated DeltaNet"));
  CHECK(contains(svg, "M, signed (no softmax)"));
}
