// head_stats.cpp — entropy, distance, attention sink, Jensen–Shannon similarity and drift per head.
//
// Legend: H heads, T tokens. All sums run in double; probabilities come in as float.
#include "attnscope/attention/head_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "attnscope/core/error.h"

namespace attnscope {

namespace {

// Σ x·log x over a row, vectorised (0·log 0 = 0: zeros are clamped to the smallest normal float,
// which they then multiply away). Float is plenty here: these are display statistics.
float sum_xlogx(const Eigen::Ref<const Eigen::ArrayXf>& x) {
  return (x * x.max(std::numeric_limits<float>::min()).log()).sum();
}

}  // namespace

double attention_sink(const Eigen::Ref<const Mat>& p) {
  if (p.rows() < 2) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (Eigen::Index i = 1; i < p.rows(); ++i) sum += double(p(i, 0));
  return sum / double(p.rows() - 1);
}

Tensor3 weight_distribution(const Tensor3& maps) {
  Tensor3 out(maps.size());
  for (size_t h = 0; h < maps.size(); ++h) {
    out[h] = maps[h].cwiseAbs();
    for (Eigen::Index i = 0; i < out[h].rows(); ++i) {
      const double sum = out[h].row(i).cast<double>().sum();
      if (sum > 0) out[h].row(i) /= float(sum);
    }
  }
  return out;
}

double row_entropy(const float* p, int n) {
  return std::max(-double(sum_xlogx(Eigen::Map<const Eigen::ArrayXf>(p, n))), 0.0);
}

// JS(p, q) = ½ Σ p log(p/m) + ½ Σ q log(q/m) = ½ (Σ p log p + Σ q log q) − Σ m log m, m = (p + q)/2,
// so with the rows' own Σ x log x known only one log per key remains.
static double js_from_parts(const float* p, const float* q, int n, double p_xlogx, double q_xlogx) {
  const Eigen::Map<const Eigen::ArrayXf> a(p, n), b(q, n);
  const double js = 0.5 * (p_xlogx + q_xlogx) - double(sum_xlogx(0.5f * (a + b)));
  return std::clamp(js, 0.0, std::log(2.0));  // rounding can step a hair outside [0, ln 2]
}

double js_divergence(const float* p, const float* q, int n) {
  return js_from_parts(p, q, n, sum_xlogx(Eigen::Map<const Eigen::ArrayXf>(p, n)),
                       sum_xlogx(Eigen::Map<const Eigen::ArrayXf>(q, n)));
}

double mean_js_divergence(const Mat& a, const Mat& b) {
  assert(a.rows() == b.rows() && a.cols() == b.cols());
  if (a.rows() == 0) return 0;
  double sum = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) sum += js_divergence(&a(i, 0), &b(i, 0), int(a.cols()));
  return sum / double(a.rows());
}

std::vector<double> head_drift(const Tensor3& probs, const Tensor3& mha_probs, const std::atomic<bool>* cancel) {
  assert(probs.size() == mha_probs.size());
  std::vector<double> drift(probs.size());
  for (size_t h = 0; h < probs.size(); ++h) {
    check_cancel(cancel);
    drift[h] = mean_js_divergence(probs[h], mha_probs[h]);
  }
  return drift;
}

