// The trainable model with attention without a softmax (issue 39 item 4): linear attention, retention,
// Mamba-2, DeltaNet and Gated DeltaNet. Whole models against PyTorch autograd run as the recurrence
// (tests/fixtures/make_train_linear_fixtures.py); a layer against the inference engine's seeded layer
// (linear_layer.h) on the same weights; a few hundred seeded steps on the induction task lower the loss;
// the kind and its gates are saved; bad settings are refused by name.
//
// Sections: against PyTorch · against the engine's layer · training · settings and checkpoints
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <vector>

#include "attnscope/attention/linear_layer.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/model.h"
#include "attnscope/train/checkpoint.h"
#include "attnscope/train/model.h"
#include "attnscope/train/trainer.h"
#include "check.h"
#include "model/fixtures.h"
#include "train/train_fixture.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::train;
using attnscope::test::check_rel;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::Fixture;
using attnscope::test::check_against_fixture;
using attnscope::test::induction_settings;
using attnscope::test::train_config_of;
using V = std::vector<float>;
namespace fs = std::filesystem;

namespace {

constexpr double out_tol = 1e-5;   // logits, loss, outputs: relative to the largest entry (as the MLA checks)
constexpr double grad_tol = 1e-4;  // gradients (issue 14's tolerance, as test_model_variants.cpp)

const AttentionKind softmax_free_kinds[] = {AttentionKind::linear, AttentionKind::retention, AttentionKind::mamba2,
                                            AttentionKind::deltanet, AttentionKind::gated_deltanet};

}  // namespace

// ================================ against PyTorch ================================================

TEST_CASE("train without a softmax: logits, loss and every gradient match PyTorch autograd of the recurrence") {
  for (const AttentionKind kind : softmax_free_kinds) {
    std::string name = std::string("model_") + attention_kind_word(kind);
    for (char& ch : name)
      if (ch == '-') ch = '_';
    INFO(name);
    const Fixture f(name);
    Model model(train_config_of(f));
    REQUIRE(model.config().attention == kind);
    size_t gates = 0;
    for (const ParamView& v : model.params())
      gates += v.name.find("_proj.weight") != std::string::npos &&
               (v.name.find(".b_proj") != std::string::npos || v.name.find(".a_proj") != std::string::npos ||
                v.name.find(".dt_proj") != std::string::npos);
    // the gates' projections are trained parameters: one or two per layer where the kind has gates
    const int per_layer = kind == AttentionKind::gated_deltanet ? 2
                          : kind == AttentionKind::mamba2 || kind == AttentionKind::deltanet ? 1 : 0;
    CHECK(gates == size_t(per_layer * model.config().layers));
    check_against_fixture(f, model, out_tol, grad_tol);
  }
}

// ================================ against the engine's layer =====================================

TEST_CASE("train without a softmax: a layer at its initial gates equals the engine's seeded layer (output and M)") {
  const LinearLayerKind engine_kind[] = {LinearLayerKind::linear, LinearLayerKind::retention, LinearLayerKind::mamba2,
                                         LinearLayerKind::deltanet, LinearLayerKind::gated_deltanet};
  for (int i = 0; i < 5; ++i) {
    const AttentionKind kind = softmax_free_kinds[i];
    INFO(attention_kind_word(kind));
    CHECK(std::string(attention_kind_word(kind)) == to_string(engine_kind[i]));  // the scene's names
    ModelConfig c;
    c.vocab_size = 13, c.layers = 1, c.d_model = 24, c.heads = 3, c.groups = 3, c.attention = kind;
    Model model(c);
    model.init_weights(7);
    const int T = 11, C = c.d_model, H = c.heads, d = c.head_dim();
    std::vector<int32_t> ids(T);
    for (int t = 0; t < T; ++t) ids[size_t(t)] = (t * 5 + 3) % c.vocab_size;
    Activations a = model.make_activations(1, T);
    model.forward(a, ids.data(), nullptr);

    const ModelTensors w = model.weight_tensors();
    const LayerTensors& lw = w.layers[0];
    auto matrix = [](const float* p, int rows, int cols) { return Mat(Eigen::Map<const Mat>(p, rows, cols)); };
    AttentionWeights aw;
    aw.wq = matrix(lw.wq, H * d, C), aw.wk = matrix(lw.wk, H * d, C), aw.wv = matrix(lw.wv, H * d, C);
    aw.wo = matrix(lw.wo, C, H * d);
    LinearGates gates = random_linear_gates(C, H, 1);  // replaced by the model's where it has them
    if (lw.b_proj) gates.w_beta = matrix(lw.b_proj, H, C);
    if (lw.step_proj) gates.w_step = matrix(lw.step_proj, H, C);
    if (lw.dt_bias) gates.step_bias = Eigen::Map<const Vec>(lw.dt_bias, H);
    if (lw.d_skip) gates.d_skip = Eigen::Map<const Vec>(lw.d_skip, H);
    LinearLayerSpec spec;
    spec.kind = engine_kind[i];
    AttentionShape shape;
    shape.d_model = C, shape.heads = H, shape.groups = H;
    const LinearLayerResult r = linear_layer(matrix(a.ln1[0], T, C), aw, gates, spec, shape);
    check_rel(V(r.attention.concat.data(), r.attention.concat.data() + r.attention.concat.size()),
              V(a.atty[0], a.atty[0] + size_t(T) * H * d), out_tol, "the layer's heads' output");
    V mine, engine;
    for (int h = 0; h < H; ++h) {
      mine.insert(mine.end(), a.probs[0] + size_t(h) * T * T, a.probs[0] + size_t(h + 1) * T * T);
      engine.insert(engine.end(), r.attention.probs[size_t(h)].data(), r.attention.probs[size_t(h)].data() + T * T);
    }
    check_rel(engine, mine, out_tol, "each head's matrix M");
  }
}

