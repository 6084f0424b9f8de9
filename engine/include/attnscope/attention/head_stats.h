// head_stats.h — numbers that describe attention heads: how focused, how far, how much parked on the
// first token (the attention sink), how alike two heads are, and how far a head moved when K/V were
// shared (MHA → GQA/MQA).
//
// Legend: H heads, T tokens (queries = keys), P_h [T, T] a head's probabilities (rows sum to 1).
// Row i of a head may attend to n_i keys: n_i = T, or i + 1 under a causal mask, or the window's
// min(i + 1, W) keys plus the sink keys before it (HeadStatsMask). With learned sinks (gpt-oss) the
// rows sum to 1 − s_i: the sink's share s_i then counts as one more outcome of the row for the entropy
// (n_i + 1 outcomes) and the JS divergence, and carries no distance.
//   entropy              H(P_h[i,·]) = −Σ_j P log P  (nats; 0·log 0 = 0), mean over rows
//   normalised entropy   H(P_h[i,·]) / ln n_i, mean over rows with n_i ≥ 2, in [0, 1] (1 = uniform)
//   mean distance        Σ_j P_h[i,j]·|i − j|  (tokens), mean over rows
//   attention sink       P_h[i, 0], mean over rows i ≥ 1: the attention parked on the first token. Row 0
//                        is left out: under a causal mask it can only attend to token 0, which would add
//                        about 1/T to every head. T = 1 has no such row: NaN (the windows draw "—").
//                        The one definition of the sink: the Head analysis window, the Model view's
//                        tooltip and lesson 6's ranking (head_patterns.h) all call attention_sink().
//   JS divergence        JS(p, q) = ½ KL(p‖m) + ½ KL(q‖m), m = (p + q)/2, natural log, in [0, ln 2];
//                        between heads a, b: mean over query rows of JS(P_a[i,·], P_b[i,·])
//   drift from MHA       for a head of a converted GQA/MQA layer: JS between its map and its MHA
//                        original's map (same query head before the K/V pooling), mean over rows
#pragma once
#include <atomic>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope {

struct HeadStats {
  std::vector<double> entropy;             // [H] nats
  std::vector<double> normalised_entropy;  // [H] in [0, 1]; 0 when no row has two keys (T = 1)
  std::vector<double> mean_distance;       // [H] tokens
  std::vector<double> attention_sink;      // [H] in [0, 1]; NaN when T = 1 (attention_sink())
  MatD js_divergence;                      // [H, H] symmetric, zero diagonal, in [0, ln 2]
  int js_rows = 0;                         // query rows averaged in js_divergence (all T unless sampled)
  std::vector<double> drift_from_mha;      // [H] JS to the MHA original; empty when there is none
};

// When (H·(H − 1)/2)·T² exceeds this many key comparisons, js_divergence averages evenly spaced query
// rows (query k·T/rows for k = 0 … rows − 1) instead of all T, so H = 64, T = 2048 stays interactive.
inline constexpr long long head_stats_js_budget = 1ll << 22;  // ~4M keys: a few ms, so the window stays live at T = 512

// What masked a head's rows beyond `causal` (SPEC "Variants after GQA"): a sliding window W (0 = none;
// implies the causal mask) keeping the first `sinks` keys, and the learned sinks' shares [H, T].
struct HeadStatsMask {
  int window = 0;
  int sinks = 0;
  const Mat* sink_share = nullptr;  // [H, T], or null
};

// Every statistic except drift_from_mha.
//   probs  [H, T, T] rows summing to 1 (1 − sink share with learned sinks);  causal: whether key j > i was masked.
// Throws Cancelled (error.h) soon after *cancel is set.
HeadStats head_stats(const Tensor3& probs, bool causal, const std::atomic<bool>* cancel = nullptr,
                     const HeadStatsMask& mask = {});

// One head's attention sink (legend above): mean over rows i ≥ 1 of p(i, 0), summed in double; NaN when
// p has fewer than 2 rows.  p [T, T] rows summing to 1.
double attention_sink(const Eigen::Ref<const Mat>& p);

// Where a signed map's rows put their weight, whatever its sign: |A[i, j]| / Σ_j |A[i, j]| (a row of zeros
// stays zero). Differential attention's A = P₁ − λ·P₂ is not a distribution (negative entries, rows summing
// to 1 − λ), so its entropy, distance, sink and JS divergence are those of this distribution: how focused
// the head is, counting the weight it subtracts as weight too.  maps [H, T, T] → [H, T, T].
Tensor3 weight_distribution(const Tensor3& maps);

// Entropy (nats) of one probability row.
double row_entropy(const float* p, int n);
// JS divergence (nats) between two probability rows of length n.
double js_divergence(const float* p, const float* q, int n);
// Mean over rows of the JS divergence between matching rows of a and b  [T, T] each.
double mean_js_divergence(const Mat& a, const Mat& b);

// drift[h] = mean_js_divergence(probs[h], mha_probs[h]).  probs, mha_probs [H, T, T].
std::vector<double> head_drift(const Tensor3& probs, const Tensor3& mha_probs,
                               const std::atomic<bool>* cancel = nullptr);

}  // namespace attnscope
