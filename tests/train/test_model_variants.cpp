// The attention variants of the trainable model (issue 24 item 4): multi-head latent attention
// (DeepSeek-V2) and sliding windows. Each new op (attention with its own widths and window, the
// interleaved rotary part, MLA's keys and values) against PyTorch autograd fixtures
// (tests/fixtures/make_train_variant_fixtures.py), against finite differences and fast == reference;
// whole models against PyTorch and finite differences; the saved checkpoints reopened by attnscope's
// checkpoint loader give the trainer's attentions; the comparison's KV bytes follow the formulas.
//
// Sections: ops · models · checkpoints · the comparison
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "attnscope/model/ops.h"
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
using attnscope::test::train_config_of;
using attnscope::test::random_floats;
using V = std::vector<float>;
namespace fs = std::filesystem;

namespace {

constexpr double out_tol = 1e-5;   // outputs and probabilities, relative to the largest entry
constexpr double grad_tol = 1e-4;  // gradients (issue 14's tolerance for the ops)

double weighted_sum(const V& y, const V& w) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += double(y[i]) * w[i];
  return s;
}

void check_finite_differences(V& x, const V& analytic, const std::function<double()>& loss, float h, double rel,
                              const std::string& what) {
  V numeric(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float old = x[i];
    x[i] = old + h;
    const double plus = loss();
    x[i] = old - h;
    const double minus = loss();
    x[i] = old;
    numeric[i] = float((plus - minus) / (2.0 * double(h)));
  }
  check_rel(analytic, numeric, rel, what + " vs finite differences");
}

struct AttentionImpl {
  const char* name;
  decltype(&ops::attention_forward_general) forward;
  decltype(&ops::attention_backward_general) backward;
};
const AttentionImpl attention_impls[] = {
    {"fast", ops::attention_forward_general, ops::attention_backward_general},
    {"reference", ops::reference::attention_forward_general, ops::reference::attention_backward_general}};

}  // namespace

// ================================ ops ============================================================

TEST_CASE("train ops: attention with a window and with Dk != Dv matches PyTorch autograd (fast and reference)") {
  for (const char* name : {"attention_window_g2", "attention_dk_dv", "attention_dk_dv_window"}) {
    const Fixture f(name);
    const int B = f.size("B"), T = f.size("T"), H = f.size("H"), G = f.size("G"), Dk = f.size("Dk"), Dv = f.size("Dv");
    ops::AttentionOptions o;
    o.window = f.size("window");
    const V q = f.tensor("q"), k = f.tensor("k"), v = f.tensor("v");
    for (const AttentionImpl& impl : attention_impls) {
      INFO(name << " " << impl.name);
      V out(size_t(B) * T * H * Dv), probs(size_t(B) * H * T * T), dq(q.size(), 0.0f), dk(k.size(), 0.0f),
          dv(v.size(), 0.0f);
      impl.forward(out.data(), probs.data(), q.data(), k.data(), v.data(), B, T, H, G, Dk, Dv, o);
      impl.backward(dq.data(), dk.data(), dv.data(), f.tensor("dout").data(), probs.data(), q.data(), k.data(),
                    v.data(), B, T, H, G, Dk, Dv, o);
      check_rel(out, f.tensor("out"), out_tol, "out");
      check_rel(probs, f.tensor("probs"), out_tol, "probs");
      check_rel(dq, f.tensor("dq"), grad_tol, "dq");
      check_rel(dk, f.tensor("dk"), grad_tol, "dk");
      check_rel(dv, f.tensor("dv"), grad_tol, "dv");
      // the explicit mask: outside the window or in the future, exactly 0
      for (int bh = 0; bh < B * H; ++bh)
        for (int i = 0; i < T; ++i)
          for (int j = 0; j < T; ++j)
            if (j > i || (o.window > 0 && j <= i - o.window)) CHECK(probs[(size_t(bh) * T + i) * T + j] == 0.0f);
    }
  }
}

