// Checks every hybrid checkpoint family owes (softmax layers among layers without a softmax: Qwen3-Next's
// Gated DeltaNet, Granite 4.0-H's Mamba-2), shared by test_qwen3_next.cpp and test_granite_hybrid.cpp.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

namespace attnscope::test {

// Head `index` of a [heads, rows, cols] reference tensor.
inline Mat ref_slice(const ReferenceTensor& t, int index) {
  REQUIRE(t.shape.size() == 3);
  const int64_t rows = t.shape[1], cols = t.shape[2];
  return Eigen::Map<const Mat>(t.values.data() + index * rows * cols, rows, cols);
}

// The fixture `name`'s forward against its PyTorch reference: each linear layer is drawn as `kind`'s signed
// matrices M (`linear_heads` of them, equal to the reference's within 1e-5, with an empty slot in the probability
// stack), each softmax layer as probabilities (within 1e-5), and the logits within 1e-4 of their largest.
// `extra(M of head 0, T)` adds the family's own checks of a linear layer. Returns the number of linear layers.
inline int check_layers_against_reference(const std::string& name, const std::string& kind, int linear_heads,
                                          const std::function<void(const Mat&, int)>& extra) {
  const auto model = model::open(model_fixture(name));
  const model::ModelConfig& c = model->config;
  const std::vector<int32_t> ids = fixture_ids(name);
  const int T = int(ids.size());
  const model::ForwardResult r = model::forward(*model, ids);
  REQUIRE(r.layer_maps.size() == size_t(c.layers));
  int linear_layers = 0;
  for (int l = 0; l < c.layers; ++l) {
    CAPTURE(l);
    if (c.is_linear_layer(l)) {
      ++linear_layers;
      CHECK(r.signed_layer(l));
      CHECK(r.layer_maps[size_t(l)].kind == kind);
      CHECK(r.layer_maps[size_t(l)].heads == linear_heads);
      const ReferenceTensor maps = fixture_reference(name, "linear." + std::to_string(l) + ".maps");
      REQUIRE(maps.shape == std::vector<int64_t>{linear_heads, T, T});
      for (int h = 0; h < linear_heads; ++h)
        check_close(Mat(r.linear_map(l, h)), ref_slice(maps, h), 1e-5, "M of head " + std::to_string(h));
      // Signed: at least one negative entry.
      const Mat m0 = r.linear_map(l, 0);
      CHECK(m0.minCoeff() < 0);
      extra(m0, T);
      // Its slot of the probability stack holds no probability.
      CHECK(r.attention(l, 0).cwiseAbs().maxCoeff() == 0.0f);
    } else {
      CHECK(!r.signed_layer(l));
      CHECK(r.linear_maps[size_t(l)].empty());
      const ReferenceTensor probs = fixture_reference(name, "attention." + std::to_string(l));
      REQUIRE(probs.shape == std::vector<int64_t>{c.heads, T, T});
      for (int h = 0; h < c.heads; ++h)
        check_close(Mat(r.attention(l, h)), ref_slice(probs, h), 1e-5, "probabilities of head " + std::to_string(h));
    }
  }
  const ReferenceTensor logits = fixture_reference(name, "logits");
  REQUIRE(logits.values.size() == size_t(T) * c.vocab);
  double scale = 0, worst = 0;
  for (size_t i = 0; i < logits.values.size(); ++i) {
    scale = std::max(scale, std::abs(double(logits.values[i])));
    worst = std::max(worst, std::abs(double(r.logits.data()[i]) - double(logits.values[i])));
  }
  INFO("largest logit difference " << worst << " of " << scale);
  CHECK(worst <= 1e-4 * scale);
  return linear_layers;
}

// The plain-loop reference pass (forward_reference.cpp) equals the fast one on every layer's maps (1e-5) and the
// logits (1e-4 of the largest, at least 1e-4); with o.detail_layer set, the detail's head outputs too (1e-4).
inline void check_reference_pass_equals_fast(const std::string& name, const model::ForwardOptions& o) {
  const auto model = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  const model::ForwardResult fast = model::forward(*model, ids, o), plain = model::forward_reference(*model, ids, o);
  REQUIRE(plain.layer_maps.size() == fast.layer_maps.size());
  for (int l = 0; l < model->config.layers; ++l) {
    CAPTURE(l);
    CHECK(plain.signed_layer(l) == fast.signed_layer(l));
    CHECK(plain.layer_maps[size_t(l)].kind == fast.layer_maps[size_t(l)].kind);
    const int heads = fast.layer_maps[size_t(l)].heads;
    for (int h = 0; h < heads; ++h) {
      if (fast.signed_layer(l)) check_close(Mat(plain.linear_map(l, h)), Mat(fast.linear_map(l, h)), 1e-5, "M");
      else check_close(Mat(plain.attention(l, h)), Mat(fast.attention(l, h)), 1e-5, "probabilities");
    }
  }
  if (o.detail_layer >= 0) {
    REQUIRE(plain.detail);
    REQUIRE(fast.detail);
    REQUIRE(plain.detail->head_out.size() == fast.detail->head_out.size());
    for (size_t h = 0; h < fast.detail->head_out.size(); ++h)
      check_close(plain.detail->head_out[h], fast.detail->head_out[h], 1e-4, "the layer's head outputs");
  }
  const float scale = fast.logits.cwiseAbs().maxCoeff();
  check_close(plain.logits, fast.logits, 1e-4 * std::max(1.0f, scale), "logits");
}

}  // namespace attnscope::test
