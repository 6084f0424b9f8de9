// relative_position.cpp — quadratic relative-position attention: presets, validation, the factorised
// fast path for probabilities and outputs, and the v·r expansion for one (q, k).
//
// Sections: helpers · presets and validation · geometry · axis windows · probabilities · outputs ·
// expansion
#include "attnscope/relpos/relative_position.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/core/rng.h"
#include "core/format.h"
#include "relpos/relpos_separable.h"

namespace attnscope {

// ---- helpers ------------------------------------------------------------------------------------
namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

void require_heads(int heads) {
  require(heads >= 1 && heads <= limits::max_heads,
          "relative-position heads must be 1 to " + std::to_string(limits::max_heads) + ", got " +
              std::to_string(heads));
}

void require_query(const RelposGeometry& g, int query, const char* what) {
  if (query >= 0 && query < g.cells()) return;
  if (g.dims == 1)
    throw InputError(std::string(what) + " " + std::to_string(query) + " is outside the sentence: tokens are 0 to " +
                     std::to_string(g.cols - 1));
  throw InputError(std::string(what) + " index " + std::to_string(query) + " is outside the " +
                   std::to_string(g.rows) + "x" + std::to_string(g.cols) + " grid: cells are 0 to " +
                   std::to_string(g.cells() - 1));
}

// One row of an axis window: query coordinate q, keys k = −pad … n − 1 + pad. Writes the n real-key
// probabilities to `real` and returns the padding mass. The exponent is shifted by the smallest
// (k − q − Δ)², so the nearest key gets exp(0) = 1 and nothing overflows for any finite α.
double axis_row(int n, int pad, double alpha, double delta, int q, double* real) {
  const double centre = q + delta;
  const int lo = -pad, hi = n - 1 + pad;
  const double nearest = std::clamp(std::round(centre), double(lo), double(hi));
  const double min_sq = (nearest - centre) * (nearest - centre);
  double total = 0, pad_sum = 0;
  for (int k = lo; k <= hi; ++k) {
    const double d = k - centre;
    const double w = std::exp(-alpha * (d * d - min_sq));
    total += w;
    if (k >= 0 && k < n) real[k] = w;
    else pad_sum += w;
  }
  for (int k = 0; k < n; ++k) real[k] /= total;
  return pad_sum / total;
}

}  // namespace

// ---- presets and validation ---------------------------------------------------------------------

const std::vector<std::string>& delta_preset_names() {
  static const std::vector<std::string> names{"conv3x3", "conv5x5", "line", "random"};
  return names;
}

std::vector<std::array<double, 2>> delta_preset(const std::string& name, int heads, int dims, uint64_t seed) {
  require_heads(heads);
  std::vector<std::array<double, 2>> deltas;
  if (name == "conv3x3" || name == "conv5x5") {
    const int k = name == "conv3x3" ? 3 : 5;
    require(dims == 2, "the " + name + " preset is a " + std::to_string(k) + "x" + std::to_string(k) +
                           " grid of offsets and needs a 2D grid; on a sentence use line, random or explicit offsets");
    require(heads == k * k, "the " + name + " preset is a " + std::to_string(k) + "x" + std::to_string(k) +
                                " kernel: it needs heads = " + std::to_string(k * k) + " (K^2), got " +
                                std::to_string(heads) + "; for another head count use line, random or explicit offsets");
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) deltas.push_back({double(i - k / 2), double(j - k / 2)});
  } else if (name == "line") {
    for (int h = 0; h < heads; ++h) deltas.push_back({0.0, double(h - heads / 2)});
  } else if (name == "random") {
    Rng rng(seed);
    for (int h = 0; h < heads; ++h) {
      const double row = dims == 2 ? rng.uniform(-3.0f, 3.0f) : 0.0;
      deltas.push_back({row, double(rng.uniform(-3.0f, 3.0f))});
    }
  } else {
    throw InputError("unknown delta preset '" + name + "': valid presets are " + join_names(delta_preset_names()));
  }
  return deltas;
}