TEST_CASE("train ops: interleaved rotary part and MLA's keys and values match PyTorch autograd") {
  {
    const Fixture f("rope_interleaved");
    const int B = f.size("B"), T = f.size("T"), NH = f.size("NH"), S = f.size("S"), off = f.size("offset"),
              R = f.size("R"), pos0 = f.size("pos0");
    const float theta = float(f.number("theta"));
    for (auto [fw, bw] : {std::pair{&ops::rope_interleaved_forward, &ops::rope_interleaved_backward},
                          std::pair{&ops::reference::rope_interleaved_forward, &ops::reference::rope_interleaved_backward}}) {
      V x = f.tensor("x"), dx = f.tensor("dout");
      fw(x.data(), B, T, NH, S, off, R, theta, pos0);
      bw(dx.data(), B, T, NH, S, off, R, theta, pos0);
      check_rel(x, f.tensor("out"), out_tol, "rope_interleaved out");
      check_rel(dx, f.tensor("dx"), grad_tol, "rope_interleaved dx");
    }
  }
  {
    const Fixture f("mla_kv");
    const int BT = f.size("BT"), H = f.size("H"), N = f.size("N"), R = f.size("R"), Dv = f.size("Dv");
    for (auto [fw, bw] : {std::pair{&ops::mla_kv_forward, &ops::mla_kv_backward},
                          std::pair{&ops::reference::mla_kv_forward, &ops::reference::mla_kv_backward}}) {
      V k(size_t(BT) * H * (N + R)), v(size_t(BT) * H * Dv), dkv(size_t(BT) * H * (N + Dv), 0.0f), dkpe(size_t(BT) * R, 0.0f);
      fw(k.data(), v.data(), f.tensor("kv").data(), f.tensor("kpe").data(), BT, H, N, R, Dv);
      bw(dkv.data(), dkpe.data(), f.tensor("dk").data(), f.tensor("dv").data(), BT, H, N, R, Dv);
      check_rel(k, f.tensor("k"), 0, "mla k");
      check_rel(v, f.tensor("v"), 0, "mla v");
      check_rel(dkv, f.tensor("dkv"), grad_tol, "mla dkv");
      check_rel(dkpe, f.tensor("dkpe"), grad_tol, "mla dkpe (summed over the heads)");
    }
  }
}

TEST_CASE("train ops: the new ops' backward passes match finite differences") {
  const float h = 1e-2f;
  const double rel = 2e-3;
  for (int window : {0, 2}) {
    const int B = 2, T = 5, H = 2, G = 1, Dk = 6, Dv = 3;
    ops::AttentionOptions o;
    o.window = window;
    V q = random_floats(B * T * H * Dk, 21), k = random_floats(B * T * G * Dk, 22), v = random_floats(B * T * G * Dv, 23);
    const V dy = random_floats(size_t(B) * T * H * Dv, 24);
    V out(dy.size()), probs(size_t(B) * H * T * T), dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
    ops::attention_forward_general(out.data(), probs.data(), q.data(), k.data(), v.data(), B, T, H, G, Dk, Dv, o);
    ops::attention_backward_general(dq.data(), dk.data(), dv.data(), dy.data(), probs.data(), q.data(), k.data(),
                                    v.data(), B, T, H, G, Dk, Dv, o);
    auto loss = [&] {
      ops::attention_forward_general(out.data(), probs.data(), q.data(), k.data(), v.data(), B, T, H, G, Dk, Dv, o);
      return weighted_sum(out, dy);
    };
    INFO("window " << window);
    check_finite_differences(q, dq, loss, h, rel, "attention dq");
    check_finite_differences(k, dk, loss, h, rel, "attention dk");
    check_finite_differences(v, dv, loss, h, rel, "attention dv");
  }
  {
    const int B = 2, T = 4, NH = 2, S = 7, off = 3, R = 4;
    V x = random_floats(B * T * NH * S, 25);
    const V dy = random_floats(x.size(), 26);
    V dx = dy;
    ops::rope_interleaved_backward(dx.data(), B, T, NH, S, off, R, 10000.0f, 0);
    auto loss = [&] {
      V y = x;
      ops::rope_interleaved_forward(y.data(), B, T, NH, S, off, R, 10000.0f, 0);
      return weighted_sum(y, dy);
    };
    check_finite_differences(x, dx, loss, h, rel, "rope_interleaved dx");
  }
  {
    const int BT = 3, H = 3, N = 2, R = 2, Dv = 3;
    V kv = random_floats(BT * H * (N + Dv), 27), kpe = random_floats(BT * R, 28);
    const V dyk = random_floats(BT * H * (N + R), 29), dyv = random_floats(BT * H * Dv, 30);
    V dkv(kv.size(), 0.0f), dkpe(kpe.size(), 0.0f);
    ops::mla_kv_backward(dkv.data(), dkpe.data(), dyk.data(), dyv.data(), BT, H, N, R, Dv);
    auto loss = [&] {
      V k(dyk.size()), v(dyv.size());
      ops::mla_kv_forward(k.data(), v.data(), kv.data(), kpe.data(), BT, H, N, R, Dv);
      return weighted_sum(k, dyk) + weighted_sum(v, dyv);
    };
    check_finite_differences(kv, dkv, loss, h, rel, "mla_kv dkv");
    check_finite_differences(kpe, dkpe, loss, h, rel, "mla_kv dkpe");
  }
}