HeadStats head_stats(const Tensor3& probs, bool causal, const std::atomic<bool>* cancel, const HeadStatsMask& mask) {
  const int heads = int(probs.size());
  const int t_count = heads ? int(probs[0].rows()) : 0;
  HeadStats s;
  s.entropy.assign(size_t(heads), 0);
  s.normalised_entropy.assign(size_t(heads), 0);
  s.mean_distance.assign(size_t(heads), 0);
  s.attention_sink.assign(size_t(heads), std::numeric_limits<double>::quiet_NaN());
  s.js_divergence = MatD::Zero(heads, heads);
  if (t_count == 0) return s;

  // Exceptions cannot leave an OpenMP loop: a cancelled iteration does nothing, and the check after
  // the loop throws.
  const auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };
  const Mat* sink = mask.sink_share && mask.sink_share->size() ? mask.sink_share : nullptr;
  // The sink's own term of Σ x log x (0 without learned sinks).
  const auto sink_xlogx = [&](int h, int i) {
    if (!sink) return 0.0;
    const double x = std::max(double((*sink)(h, i)), 0.0);
    return x > 0 ? x * std::log(x) : 0.0;
  };
  // Keys row i may see.
  const auto allowed_keys = [&](int i) {
    if (mask.window > 0) {
      const int lo = std::max(0, i - mask.window + 1);
      return i + 1 - lo + std::min(mask.sinks, lo);
    }
    return causal ? i + 1 : t_count;
  };

  // 1. Per head, per row. neg_entropy[h](i) = Σ_j P log P of row i, reused by the JS pairs below.
  std::vector<Eigen::VectorXd> neg_entropy(static_cast<size_t>(heads), Eigen::VectorXd(t_count));
#pragma omp parallel for schedule(dynamic) if (heads > 1 && (long long)heads * t_count * t_count >= (1 << 18))
  for (int h = 0; h < heads; ++h) {
    if (cancelled()) continue;
    const Mat& p = probs[size_t(h)];
    double entropy = 0, normalised = 0, distance = 0;
    int normalised_rows = 0;
    for (int i = 0; i < t_count; ++i) {
      const float* row = &p(i, 0);
      const double e = std::max(row_entropy(row, t_count) - sink_xlogx(h, i), 0.0);
      neg_entropy[size_t(h)](i) = -e;
      entropy += e;
      const int allowed = allowed_keys(i) + (sink ? 1 : 0);
      if (allowed >= 2) {
        normalised += std::min(1.0, e / std::log(double(allowed)));
        ++normalised_rows;
      }
      for (int j = 0; j < t_count; ++j) distance += double(row[j]) * std::abs(i - j);
    }
    s.entropy[size_t(h)] = entropy / t_count;
    s.normalised_entropy[size_t(h)] = normalised_rows ? normalised / normalised_rows : 0;
    s.mean_distance[size_t(h)] = distance / t_count;
    s.attention_sink[size_t(h)] = attention_sink(p);
  }
  check_cancel(cancel);

  // 2. Between heads: mean JS over query rows (evenly spaced rows when the budget asks for it).
  const long long pairs = (long long)heads * (heads - 1) / 2;
  int rows = t_count;
  if (pairs > 0 && pairs * t_count * t_count > head_stats_js_budget)
    rows = int(std::clamp(head_stats_js_budget / (pairs * t_count), 1ll, (long long)t_count));
  s.js_rows = rows;
#pragma omp parallel for schedule(dynamic) if (pairs * rows * t_count >= (1 << 18))
  for (int a = 0; a < heads; ++a)
    for (int b = a + 1; b < heads; ++b) {
      if (cancelled()) continue;
      double sum = 0;
      for (int k = 0; k < rows; ++k) {
        const int i = int((long long)k * t_count / rows);
        if (!sink) {
          sum += js_from_parts(&probs[size_t(a)](i, 0), &probs[size_t(b)](i, 0), t_count, neg_entropy[size_t(a)](i),
                               neg_entropy[size_t(b)](i));
          continue;
        }
        // With learned sinks each row is its keys and the sink: the JS of those T + 1 outcomes.
        const double pa = (*sink)(a, i), pb = (*sink)(b, i), m = 0.5 * (pa + pb);
        const double sink_term = -(m > 0 ? m * std::log(m) : 0.0);
        const Eigen::Map<const Eigen::ArrayXf> ra(&probs[size_t(a)](i, 0), t_count), rb(&probs[size_t(b)](i, 0), t_count);
        const double js = 0.5 * (neg_entropy[size_t(a)](i) + neg_entropy[size_t(b)](i)) -
                          double(sum_xlogx(0.5f * (ra + rb))) + sink_term;
        sum += std::clamp(js, 0.0, std::log(2.0));
      }
      s.js_divergence(a, b) = s.js_divergence(b, a) = sum / rows;
    }
  check_cancel(cancel);
  return s;
}

}  // namespace attnscope