void validate_relpos_heads(const std::vector<RelposHead>& heads, int dims) {
  require_heads(int(heads.size()));
  for (size_t h = 0; h < heads.size(); ++h) {
    const std::string who = "head " + std::to_string(h);
    const double a = heads[h].alpha;
    require(std::isfinite(a), "alpha of " + who + " is " + detail::format_g(a) + ": alpha must be a finite number >= 0");
    require(a >= 0, "alpha of " + who + " is " + detail::format_g(a) + ": alpha must be >= 0 (0 = uniform, large = one cell)");
    for (double d : heads[h].delta) {
      require(std::isfinite(d), "offset Delta of " + who + " is " + detail::format_g(d) + ": offsets must be finite numbers");
      require(std::abs(d) <= max_abs_delta, "offset Delta of " + who + " is " + detail::format_g(d) + ": offsets must be within +-" +
                                                detail::format_g(max_abs_delta));
    }
    require(dims == 2 || heads[h].delta[0] == 0,
            "offset Delta of " + who + " has a row part " + detail::format_g(heads[h].delta[0]) +
                ": on a sentence each head takes one number");
  }
}

std::vector<RelposHead> resolve_relpos_heads(const RelposSettings& s, int dims) {
  require_heads(s.heads);
  const int h_count = s.heads;
  std::vector<std::array<double, 2>> deltas;
  if (!s.deltas.empty()) {
    require(int(s.deltas.size()) == h_count, std::to_string(s.deltas.size()) + " offsets (Delta) were given for " +
                                                 std::to_string(h_count) + " heads: give exactly one per head");
    deltas = s.deltas;
  } else {
    deltas = delta_preset(s.delta_preset, h_count, dims, s.delta_seed);
  }
  if (!s.alphas.empty())
    require(int(s.alphas.size()) == h_count, std::to_string(s.alphas.size()) + " alphas were given for " +
                                                 std::to_string(h_count) + " heads: give one per head, or one alpha for all");
  std::vector<RelposHead> heads(h_count);
  for (int h = 0; h < h_count; ++h) {
    heads[h].alpha = s.alphas.empty() ? s.alpha : s.alphas[h];
    heads[h].delta = deltas[h];
  }
  validate_relpos_heads(heads, dims);
  return heads;
}

// ---- geometry -----------------------------------------------------------------------------------

RelposGeometry relpos_geometry(int dims, int rows, int cols, const std::vector<RelposHead>& heads, bool pad_keys) {
  require(dims == 1 || dims == 2, "relative position works on sentences (1D) or grids (2D), got dims " +
                                      std::to_string(dims));
  require(rows >= 1 && cols >= 1, "the input is empty (" + std::to_string(rows) + "x" + std::to_string(cols) +
                                      "): relative position needs at least one position");
  require(dims == 2 || rows == 1, "a sentence has one row of tokens");
  validate_relpos_heads(heads, dims);
  RelposGeometry g;
  g.dims = dims;
  g.rows = rows;
  g.cols = cols;
  if (pad_keys) {
    double max_row = 0, max_col = 0;
    for (const RelposHead& h : heads) {
      max_row = std::max(max_row, std::abs(h.delta[0]));
      max_col = std::max(max_col, std::abs(h.delta[1]));
    }
    g.pad_rows = dims == 2 ? int(std::ceil(max_row)) + relpos_pad_margin : 0;
    g.pad_cols = int(std::ceil(max_col)) + relpos_pad_margin;
  }
  return g;
}

// ---- axis windows -------------------------------------------------------------------------------

AxisWindow relpos_axis_window(int n, int pad, double alpha, double delta) {
  AxisWindow w;
  w.probs.resize(n, n);
  w.pad_mass.resize(n);
  std::vector<double> row(n);
  for (int q = 0; q < n; ++q) {
    w.pad_mass[q] = axis_row(n, pad, alpha, delta, q, row.data());
    for (int k = 0; k < n; ++k) w.probs(q, k) = row[k];
  }
  return w;
}

