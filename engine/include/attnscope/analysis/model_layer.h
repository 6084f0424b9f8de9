// model_layer.h — one layer of a real model as an Analysis, so the Heads views and export draw it
// like any other attention (panels "head h · kv group g", framed by the model's real K/V groups).
//
//   checkpoint:  model::forward with detail_layer = N  →  layer_analysis(model, forward, labels)
//                probabilities, scores, q/k/v (after RoPE), head outputs and the block output
//   file:        model::open_attentions(…)             →  layer_analysis(stack, N)
//                probabilities only (no scores: a file computed elsewhere holds none)
// The scene's model says MHA/GQA/MQA, H, G and causal; AttentionAnalysis::source_note names the
// model and the layer for captions.
#pragma once
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"

namespace attnscope {

// Throws InputError when forward holds no layer detail (ForwardOptions::detail_layer was not set) or
// labels are not one per token.
Analysis layer_analysis(const model::Model& model, const model::ForwardResult& forward,
                        const std::vector<std::string>& labels);

// Throws InputError for a layer outside [0, L).
// A Gated DeltaNet layer (Qwen3-Next: LayerDetail::linear, or AttentionStack::linear_layer) is an analysis of
// heads without a softmax (AttentionAnalysis::linear, linear_spec gated_deltanet): result.probs its signed
// matrices M [H_v, T, T], no scores, each head its own group, drawn as the seeded kinds without a softmax are;
// its trace has no steps (the layer's convolution and gated norm are not the seeded layer's).
Analysis layer_analysis(const model::AttentionStack& stack, int layer);

// "layer N does not exist: this model has L layers (0–L−1)" unless 0 ≤ layer < layers.
void check_layer(int layer, int layers);

// How positions enter a checkpoint's layer, for the Positions view: learned absolute vectors (GPT-2's
// wpe, scheme absolute), none (a NoPE layer, SmolLM3), or RoPE with the layer's own base (Gemma 3's local
// layers have theirs) over `rotated_dim` of the head's `head_dim` dimensions — the head, its leading
// part (partial_rotary_factor), or MLA's rotary part with DeepSeek's interleaved pairs and its config's
// YaRN. A RoPE layer also carries the frequencies the forward pass turns it by for an input of `tokens`
// tokens (model::ModelConfig::layer_rope: dynamic NTK and longrope choose by the length), beside the
// unscaled ones, and what changed them:
//   theta        θ_k = base^(−2k/d) as float32 (rope_inv_freq_float32), k < d/2
//   theta_scaled θ'_k, exactly the forward's (layer_rope, or MlaConfig::inv_freq)
//   stretch      λ'_k/λ_k = θ_k/θ'_k: how many times longer pair k's wavelength became
//   band         llama3 and YaRN (and linear, every pair scaled): whether pair k kept its frequency,
//                was divided by the factor, or blends the two (llama3: by its wavelength against
//                L/high_freq_factor and L/low_freq_factor; YaRN: by k against the correction range);
//                empty for the other types
enum class RopeBand { kept, blended, scaled };
struct LayerPositions {
  PositionScheme scheme = PositionScheme::rope;
  RopeParams rope;  // base, layout, and the scalings the scene model also has (linear, YaRN)
  int rotated_dim = 0;
  int head_dim = 0;
  // RoPE only:
  model::RopeType rope_type = model::RopeType::plain;  // the config's type, in effect on this layer
  int tokens = 1;                                      // the input length the frequencies are for
  std::vector<double> theta, theta_scaled, wavelength, wavelength_scaled, stretch;  // [d/2]
  std::vector<RopeBand> band;                          // [d/2] or empty
  double attention_factor = 1;                         // on cos and sin (YaRN, longrope)
  double factor = 1;                                   // the config's factor (1 without scaling)
  int original_context = 0;                            // L: original_max_position_embeddings (yarn, llama3, longrope)
  int max_positions = 0;                               // P: dynamic's trained length
  double dynamic_base = 0;                             // dynamic: the base this length gives (the base when T ≤ P)
  double low_freq_wavelength = 0, high_freq_wavelength = 0;  // llama3: L/low_freq_factor, L/high_freq_factor
  double correction_low = 0, correction_high = 0;     // YaRN: the correction range of pairs
  bool long_factors = false;                           // longrope: long_factor chosen (T > L), else short_factor
  std::vector<double> unused_factors;                  // longrope: the other list, [d/2]
};
// Throws InputError for a layer outside [0, L) or tokens < 1, and naming the layer for a Gated DeltaNet layer
// (Qwen3-Next), which has no RoPE.
LayerPositions layer_positions(const model::ModelConfig& config, int layer, int tokens = 1);

}  // namespace attnscope
