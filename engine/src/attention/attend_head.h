// attend_head.h — (private) one head's scores, mask, softmax and weighted sum, for the variants after
// GQA (latent_attention.cpp, differential_attention.cpp); grouped_attention.cpp has its own blocked kernel.
//
// Legend: T tokens, d_q the q·k width, d_v the value width.
#pragma once
#include <cmath>
#include <limits>

#include "attnscope/attention/grouped_attention.h"

namespace attnscope::detail {

// q [T, d_q], k [T, d_q], v [T, d_v] (v may be empty: no weighted sum) →
//   scores = q·kᵀ·scale [T, T] (−inf for j > i when causal), probs = softmax_rows(scores), out = probs·v.
inline void attend_head(const Mat& q, const Mat& k, const Mat& v, float scale, bool causal, Mat& scores, Mat& probs,
                        Mat* out) {
  const Eigen::Index T = q.rows();
  scores.noalias() = scale * (q * k.transpose());
  if (causal)
    for (Eigen::Index i = 0; i + 1 < T; ++i) scores.row(i).tail(T - i - 1).setConstant(-std::numeric_limits<float>::infinity());
  probs = scores;
  softmax_rows(probs);
  if (out) out->noalias() = probs * v;
}

// RMSNorm of every row of x [T, n] in place: x / √(mean(x²) + eps) · w, w [n].
inline void rms_norm_rows(Mat& x, const Vec& w, double eps) {
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    const float inv = float(1.0 / std::sqrt(double(x.row(t).squaredNorm()) / double(x.cols()) + eps));
    x.row(t) = (x.row(t).array() * inv * w.transpose().array()).matrix();
  }
}

}  // namespace attnscope::detail
