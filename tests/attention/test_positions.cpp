// Windows, sinks and positions (SPEC "Variants after GQA"): against the PyTorch fixtures of
// tests/fixtures/make_position_fixtures.py, the fast path against the reference, and the invariants.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/attention/positions.h"
#include "attnscope/io/npy.h"
#include "attnscope/scene/scene_json.h"
#include "check.h"
#include "test_paths.h"

using namespace attnscope;
using attnscope::test::check_close;
using attnscope::test::check_close3;
namespace fs = std::filesystem;

namespace {

const fs::path fixtures = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/positions";

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

Tensor3 read_tensor3(const fs::path& p) {
  const NpyArray a = read_npy(p);
  REQUIRE(a.shape.size() == 3);
  Tensor3 t;
  const int64_t rows = a.shape[1], cols = a.shape[2];
  for (int64_t b = 0; b < a.shape[0]; ++b)
    t.push_back(Eigen::Map<const Mat>(a.data.data() + b * rows * cols, rows, cols));
  return t;
}

// The model settings and options a fixture case names.
struct FixtureCase {
  AttentionShape shape;
  ModelSettings model;
  RelposSettings relpos;
  AttentionOptions options;
};

FixtureCase fixture_case(const nlohmann::json& meta) {
  FixtureCase c;
  c.shape = {meta["d_model"].get<int>(), meta["heads"].get<int>(), meta["groups"].get<int>()};
  ModelSettings& m = c.model;
  m.causal = meta["causal"];
  m.window = meta["window"];
  m.sinks = meta["sinks"];
  m.positions = parse_position_scheme(meta["positions"]);
  m.rope_base = meta["rope_base"];
  m.rope_layout = parse_rope_layout(meta["rope_layout"]);
  m.rope_scaling = parse_rope_scaling(meta["rope_scaling"]);
  m.rope_factor = meta["rope_factor"];
  m.rope_original_context = meta["rope_original_context"];
  c.relpos.alphas = meta["relpos_alphas"].get<std::vector<double>>();
  for (double d : meta["relpos_deltas"].get<std::vector<double>>()) c.relpos.deltas.push_back({0.0, d});
  c.relpos.lambda = meta["relpos_lambda"];
  c.options.causal = m.causal;
  c.options.window = m.window;
  c.options.sinks = m.sinks;
  c.options.sink_logits = meta["sink_logits"].get<std::vector<double>>();
  c.options.positions = position_encoding(m, c.relpos, c.shape.heads, c.shape.head_dim());
  return c;
}

void check_case_result(const AttentionResult& r, const fs::path& dir, const std::string& what) {
  check_close3(r.q, read_tensor3(dir / "q.npy"), 1e-5, what + " q");
  check_close3(r.k, read_tensor3(dir / "k.npy"), 1e-5, what + " k");
  check_close3(r.scores, read_tensor3(dir / "scores.npy"), 1e-5, what + " scores");
  check_close3(r.probs, read_tensor3(dir / "probs.npy"), 1e-5, what + " probs");
  check_close(r.output, read_npy_matrix(dir / "output.npy"), 1e-5, what + " output");
  if (fs::exists(dir / "sink_share.npy")) check_close(r.sink_share, read_npy_matrix(dir / "sink_share.npy"), 1e-5, what + " sink share");
  else CHECK(r.sink_share.size() == 0);
}

}  // namespace

TEST_CASE("positions fixtures: every window, sink and position case equals PyTorch, fast path and reference") {
  const Mat x = read_npy_matrix(fixtures / "x.npy");
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(fixtures)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    const FixtureCase c = fixture_case(read_json(entry.path() / "meta.json"));
    const AttentionWeights w = load_weights(fixtures, c.shape);
    check_case_result(grouped_attention(x, w, c.shape, c.options), entry.path(), name + " fast");
    check_case_result(grouped_attention_reference(x, w, c.shape, c.options), entry.path(), name + " reference");
    ++cases;
  }
  CHECK(cases == 11);
}

