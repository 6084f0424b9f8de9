// positions.cpp — RoPE (layouts, base, scalings), ALiBi slopes, one layer's encoding, the Positions
// view's data. Formulas and their sources in positions.h.
//
// Sections: RoPE · ALiBi · one layer's encoding · the Positions view's data
#include "attnscope/attention/positions.h"

#include <algorithm>
#include <cmath>
#include <complex>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"

namespace attnscope {

namespace {
constexpr double two_pi = 2 * M_PI;
std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

// ---- names ----------------------------------------------------------------------------------------

const char* to_string(PositionScheme p) {
  switch (p) {
    case PositionScheme::absolute: return "absolute";
    case PositionScheme::nope: return "nope";
    case PositionScheme::rope: return "rope";
    case PositionScheme::alibi: return "alibi";
    case PositionScheme::relpos: return "relpos";
  }
  return "?";
}

const char* to_string(RopeLayout l) { return l == RopeLayout::half ? "half" : "interleaved"; }

const char* to_string(RopeScaling s) {
  switch (s) {
    case RopeScaling::none: return "none";
    case RopeScaling::linear: return "linear";
    case RopeScaling::ntk: return "ntk";
    case RopeScaling::yarn: return "yarn";
  }
  return "?";
}

PositionScheme parse_position_scheme(const std::string& name) {
  for (auto p : {PositionScheme::absolute, PositionScheme::nope, PositionScheme::rope, PositionScheme::alibi,
                 PositionScheme::relpos})
    if (name == to_string(p)) return p;
  throw InputError("unknown position scheme '" + name + "' (valid: absolute, nope, rope, alibi, relpos)");
}

RopeLayout parse_rope_layout(const std::string& name) {
  for (auto l : {RopeLayout::half, RopeLayout::interleaved})
    if (name == to_string(l)) return l;
  throw InputError("unknown RoPE layout '" + name + "' (valid: half, interleaved)");
}

RopeScaling parse_rope_scaling(const std::string& name) {
  for (auto s : {RopeScaling::none, RopeScaling::linear, RopeScaling::ntk, RopeScaling::yarn})
    if (name == to_string(s)) return s;
  throw InputError("unknown RoPE scaling '" + name + "' (valid: none, linear, ntk, yarn)");
}

// ---- RoPE ---------------------------------------------------------------------------------------

void validate_rope(const RopeParams& p, int dim) {
  require(dim >= 2 && dim % 2 == 0, "rotary positions turn pairs of dimensions, so the rotated width must be even and "
                                    "at least 2, got " + std::to_string(dim));
  require(std::isfinite(p.base) && p.base > 1, "the RoPE base must be a number > 1 (e.g. 10000), got " + number(p.base));
  // Without a scaling the factor is not used (a window may keep the last one for when a scaling returns).
  if (p.scaling != RopeScaling::none)
    require(std::isfinite(p.factor) && p.factor > 1 && p.factor <= 1e6,
            std::string("the ") + to_string(p.scaling) + " RoPE scaling needs a factor > 1 (and at most 1e6), got " +
                number(p.factor));
  require(std::isfinite(p.original_context) && p.original_context >= 1 && p.original_context <= 1e9,
          "the original context of a RoPE scaling must be at least 1 token, got " + number(p.original_context));
}

std::vector<double> rope_inv_freq(double base, int dim) {
  std::vector<double> out(size_t(dim / 2));
  for (int k = 0; k < dim / 2; ++k) out[size_t(k)] = std::pow(base, -2.0 * k / dim);
  return out;
}

double ntk_base(double base, double factor, int dim) {
  return dim <= 2 ? base : base * std::pow(factor, double(dim) / double(dim - 2));
}

double yarn_mscale(double factor, double m) { return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0; }

double rope_attention_factor(const RopeParams& p) {
  if (p.scaling != RopeScaling::yarn) return 1.0;
  if (p.attention_factor > 0) return p.attention_factor;
  if (p.mscale != 0 && p.mscale_all_dim != 0) return yarn_mscale(p.factor, p.mscale) / yarn_mscale(p.factor, p.mscale_all_dim);
  return yarn_mscale(p.factor);
}

std::array<double, 2> yarn_correction_range(double base, int dim, double original_context, double beta_fast,
                                            double beta_slow, bool truncate) {
  auto correction_dim = [&](double rotations) {
    return (dim * std::log(original_context / (rotations * two_pi))) / (2 * std::log(base));
  };
  double low = correction_dim(beta_fast), high = correction_dim(beta_slow);
  if (truncate) low = std::floor(low), high = std::ceil(high);
  return {std::max(low, 0.0), std::min(high, double(dim - 1))};
}

namespace {
// YaRN's blend weight of the original (extrapolated) frequency for pair k: 1 − ramp_k, Hugging Face's
// linear_ramp_factor over [low, high] (high nudged by 0.001 when equal).
template <class Real> Real yarn_extrapolation(int k, double low, double high) {
  if (low == high) high += 0.001;
  const Real ramp = std::clamp(Real((double(k) - low) / (high - low)), Real(0), Real(1));  // in double, as HF's arange
  return Real(1) - ramp;
}
}  // namespace

std::vector<double> rope_scaled_inv_freq(const RopeParams& p, int dim) {
  switch (p.scaling) {
    case RopeScaling::none: return rope_inv_freq(p.base, dim);
    case RopeScaling::linear: {
      std::vector<double> f = rope_inv_freq(p.base, dim);
      for (double& v : f) v /= p.factor;
      return f;
    }
    case RopeScaling::ntk: return rope_inv_freq(ntk_base(p.base, p.factor, dim), dim);
    case RopeScaling::yarn: {
      const std::vector<double> extra = rope_inv_freq(p.base, dim);
      const auto [low, high] = yarn_correction_range(p.base, dim, p.original_context, p.beta_fast, p.beta_slow);
      std::vector<double> f(extra.size());
      for (size_t k = 0; k < f.size(); ++k) {
        const double e = yarn_extrapolation<double>(int(k), low, high);
        f[k] = extra[k] / p.factor * (1 - e) + extra[k] * e;
      }
      return f;
    }
  }
  throw InputError("unknown RoPE scaling");
}

std::vector<float> rope_inv_freq_float32(double base, int dim) {
  // Hugging Face: inv_freq = 1.0 / (base ** (arange(0, d, 2).float() / d)) in float32
  std::vector<float> out(size_t(dim / 2));
  for (int k = 0; k < dim / 2; ++k) out[size_t(k)] = 1.0f / float(std::pow(base, double(float(2 * k) / float(dim))));
  return out;
}

std::vector<float> yarn_inv_freq_float32(double base, int dim, double factor, double original_context, double beta_fast,
                                         double beta_slow, bool truncate) {
  // _compute_yarn_parameters: pos_freqs = base ** (arange(0, d, 2).float() / d), the blend in float32
  const auto [low, high] = yarn_correction_range(base, dim, original_context, beta_fast, beta_slow, truncate);
  std::vector<float> out(size_t(dim / 2));
  for (int k = 0; k < dim / 2; ++k) {
    const float pos = float(std::pow(base, double(float(2 * k) / float(dim))));
    const float extrapolation = yarn_extrapolation<float>(k, low, high);
    const float inv_extra = 1.0f / pos, inv_inter = 1.0f / (float(factor) * pos);
    out[size_t(k)] = inv_inter * (1.0f - extrapolation) + inv_extra * extrapolation;
  }
  return out;
}

RopeTables rope_tables(const std::vector<double>& inv_freq, double attention_factor, int tokens, RopeLayout layout) {
  RopeTables t;
  t.layout = layout;
  const int half = int(inv_freq.size());
  t.cos.resize(tokens, half);
  t.sin.resize(tokens, half);
  for (int pos = 0; pos < tokens; ++pos)
    for (int k = 0; k < half; ++k) {
      const double angle = pos * inv_freq[size_t(k)];
      t.cos(pos, k) = std::cos(angle) * attention_factor;
      t.sin(pos, k) = std::sin(angle) * attention_factor;
    }
  return t;
}

void rope_rotate(Eigen::Ref<Mat> x, const RopeTables& t, int row0, int heads) {
  const int half = int(t.cos.cols()), d = 2 * half;
  const bool interleaved = t.layout == RopeLayout::interleaved;
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const Eigen::Index pos = row0 + r;
    for (int h = 0; h < heads; ++h) {
      float* p = x.row(r).data() + Eigen::Index(h) * d;
      for (int k = 0; k < half; ++k) {
        const int a = interleaved ? 2 * k : k, b = interleaved ? 2 * k + 1 : k + half;
        const double xa = p[a], xb = p[b], c = t.cos(pos, k), s = t.sin(pos, k);
        p[a] = float(xa * c - xb * s);
        p[b] = float(xb * c + xa * s);
      }
    }
  }
}

void rope_rotate_reference(Mat& x, const std::vector<double>& inv_freq, double attention_factor, RopeLayout layout) {
  const int half = int(inv_freq.size());
  for (Eigen::Index t = 0; t < x.rows(); ++t)
    for (int k = 0; k < half; ++k) {
      const int a = layout == RopeLayout::interleaved ? 2 * k : k;
      const int b = layout == RopeLayout::interleaved ? 2 * k + 1 : k + half;
      const double angle = double(t) * inv_freq[size_t(k)];
      const double xa = x(t, a), xb = x(t, b);
      x(t, a) = float(attention_factor * (xa * std::cos(angle) - xb * std::sin(angle)));
      x(t, b) = float(attention_factor * (xb * std::cos(angle) + xa * std::sin(angle)));
    }
}

// ---- ALiBi --------------------------------------------------------------------------------------

namespace {
// The paper's get_slopes_power_of_2(n): start = 2^(−8/n), slopes start^1 … start^n.
std::vector<double> alibi_power_of_two(int n) {
  std::vector<double> s(static_cast<size_t>(n));
  for (int h = 1; h <= n; ++h) s[size_t(h - 1)] = std::pow(2.0, -8.0 * h / n);
  return s;
}
}  // namespace

std::vector<double> alibi_slopes(int heads) {
  require(heads >= 1, "ALiBi needs at least one head, got " + std::to_string(heads));
  int n = 1;
  while (n * 2 <= heads) n *= 2;  // the closest power of two ≤ H
  std::vector<double> s = alibi_power_of_two(n);
  if (n == heads) return s;
  // Press et al.'s rule for other H: the n slopes, then every other slope of 2n, H − n of them.
  const std::vector<double> twice = alibi_power_of_two(2 * n);
  for (int i = 0; int(s.size()) < heads; i += 2) s.push_back(twice[size_t(i)]);
  return s;
}

// ---- relative positions on a sentence --------------------------------------------------------------

MatD relative_position_scores_1d(double alpha, double delta, int tokens, int row0, int rows) {
  if (rows < 0) rows = tokens - row0;
  MatD s(rows, tokens);
  for (int q = row0; q < row0 + rows; ++q) {
    const double centre = q + delta;
    const double nearest = std::clamp(std::round(centre), 0.0, double(tokens - 1));
    const double min_sq = (nearest - centre) * (nearest - centre);
    for (int k = 0; k < tokens; ++k) {
      const double d = k - centre;
      s(q - row0, k) = -alpha * (d * d - min_sq);
    }
  }
  return s;
}

// ---- the Positions view's data --------------------------------------------------------------------

namespace {

// score(δ) = a²·Σ_k 2cos(δθ_k) for q = k = all-ones.
DistanceCurve all_ones_score(const std::string& name, const std::vector<double>& inv_freq, double factor, int max_distance) {
  DistanceCurve c{name, std::vector<double>(size_t(max_distance + 1))};
  for (int d = 0; d <= max_distance; ++d) {
    double s = 0;
    for (double f : inv_freq) s += 2 * std::cos(d * f);
    c.value[size_t(d)] = factor * factor * s;
  }
  return c;
}

// RoFormer §3.4.3: (1/(d/2))·Σ_{j=1}^{d/2} |S_j|, S_j = Σ_{k<j} e^{iδθ_k}.
DistanceCurve roformer_bound(const std::string& name, const std::vector<double>& inv_freq, int max_distance) {
  DistanceCurve c{name, std::vector<double>(size_t(max_distance + 1))};
  for (int d = 0; d <= max_distance; ++d) {
    std::complex<double> partial = 0;
    double total = 0;
    for (double f : inv_freq) {
      partial += std::polar(1.0, d * f);
      total += std::abs(partial);
    }
    c.value[size_t(d)] = total / double(inv_freq.size());
  }
  return c;
}

}  // namespace

PositionsProfile positions_profile(PositionScheme scheme, const RopeParams& rope, int heads, int head_dim,
                                   int max_distance) {
  require(max_distance >= 1 && max_distance <= limits::max_tokens,
          "the distances of a positions profile run from 1 to " + std::to_string(limits::max_tokens) + ", got " +
              std::to_string(max_distance));
  PositionsProfile p;
  p.scheme = scheme;
  p.head_dim = head_dim;
  p.max_distance = max_distance;
  if (scheme == PositionScheme::rope) {
    p.rope = rope;
    validate_rope(p.rope, head_dim);
    p.attention_factor = rope_attention_factor(p.rope);
    p.theta = rope_inv_freq(p.rope.base, head_dim);
    p.theta_scaled = rope_scaled_inv_freq(p.rope, head_dim);
    for (double t : p.theta) p.wavelength.push_back(two_pi / t);
    for (double t : p.theta_scaled) p.wavelength_scaled.push_back(two_pi / t);
    p.decay = all_ones_score(to_string(p.rope.scaling), p.theta_scaled, p.attention_factor, max_distance);
    p.decay_bound = roformer_bound(to_string(p.rope.scaling), p.theta_scaled, max_distance);
    p.decay_default = all_ones_score("base " + number(default_rope_base), rope_inv_freq(default_rope_base, head_dim), 1.0,
                                     max_distance);
    p.comparison_factor = p.rope.scaling == RopeScaling::none ? 4.0 : p.rope.factor;
    for (RopeScaling s : {RopeScaling::none, RopeScaling::linear, RopeScaling::ntk, RopeScaling::yarn}) {
      RopeParams q = p.rope;
      q.scaling = s;
      q.factor = s == RopeScaling::none ? 1.0 : p.comparison_factor;
      p.decay_by_scaling.push_back(
          all_ones_score(to_string(s), rope_scaled_inv_freq(q, head_dim), rope_attention_factor(q), max_distance));
    }
  } else if (scheme == PositionScheme::alibi) {
    p.alibi_slopes = alibi_slopes(heads);
    for (size_t h = 0; h < p.alibi_slopes.size(); ++h) {
      DistanceCurve c{"head " + std::to_string(h), std::vector<double>(size_t(max_distance + 1))};
      for (int d = 0; d <= max_distance; ++d) c.value[size_t(d)] = -p.alibi_slopes[h] * d;
      p.alibi_bias.push_back(std::move(c));
    }
  }
  return p;
}

int positions_profile_distance(double original_context, int tokens) {
  const double wanted = std::max(double(tokens - 1), 4 * original_context);
  return int(std::clamp(wanted, 1.0, double(limits::max_tokens)));
}

nlohmann::json positions_profile_json(const PositionsProfile& p) {
  using nlohmann::json;
  auto curve = [](const DistanceCurve& c) { return json{{"name", c.name}, {"value", c.value}}; };
  auto curves = [&](const std::vector<DistanceCurve>& cs) {
    json a = json::array();
    for (const DistanceCurve& c : cs) a.push_back(curve(c));
    return a;
  };
  json j = {{"scheme", to_string(p.scheme)}, {"head_dim", p.head_dim}, {"max_distance", p.max_distance}};
  if (p.scheme == PositionScheme::rope) {
    j["rope"] = {{"base", p.rope.base},
                 {"layout", to_string(p.rope.layout)},
                 {"scaling", to_string(p.rope.scaling)},
                 {"factor", p.rope.factor},
                 {"original_context", p.rope.original_context},
                 {"beta_fast", p.rope.beta_fast},
                 {"beta_slow", p.rope.beta_slow},
                 {"attention_factor", p.attention_factor},
                 {"theta", p.theta},
                 {"theta_scaled", p.theta_scaled},
                 {"wavelength", p.wavelength},
                 {"wavelength_scaled", p.wavelength_scaled},
                 {"decay", curve(p.decay)},
                 {"decay_bound", curve(p.decay_bound)},
                 {"decay_default", curve(p.decay_default)},
                 {"comparison_factor", p.comparison_factor},
                 {"decay_by_scaling", curves(p.decay_by_scaling)}};
  }
  if (p.scheme == PositionScheme::alibi) j["alibi"] = {{"slopes", p.alibi_slopes}, {"bias", curves(p.alibi_bias)}};
  return j;
}

}  // namespace attnscope
