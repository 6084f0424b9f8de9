// attend_head.h — (private) one head's scores, mask, softmax and weighted sum with Eigen products, for
// differential attention (differential_attention.cpp); grouped and latent attention use the fused kernel
// of attention_kernel.h.
//
// Legend: T tokens, d_q the q·k width, d_v the value width.
#pragma once
#include <cmath>
#include <limits>

#include "attnscope/attention/grouped_attention.h"

namespace attnscope::detail {

// Rows [r0, r1) of one head (the rest of scores, probs and out untouched): scores = q·kᵀ·scale (−inf where
// key j is not visible to query i: the causal mask, a sliding window and its sink tokens, key_visible),
// probs = softmax over each row, out = probs·v.  q [T, d_q], k [T, d_q], v [T, d_v] (may be empty when out
// is null); scores, probs [T, T] and out [T, d_v] already sized.
inline void attend_rows(const Mat& q, const Mat& k, const Mat& v, int r0, int r1, float scale, const AttentionOptions& o,
                        Mat& scores, Mat& probs, Mat* out) {
  const Eigen::Index T = k.rows(), n = r1 - r0;
  Mat s = scale * (q.middleRows(r0, n) * k.transpose());  // [n, T]
  if (o.causal || o.window > 0)
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < T; ++j)
        if (!key_visible(int(r0 + i), int(j), o)) s(i, j) = -std::numeric_limits<float>::infinity();
  scores.middleRows(r0, n) = s;
  softmax_rows(s);
  probs.middleRows(r0, n) = s;
  if (out) out->middleRows(r0, n).noalias() = s * v;
}

// RMSNorm of every row of x [T, n] in place: x / √(mean(x²) + eps) · w, w [n].
inline void rms_norm_rows(Mat& x, const Vec& w, double eps) {
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    const float inv = float(1.0 / std::sqrt(double(x.row(t).squaredNorm()) / double(x.cols()) + eps));
    x.row(t) = (x.row(t).array() * inv * w.transpose().array()).matrix();
  }
}

}  // namespace attnscope::detail
