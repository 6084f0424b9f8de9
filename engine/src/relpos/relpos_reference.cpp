// relpos_reference.cpp — the plain-loop oracle for relative-position attention: every (query, key)
// pair scored with the SPEC formula and softmaxed directly, in double. The fast, factorised path in
// relative_position.cpp is tested against these.
//
//   for each head h, query q = (q_r, q_c):
//     1. scores   s[k] = −α_h‖(k − q) − Δ_h‖²   for every key k, padding keys included
//     2. softmax  P[k] = exp(s[k] − max s) / Σ exp(s − max s)
//     3. sum      O[q] = Σ_k P[k]·X[k]           (padding keys hold X = 0)
#include <cmath>
#include <limits>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/relpos/relative_position.h"

namespace attnscope {
namespace {

// Probabilities of one query over every key of the padded rectangle, row-major over
// [key_rows, key_cols]; key (kr, kc) ↔ position (kr − pad_rows, kc − pad_cols).
std::vector<double> direct_row(const RelposHead& head, const RelposGeometry& g, int qr, int qc) {
  const int kr_count = g.key_rows(), kc_count = g.key_cols();
  std::vector<double> p(size_t(kr_count) * kc_count);
  // 1. scores
  double best = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < kr_count; ++i)
    for (int j = 0; j < kc_count; ++j) {
      const double dr = (i - g.pad_rows) - qr - head.delta[0];
      const double dc = (j - g.pad_cols) - qc - head.delta[1];
      const double s = -head.alpha * (dr * dr + dc * dc);
      p[size_t(i) * kc_count + j] = s;
      if (s > best) best = s;
    }
  // 2. softmax
  double total = 0;
  for (double& v : p) total += (v = std::exp(v - best));
  for (double& v : p) v /= total;
  return p;
}

}  // namespace

Tensor3 relpos_probs_reference(const std::vector<RelposHead>& heads, const RelposGeometry& g) {
  const int n = g.cells();
  Tensor3 probs(heads.size(), Mat::Zero(n, n));
  for (size_t h = 0; h < heads.size(); ++h)
    for (int q = 0; q < n; ++q) {
      const std::vector<double> p = direct_row(heads[h], g, q / g.cols, q % g.cols);
      for (int k = 0; k < n; ++k) {
        const int i = k / g.cols + g.pad_rows, j = k % g.cols + g.pad_cols;
        probs[h](q, k) = float(p[size_t(i) * g.key_cols() + j]);
      }
    }
  return probs;
}

Tensor3 relpos_outputs_reference(const std::vector<RelposHead>& heads, const RelposGeometry& g, const Mat& x) {
  require(x.rows() == g.cells() && x.cols() >= 1, "X must be [N, channels] with N = " + std::to_string(g.cells()));
  const int n = g.cells();
  const Eigen::Index ch = x.cols();
  Tensor3 outputs(heads.size(), Mat::Zero(n, ch));
  for (size_t h = 0; h < heads.size(); ++h)
    for (int q = 0; q < n; ++q) {
      const std::vector<double> p = direct_row(heads[h], g, q / g.cols, q % g.cols);
      // 3. weighted sum over the real keys (padding keys contribute P·0)
      for (Eigen::Index c = 0; c < ch; ++c) {
        double sum = 0;
        for (int k = 0; k < n; ++k) {
          const int i = k / g.cols + g.pad_rows, j = k % g.cols + g.pad_cols;
          sum += p[size_t(i) * g.key_cols() + j] * double(x(k, c));
        }
        outputs[h](q, c) = float(sum);
      }
    }
  return outputs;
}

}  // namespace attnscope