// ---- probabilities ------------------------------------------------------------------------------
//   P_h[q, (k_r, k_c)] = A_h[q_r, k_r] · B_h[q_c, k_c]      A: rows window, B: columns window

Mat relpos_probs_query(const std::vector<RelposHead>& heads, const RelposGeometry& g, int query) {
  require_query(g, query, "query");
  const int qr = query / g.cols, qc = query % g.cols;
  Mat probs(heads.size(), g.cells());
  std::vector<double> a(g.rows), b(g.cols);
  for (size_t h = 0; h < heads.size(); ++h) {
    axis_row(g.rows, g.pad_rows, heads[h].alpha, heads[h].delta[0], qr, a.data());
    axis_row(g.cols, g.pad_cols, heads[h].alpha, heads[h].delta[1], qc, b.data());
    for (int kr = 0; kr < g.rows; ++kr)
      for (int kc = 0; kc < g.cols; ++kc) probs(h, kr * g.cols + kc) = float(a[kr] * b[kc]);
  }
  return probs;
}

std::vector<double> relpos_padding_mass(const std::vector<RelposHead>& heads, const RelposGeometry& g, int query) {
  require_query(g, query, "query");
  const int qr = query / g.cols, qc = query % g.cols;
  std::vector<double> mass(heads.size());
  std::vector<double> a(g.rows), b(g.cols);
  for (size_t h = 0; h < heads.size(); ++h) {
    const double pa = axis_row(g.rows, g.pad_rows, heads[h].alpha, heads[h].delta[0], qr, a.data());
    const double pb = axis_row(g.cols, g.pad_cols, heads[h].alpha, heads[h].delta[1], qc, b.data());
    mass[h] = pa + pb - pa * pb;  // 1 − (1 − pa)(1 − pb) without cancellation
  }
  return mass;
}

Mat relpos_scores_query(const std::vector<RelposHead>& heads, const RelposGeometry& g, int query) {
  require_query(g, query, "query");
  const int qr = query / g.cols, qc = query % g.cols;
  Mat scores(heads.size(), g.cells());
  for (size_t h = 0; h < heads.size(); ++h)
    for (int k = 0; k < g.cells(); ++k) {
      const double dr = k / g.cols - qr, dc = k % g.cols - qc;
      const RelposHead& hd = heads[h];
      scores(h, k) = float(-hd.alpha * (dr * dr + dc * dc - 2 * (hd.delta[0] * dr + hd.delta[1] * dc)));
    }
  return scores;
}

Tensor3 relpos_probs(const std::vector<RelposHead>& heads, const RelposGeometry& g, const std::atomic<bool>* cancel) {
  const int64_t n = g.cells();
  require(int64_t(heads.size()) * n * n <= limits::max_attention_cells,
          "the full probability tensor [H, N, N] = [" + std::to_string(heads.size()) + ", " + std::to_string(n) +
              ", " + std::to_string(n) + "] is too large; use fewer positions or heads");
  Tensor3 probs(heads.size());
  for (size_t h = 0; h < heads.size(); ++h) {
    check_cancel(cancel);
    const AxisWindow a = relpos_axis_window(g.rows, g.pad_rows, heads[h].alpha, heads[h].delta[0]);
    const AxisWindow b = relpos_axis_window(g.cols, g.pad_cols, heads[h].alpha, heads[h].delta[1]);
    Mat& p = probs[h];
    p.resize(n, n);
    for (int qr = 0; qr < g.rows; ++qr)
      for (int qc = 0; qc < g.cols; ++qc) {
        float* row = p.row(qr * g.cols + qc).data();
        for (int kr = 0; kr < g.rows; ++kr) {
          const double ar = a.probs(qr, kr);
          for (int kc = 0; kc < g.cols; ++kc) row[kr * g.cols + kc] = float(ar * b.probs(qc, kc));
        }
      }
  }
  return probs;
}

