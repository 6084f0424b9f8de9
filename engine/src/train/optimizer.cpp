// optimizer.cpp — AdamW, the learning-rate schedule and gradient clipping (formulas in optimizer.h).
#include "attnscope/train/optimizer.h"

#include <algorithm>
#include <cmath>
#include <functional>

#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "attnscope/core/error.h"
#include "train/team.h"

namespace attnscope::train {

void validate_optimizer_settings(const OptimizerSettings& s) {
  auto f = [](float v) { return std::to_string(v); };
  require(std::isfinite(s.lr) && s.lr > 0.0f && s.lr <= 1.0f,
          "the learning rate must be a number above 0 and at most 1, got " + f(s.lr));
  require(std::isfinite(s.min_lr_ratio) && s.min_lr_ratio >= 0.0f && s.min_lr_ratio <= 1.0f,
          "the final learning-rate ratio must be 0 to 1, got " + f(s.min_lr_ratio));
  require(s.total_steps >= 1, "steps must be at least 1, got " + std::to_string(s.total_steps));
  require(s.warmup >= 0, "warm-up steps must be 0 or more, got " + std::to_string(s.warmup));
  require(std::isfinite(s.beta1) && s.beta1 >= 0.0f && s.beta1 < 1.0f, "beta1 must be in [0, 1), got " + f(s.beta1));
  require(std::isfinite(s.beta2) && s.beta2 >= 0.0f && s.beta2 < 1.0f, "beta2 must be in [0, 1), got " + f(s.beta2));
  require(std::isfinite(s.eps) && s.eps > 0.0f, "Adam's epsilon must be a number above 0, got " + f(s.eps));
  require(std::isfinite(s.weight_decay) && s.weight_decay >= 0.0f && s.weight_decay < 1.0f,
          "weight decay must be in [0, 1), got " + f(s.weight_decay));
  require(std::isfinite(s.clip) && s.clip >= 0.0f, "the gradient clip must be 0 (off) or more, got " + f(s.clip));
}

float learning_rate(const OptimizerSettings& s, int step) {
  if (step < s.warmup) return s.lr * float(step + 1) / float(s.warmup);
  const float min_lr = s.lr * s.min_lr_ratio;
  const int decay_steps = s.total_steps - s.warmup;
  if (decay_steps <= 0) return s.lr;
  const double progress = std::min(1.0, double(step - s.warmup) / double(decay_steps));
  return float(min_lr + 0.5 * (s.lr - min_lr) * (1.0 + std::cos(M_PI * progress)));
}

AdamW::AdamW(const OptimizerSettings& settings, size_t arena_size)
    : s_(settings), m_(arena_size), v_(arena_size) {
  validate_optimizer_settings(s_);
}

namespace {
// Σ x[i]² over [0, n) in double. With AVX-512: 16 lanes of double partial sums (two 8-wide halves),
// added in a fixed order at the end, so the same slice always gives the same bits.
double sum_squares(const float* x, size_t n) {
  size_t i = 0;
  double sum = 0;
#ifdef __AVX512F__
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  for (; i + 16 <= n; i += 16) {
    const __m512d a = _mm512_cvtps_pd(_mm256_loadu_ps(x + i)), b = _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8));
    lo = _mm512_fmadd_pd(a, a, lo);
    hi = _mm512_fmadd_pd(b, b, hi);
  }
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, _mm512_add_pd(lo, hi));
  for (double lane : lanes) sum += lane;
#endif
  for (; i < n; ++i) sum += double(x[i]) * x[i];
  return sum;
}
// job(slice, begin, end) on every slice of an arena of `total` floats, on the team's threads when there is one
void each_slice(size_t total, WorkerTeam* team, const std::function<void(int, size_t, size_t)>& job) {
  const int slices = team ? team->size() : 1;
  auto one = [&](int i) {
    const auto [begin, end] = slice_of(total, i, slices);
    job(i, begin, end);
  };
  if (team) team->run(one);
  else one(0);
}
}  // namespace

