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
Analysis layer_analysis(const model::AttentionStack& stack, int layer);

// "layer N does not exist: this model has L layers (0–L−1)" unless 0 ≤ layer < layers.
void check_layer(int layer, int layers);

// How positions enter a checkpoint's layer, for the Positions view: learned absolute vectors (GPT-2's
// wpe, scheme absolute), none (a NoPE layer, SmolLM3), or RoPE with the layer's own base (Gemma 3's local
// layers have theirs) over `rotated_dim` dimensions — the head, or MLA's rotary part with DeepSeek's
// interleaved pairs and its config's YaRN (factor, original context, β, attention factor).
struct LayerPositions {
  PositionScheme scheme = PositionScheme::rope;
  RopeParams rope;
  int rotated_dim = 0;
};
// Throws InputError for a layer outside [0, L).
LayerPositions layer_positions(const model::ModelConfig& config, int layer);

}  // namespace attnscope
