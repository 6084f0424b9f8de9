// The trainable hybrid model (issue 39 item 4): layers without a softmax mixed with grouped softmax attention,
// as Qwen3-Next, Granite 4.0-H and Kimi Linear mix them. Whole models against PyTorch autograd
// (tests/fixtures/make_train_hybrid_fixtures.py); the checkpoint (attnscope_linear with layer_types) reopened by
// the model reader with each layer as its kind; a malformed layer_types refused by name; the list and the
// settings refused in words; the comparison without a softmax includes a hybrid.
#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "attnscope/train/checkpoint.h"
#include "attnscope/train/model.h"
#include "attnscope/train/trainer.h"
#include "check.h"
#include "model/fixtures.h"
#include "train/train_fixture.h"
#include "run_cli.h"

using namespace attnscope::train;
using attnscope::test::check_rel;
using attnscope::test::contains;
using attnscope::test::error_of;
using V = std::vector<float>;
namespace fs = std::filesystem;

namespace {

constexpr double out_tol = 1e-5;   // logits, loss: relative to the largest entry (test_linear_kinds.cpp)
constexpr double grad_tol = 1e-4;  // gradients (issue 14's tolerance)

// A small induction run of a hybrid (d_model 32, one thread).
TrainSettings hybrid_settings(const std::string& kinds, int layers, int steps) {
  TrainSettings s = default_train_settings();
  s.steps = steps, s.batch = 8, s.task.seq_len = 32, s.task.symbols = 32;
  s.model.layers = layers, s.model.d_model = 32, s.model.heads = 4, s.model.groups = 4;
  s.model.layer_kinds = parse_layer_kinds(kinds, layers);
  s.optimizer.lr = 1e-2f;
  s.threads = 1;
  return s;
}

}  // namespace

TEST_CASE("train a hybrid: logits, loss and every gradient match PyTorch autograd (softmax layers beside the "
          "recurrences)") {
  for (const char* name : {"model_hybrid_gated_deltanet", "model_hybrid_mixed"}) {
    INFO(name);
    const attnscope::test::Fixture f(name);
    const ModelConfig c = attnscope::test::train_config_of(f);
    Model model(c);
    REQUIRE(model.config().hybrid());
    bool softmax = false, without = false;
    for (int l = 0; l < c.layers; ++l) (model.config().layer_softmax_free(l) ? without : softmax) = true;
    CHECK((softmax && without));
    // each layer has its own kind's tensors: a softmax layer no gates, Gated DeltaNet b_proj and a_proj
    for (int l = 0; l < c.layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
      CHECK((model.find(p + "b_proj.weight") != nullptr) ==
            (c.kind_of(l) == AttentionKind::deltanet || c.kind_of(l) == AttentionKind::gated_deltanet));
      CHECK((model.find(p + "dt_proj.weight") != nullptr) == (c.kind_of(l) == AttentionKind::mamba2));
    }
    attnscope::test::check_against_fixture(f, model, out_tol, grad_tol);
  }
}

TEST_CASE("train a hybrid: the checkpoint records its layer kinds and reopens with every layer as its kind") {
  TrainSettings s = hybrid_settings("gated-deltanet,grouped,mamba2", 3, 3);
  s.model.mlp = true;
  Trainer trainer(s);
  for (int i = 0; i < s.steps; ++i) trainer.step();
  const fs::path dir = attnscope::test::fresh_dir("hybrid_reopen");
  trainer.save(dir);
  const nlohmann::json cfg = nlohmann::json::parse(attnscope::read_file(dir / "config.json", 1 << 20));
  CHECK(cfg.at("model_type") == "attnscope_linear");
  CHECK(cfg.at("attention_kind") == "hybrid");
  CHECK(cfg.at("layer_types") == nlohmann::json({"gated-deltanet", "grouped", "mamba2"}));

  const std::shared_ptr<const attnscope::model::Model> loaded = attnscope::model::open(dir);
  const TrainSnapshot snap = trainer.snapshot();
  CHECK(snap.layer_kinds == "gated-deltanet,grouped,mamba2");
  const std::vector<int32_t>& ids = snap.probe_ids;
  const int L = s.model.layers, H = s.model.heads, T = int(ids.size()), vocab = s.model.vocab_size;
  const attnscope::model::ForwardResult r = attnscope::model::forward(*loaded, ids);
  REQUIRE(r.layers == L);
  const char* titles[] = {"Gated DeltaNet", "", "Mamba-2"};
  for (int l = 0; l < L; ++l) {
    CAPTURE(l);
    const bool linear = l != 1;
    CHECK(r.layer_maps[size_t(l)].signed_weights == linear);
    if (linear) CHECK(r.layer_maps[size_t(l)].kind == titles[l]);
    V mine, theirs;
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
          mine.push_back(snap.probe_probs[size_t(l)][size_t(h)](i, j));
          theirs.push_back(linear ? r.linear_map(l, h)(i, j) : r.attention(l, h)(i, j));
        }
    check_rel(theirs, mine, out_tol, linear ? "a layer's matrices M" : "the softmax layer's probabilities");
  }
  const Model& m = trainer.model();
  Activations a = m.make_activations(1, T);
  m.forward(a, ids.data(), nullptr);
  check_rel(V(r.logits.data(), r.logits.data() + size_t(T) * vocab), V(a.logits, a.logits + size_t(T) * vocab), 1e-4,
            "the reopened hybrid's logits");
  // The Model view's layers: Gated DeltaNet's, then the softmax layer's, then Mamba-2's analysis
  for (int l = 0; l < L; ++l) {
    attnscope::model::ForwardOptions options;
    options.detail_layer = l;
    const attnscope::Analysis layer = attnscope::layer_analysis(
        *loaded, attnscope::model::forward(*loaded, ids, options), std::vector<std::string>(ids.size(), "x"));
    REQUIRE(layer.attention);
    CHECK(layer.attention->linear == (l != 1));
    if (l == 0) CHECK(layer.attention->linear_spec.kind == attnscope::LinearLayerKind::gated_deltanet);
    if (l == 2) CHECK(layer.attention->linear_spec.kind == attnscope::LinearLayerKind::mamba2);
  }
}

