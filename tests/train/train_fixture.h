// train_fixture.h — a whole trainable model against its PyTorch autograd fixture
// (tests/fixtures/make_train_fixtures.py, make_train_variant_fixtures.py, make_train_linear_fixtures.py):
// the model's config from the fixture's meta.json, its weights from the fixture's tensors, and
// logits, loss and every parameter gradient checked against PyTorch's.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnscope/io/file_io.h"
#include "attnscope/model/model.h"
#include "attnscope/train/model.h"
#include "attnscope/train/trainer.h"
#include "check.h"
#include "model/fixtures.h"

namespace attnscope::test {

// The keys every model fixture writes, and those only some write: `attention` (a kind word of
// attention_kinds(); grouped when absent), `rope_theta`, MLA's ranks, `window` and `window_pattern`, a hybrid's
// `layer_kinds` (make_train_hybrid_fixtures.py).
inline train::ModelConfig train_config_of(const Fixture& f) {
  train::ModelConfig c;
  c.vocab_size = f.size("vocab_size");
  c.layers = f.size("num_hidden_layers");
  c.d_model = f.size("hidden_size");
  c.heads = f.size("num_attention_heads");
  c.groups = f.size("num_key_value_heads");
  c.mlp = f.meta.at("mlp").get<bool>();
  c.intermediate_size = f.size("intermediate_size");
  c.rms_norm_eps = float(f.number("rms_norm_eps"));
  if (f.meta.contains("rope_theta")) c.rope_theta = float(f.number("rope_theta"));
  if (f.meta.contains("attention")) c.attention = train::parse_attention_kind(f.meta.at("attention").get<std::string>());
  if (c.mla()) {
    c.kv_lora_rank = f.size("kv_lora_rank");
    c.q_lora_rank = f.size("q_lora_rank");
    c.rope_head_dim = f.size("qk_rope_head_dim");
  }
  if (f.meta.contains("window")) c.window = f.size("window");
  if (f.meta.contains("window_pattern"))
    c.local_layers = train::parse_window_pattern(f.meta.at("window_pattern").get<std::string>(), c.layers);
  if (f.meta.contains("layer_kinds"))
    c.layer_kinds = train::parse_layer_kinds(f.meta.at("layer_kinds").get<std::string>(), c.layers);
  return c;
}

// The induction task at T = 32 with 32 symbols: uniform over the symbols (a loss of ln 32) is the best a
// model does without reading its context; every kind must get below it. q·k starts near 0 with nothing
// (no softmax, no bias) to make it positive on average, so the kinds leave that plateau at different
// speeds: retention, linear and DeltaNet with two heads of 16, Mamba-2 and Gated DeltaNet with four of 8
// (measured with `attnscope train`; the other width stays on the plateau past 400 steps). One thread, lr 1e-2:
// test_linear_kinds.cpp trains it, test_trained_linear_reopen.cpp saves it and opens it again.
inline train::TrainSettings induction_settings(train::AttentionKind kind, int steps) {
  train::TrainSettings s = train::default_train_settings();
  s.steps = steps, s.batch = 8, s.task.seq_len = 32, s.task.symbols = 32;
  const bool four = kind == train::AttentionKind::mamba2 || kind == train::AttentionKind::gated_deltanet;
  s.model.d_model = 32, s.model.heads = four ? 4 : 2, s.model.groups = s.model.heads, s.model.attention = kind;
  s.optimizer.lr = 1e-2f;
  s.threads = 1;
  return s;
}

// Copies the fixture's tensors into `model` (the fixture names every tensor as the checkpoint does),
// runs forward and backward on its ids and targets, and checks logits and loss (out_tol) and every
// parameter's gradient (grad_tol), each relative to the tensor's largest entry (check_rel).
inline void check_against_fixture(const Fixture& f, train::Model& model, double out_tol, double grad_tol) {
  using V = std::vector<float>;
  REQUIRE_FALSE(model.params().empty());
  for (const train::ParamView& v : model.params()) {
    const V w = f.tensor(v.name);
    REQUIRE(w.size() == v.size);
    std::copy(w.begin(), w.end(), model.weights() + v.offset);
  }
  const int B = f.size("B"), T = f.size("T"), Vn = f.size("vocab_size");
  train::Activations a = model.make_activations(B, T);
  const auto ids = f.ids("ids"), targets = f.ids("targets");
  const float loss = model.forward(a, ids.data(), targets.data());
  check_rel(V(a.logits, a.logits + size_t(B) * T * Vn), f.tensor("logits"), out_tol, "logits");
  check_rel({loss}, f.tensor("loss"), out_tol, "loss");
  model.zero_grads();
  model.backward(a);
  for (const train::ParamView& v : model.params())
    check_rel(V(model.grads() + v.offset, model.grads() + v.offset + v.size), f.tensor("grad." + v.name), grad_tol,
              "gradient of " + v.name);
}

// Saves `trainer`'s model into `dir` and returns a function that sets one key of the saved config.json to
// a value (null: removes the key), writes it and returns model::open's refusal ("" when the folder opens):
// each call starts again from the config as saved.
inline std::function<std::string(const std::string&, const nlohmann::json&)> config_refusal(
    const train::Trainer& trainer, const std::filesystem::path& dir) {
  trainer.save(dir);
  const nlohmann::json good = nlohmann::json::parse(read_file(dir / "config.json", 1 << 20));
  return [good, dir](const std::string& key, const nlohmann::json& value) {
    nlohmann::json c = good;
    if (value.is_null()) c.erase(key);
    else c[key] = value;
    write_file_atomic(dir / "config.json", c.dump());
    return error_of([&] { model::open(dir); });
  };
}

}  // namespace attnscope::test
