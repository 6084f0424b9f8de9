// The Llama-layout model (train/model.h): logits, loss and every parameter gradient against a PyTorch
// autograd reference of the Llama formulas, against finite differences, and AdamW against
// torch.optim.AdamW.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/model/ops.h"
#include "attnscope/train/model.h"
#include "attnscope/train/optimizer.h"
#include "check.h"
#include "model/fixtures.h"
#include "train/train_fixture.h"

using namespace attnscope;
using namespace attnscope::train;
using attnscope::test::check_rel;
using attnscope::test::error_of;
using attnscope::test::contains;
using attnscope::test::Fixture;
using attnscope::test::check_against_fixture;
using attnscope::test::train_config_of;
using attnscope::test::random_floats;
using V = std::vector<float>;

namespace {

void check_model_fixture(const char* name) {
  const Fixture f(name);
  Model model(train_config_of(f));
  check_against_fixture(f, model, 1e-4, 1e-4);
}

}  // namespace

TEST_CASE("train model: logits, loss and every gradient match PyTorch (SwiGLU MLP, GQA G = 2)") {
  check_model_fixture("model_mlp");
}

TEST_CASE("train model: logits, loss and every gradient match PyTorch (attention-only, MQA G = 1)") {
  check_model_fixture("model_attn_only");
}

TEST_CASE("train model: the whole-model gradient matches finite differences") {
  ModelConfig c;
  c.vocab_size = 9, c.layers = 2, c.d_model = 12, c.heads = 3, c.groups = 1, c.mlp = true, c.intermediate_size = 10;
  Model model(c);
  model.init_weights(7);
  // Larger weights than the 0.02 initialisation, so every path carries a gradient worth measuring.
  for (size_t i = 0; i < model.arena_size(); ++i) model.weights()[i] *= 15.0f;
  for (const ParamView& v : model.params())
    if (v.shape.size() == 1)
      for (size_t i = 0; i < v.size; ++i) model.weights()[v.offset + i] = 1.0f + 0.1f * float(i % 5);
  const int B = 2, T = 5;
  const std::vector<int32_t> ids = {1, 4, 2, 8, 0, 3, 3, 7, 5, 6}, targets = {4, 2, 8, -1, 1, 3, 7, 5, 6, 2};
  Activations a = model.make_activations(B, T);
  model.forward(a, ids.data(), targets.data());
  model.zero_grads();
  model.backward(a);
  // Every tensor, a few entries each (all of a norm's), by central differences in double of the loss.
  Rng rng(3);
  V analytic, numeric;
  for (const ParamView& v : model.params()) {
    const int samples = v.shape.size() == 1 ? int(v.size) : 6;
    for (int s = 0; s < samples; ++s) {
      const size_t i = v.offset + (v.shape.size() == 1 ? size_t(s) : size_t(rng.next_u64() % v.size));
      float& w = model.weights()[i];
      const float old = w, h = 1e-2f;
      w = old + h;
      const double plus = model.forward(a, ids.data(), targets.data());
      w = old - h;
      const double minus = model.forward(a, ids.data(), targets.data());
      w = old;
      analytic.push_back(model.grads()[i]);
      numeric.push_back(float((plus - minus) / (2.0 * h)));
    }
  }
  check_rel(analytic, numeric, 2e-2, "sampled gradient entries of every tensor");
}

TEST_CASE("train model: the arena has Llama names, 64-byte aligned views, no MLP when attention-only") {
  ModelConfig c;
  c.vocab_size = 10, c.layers = 2, c.d_model = 16, c.heads = 4, c.groups = 2;
  c.mlp = false;
  const Model attn(c);
  CHECK(attn.find("model.layers.1.self_attn.k_proj.weight") != nullptr);
  CHECK(attn.find("model.layers.1.self_attn.k_proj.weight")->shape == std::vector<int64_t>{8, 16});
  CHECK(attn.find("model.layers.0.mlp.up_proj.weight") == nullptr);
  CHECK(attn.find("model.layers.0.post_attention_layernorm.weight") == nullptr);
  c.mlp = true;
  const Model full(c);
  CHECK(full.find("model.layers.0.mlp.down_proj.weight")->shape == std::vector<int64_t>{16, 64});
  for (const ParamView& v : full.params()) {
    CHECK(v.offset % 16 == 0);
    CHECK(reinterpret_cast<uintptr_t>(full.weights() + v.offset) % 64 == 0);
    CHECK(v.decay == (v.shape.size() == 2));
  }
}

TEST_CASE("train model: bad shapes are refused with a message that says what is valid") {
  ModelConfig c;
  c.vocab_size = 10, c.layers = 2, c.d_model = 64, c.heads = 4, c.groups = 3;
  CHECK(contains(error_of([&] { Model m(c); }), "groups (3) must divide heads (4)"));
  c.groups = 2, c.heads = 5;
  CHECK(contains(error_of([&] { Model m(c); }), "d_model (64) must be divisible by heads (5)"));
  c.heads = 4, c.layers = 5;
  CHECK(contains(error_of([&] { Model m(c); }), "layers must be 1 to 4"));
  c.layers = 2, c.d_model = 512;
  CHECK(contains(error_of([&] { Model m(c); }), "d_model must be 2 to 256"));
  c.d_model = 12, c.heads = 4, c.groups = 1;  // head width 3 cannot rotate in pairs
  CHECK(contains(error_of([&] { Model m(c); }), "must be even"));
  c.d_model = 64, c.heads = 32;
  CHECK(contains(error_of([&] { Model m(c); }), "heads must be 1 to 16"));
}