TEST_CASE("train ops: the new ops' fast path equals the reference on shapes that run threaded") {
  const int B = 4, T = 64, H = 8, G = 8, Dk = 24, Dv = 16;
  ops::AttentionOptions o;
  o.window = 9;
  const V q = random_floats(size_t(B) * T * H * Dk, 31), k = random_floats(size_t(B) * T * G * Dk, 32),
          v = random_floats(size_t(B) * T * G * Dv, 33), dy = random_floats(size_t(B) * T * H * Dv, 34);
  V out[2], probs[2], dq[2], dk[2], dv[2];
  for (int i = 0; i < 2; ++i) {
    out[i].assign(dy.size(), 0), probs[i].assign(size_t(B) * H * T * T, 0), dq[i].assign(q.size(), 0);
    dk[i].assign(k.size(), 0), dv[i].assign(v.size(), 0);
    attention_impls[i].forward(out[i].data(), probs[i].data(), q.data(), k.data(), v.data(), B, T, H, G, Dk, Dv, o);
    attention_impls[i].backward(dq[i].data(), dk[i].data(), dv[i].data(), dy.data(), probs[i].data(), q.data(),
                                k.data(), v.data(), B, T, H, G, Dk, Dv, o);
  }
  check_rel(out[0], out[1], 2e-5, "out");
  check_rel(probs[0], probs[1], 2e-5, "probs");
  check_rel(dq[0], dq[1], 2e-5, "dq");
  check_rel(dk[0], dk[1], 2e-5, "dk");
  check_rel(dv[0], dv[1], 2e-5, "dv");
  V a = random_floats(size_t(B) * T * H * 40, 35), b = a;
  ops::rope_interleaved_forward(a.data(), B, T, H, 40, 24, 16, 10000.0f, 0);
  ops::reference::rope_interleaved_forward(b.data(), B, T, H, 40, 24, 16, 10000.0f, 0);
  check_rel(a, b, 1e-6, "rope_interleaved");
}

// ================================ models =========================================================

TEST_CASE("train model variants: logits, loss and every gradient match PyTorch (MLA, GQA with a window)") {
  for (const char* name : {"model_mla_q_lora", "model_mla_window", "model_gqa_window"}) {
    INFO(name);
    const Fixture f(name);
    Model model(train_config_of(f));
    check_against_fixture(f, model, out_tol, grad_tol);
  }
}

TEST_CASE("train model variants: the MLA model's gradient matches finite differences (with and without q_lora_rank)") {
  for (int rq : {0, 5}) {
    ModelConfig c;
    c.vocab_size = 9, c.layers = 2, c.d_model = 12, c.heads = 3, c.mlp = rq > 0, c.intermediate_size = 10;
    c.attention = AttentionKind::mla, c.kv_lora_rank = 4, c.q_lora_rank = rq, c.rope_head_dim = 2;
    c.window = 3, c.local_layers = parse_window_pattern("global,local", 2);
    Model model(c);
    model.init_weights(11);
    for (size_t i = 0; i < model.arena_size(); ++i) model.weights()[i] *= 20.0f;
    for (const ParamView& v : model.params())
      if (v.shape.size() == 1)
        for (size_t i = 0; i < v.size; ++i) model.weights()[v.offset + i] = 1.0f + 0.1f * float(i % 5);
    const int B = 2, T = 5;
    const std::vector<int32_t> ids = {1, 4, 2, 8, 0, 3, 3, 7, 5, 6}, targets = {4, 2, 8, -1, 1, 3, 7, 5, 6, 2};
    Activations a = model.make_activations(B, T);
    model.forward(a, ids.data(), targets.data());
    model.zero_grads();
    model.backward(a);
    Rng rng(5);
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
    INFO("q_lora_rank " << rq);
    check_rel(analytic, numeric, 2e-2, "sampled gradient entries of every tensor");
  }
}