// ---- outputs ------------------------------------------------------------------------------------
//   per channel k:  plane = X[:, k] as [R, C]    O_h[:, k] = A_h·plane·B_hᵀ   (relpos_separable.h)
//   one row (a sentence):  O_h = A_h[0, 0]·B_h·X   [T, T]·[T, ch] in one product

Mat relpos_head_output(const RelposHead& head, const RelposGeometry& g, const Mat& x) {
  require(x.rows() == g.cells() && x.cols() >= 1,
          "X must be [N, channels] with N = " + std::to_string(g.cells()) + " positions, got [" +
              std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + "]");
  const Eigen::Index ch = x.cols();
  const AxisWindow a = relpos_axis_window(g.rows, g.pad_rows, head.alpha, head.delta[0]);
  const AxisWindow b = relpos_axis_window(g.cols, g.pad_cols, head.alpha, head.delta[1]);
  // A single row: its window is one weight (1, or less when padding rows take some mass).
  if (g.rows == 1) return float(a.probs(0, 0)) * (b.probs.cast<float>() * x);

  // Window weights below 1e-18 are dropped in float: they cannot move an output by more than N·1e-18,
  // and their products with other small numbers would be subnormal floats, which cost the CPU a
  // microcode assist each (they made this loop 5× slower at α = 1).
  const auto to_float = [](const MatD& m) { return (m.array() < 1e-18).select(0.0, m).cast<float>().eval(); };
  const Mat a_probs = to_float(a.probs), b_probs = to_float(b.probs);
  Mat out(g.cells(), ch), plane(g.rows, g.cols);
  for (Eigen::Index k = 0; k < ch; ++k) {
    for (Eigen::Index i = 0; i < plane.size(); ++i) plane.data()[i] = x(i, k);
    const Mat filtered = detail::separable_apply(a_probs, plane, b_probs);
    for (Eigen::Index i = 0; i < plane.size(); ++i) out(i, k) = filtered.data()[i];
  }
  return out;
}

Tensor3 relpos_outputs(const std::vector<RelposHead>& heads, const RelposGeometry& g, const Mat& x,
                       const std::atomic<bool>* cancel) {
  Tensor3 outputs;
  outputs.reserve(heads.size());
  for (const RelposHead& head : heads) {
    check_cancel(cancel);
    outputs.push_back(relpos_head_output(head, g, x));
  }
  return outputs;
}

// ---- expansion ----------------------------------------------------------------------------------

RelposPairTerms relpos_pair_terms(const RelposHead& head, std::array<double, 2> delta, int dims) {
  require(dims == 1 || dims == 2, "dims must be 1 or 2");
  require(dims == 2 || delta[0] == 0, "on a sentence the offset delta has no row part");
  RelposPairTerms t;
  t.dims = dims;
  t.delta = delta;
  const double a = head.alpha;
  const double dr = delta[0], dc = delta[1], cr = head.delta[0], cc = head.delta[1];
  const double norm_sq = dr * dr + dc * dc;
  if (dims == 1) {
    t.r = {norm_sq, dc};
    t.v = {-a, 2 * a * cc};
  } else {
    t.r = {norm_sq, dr, dc};
    t.v = {-a, 2 * a * cr, 2 * a * cc};
  }
  for (size_t i = 0; i < t.r.size(); ++i) t.score += t.v[i] * t.r[i];
  t.distance_term = -a * ((dr - cr) * (dr - cr) + (dc - cc) * (dc - cc));
  t.constant_term = a * (cr * cr + cc * cc);
  return t;
}

RelposPairTerms relpos_pair_terms(const RelposHead& head, const RelposGeometry& g, int query, int key) {
  require_query(g, query, "query");
  require_query(g, key, "key");
  const std::array<double, 2> delta{double(key / g.cols - query / g.cols), double(key % g.cols - query % g.cols)};
  return relpos_pair_terms(head, delta, g.dims);
}

}  // namespace attnscope