TEST_CASE("train a hybrid: a checkpoint whose layer_types is malformed is refused by name") {
  Trainer trainer(hybrid_settings("gated-deltanet,grouped", 2, 1));
  const fs::path dir = attnscope::test::fresh_dir("hybrid_refused");
  const auto refused = attnscope::test::config_refusal(trainer, dir);
  const std::string short_list = refused("layer_types", {"gated-deltanet"});
  CHECK(contains(short_list, "layer_types"));
  CHECK(contains(short_list, "2 entries"));
  const std::string unknown = refused("layer_types", {"gated-deltanet", "softmax"});
  CHECK(contains(unknown, "\"softmax\""));
  CHECK(contains(unknown, "grouped"));  // what is valid
  CHECK(contains(refused("layer_types", {"grouped", "grouped"}), "not a hybrid"));
  CHECK(contains(refused("layer_types", nullptr), "layer_types"));  // "hybrid" without its list
  CHECK(contains(refused("attention_kind", "gated-deltanet"), "layer_types"));  // a list for one kind
  CHECK(contains(refused("attention_kind", "softmax"), "hybrid"));  // the valid words name it
  CHECK(refused("layer_types", {"gated-deltanet", "grouped"}).empty());  // the list as saved opens
  // the list says mamba2 where the tensors are Gated DeltaNet's: its dt_proj is not in the file
  CHECK(contains(refused("layer_types", {"mamba2", "grouped"}), "dt_proj"));
  // no K/V pooling: the window's Convert to GQA / MQA and `--kv-heads` say so for a hybrid in its own words
  REQUIRE(refused("layer_types", {"gated-deltanet", "grouped"}).empty());
  const std::string pooled = error_of([&] { (void)attnscope::model::convert_kv_heads(*attnscope::model::open(dir), 1); });
  CHECK(contains(pooled, "trained hybrid"));
  CHECK(contains(pooled, "heads only"));
}

TEST_CASE("train a hybrid: the layer kinds list and the settings are refused in words") {
  CHECK(parse_layer_kinds("gated-deltanet,grouped", 4) ==
        std::vector<AttentionKind>{AttentionKind::gated_deltanet, AttentionKind::grouped, AttentionKind::gated_deltanet,
                                   AttentionKind::grouped});
  CHECK(every_kth_softmax(AttentionKind::mamba2, 3, 4) ==
        std::vector<AttentionKind>{AttentionKind::mamba2, AttentionKind::mamba2, AttentionKind::grouped,
                                   AttentionKind::mamba2});
  CHECK(layer_kinds_text(parse_layer_kinds("mamba2,grouped", 3)) == "mamba2,grouped,mamba2");
  const std::string bad = error_of([] { parse_layer_kinds("gated-deltanet,softmax", 2); });
  CHECK(contains(bad, "\"softmax\""));
  CHECK(contains(bad, attention_kind_words()));
  auto refusal = [](const std::string& kinds, int layers) {
    ModelConfig c;
    c.vocab_size = 11, c.layers = layers, c.d_model = 16, c.heads = 2, c.groups = 2;
    c.layer_kinds = parse_layer_kinds(kinds, layers);
    return error_of([&] { validate_model_config(c); });
  };
  CHECK(contains(refusal("grouped", 2), "not a hybrid"));
  CHECK(contains(refusal("gated-deltanet", 2), "not a hybrid"));
  CHECK(contains(refusal("mla,gated-deltanet", 2), "MLA"));
  CHECK(refusal("deltanet,grouped", 2).empty());
  ModelConfig gqa;
  gqa.vocab_size = 11, gqa.layers = 2, gqa.d_model = 16, gqa.heads = 2, gqa.groups = 1;
  gqa.layer_kinds = parse_layer_kinds("gated-deltanet,grouped", 2);
  CHECK(contains(error_of([&] { validate_model_config(gqa); }), "groups must equal heads"));
}

TEST_CASE("train a hybrid: its memory is the softmax layers' cache plus the other layers' state") {
  ModelConfig c;
  c.vocab_size = 11, c.layers = 4, c.d_model = 32, c.heads = 4, c.groups = 4;
  c.layer_kinds = every_kth_softmax(AttentionKind::gated_deltanet, 2, 4);
  ModelConfig mha = c, gdn = c;
  mha.layer_kinds.clear(), gdn.layer_kinds.clear();
  gdn.attention = AttentionKind::gated_deltanet;
  // two of four layers each way: half the MHA cache, half the Gated DeltaNet state
  CHECK(kv_cache_bytes_per_token(c) * 2 == kv_cache_bytes_per_token(mha));
  CHECK(state_bytes(c) * 2 == state_bytes(gdn));
  CHECK(hybrid_title(c) == "Gated DeltaNet + softmax (layers 1, 3)");
  // "Compare without a softmax" trains the hybrid after the five kinds of one kind
  TrainSettings s = default_train_settings();
  s.model.layers = 2;
  const std::vector<TrainSettings> runs = no_softmax_variants(s);
  REQUIRE(runs.size() == 6);
  CHECK(runs.back().model.hybrid());
  CHECK(layer_kinds_text(runs.back().model.layer_kinds) == "gated-deltanet,grouped");
  s.model.layers = 1;  // one layer cannot mix two kinds
  CHECK(no_softmax_variants(s).size() == 5);
}
