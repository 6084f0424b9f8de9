// A model attnscope trained without a softmax, saved (attnscope_linear) and opened again by the model reader
// (engine/src/model, family attnscope_linear): every kind's layers give the trainer's matrices M and logits, the
// Shapes trace counts the file's tensors, and a file whose kind, heads or gates are wrong is refused by name.
// (A file of its own: the analysis headers' AttentionKind would clash with the trainer's in test_linear_kinds.cpp;
// the two share the run's settings, train_fixture.h induction_settings.)
#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "attnscope/train/model.h"
#include "attnscope/train/trainer.h"
#include "check.h"
#include "model/fixtures.h"
#include "run_cli.h"
#include "train/train_fixture.h"

using namespace attnscope::train;
using attnscope::test::check_rel;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::induction_settings;
using V = std::vector<float>;
namespace fs = std::filesystem;

namespace {

constexpr double out_tol = 1e-5;  // as test_linear_kinds.cpp: relative to the largest entry

const AttentionKind softmax_free_kinds[] = {AttentionKind::linear, AttentionKind::retention, AttentionKind::mamba2,
                                            AttentionKind::deltanet, AttentionKind::gated_deltanet};

}  // namespace

TEST_CASE("train without a softmax: every kind's checkpoint reopens with attnscope's model reader, each layer's "
          "matrices M and the logits the trainer's") {
  for (const AttentionKind kind : softmax_free_kinds) {
    CAPTURE(attention_kind_word(kind));
    TrainSettings s = induction_settings(kind, 3);
    s.model.mlp = kind == AttentionKind::mamba2;  // one kind with the MLP the others leave out
    Trainer trainer(s);
    for (int i = 0; i < s.steps; ++i) trainer.step();  // the gates move away from their initial values
    const fs::path dir = attnscope::test::fresh_dir(std::string("linear_kinds_reopen_") + attention_kind_word(kind));
    trainer.save(dir);
    const std::shared_ptr<const attnscope::model::Model> loaded = attnscope::model::open(dir);
    CHECK(loaded->config.model_type == "attnscope_linear");
    const TrainSnapshot snap = trainer.snapshot();
    const std::vector<int32_t>& ids = snap.probe_ids;
    const int L = s.model.layers, H = s.model.heads, T = int(ids.size()), vocab = s.model.vocab_size;
    const attnscope::model::ForwardResult r = attnscope::model::forward(*loaded, ids);
    REQUIRE(r.layers == L);
    V mine, theirs;
    for (int l = 0; l < L; ++l) {
      REQUIRE(r.layer_maps[size_t(l)].signed_weights);
      REQUIRE(r.layer_maps[size_t(l)].heads == H);
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < T; ++i)
          for (int j = 0; j < T; ++j) {
            mine.push_back(snap.probe_probs[size_t(l)][size_t(h)](i, j));
            theirs.push_back(r.linear_map(l, h)(i, j));
          }
    }
    check_rel(theirs, mine, out_tol, "the reopened checkpoint's matrices M");
    // the logits of the trainer's own forward on the same sequence
    const Model& m = trainer.model();
    Activations a = m.make_activations(1, T);
    m.forward(a, ids.data(), nullptr);
    const V expected(a.logits, a.logits + size_t(T) * vocab);
    const V got(r.logits.data(), r.logits.data() + size_t(T) * vocab);
    check_rel(got, expected, 1e-4, "the reopened checkpoint's logits");
    // The Shapes view's trace of layer 0: its parameters are the layer's self_attn tensors in the file.
    attnscope::model::ForwardOptions options;
    options.detail_layer = 0;
    const attnscope::Analysis layer = attnscope::layer_analysis(*loaded, attnscope::model::forward(*loaded, ids, options),
                                          std::vector<std::string>(ids.size(), "x"));
    REQUIRE(layer.attention->linear);
    CHECK(layer.attention->linear_spec.kind == attnscope::LinearLayerKind(int(kind) - int(AttentionKind::linear)));
    const attnscope::SafetensorsFile st(dir / "model.safetensors");
    int64_t stored = 0;
    for (const attnscope::SafetensorsTensor& t : st.header().tensors)
      if (t.name.rfind("model.layers.0.self_attn.", 0) == 0) stored += t.count();
    CHECK(layer.attention->trace.params.total() == stored);
  }
}

TEST_CASE("train without a softmax: a checkpoint whose kind, gates or heads are wrong is refused by name") {
  Trainer trainer(induction_settings(AttentionKind::mamba2, 1));
  const fs::path dir = attnscope::test::fresh_dir("linear_kinds_refused");
  const auto refused = attnscope::test::config_refusal(trainer, dir);
  CHECK(contains(refused("attention_kind", "softmax"), "attention_kind"));
  CHECK(contains(refused("attention_kind", nullptr), "attention_kind"));
  CHECK(contains(refused("num_key_value_heads", 1), "num_key_value_heads"));
  CHECK(contains(refused("feature_map", "relu"), "feature_map"));
  CHECK(contains(refused("q_scale", "1"), "q_scale"));
  // its b_proj and a_proj are not in a Mamba-2 file
  CHECK(contains(refused("attention_kind", "gated-deltanet"), "b_proj"));
  REQUIRE(refused("attention_kind", "mamba2").empty());  // the config as saved again, and it opens
  // no K/V heads to pool: each head keeps its own state
  CHECK(contains(error_of([&] { (void)attnscope::model::convert_kv_heads(*attnscope::model::open(dir), 1); }),
                 "no KV cache to share"));
}