TEST_CASE("train model variants: MLA tensors carry DeepSeek-V2's names; bad ranks, windows and patterns are refused") {
  ModelConfig c;
  c.vocab_size = 10, c.layers = 1, c.d_model = 16, c.heads = 4;
  c.attention = AttentionKind::mla, c.kv_lora_rank = 6, c.q_lora_rank = 8, c.rope_head_dim = 4;
  const Model m(c);
  CHECK(m.find("model.layers.0.self_attn.q_a_proj.weight")->shape == std::vector<int64_t>{8, 16});
  CHECK(m.find("model.layers.0.self_attn.q_a_layernorm.weight")->shape == std::vector<int64_t>{8});
  CHECK(m.find("model.layers.0.self_attn.q_b_proj.weight")->shape == std::vector<int64_t>{4 * (4 + 4), 8});
  CHECK(m.find("model.layers.0.self_attn.kv_a_proj_with_mqa.weight")->shape == std::vector<int64_t>{6 + 4, 16});
  CHECK(m.find("model.layers.0.self_attn.kv_a_layernorm.weight")->shape == std::vector<int64_t>{6});
  CHECK(m.find("model.layers.0.self_attn.kv_b_proj.weight")->shape == std::vector<int64_t>{4 * (4 + 4), 6});
  CHECK(m.find("model.layers.0.self_attn.o_proj.weight")->shape == std::vector<int64_t>{16, 16});
  CHECK(m.find("model.layers.0.self_attn.k_proj.weight") == nullptr);
  CHECK(m.find("model.layers.0.self_attn.q_proj.weight") == nullptr);
  c.kv_lora_rank = 17;
  CHECK(contains(error_of([&] { Model bad(c); }), "kv_lora_rank (the latent width) must be 1 to d_model (16)"));
  c.kv_lora_rank = 6, c.rope_head_dim = 3;
  CHECK(contains(error_of([&] { Model bad(c); }), "rope_head_dim (the rotary part of each head) must be even"));
  c.rope_head_dim = 4, c.q_lora_rank = 99;
  CHECK(contains(error_of([&] { Model bad(c); }), "q_lora_rank must be 0"));
  c.q_lora_rank = 0, c.window = -1;
  CHECK(contains(error_of([&] { Model bad(c); }), "the sliding window must be 1 to 512 tokens"));
  CHECK(contains(error_of([] { parse_window_pattern("local,wide", 2); }), "has \"wide\""));
  CHECK(parse_window_pattern("local,local,global", 4) == std::vector<bool>{true, true, false, true});
  CHECK(window_pattern_text(parse_window_pattern("local,global", 3), 3) == "local,global,local");
}

// ================================ checkpoints ====================================================

namespace {

TrainSettings tiny_settings() {
  TrainSettings s = default_train_settings();
  s.steps = 4, s.batch = 4, s.task.seq_len = 16, s.model.d_model = 32;
  return s;
}

// Trains a few steps, saves, reopens with attnscope's checkpoint loader (engine/src/model) and
// compares every head's attention on the probe with the trainer's own.
void check_reopened(TrainSettings s, const std::string& dir_name, const std::string& model_type) {
  Trainer trainer(s);
  for (int i = 0; i < s.steps; ++i) trainer.step();
  const fs::path dir = attnscope::test::fresh_dir(dir_name);
  trainer.save(dir);
  const auto cfg = nlohmann::json::parse(read_file(dir / "config.json", 1 << 20));
  CHECK(cfg.at("model_type") == model_type);
  const std::shared_ptr<const model::Model> loaded = model::open(dir);
  const TrainSnapshot snap = trainer.snapshot();
  const std::vector<int32_t> ids = snap.probe_ids;  // the sequence the snapshot's heads are drawn on
  const model::ForwardResult r = model::forward(*loaded, ids);
  const int L = s.model.layers, H = s.model.heads, T = int(ids.size());
  REQUIRE(r.layers == L);
  REQUIRE(r.heads == H);
  V mine, theirs;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
          mine.push_back(snap.probe_probs[size_t(l)][size_t(h)](i, j));
          theirs.push_back(r.attention(l, h)(i, j));
        }
  check_rel(theirs, mine, out_tol, "the reopened checkpoint's attentions");
}

}  // namespace

TEST_CASE("train checkpoint: a saved MLA model reopens as deepseek_v2 with the trainer's attentions") {
  TrainSettings s = tiny_settings();
  s.model.attention = AttentionKind::mla, s.model.groups = s.model.heads;
  s.model.kv_lora_rank = 8, s.model.rope_head_dim = 4;
  check_reopened(s, "model_variants_mla", "deepseek_v2");
  s.model.q_lora_rank = 12, s.model.mlp = true;
  check_reopened(s, "model_variants_mla_q", "deepseek_v2");
}