// ================================ training =======================================================

namespace {

double mean(const std::vector<float>& v, size_t begin, size_t end) {
  return std::accumulate(v.begin() + long(begin), v.begin() + long(end), 0.0) / double(end - begin);
}

}  // namespace

TEST_CASE("train without a softmax: 500 seeded steps of the induction task take every kind below ln(symbols)" *
          doctest::skip(ATTNSCOPE_SANITIZED_BUILD != 0)) {
  for (const AttentionKind kind : softmax_free_kinds) {
    INFO(attention_kind_word(kind));
    const TrainSettings s = induction_settings(kind, 500);
    Trainer trainer(s);
    while (!trainer.finished()) trainer.step();
    const std::vector<float>& losses = trainer.losses();
    const double first = mean(losses, 0, 20), last = mean(losses, 480, 500), plateau = std::log(double(s.task.symbols));
    INFO("first 20 steps " << first << ", last 20 " << last << ", ln(symbols) " << plateau);
    CHECK(std::isfinite(last));
    CHECK(last < plateau - 0.03);
    CHECK(last < first - 0.05);
    // every head's M on the probe is finite and causal (nothing above the diagonal)
    const TrainSnapshot snap = trainer.snapshot();
    for (const Tensor3& layer : snap.probe_probs)
      for (const Mat& m : layer) {
        CHECK(m.allFinite());
        CHECK(m.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0f);
      }
  }
}

TEST_CASE("train without a softmax: one seed gives the same loss curve bit for bit; another seed does not") {
  for (const AttentionKind kind : softmax_free_kinds) {
    INFO(attention_kind_word(kind));
    TrainSettings s = induction_settings(kind, 6);
    s.threads = 2;  // the batch split over two threads, summed in a fixed order
    Trainer one(s), two(s);
    while (!one.finished()) one.step(), two.step();
    CHECK(one.losses() == two.losses());
    CHECK(std::equal(one.model().weights(), one.model().weights() + one.model().arena_size(), two.model().weights()));
    s.seed = 2;
    Trainer other(s);
    while (!other.finished()) other.step();
    CHECK(other.losses() != one.losses());
  }
}

// ================================ settings and checkpoints =======================================

TEST_CASE("train without a softmax: the kinds are one table; bad names and windows are refused by name") {
  std::vector<std::string> words;
  for (const AttentionKindEntry& e : attention_kinds()) {
    words.push_back(e.name);
    CHECK(parse_attention_kind(e.name) == e.kind);
    CHECK(std::string(attention_kind_word(e.kind)) == e.name);
  }
  CHECK(words == std::vector<std::string>{"grouped", "mla", "linear", "retention", "mamba2", "deltanet",
                                          "gated-deltanet"});
  CHECK(contains(error_of([] { parse_attention_kind("mamba"); }),
                 "the attention kind must be one of grouped | mla | linear | retention | mamba2 | deltanet | "
                 "gated-deltanet, got 'mamba'"));
  ModelConfig c;
  c.vocab_size = 8, c.attention = AttentionKind::retention, c.window = 4;
  CHECK(contains(error_of([&] { validate_model_config(c); }),
                 "a sliding window is for softmax attention; retention attention keeps a state of a fixed size"));
  // no rotary positions: an odd head width is fine; the groups are not read (every head its own keys)
  c.window = 0, c.d_model = 9, c.heads = 3, c.groups = 2;
  CHECK_NOTHROW(validate_model_config(c));
  CHECK(Model(c).config().kv_heads() == 3);
  CHECK(kv_cache_bytes_per_token(c) == 0);
  CHECK(state_bytes(c) == int64_t(c.layers) * 3 * 9 * 4);  // L · H · d² floats
}

TEST_CASE("train without a softmax: the checkpoint keeps the kind and the gates") {
  TrainSettings s = induction_settings(AttentionKind::gated_deltanet, 2);
  Trainer trainer(s);
  trainer.step(), trainer.step();
  const fs::path dir = attnscope::test::fresh_dir("linear_kinds_checkpoint");
  trainer.save(dir);
  const auto cfg = nlohmann::json::parse(read_file(dir / "config.json", 1 << 20));
  CHECK(cfg.at("model_type") == "attnscope_linear");
  CHECK(cfg.at("attention_kind") == "gated-deltanet");
  CHECK(cfg.at("num_key_value_heads") == s.model.heads);
  const SafetensorsFile st(dir / "model.safetensors");
  const Model& m = trainer.model();
  for (const ParamView& v : m.params()) {  // every trained tensor, the gates included, under its own name
    INFO(v.name);
    const SafetensorsTensor* t = st.header().find(v.name);
    REQUIRE(t);
    CHECK(t->shape == v.shape);
    std::vector<float> saved(size_t(t->count()));
    st.read_float32(*t, saved.data());
    REQUIRE(saved.size() == v.size);
    CHECK(std::equal(saved.begin(), saved.end(), m.weights() + v.offset));
  }
  CHECK(m.find("model.layers.1.self_attn.A_log"));
  CHECK(m.find("model.layers.1.self_attn.a_proj.weight"));
}

