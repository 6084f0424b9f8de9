// optimizer.cpp — AdamW, the learning-rate schedule and gradient clipping (formulas in optimizer.h).
#include "attnscope/train/optimizer.h"

#include <cmath>
#include <functional>

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

float AdamW::step(float* weights, float* grads, const std::vector<ParamView>& views, WorkerTeam* team) {
  const int slices = team ? team->size() : 1;
  const size_t total = m_.size();
  // job(slice, begin, end) on every slice of the arena, on the team's threads when there is one
  auto each_slice = [&](const std::function<void(int, size_t, size_t)>& job) {
    auto one = [&](int i) {
      const auto [begin, end] = slice_of(total, i, slices);
      job(i, begin, end);
    };
    if (team) team->run(one);
    else one(0);
  };
  // 1. Global norm: per-slice sums in double, added in slice order (the arena's padding is 0).
  std::vector<double> partial(slices, 0.0);
  each_slice([&](int slice, size_t begin, size_t end) {
    double sum_sq = 0;
    for (size_t i = begin; i < end; ++i) sum_sq += double(grads[i]) * grads[i];
    partial[slice] = sum_sq;
  });
  double sum_sq = 0;
  for (double p : partial) sum_sq += p;
  const float norm = float(std::sqrt(sum_sq));
  const float clip_scale = (s_.clip > 0.0f && norm > s_.clip) ? s_.clip / norm : 1.0f;

  // 2. Clip and update, each element on its own.
  const float lr = learning_rate(s_, t_);
  ++t_;
  const float bias1 = 1.0f - float(std::pow(double(s_.beta1), t_));
  const float bias2 = 1.0f - float(std::pow(double(s_.beta2), t_));
  float* m = m_.data();
  float* v = v_.data();
  each_slice([&](int, size_t begin, size_t end) {
    // restrict: the four arrays never overlap, which lets the compiler vectorise the update
    float* __restrict w = weights;
    float* __restrict gr = grads;
    float* __restrict mm = m;
    float* __restrict vv = v;
    const float b1 = s_.beta1, b2 = s_.beta2, eps = s_.eps, inv_bias1 = 1.0f / bias1, inv_bias2 = 1.0f / bias2;
    for (const ParamView& view : views) {
      const size_t from = std::max(begin, view.offset), to = std::min(end, view.offset + view.size);
      const float decay = view.decay ? s_.weight_decay : 0.0f;
      for (size_t i = from; i < to; ++i) {
        const float g = gr[i] * clip_scale;
        gr[i] = g;
        mm[i] = b1 * mm[i] + (1.0f - b1) * g;
        vv[i] = b2 * vv[i] + (1.0f - b2) * g * g;
        const float m_hat = mm[i] * inv_bias1, v_hat = vv[i] * inv_bias2;
        w[i] -= lr * (m_hat / (std::sqrt(v_hat) + eps) + decay * w[i]);
      }
    }
  });
  return norm;
}

}  // namespace attnscope::train