TEST_CASE("train checkpoint: windowed models reopen as mistral (every layer) and qwen2 (local,global)") {
  TrainSettings s = tiny_settings();
  s.model.window = 5;
  check_reopened(s, "model_variants_mistral", "mistral");
  s.model.local_layers = parse_window_pattern("local,global", s.model.layers);
  check_reopened(s, "model_variants_qwen2", "qwen2");
}

TEST_CASE("train checkpoint: an MLA model with a window is refused with a message, nothing written") {
  TrainSettings s = tiny_settings();
  s.model.attention = AttentionKind::mla, s.model.window = 4;
  Trainer trainer(s);
  trainer.step();
  const fs::path dir = attnscope::test::fresh_dir("model_variants_refused");
  CHECK(contains(error_of([&] { trainer.save(dir / "run"); }), "DeepSeek-V2's checkpoint format has no sliding window"));
  CHECK(!fs::exists(dir / "run" / "config.json"));
}

// ================================ the comparison =================================================

TEST_CASE("train comparison: MHA, GQA, MQA, MLA and a window run on the same data; KV bytes follow the formulas") {
  TrainSettings s = tiny_settings();
  s.steps = 3;
  s.model.heads = 4, s.model.groups = 2, s.model.kv_lora_rank = 8, s.model.rope_head_dim = 4;
  const std::vector<TrainSettings> runs = attention_variants(s, true);
  REQUIRE(runs.size() == 5);
  const int L = 2, D = 32 / 4, T = 16;
  std::vector<std::string> names;
  std::vector<double> at_T;
  std::vector<int64_t> full;
  std::vector<std::vector<float>> curves;
  for (const TrainSettings& v : runs) {
    Trainer t(v);
    t.run();
    const TrainSnapshot snap = t.snapshot();
    names.push_back(attention_kind_name(t.model().config()));
    full.push_back(snap.kv_cache_bytes_per_token);
    at_T.push_back(snap.kv_cache_bytes_per_token_at_T);
    curves.push_back(t.losses());
    CHECK(t.losses().size() == 3);
    for (float loss : t.losses()) CHECK(std::isfinite(loss));
  }
  CHECK(names == std::vector<std::string>{"MHA", "GQA", "MQA", "MLA", "GQA"});
  // grouped: 2 · L · G · D · 4; MLA: L · (r_kv + d_rope) · 4
  CHECK(full == std::vector<int64_t>{2 * L * 4 * D * 4, 2 * L * 2 * D * 4, 2 * L * 1 * D * 4, L * (8 + 4) * 4,
                                     2 * L * 2 * D * 4});
  // the window run (GQA, W = T/4 = 4 on every layer) keeps 4 of the 16 tokens
  CHECK(runs[4].model.window == 4);
  CHECK(at_T[4] == doctest::Approx(2.0 * L * 2 * D * 4 * 4 / T));
  for (int i = 0; i < 4; ++i) CHECK(at_T[size_t(i)] == doctest::Approx(double(full[size_t(i)])));
  // same seed, same data: the first loss of every run is that of a fresh model on the same batch (near ln V)
  for (const auto& c : curves) CHECK(c[0] == doctest::Approx(curves[0][0]).epsilon(0.02));
  // a set window and pattern are kept for the window run
  s.model.window = 6, s.model.local_layers = parse_window_pattern("local,global", 2);
  const TrainSettings w = attention_variants(s, true).back();
  CHECK(w.model.window == 6);
  CHECK(w.model.local_layers == std::vector<bool>{true, false});
  CHECK(kv_cache_bytes_per_token_at(w.model, T) == doctest::Approx(2.0 * 2 * D * 4 * (6.0 / T + 1.0)));
  CHECK(attention_variants(s, false).size() == 4);
}

TEST_CASE("train comparison: an MLA run with a window gives the same loss curve bit for bit on two threads") {
  TrainSettings s = tiny_settings();
  s.steps = 5, s.threads = 2;
  s.model.attention = AttentionKind::mla, s.model.q_lora_rank = 8, s.model.window = 5;
  s.model.local_layers = parse_window_pattern("local,global", s.model.layers);
  Trainer a(s), b(s);
  for (int i = 0; i < s.steps; ++i) a.step(), b.step();
  CHECK(a.losses() == b.losses());
  CHECK(std::equal(a.model().weights(), a.model().weights() + a.model().arena_size(), b.model().weights()));
  for (float loss : a.losses()) CHECK(std::isfinite(loss));
}