TEST_CASE("RoPE: every scaling's frequencies and YaRN's attention factor equal their formulas") {
  const nlohmann::json f = read_json(fixtures / "formulas.json");
  REQUIRE(f["rope"].size() >= 60);
  for (const auto& c : f["rope"]) {
    RopeParams p;
    p.base = c["base"];
    p.scaling = parse_rope_scaling(c["scaling"]);
    p.factor = c["factor"];
    p.original_context = c["original_context"];
    const int dim = c["dim"];
    CAPTURE(c.dump().substr(0, 120));
    const std::vector<double> expected = c["inv_freq"];
    const std::vector<double> got = rope_scaled_inv_freq(p, dim);
    REQUIRE(got.size() == expected.size());
    for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == doctest::Approx(expected[k]).epsilon(1e-12));
    CHECK(rope_attention_factor(p) == doctest::Approx(c["attention_factor"].get<double>()).epsilon(1e-14));
  }
}

TEST_CASE("RoPE: vectors turned at positions 0 to 4095 equal PyTorch in both pair layouts, fast and reference") {
  const nlohmann::json f = read_json(fixtures / "formulas.json");
  REQUIRE(f["rotations"].size() == 4);
  for (const auto& c : f["rotations"]) {
    RopeParams p;
    p.layout = parse_rope_layout(c["layout"]);
    p.scaling = parse_rope_scaling(c["scaling"]);
    p.factor = c["factor"];
    p.original_context = c["original_context"];
    const std::vector<double> vector = c["vector"];
    const std::vector<int> positions = c["positions"];
    const int dim = int(vector.size()), T = positions.back() + 1;
    const std::vector<double> freqs = rope_scaled_inv_freq(p, dim);
    const double factor = rope_attention_factor(p);
    Mat x(T, dim);
    for (int t = 0; t < T; ++t)
      for (int d = 0; d < dim; ++d) x(t, d) = float(vector[size_t(d)]);
    Mat fast = x, reference = x;
    rope_rotate(fast, rope_tables(freqs, factor, T, p.layout), 0);
    rope_rotate_reference(reference, freqs, factor, p.layout);
    for (size_t n = 0; n < positions.size(); ++n) {
      Mat expected(1, dim);
      for (int d = 0; d < dim; ++d) expected(0, d) = float(c["rotated"][n][size_t(d)].get<double>());
      check_close(fast.row(positions[n]), expected, 1e-5, "fast, position " + std::to_string(positions[n]));
      check_close(reference.row(positions[n]), expected, 1e-5, "reference, position " + std::to_string(positions[n]));
    }
  }
}

TEST_CASE("RoPE: the checkpoint path's float32 frequencies are Hugging Face's rounding of the same formulas") {
  for (int dim : {8, 64, 128}) {
    const std::vector<float> plain = rope_inv_freq_float32(10000.0, dim);
    const std::vector<double> exact = rope_inv_freq(10000.0, dim);
    for (size_t k = 0; k < plain.size(); ++k) CHECK(double(plain[k]) == doctest::Approx(exact[k]).epsilon(1e-6));
    RopeParams p;
    p.scaling = RopeScaling::yarn;
    p.factor = 40;
    p.original_context = 4096;
    const std::vector<float> yarn = yarn_inv_freq_float32(10000.0, dim, 40, 4096, 32, 1);
    const std::vector<double> yarn_exact = rope_scaled_inv_freq(p, dim);
    for (size_t k = 0; k < yarn.size(); ++k) CHECK(double(yarn[k]) == doctest::Approx(yarn_exact[k]).epsilon(1e-6));
  }
}

TEST_CASE("RoPE: bad settings are refused with what is valid") {
  RopeParams p;
  CHECK(test::error_of([&] { validate_rope(p, 7); }).find("even") != std::string::npos);
  p.base = 1;
  CHECK(test::error_of([&] { validate_rope(p, 8); }).find("> 1") != std::string::npos);
  p.base = 10000;
  p.scaling = RopeScaling::yarn;
  p.factor = 1;
  CHECK(test::error_of([&] { validate_rope(p, 8); }).find("factor > 1") != std::string::npos);
  p.scaling = RopeScaling::none;
  p.factor = 2;  // unused without a scaling
  CHECK(test::error_of([&] { validate_rope(p, 8); }).empty());
  CHECK(rope_scaled_inv_freq(p, 8) == rope_inv_freq(10000, 8));
  p.scaling = RopeScaling::linear;
  p.factor = 2e6;
  CHECK(test::error_of([&] { validate_rope(p, 8); }).find("at most 1e6") != std::string::npos);
  CHECK(test::error_of([] { parse_rope_scaling("dynamic"); }).find("none, linear, ntk, yarn") != std::string::npos);
}

