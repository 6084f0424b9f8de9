// analysis_helpers.h — the head statistics of an analysis, for tests that check them (an Analysis
// carries none; the window and the tests ask attention_statistics() for them).
#pragma once
#include "attnscope/analysis/analysis.h"

namespace attnscope::test {

inline HeadStats stats_of(const Analysis& a) { return attention_statistics(*a.attention, a.scene.model); }

// The MHA base's maps [H, T, T] when the analysis pooled K/V from one (G < H), else empty.
inline Tensor3 mha_probs_of(const Analysis& a) {
  Tensor3 base;
  attention_statistics(*a.attention, a.scene.model, nullptr, &base);
  return base;
}

}  // namespace attnscope::test