void AdamW::update_slice(float* weights, float* grads, const std::vector<ParamView>& views, size_t begin,
                         size_t end, float clip_scale, float lr, float bias1, float bias2, bool clear) {
  // restrict: the four arrays never overlap, which lets the compiler vectorise the update
  float* __restrict w = weights;
  float* __restrict gr = grads;
  float* __restrict mm = m_.data();
  float* __restrict vv = v_.data();
  const float b1 = s_.beta1, b2 = s_.beta2, eps = s_.eps, inv_bias1 = 1.0f / bias1, inv_bias2 = 1.0f / bias2;
  size_t cleared = begin;  // with `clear`: the padding between views is zeroed too (views ascend)
  for (const ParamView& view : views) {
    const size_t from = std::max(begin, view.offset), to = std::min(end, view.offset + view.size);
    if (clear && from > cleared) std::fill(gr + cleared, gr + std::min(from, end), 0.0f);
    cleared = std::max(cleared, to);
    const float decay = view.decay ? s_.weight_decay : 0.0f;
    size_t i = from;
#ifdef __AVX512F__
    // The scalar loop below, 16 lanes at a time, each operation in the same order (the same bits).
    const __m512 vclip = _mm512_set1_ps(clip_scale), vb1 = _mm512_set1_ps(b1), vb2 = _mm512_set1_ps(b2),
                 vc1 = _mm512_set1_ps(1.0f - b1), vc2 = _mm512_set1_ps(1.0f - b2), vib1 = _mm512_set1_ps(inv_bias1),
                 vib2 = _mm512_set1_ps(inv_bias2), veps = _mm512_set1_ps(eps), vlr = _mm512_set1_ps(lr),
                 vdecay = _mm512_set1_ps(decay);
    for (; i < to; i += 16) {
      const __mmask16 k = to - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (to - i)) - 1);
      const __m512 g = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, gr + i), vclip);
      _mm512_mask_storeu_ps(gr + i, k, clear ? _mm512_setzero_ps() : g);
      const __m512 m1 = _mm512_add_ps(_mm512_mul_ps(vb1, _mm512_maskz_loadu_ps(k, mm + i)), _mm512_mul_ps(vc1, g));
      const __m512 v1 = _mm512_add_ps(_mm512_mul_ps(vb2, _mm512_maskz_loadu_ps(k, vv + i)),
                                      _mm512_mul_ps(_mm512_mul_ps(vc2, g), g));
      _mm512_mask_storeu_ps(mm + i, k, m1);
      _mm512_mask_storeu_ps(vv + i, k, v1);
      const __m512 m_hat = _mm512_mul_ps(m1, vib1), v_hat = _mm512_mul_ps(v1, vib2);
      const __m512 wi = _mm512_maskz_loadu_ps(k, w + i);
      const __m512 step = _mm512_add_ps(_mm512_div_ps(m_hat, _mm512_add_ps(_mm512_sqrt_ps(v_hat), veps)),
                                        _mm512_mul_ps(vdecay, wi));
      _mm512_mask_storeu_ps(w + i, k, _mm512_sub_ps(wi, _mm512_mul_ps(vlr, step)));
    }
#endif
    for (; i < to; ++i) {
      const float g = gr[i] * clip_scale;
      gr[i] = clear ? 0.0f : g;
      mm[i] = b1 * mm[i] + (1.0f - b1) * g;
      vv[i] = b2 * vv[i] + (1.0f - b2) * g * g;
      const float m_hat = mm[i] * inv_bias1, v_hat = vv[i] * inv_bias2;
      w[i] -= lr * (m_hat / (std::sqrt(v_hat) + eps) + decay * w[i]);
    }
  }
  if (clear && end > cleared) std::fill(gr + cleared, gr + end, 0.0f);
}

float AdamW::step(float* weights, float* grads, const std::vector<ParamView>& views, WorkerTeam* team) {
  const int slices = team ? team->size() : 1;
  // 1. Global norm: per-slice sums in double, added in slice order (the arena's padding is 0).
  std::vector<double> partial(slices, 0.0);
  each_slice(m_.size(), team, [&](int slice, size_t begin, size_t end) {
    partial[slice] = sum_squares(grads + begin, end - begin);
  });
  // 2. Clip and update, each element on its own.
  return clip_and_update(partial, weights, grads, views, team, false);
}

float AdamW::clip_and_update(const std::vector<double>& partial, float* weights, float* grads,
                             const std::vector<ParamView>& views, WorkerTeam* team, bool clear) {
  double sum_sq = 0;
  for (double p : partial) sum_sq += p;
  const float norm = float(std::sqrt(sum_sq));
  const float clip_scale = (s_.clip > 0.0f && norm > s_.clip) ? s_.clip / norm : 1.0f;
  const float lr = learning_rate(s_, t_);
  ++t_;
  const float bias1 = 1.0f - float(std::pow(double(s_.beta1), t_));
  const float bias2 = 1.0f - float(std::pow(double(s_.beta2), t_));
  each_slice(m_.size(), team, [&](int, size_t begin, size_t end) {
    update_slice(weights, grads, views, begin, end, clip_scale, lr, bias1, bias2, clear);
  });
  return norm;
}

float AdamW::step_summed(float* weights, const std::vector<float*>& grads, const std::vector<float>& share,
                         const std::vector<ParamView>& views, WorkerTeam* team) {
  const int slices = team ? team->size() : 1, n = int(grads.size());
  // 1. g = Σ_c share[c]·grads[c] into grads[0] and the norm's partial sums over the same slice while it is
  //    in cache; the other arenas are zeroed behind the read.
  std::vector<double> partial(slices, 0.0);
  each_slice(m_.size(), team, [&](int slice, size_t begin, size_t end) {
    float* __restrict g = grads[0];
    double sum_sq = 0;
    if (n > 1) {
      // in blocks of 4096 floats (16 KB, in L1), so the norm reads the sums before they leave the cache
      constexpr size_t block = 4096;
      for (size_t b0 = begin; b0 < end; b0 += block) {
        const size_t b1 = std::min(end, b0 + block);
        if (n == 2) {  // the two-thread case, written out so that it vectorises
          const float* __restrict g1 = grads[1];
          const float s0 = share[0], s1 = share[1];
          for (size_t i = b0; i < b1; ++i) g[i] = s0 * g[i] + s1 * g1[i];
        } else {
          for (size_t i = b0; i < b1; ++i) {
            float sum = share[0] * g[i];
            for (int c = 1; c < n; ++c) sum += share[c] * grads[c][i];
            g[i] = sum;
          }
        }
        for (int c = 1; c < n; ++c) std::fill(grads[c] + b0, grads[c] + b1, 0.0f);
        sum_sq += sum_squares(g + b0, b1 - b0);
      }
    } else {
      sum_sq = sum_squares(g + begin, end - begin);
    }
    partial[slice] = sum_sq;
  });
  // 2. Clip and update as step() does, leaving grads[0] zero.
  return clip_and_update(partial, weights, grads[0], views, team, true);
}

}  // namespace attnscope::train