TEST_CASE("ALiBi: slopes follow the paper's rule for H = 1 to 16 and its table for H = 8 and 16") {
  const nlohmann::json f = read_json(fixtures / "formulas.json");
  for (int h = 1; h <= 16; ++h) {
    const std::vector<double> expected = f["alibi"][std::to_string(h)];
    const std::vector<double> got = alibi_slopes(h);
    REQUIRE(got.size() == size_t(h));
    for (int i = 0; i < h; ++i) CHECK(got[size_t(i)] == doctest::Approx(expected[size_t(i)]).epsilon(1e-14));
  }
  // Press et al. 2022: 8 heads 1/2 … 1/256; 16 heads interleave 1/2^0.5, 1/2, 1/2^1.5 … 1/2^8.
  for (int i = 0; i < 8; ++i) CHECK(alibi_slopes(8)[size_t(i)] == std::ldexp(1.0, -(i + 1)));
  for (int i = 0; i < 16; ++i) CHECK(alibi_slopes(16)[size_t(i)] == doctest::Approx(std::pow(2.0, -(i + 1) / 2.0)).epsilon(1e-15));
  // 12 heads: the 8 of H = 8, then 1/2^0.5, 1/2^1.5, 1/2^2.5, 1/2^3.5.
  const std::vector<double> twelve = alibi_slopes(12);
  for (int i = 0; i < 4; ++i) CHECK(twelve[size_t(8 + i)] == doctest::Approx(std::pow(2.0, -(2 * i + 1) / 2.0)).epsilon(1e-15));
}

TEST_CASE("masks: window and sink visibility equals the explicit matrices, and masked keys get exactly 0") {
  const nlohmann::json f = read_json(fixtures / "formulas.json");
  REQUIRE(f["masks"].size() == 8);
  for (const auto& c : f["masks"]) {
    AttentionOptions o;
    o.causal = c["causal"];
    o.window = c["window"];
    o.sinks = c["sinks"];
    const int T = c["tokens"];
    CAPTURE(c.dump().substr(0, 80));
    const AttentionShape shape{8, 2, 1};
    const Mat x = Mat::Random(T, 8);
    const AttentionResult r = grouped_attention(x, random_weights(shape, 3), shape, o);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        const bool visible = c["visible"][size_t(i)][size_t(j)].get<int>() == 1;
        CHECK(key_visible(i, j, o) == visible);
        for (int h = 0; h < 2; ++h) {
          if (visible) CHECK(r.probs[size_t(h)](i, j) > 0);
          else CHECK(r.probs[size_t(h)](i, j) == 0);
        }
      }
  }
}

TEST_CASE("grouped attention: windows, sinks and positions match the reference at T = 300 (several row blocks)") {
  const AttentionShape shape{48, 6, 3};
  const Mat x = Mat::Random(300, 48);
  const AttentionWeights w = random_weights(shape, 11);
  ModelSettings m;
  m.heads = 6;
  for (PositionScheme scheme : {PositionScheme::nope, PositionScheme::rope, PositionScheme::alibi, PositionScheme::relpos}) {
    m.positions = scheme;
    m.rope_layout = RopeLayout::interleaved;
    m.rope_scaling = RopeScaling::yarn;
    m.rope_factor = 8;
    AttentionOptions o;
    o.window = 130;
    o.sinks = 3;
    o.sink_logits = seeded_sink_logits(6, 5);
    o.positions = position_encoding(m, RelposSettings{}, 6, 8);
    const std::string name = to_string(scheme);
    CAPTURE(name);
    const AttentionResult fast = grouped_attention(x, w, shape, o), ref = grouped_attention_reference(x, w, shape, o);
    // Relpos scores reach −α·300² on the sink keys: float keeps them to a relative 1e-7.
    double largest = 0;
    for (const Mat& m : ref.scores)
      for (Eigen::Index i = 0; i < m.size(); ++i)
        if (std::isfinite(m.data()[i])) largest = std::max(largest, double(std::abs(m.data()[i])));
    check_close3(fast.scores, ref.scores, std::max(1e-5, 2e-7 * largest), "scores");
    check_close3(fast.probs, ref.probs, 1e-5, "probs");
    check_close(fast.sink_share, ref.sink_share, 1e-5, "sink share");
    check_close(fast.output, ref.output, 1e-5, "output");
  }
}

