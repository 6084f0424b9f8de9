// head_stats.cpp — entropy, distance, first-token mass, Jensen–Shannon similarity and drift per head.
//
// Legend: H heads, T tokens. All sums run in double; probabilities come in as float.
#include "attnscope/head_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace attnscope {

double row_entropy(const float* p, int n) {
  double h = 0;
  for (int j = 0; j < n; ++j)
    if (p[j] > 0) h -= double(p[j]) * std::log(double(p[j]));
  return std::max(h, 0.0);
}

double js_divergence(const float* p, const float* q, int n) {
  // ½ Σ p log(p/m) + ½ Σ q log(q/m), m = (p + q)/2; a zero entry contributes nothing.
  double js = 0;
  for (int j = 0; j < n; ++j) {
    const double a = p[j], b = q[j], m = 0.5 * (a + b);
    if (a > 0) js += 0.5 * a * std::log(a / m);
    if (b > 0) js += 0.5 * b * std::log(b / m);
  }
  return std::clamp(js, 0.0, std::log(2.0));  // rounding can step a hair outside [0, ln 2]
}

double mean_js_divergence(const Mat& a, const Mat& b) {
  assert(a.rows() == b.rows() && a.cols() == b.cols());
  if (a.rows() == 0) return 0;
  double sum = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) sum += js_divergence(&a(i, 0), &b(i, 0), int(a.cols()));
  return sum / double(a.rows());
}

std::vector<double> head_drift(const Tensor3& probs, const Tensor3& mha_probs) {
  assert(probs.size() == mha_probs.size());
  std::vector<double> drift(probs.size());
  for (size_t h = 0; h < probs.size(); ++h) drift[h] = mean_js_divergence(probs[h], mha_probs[h]);
  return drift;
}

HeadStats head_stats(const Tensor3& probs, bool causal) {
  const int heads = int(probs.size());
  const int t_count = heads ? int(probs[0].rows()) : 0;
  HeadStats s;
  s.entropy.assign(size_t(heads), 0);
  s.normalised_entropy.assign(size_t(heads), 0);
  s.mean_distance.assign(size_t(heads), 0);
  s.first_token_mass.assign(size_t(heads), 0);
  s.js_divergence = MatD::Zero(heads, heads);
  if (t_count == 0) return s;

  // 1. Per head, per row.
  for (int h = 0; h < heads; ++h) {
    const Mat& p = probs[size_t(h)];
    double entropy = 0, normalised = 0, distance = 0, first = 0;
    int normalised_rows = 0;
    for (int i = 0; i < t_count; ++i) {
      const float* row = &p(i, 0);
      const double e = row_entropy(row, t_count);
      entropy += e;
      const int allowed = causal ? i + 1 : t_count;
      if (allowed >= 2) {
        normalised += std::min(1.0, e / std::log(double(allowed)));
        ++normalised_rows;
      }
      for (int j = 0; j < t_count; ++j) distance += double(row[j]) * std::abs(i - j);
      first += row[0];
    }
    s.entropy[size_t(h)] = entropy / t_count;
    s.normalised_entropy[size_t(h)] = normalised_rows ? normalised / normalised_rows : 0;
    s.mean_distance[size_t(h)] = distance / t_count;
    s.first_token_mass[size_t(h)] = first / t_count;
  }

  // 2. Between heads: mean JS over query rows (evenly spaced rows when the budget asks for it).
  const long long pairs = (long long)heads * (heads - 1) / 2;
  int rows = t_count;
  if (pairs > 0 && pairs * t_count * t_count > head_stats_js_budget)
    rows = int(std::clamp(head_stats_js_budget / (pairs * t_count), 1ll, (long long)t_count));
  s.js_rows = rows;
  for (int a = 0; a < heads; ++a)
    for (int b = a + 1; b < heads; ++b) {
      double sum = 0;
      for (int k = 0; k < rows; ++k) {
        const int i = int((long long)k * t_count / rows);
        sum += js_divergence(&probs[size_t(a)](i, 0), &probs[size_t(b)](i, 0), t_count);
      }
      s.js_divergence(a, b) = s.js_divergence(b, a) = sum / rows;
    }
  return s;
}

}  // namespace attnscope