TEST_CASE("adamw: matches torch.optim.AdamW with the warm-up/cosine schedule and gradient clipping") {
  const Fixture f("adamw");
  OptimizerSettings s;
  s.lr = float(f.number("lr"));
  s.warmup = f.size("warmup");
  s.total_steps = f.size("total_steps");
  s.min_lr_ratio = float(f.number("min_lr_ratio"));
  s.beta1 = float(f.number("beta1")), s.beta2 = float(f.number("beta2")), s.eps = float(f.number("eps"));
  s.weight_decay = float(f.number("weight_decay"));
  s.clip = float(f.number("clip"));
  const int steps = f.size("steps"), nd = f.size("n_decay"), np = f.size("n_plain");
  // Arena layout as the model's: each view at a multiple of 16 floats.
  const std::vector<ParamView> views = {{"decay", {nd}, 0, size_t(nd), true}, {"plain", {np}, 32, size_t(np), false}};
  const size_t arena = 48;
  V w(arena, 0.0f), g(arena, 0.0f);
  const V pd = f.tensor("p_decay"), pp = f.tensor("p_plain"), gd = f.tensor("grads_decay"), gp = f.tensor("grads_plain"),
          ad = f.tensor("after_decay"), ap = f.tensor("after_plain");
  std::copy(pd.begin(), pd.end(), w.begin());
  std::copy(pp.begin(), pp.end(), w.begin() + 32);
  AdamW opt(s, arena);
  bool clipped = false;
  for (int t = 0; t < steps; ++t) {
    std::fill(g.begin(), g.end(), 0.0f);
    std::copy(gd.begin() + t * nd, gd.begin() + (t + 1) * nd, g.begin());
    std::copy(gp.begin() + t * np, gp.begin() + (t + 1) * np, g.begin() + 32);
    clipped |= opt.step(w.data(), g.data(), views) > s.clip;
    INFO("after step " << t + 1);
    check_rel(V(w.begin(), w.begin() + nd), V(ad.begin() + t * nd, ad.begin() + (t + 1) * nd), 1e-4, "decayed tensor");
    check_rel(V(w.begin() + 32, w.begin() + 32 + np), V(ap.begin() + t * np, ap.begin() + (t + 1) * np), 1e-4,
              "tensor without decay");
  }
  CHECK(clipped);  // the fixture's later gradients exceed the clip, so clipping was exercised
}

TEST_CASE("adamw: the summed step equals summing the arenas then step(), and leaves every arena zero") {
  OptimizerSettings s;
  s.warmup = 2, s.total_steps = 10, s.clip = 1.0f;
  const std::vector<ParamView> views = {{"decay", {5000}, 0, 5000, true}, {"plain", {3000}, 5008, 3000, false}};
  const size_t arena = 8016;
  for (int arenas : {1, 2, 3}) {
    INFO(arenas << " gradient arenas");
    AdamW plain(s, arena), summed(s, arena);
    V w_plain = random_floats(arena, 10), w_summed = w_plain;
    for (int t = 0; t < 4; ++t) {
      std::vector<V> parts;
      std::vector<float*> pointers;
      std::vector<float> share;
      V g(arena, 0.0f);
      for (int c = 0; c < arenas; ++c) {
        parts.push_back(random_floats(arena, uint64_t(100 + 10 * t + c), t < 2 ? 0.001f : 0.5f));
        share.push_back(arenas == 1 ? 1.0f : float(c + 1) / float(arenas * (arenas + 1) / 2));
      }
      for (size_t i = 0; i < arena; ++i) {
        float sum = arenas == 1 ? parts[0][i] : share[0] * parts[0][i];
        for (int c = 1; c < arenas; ++c) sum += share[c] * parts[c][i];
        g[i] = sum;
      }
      for (V& p : parts) pointers.push_back(p.data());
      const float norm_plain = plain.step(w_plain.data(), g.data(), views);
      const float norm_summed = summed.step_summed(w_summed.data(), pointers, share, views);
      CHECK(norm_summed == doctest::Approx(norm_plain).epsilon(1e-6));
      check_rel(w_summed, w_plain, 1e-6, "weights after step " + std::to_string(t + 1));
      for (const V& p : parts) CHECK(std::all_of(p.begin(), p.end(), [](float v) { return v == 0.0f; }));
    }
  }
}

TEST_CASE("adamw: the learning rate warms up linearly, then decays by a cosine to the final ratio") {
  OptimizerSettings s;
  s.lr = 1.0f, s.warmup = 4, s.total_steps = 14, s.min_lr_ratio = 0.1f;
  CHECK(learning_rate(s, 0) == doctest::Approx(0.25));
  CHECK(learning_rate(s, 3) == doctest::Approx(1.0));
  CHECK(learning_rate(s, 4) == doctest::Approx(1.0));
  CHECK(learning_rate(s, 9) == doctest::Approx(0.55));  // halfway down the cosine
  CHECK(learning_rate(s, 14) == doctest::Approx(0.1));
  CHECK(learning_rate(s, 100) == doctest::Approx(0.1));
  for (int t = 4; t < 14; ++t) CHECK(learning_rate(s, t + 1) <= learning_rate(s, t));
  s.lr = 0.0f;
  CHECK(contains(error_of([&] { validate_optimizer_settings(s); }), "learning rate must be a number above 0"));
  s.lr = NAN;
  CHECK(contains(error_of([&] { validate_optimizer_settings(s); }), "learning rate must be a number above 0"));
}