TEST_CASE("learned sinks: each row sums to 1 − its sink share, and the statistics stay finite") {
  Scene s;
  s.model.sink_logits = true;
  s.model.causal = true;
  const Analysis a = analyse(s);
  const AttentionResult& r = a.attention->result;
  REQUIRE(r.sink_share.rows() == 8);
  REQUIRE(r.sink_share.cols() == r.probs[0].rows());
  for (int h = 0; h < 8; ++h)
    for (Eigen::Index i = 0; i < r.sink_share.cols(); ++i) {
      CHECK(r.sink_share(h, i) > 0);
      CHECK(r.probs[size_t(h)].row(i).sum() + r.sink_share(h, i) == doctest::Approx(1.0).epsilon(1e-6));
    }
  const HeadStats stats = attention_statistics(*a.attention, a.scene.model);
  for (int h = 0; h < 8; ++h) {
    CHECK(std::isfinite(stats.entropy[size_t(h)]));
    CHECK(stats.normalised_entropy[size_t(h)] >= 0);
    CHECK(stats.normalised_entropy[size_t(h)] <= 1);
    for (int g = 0; g < 8; ++g) CHECK(std::isfinite(stats.js_divergence(h, g)));
  }
  // The logits are seeded: the same seed gives the same, another seed others.
  CHECK(seeded_sink_logits(8, 42) == seeded_sink_logits(8, 42));
  CHECK(seeded_sink_logits(8, 42) != seeded_sink_logits(8, 43));
}

TEST_CASE("analyse: a scene's window, sinks and positions reach the heads, the trace and the figures' data") {
  Scene s;
  s.model.window = 3;
  s.model.sinks = 1;
  s.model.positions = PositionScheme::alibi;
  const Analysis a = analyse(s);
  const AttentionAnalysis& att = *a.attention;
  CHECK(att.window == 3);
  CHECK(att.sinks == 1);
  CHECK(att.result.alibi_slopes == alibi_slopes(8));
  CHECK(att.positions.alibi_slopes == alibi_slopes(8));  // the Positions view's data comes with the heads
  CHECK(att.positions.max_distance == positions_profile_distance(s.model, int(att.x.rows())));
  const int T = int(att.x.rows());
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) CHECK((att.result.probs[0](i, j) > 0) == (j <= i && (j > i - 3 || j < 1)));
  std::vector<std::string> keys;
  for (const TraceStep& step : att.trace.steps) keys.push_back(step.key);
  CHECK(std::find(keys.begin(), keys.end(), "alibi_bias") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "sink_window_mask") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "causal_mask") == keys.end());

  s.model.positions = PositionScheme::rope;
  s.model.window = 0;
  s.model.sinks = 0;
  s.model.sink_logits = true;
  const Analysis b = analyse(s);
  keys.clear();
  for (const TraceStep& step : b.attention->trace.steps) keys.push_back(step.key);
  for (const char* key : {"rope_angles", "rope", "sink_logits", "softmax_sink", "sink_share"})
    CHECK_MESSAGE(std::find(keys.begin(), keys.end(), key) != keys.end(), key);
  const auto angles = std::find_if(b.attention->trace.steps.begin(), b.attention->trace.steps.end(),
                                   [](const TraceStep& t) { return t.key == "rope_angles"; });
  CHECK(angles->shape == std::vector<int64_t>{T, 4});
}

TEST_CASE("analyse: bad windows, sinks and positions are refused with what is valid") {
  Scene s;
  s.model.window = -1;
  CHECK(test::error_of([&] { analyse(s); }).find("at least 1") != std::string::npos);
  s.model.window = 0;
  s.model.sinks = 2;
  CHECK(test::error_of([&] { analyse(s); }).find("set a window") != std::string::npos);
  s.model.window = 2;
  s.model.sinks = 99;
  CHECK(test::error_of([&] { analyse(s); }).find("only") != std::string::npos);
  s.model.sinks = 0;
  s.model.positions = PositionScheme::rope;
  s.model.d_model = 24;
  s.model.heads = 8;  // d_k = 3
  s.model.groups = 8;
  CHECK(test::error_of([&] { analyse(s); }).find("even") != std::string::npos);
  s.model.d_model = 64;
  s.model.rope_scaling = RopeScaling::ntk;
  s.model.rope_factor = 0.5;
  CHECK(test::error_of([&] { analyse(s); }).find("factor > 1") != std::string::npos);
  s.model.rope_scaling = RopeScaling::none;
  s.model.rope_factor = 1;
  s.model.positions = PositionScheme::relpos;
  s.relpos.mixed = true;
  CHECK(test::error_of([&] { analyse(s); }).find("mixed mode") != std::string::npos);
  s.relpos.mixed = false;
  s.relpos.alphas = {1, 2};
  CHECK(test::error_of([&] { analyse(s); }).find("needs 8 values") != std::string::npos);
}

