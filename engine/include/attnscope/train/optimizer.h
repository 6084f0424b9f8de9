// optimizer.h — AdamW with linear warm-up, cosine decay and global gradient-norm clipping.
//
//   lr(step) = lr_max · (step + 1) / warmup                                  for step < warmup
//            = lr_min + ½(lr_max − lr_min)(1 + cos(π · (step − warmup) / (steps − warmup)))  after
//   g ← g · min(1, clip / ‖g‖₂)                (‖g‖ over every parameter, summed in double, in order)
//   m ← β₁m + (1 − β₁)g;  v ← β₂v + (1 − β₂)g²;  m̂ = m / (1 − β₁ᵗ);  v̂ = v / (1 − β₂ᵗ)
//   p ← p − lr · (m̂ / (√v̂ + ε) + λ·p)         λ only on tensors marked `decay` (matrices, embedding)
// (Loshchilov & Hutter 2019; the schedule and clipping as in llm.c and nanoGPT.)
#pragma once
#include <cstddef>
#include <vector>

#include "attnscope/train/model.h"

namespace attnscope::train {

struct OptimizerSettings {
  float lr = 3e-3f;            // peak learning rate
  float min_lr_ratio = 0.1f;   // lr at the last step, as a fraction of the peak
  int warmup = 50;             // steps of linear warm-up
  int total_steps = 1000;      // the cosine reaches min_lr at this step
  float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f;
  float weight_decay = 0.01f;
  float clip = 1.0f;           // largest global gradient norm; 0 turns clipping off
};

// Throws InputError for a setting that cannot train (non-positive or non-finite lr, β outside [0, 1), …).
void validate_optimizer_settings(const OptimizerSettings& s);

// The learning rate at step (0-based) of the schedule above.
float learning_rate(const OptimizerSettings& s, int step);

class WorkerTeam;  // train/team.h (private)

class AdamW {
 public:
  AdamW(const OptimizerSettings& settings, size_t arena_size);
  // One update of `weights` from `grads` (both arena_size floats, laid out as `views`); clips the
  // gradients in place first. Returns the gradient norm before clipping. With a team, the arena is
  // cut into one slice per thread (the norm's partial sums are added in slice order, so a team size
  // gives the same bits every time; a different size may round the norm differently).
  float step(float* weights, float* grads, const std::vector<ParamView>& views, WorkerTeam* team = nullptr);
  // The same update from the weighted sum of several gradient arenas (the trainer's per-thread shares of
  // a batch): g = Σ_c share[c]·grads[c], summed in c order (one arena: g = grads[0] as it is). Two passes
  // over the arena instead of a separate sum and step()'s two: the sum with the norm's partial sums, then
  // the update. Every arena in `grads` is left all zero, ready for the next backward to accumulate into.
  float step_summed(float* weights, const std::vector<float*>& grads, const std::vector<float>& share,
                    const std::vector<ParamView>& views, WorkerTeam* team = nullptr);
  int steps_done() const { return t_; }
  const OptimizerSettings& settings() const { return s_; }

 private:
  // Pass 2 of both: clip, moments and weights over [begin, end); `clear` zeroes the gradient instead of
  // leaving the clipped one in place.
  void update_slice(float* weights, float* grads, const std::vector<ParamView>& views, size_t begin, size_t end,
                    float clip_scale, float lr, float bias1, float bias2, bool clear);
  // After pass 1 of both: the global norm from the slices' sums of squares (added in slice order), then
  // pass 2 over every slice. Returns the norm.
  float clip_and_update(const std::vector<double>& partial, float* weights, float* grads,
                        const std::vector<ParamView>& views, WorkerTeam* team, bool clear);
  OptimizerSettings s_;
  FloatArena m_, v_;
  int t_ = 0;
};

}  // namespace attnscope::train