TEST_CASE("relpos positions: each head's scores are the content scores plus λ times mixed mode's positional scores") {
  Scene s;
  s.model.positions = PositionScheme::relpos;
  s.relpos.lambda = 0.5;
  const Analysis with = analyse(s);
  s.model.positions = PositionScheme::nope;
  const Analysis without = analyse(s);
  const RelposSettings line = [] {
    RelposSettings r;
    r.heads = 8;
    r.delta_preset = "line";
    return r;
  }();
  const std::vector<RelposHead> heads = resolve_relpos_heads(line, 1);
  const int T = int(with.attention->x.rows());
  for (int h = 0; h < 8; ++h) {
    const Mat expected =
        (without.attention->result.scores[size_t(h)].cast<double>() + 0.5 * relative_position_scores_1d(heads[size_t(h)].alpha, heads[size_t(h)].delta[1], T))
            .cast<float>();
    check_close(with.attention->result.scores[size_t(h)], expected, 1e-5, "head " + std::to_string(h));
  }
}

TEST_CASE("positions profile: RoPE frequencies, wavelengths, the decay curves and ALiBi's biases") {
  ModelSettings m;
  m.positions = PositionScheme::rope;
  m.rope_base = 500;
  m.rope_scaling = RopeScaling::yarn;
  m.rope_factor = 4;
  const PositionsProfile p = positions_profile(m, 8, 100);
  REQUIRE(p.theta.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    CHECK(p.theta[k] == doctest::Approx(std::pow(500.0, -2.0 * double(k) / 8)));
    CHECK(p.wavelength[k] * p.theta[k] == doctest::Approx(2 * M_PI));
    CHECK(p.wavelength_scaled[k] * p.theta_scaled[k] == doctest::Approx(2 * M_PI));
    CHECK(p.theta_scaled[k] <= p.theta[k]);  // a scaling only slows rotations down
  }
  CHECK(p.attention_factor == doctest::Approx(0.1 * std::log(4.0) + 1));
  REQUIRE(p.decay.value.size() == 101);
  CHECK(p.decay.value[0] == doctest::Approx(8 * p.attention_factor * p.attention_factor));  // q·k = d_k·a² at δ = 0
  CHECK(p.decay_bound.value[0] == doctest::Approx((1 + 2 + 3 + 4) / 4.0));
  CHECK(p.decay_default.value[0] == doctest::Approx(8.0));
  REQUIRE(p.decay_by_scaling.size() == 4);
  CHECK(p.comparison_factor == 4);
  CHECK(p.decay_by_scaling[3].value == p.decay.value);  // yarn ×4 is the chosen scaling
  for (int d = 0; d <= 100; d += 17) {
    double expected = 0;
    for (double t : rope_inv_freq(500, 8)) expected += 2 * std::cos(d * t / 4);
    CHECK(p.decay_by_scaling[1].value[size_t(d)] == doctest::Approx(expected));  // linear ×4
  }
  // Against PyTorch: rotated all-ones q at position δ dotted with k at 0, and RoFormer's bound.
  const nlohmann::json decay = read_json(fixtures / "formulas.json")["decay"];
  for (int d = 0; d <= 100; ++d) {
    CHECK(p.decay.value[size_t(d)] == doctest::Approx(decay["score"][size_t(d)].get<double>()).epsilon(1e-12));
    CHECK(p.decay_bound.value[size_t(d)] == doctest::Approx(decay["bound"][size_t(d)].get<double>()).epsilon(1e-12));
  }
  const nlohmann::json j = positions_profile_json(p);
  CHECK(j["rope"]["scaling"] == "yarn");
  CHECK(j["rope"]["decay_by_scaling"].size() == 4);

  m.positions = PositionScheme::alibi;
  m.heads = 6;
  const PositionsProfile a = positions_profile(m, 8, 10);
  CHECK(a.alibi_slopes == alibi_slopes(6));
  REQUIRE(a.alibi_bias.size() == 6);
  CHECK(a.alibi_bias[2].value[10] == doctest::Approx(-10 * alibi_slopes(6)[2]));
  CHECK(test::error_of([&] { positions_profile(m, 8, 0); }).find("distances") != std::string::npos);
}

TEST_CASE("scene JSON: windows, sinks and positions round-trip, and bad names are refused") {
  Scene s;
  s.model.window = 5;
  s.model.sinks = 2;
  s.model.sink_logits = true;
  s.model.positions = PositionScheme::rope;
  s.model.rope_base = 500000;
  s.model.rope_layout = RopeLayout::interleaved;
  s.model.rope_scaling = RopeScaling::yarn;
  s.model.rope_factor = 8;
  s.model.rope_original_context = 64;
  const nlohmann::json j = scene_to_json(s);
  CHECK(j["model"]["positions"] == "rope");
  CHECK(j["model"]["rope_layout"] == "interleaved");
  CHECK(j["model"]["rope_scaling"] == "yarn");
  CHECK(scene_from_json(j) == s);
  nlohmann::json bad = j;
  bad["model"]["positions"] = "sinusoidal";
  CHECK(test::error_of([&] { scene_from_json(bad); }).find("nope, rope, alibi, relpos") != std::string::npos);
}

TEST_CASE("head statistics: with learned sinks a row is its keys and the sink; a window narrows the keys") {
  // Two heads over 3 tokens, causal; the sink takes what the keys leave.
  Tensor3 probs(2, Mat::Zero(3, 3));
  probs[0] << 0.5f, 0, 0, 0.25f, 0.25f, 0, 0.2f, 0.2f, 0.2f;
  probs[1] << 1, 0, 0, 0.1f, 0.6f, 0, 0.3f, 0.3f, 0.3f;
  Mat share(2, 3);
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 3; ++i) share(h, i) = 1 - probs[size_t(h)].row(i).sum();
  const HeadStats s = head_stats(probs, true, nullptr, HeadStatsMask{0, 0, &share});
  // The same numbers from the rows written out with the sink as a fourth outcome.
  auto entropy = [](const std::vector<double>& p) {
    double e = 0;
    for (double x : p) e -= x > 0 ? x * std::log(x) : 0;
    return e;
  };
  auto row = [&](int h, int i) {
    std::vector<double> p;
    for (int j = 0; j < 3; ++j) p.push_back(probs[size_t(h)](i, j));
    p.push_back(share(h, i));
    return p;
  };
  double js = 0;
  for (int h = 0; h < 2; ++h) {
    double e = 0, normalised = 0;
    for (int i = 0; i < 3; ++i) {
      e += entropy(row(h, i));
      normalised += entropy(row(h, i)) / std::log(double(i + 2));  // i + 1 keys and the sink
    }
    CHECK(s.entropy[size_t(h)] == doctest::Approx(e / 3).epsilon(1e-5));  // float sums (display statistics)
    CHECK(s.normalised_entropy[size_t(h)] == doctest::Approx(normalised / 3).epsilon(1e-5));
  }
  for (int i = 0; i < 3; ++i) {
    std::vector<double> m;
    for (size_t k = 0; k < 4; ++k) m.push_back(0.5 * (row(0, i)[k] + row(1, i)[k]));
    js += entropy(m) - 0.5 * (entropy(row(0, i)) + entropy(row(1, i)));
  }
  CHECK(s.js_divergence(0, 1) == doctest::Approx(js / 3).epsilon(1e-5));

  // Window 2: rows 1 and 2 are uniform over their two keys, so the normalised entropy is 1.
  Tensor3 windowed(1, Mat::Zero(3, 3));
  windowed[0] << 1, 0, 0, 0.5f, 0.5f, 0, 0, 0.5f, 0.5f;
  CHECK(head_stats(windowed, true, nullptr, HeadStatsMask{2, 0, nullptr}).normalised_entropy[0] == doctest::Approx(1.0));
  CHECK(head_stats(windowed, true).normalised_entropy[0] < 0.9);  // against i + 1 keys it is not uniform
}
