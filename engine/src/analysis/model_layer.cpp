// model_layer.cpp — a real model's layer in the shapes of AttentionAnalysis.
#include "attnscope/analysis/model_layer.h"

#include <cmath>
#include <numbers>

#include "attnscope/core/error.h"

namespace attnscope {

namespace {

// The scene a real layer answers: its kind from (H, G), always causal for a checkpoint.
Scene layer_scene(int heads, int groups, int d_model, bool causal) {
  Scene scene;
  scene.model.kind = groups == heads ? (heads == 1 ? AttentionKind::single : AttentionKind::mha)
                                     : (groups == 1 ? AttentionKind::mqa : AttentionKind::gqa);
  scene.model.heads = heads;
  scene.model.groups = groups;
  scene.model.d_model = d_model;
  scene.model.causal = causal;
  scene.model.weights = WeightSource::loaded;
  scene.view.view = View::heads;
  return scene;
}

std::string of_layers(int layer, int layers) {
  return "layer " + std::to_string(layer) + " of " + std::to_string(layers);
}

// The layer's kept tensors as an AttentionAnalysis (scores where the layer has them), its shape
// {d_model, heads, groups} such that head_dim() is the layer's width per head, causal.
std::shared_ptr<AttentionAnalysis> attention_from_detail(const model::LayerDetail& d, const std::vector<std::string>& labels,
                                                         const AttentionShape& shape) {
  auto att = std::make_shared<AttentionAnalysis>();
  att->labels = labels;
  att->x = d.input;
  att->shape = shape;
  att->result.q = d.q;
  att->result.k = d.k;
  att->result.v = d.v;
  att->result.scores = d.scores;
  att->result.probs = d.probs;
  att->result.head_out = d.head_out;
  att->result.concat = d.concat;
  att->result.output = d.output;
  att->options.causal = true;
  return att;
}

// A Gated DeltaNet layer (Qwen3-Next): no probabilities, each value head's signed matrix M as the seeded
// kinds without a softmax carry theirs (AttentionAnalysis::linear), so the views draw it on the diverging
// scale named "Gated DeltaNet weight"; each head its own group (the layer's key heads are shared, not K/V).
// Its steps (the short convolution, the key heads shared by value heads, the gated norm) are not the seeded
// layer's: gated_deltanet_layer_trace traces them.
Analysis linear_layer_analysis(const model::Model& model, const model::ForwardResult& forward,
                               const std::vector<std::string>& labels) {
  const model::LayerDetail& d = *forward.detail;
  const model::ModelConfig& c = model.config;
  const int heads = int(d.probs.size());
  if (c.trained.active) {  // a model attnscope trained without a softmax: the seeded layer's kind and trace
    Analysis a;
    a.scene = layer_scene(heads, heads, heads * c.head_dim, true);
    a.request.attention = true;
    auto att = attention_from_detail(d, labels, {heads * c.head_dim, heads, heads});
    att->linear = true;
    att->linear_spec.kind = c.trained.kind_of(d.layer);
    att->linear_spec.normalize = c.trained.normalize;
    att->linear_layer.beta = d.beta;
    att->linear_layer.step = d.step;
    if (d.decay.size()) att->linear_layer.decay = d.decay.array().exp();  // the factor, as the seeded layer's
    att->linear_layer.head_kind = linear_kind_of(att->linear_spec);
    TraceShape shape{forward.tokens, c.d_model, heads, heads, c.head_dim};
    shape.causal = true;
    shape.linear = to_string(c.trained.kind_of(d.layer));
    shape.linear_normalize = c.trained.normalize;
    shape.trained_a_log = true;
    att->trace = linear_layer_trace(shape);
    att->source_note = model.name + " · " + of_layers(d.layer, c.layers);
    a.attention = std::move(att);
    return a;
  }
  if (c.mamba.active()) {  // Granite 4.0-H's Mamba-2: each head's M on the scale named "Mamba-2 weight"
    Analysis a;
    a.scene = layer_scene(heads, heads, heads * c.mamba.head_dim, true);
    a.request.attention = true;
    auto att = attention_from_detail(d, labels, {heads * c.mamba.head_dim, heads, heads});
    att->linear = true;
    att->linear_spec.kind = LinearLayerKind::mamba2;
    att->linear_layer.step = d.step;                  // Δ_t
    att->linear_layer.decay = d.decay.array().exp();  // the factor a_t = exp(Δ_t·A) the state is multiplied by
    att->linear_layer.head_kind = LinearKind::mamba2;
    TraceShape shape{forward.tokens, c.d_model, heads, c.mamba.groups, c.mamba.state};
    shape.causal = true;
    shape.v_dim = c.mamba.head_dim;
    shape.linear = "mamba2";
    shape.conv_kernel = c.mamba.conv_kernel;
    att->trace = granite_mamba2_layer_trace(shape, c.mamba.conv_bias);
    att->source_note = model.name + " · " + of_layers(d.layer, c.layers);
    a.attention = std::move(att);
    return a;
  }
  Analysis a;
  a.scene = layer_scene(heads, heads, heads * c.linear.value_dim, true);
  a.request.attention = true;
  // head_dim() is the value width
  auto att = attention_from_detail(d, labels, {heads * c.linear.value_dim, heads, heads});
  att->linear = true;
  att->linear_spec.kind = LinearLayerKind::gated_deltanet;
  att->linear_layer.beta = d.beta;
  att->linear_layer.decay = d.decay;
  att->linear_layer.head_kind = LinearKind::gated_delta;
  TraceShape shape{forward.tokens, c.d_model, heads, c.linear.key_heads, c.linear.key_dim};
  shape.causal = true;
  shape.v_dim = c.linear.value_dim;
  shape.conv_kernel = c.linear.conv_kernel;
  shape.linear = "gated-deltanet";
  att->trace = gated_deltanet_layer_trace(shape);
  att->source_note = model.name + " · " + of_layers(d.layer, c.layers);
  a.attention = std::move(att);
  return a;
}

}  // namespace

void check_layer(int layer, int layers) {
  require(layer >= 0 && layer < layers, "layer " + std::to_string(layer) + " does not exist: this model has " +
                                            std::to_string(layers) + (layers == 1 ? " layer (0)" : " layers (0-" +
                                            std::to_string(layers - 1) + ")"));
}

Analysis layer_analysis(const model::Model& model, const model::ForwardResult& forward,
                        const std::vector<std::string>& labels) {
  require(forward.detail.has_value(), "the forward pass kept no layer's detail (set ForwardOptions::detail_layer)");
  require(int(labels.size()) == forward.tokens, "need one label per token: " + std::to_string(labels.size()) +
                                                    " labels for " + std::to_string(forward.tokens) + " tokens");
  const model::LayerDetail& d = *forward.detail;
  const model::ModelConfig& c = model.config;
  if (d.linear) return linear_layer_analysis(model, forward, labels);
  Analysis a;
  a.scene = layer_scene(c.heads, c.kv_heads, c.heads * c.head_dim, true);
  a.request.attention = true;
  auto att = attention_from_detail(d, labels, {c.heads * c.head_dim, c.heads, c.kv_heads});  // head_dim() is D
  TraceShape shape{forward.tokens, c.d_model, c.heads, c.kv_heads, c.head_dim, c.qkv_bias, c.o_bias,
                   c.positions == model::PositionKind::rotary, true, c.qk_norm};
  shape.qk_norm_whole = c.qk_norm_whole;  // OLMoE: before the split, over the whole projection
  // Gemma's query_pre_attn_scalar^(−1/2), Granite's attention_multiplier: not 1/√d_k
  if (std::abs(c.attn_scale * std::sqrt(double(c.head_dim)) - 1.0) > 1e-9) shape.softmax_scale = c.attn_scale;
  att->trace = shape_trace(shape);
  if (c.is_mla()) {  // DeepSeek: the latent's steps, parameters and cache
    TraceShape s = att->trace.shape;
    s.kv_latent = c.mla.kv_lora_rank, s.q_latent = c.mla.q_lora_rank, s.rope_dim = c.mla.rope_dim;
    s.v_dim = c.mla.v_dim, s.softmax_scale = c.mla.softmax_scale;
    att->trace = mla_shape_trace(s);
  }
  // gpt-oss's learned sinks: the sink column the scene model's sink logits draw (the Heads view's strip,
  // the exported figures' first column), every head of the layer with its own logit and share.
  if (c.attention_sinks && d.sink_share.size() > 0) {
    const Vec& sinks = model.weights->layers[size_t(d.layer)].sinks;
    att->options.sink_logits.assign(sinks.data(), sinks.data() + sinks.size());
    att->result.sink_share = d.sink_share;
  }
  att->shared_latent = d.latent;
  att->shared_rope_key = d.rope_key;
  att->source_note = model.name + " · " + of_layers(d.layer, c.layers);
  att->window = c.layer_window.empty() ? 0 : c.layer_window[size_t(d.layer)];
  if (model.config.kv_heads != model.original_kv_heads)
    att->source_note += " · K/V pooled from " + std::to_string(model.original_kv_heads) + " heads";
  a.attention = std::move(att);
  return a;
}

Analysis layer_analysis(const model::AttentionStack& stack, int layer) {
  check_layer(layer, stack.layers);
  const int T = stack.tokens;
  if (stack.linear_layer(layer)) {  // `compute --checkpoint`'s linear_maps.npy: each head's signed matrix M
    const int heads = stack.layer_heads(layer);
    Analysis a;
    a.scene = layer_scene(heads, heads, heads, true);
    a.request.attention = true;
    auto att = std::make_shared<AttentionAnalysis>();
    att->labels = stack.labels;
    att->shape = {heads, heads, heads};
    for (int h = 0; h < heads; ++h) att->result.probs.push_back(stack.map(layer, h));
    att->x = Mat::Zero(T, 0);
    att->options.causal = true;
    att->linear = true;
    const bool mamba = stack.layer_kind[size_t(layer)] == "Mamba-2";  // model.json's layer type (Granite 4.0-H)
    att->linear_spec.kind = mamba ? LinearLayerKind::mamba2 : LinearLayerKind::gated_deltanet;
    att->trace = probabilities_trace(heads, heads, T, true);
    att->trace.shape.linear = mamba ? "mamba2" : "gated-deltanet";
    att->trace.steps.clear();
    att->source_note = stack.source + " · " + of_layers(layer, stack.layers);
    a.attention = std::move(att);
    return a;
  }
  Analysis a;
  a.scene = layer_scene(stack.heads, stack.kv_heads, stack.heads, stack.causal);
  a.request.attention = true;
  auto att = std::make_shared<AttentionAnalysis>();
  att->labels = stack.labels;
  att->shape = {stack.heads, stack.heads, stack.kv_heads};
  for (int h = 0; h < stack.heads; ++h) att->result.probs.push_back(stack.attention(layer, h));
  att->x = Mat::Zero(T, 0);
  att->trace = probabilities_trace(stack.heads, stack.kv_heads, T, stack.causal);
  att->source_note = stack.source + " · " + of_layers(layer, stack.layers);
  att->window = stack.layer_window.empty() ? 0 : stack.layer_window[size_t(layer)];
  if (!stack.groups_from_config) att->source_note += " · no config.json: each head its own K/V group";
  a.attention = std::move(att);
  return a;
}

LayerPositions layer_positions(const model::ModelConfig& c, int layer, int tokens) {
  check_layer(layer, c.layers);
  require(!c.is_linear_layer(layer) || !c.mamba.active(),
          "layer " + std::to_string(layer) + " is a Mamba-2 layer (a state-space layer): it has no RoPE; the order of "
          "its tokens comes from its recurrence and short convolution. The attention layers are where positions would be");
  require(!c.is_linear_layer(layer),
          "layer " + std::to_string(layer) + " is a Gated DeltaNet layer (linear attention): it has no RoPE; the order "
          "of its tokens comes from its recurrence and short convolution. The softmax attention layers have RoPE");
  require(tokens >= 1, "the positions of a layer are for an input of 1 token or more, got " + std::to_string(tokens));
  LayerPositions p;
  p.head_dim = c.head_dim;
  p.tokens = tokens;
  if (c.positions == model::PositionKind::learned) {
    p.scheme = PositionScheme::absolute;
    return p;
  }
  const double theta = c.layer_rope_theta.empty() ? c.rope_theta : c.layer_rope_theta[size_t(layer)];
  if (theta == 0) {
    p.scheme = PositionScheme::nope;
    return p;
  }
  p.rope.base = theta;
  p.rotated_dim = c.rotated_dim();
  // The scalings the scene model also has (linear, YaRN) as RopeParams; every type below as the forward
  // pass applies it.
  const bool scaled = c.layer_rope_scaled.empty() || c.layer_rope_scaled[size_t(layer)];
  const model::RopeScalingConfig plain;
  const model::RopeScalingConfig& s = scaled ? c.rope_scaling : plain;
  if (s.factor > 1 && s.type == model::RopeType::linear) {
    p.rope.scaling = RopeScaling::linear;
    p.rope.factor = s.factor;
  } else if (s.factor > 1 && s.type == model::RopeType::yarn) {
    p.rope.scaling = RopeScaling::yarn;
    p.rope.factor = s.factor;
    p.rope.original_context = s.original_max;
    p.rope.beta_fast = s.beta_fast;
    p.rope.beta_slow = s.beta_slow;
    p.rope.attention_factor = s.attention_factor;
  }
  std::vector<float> scaled_freq;
  double beta_fast = s.beta_fast, beta_slow = s.beta_slow;
  bool truncate = s.truncate;
  if (c.is_mla()) {  // DeepSeek: its rotary part, interleaved, with the MLA settings' YaRN
    p.rotated_dim = c.mla.rope_dim;
    p.rope.layout = RopeLayout::interleaved;
    p.rope_type = c.mla.yarn ? model::RopeType::yarn : model::RopeType::plain;
    scaled_freq = c.mla.inv_freq(theta);
    if (c.mla.yarn) {
      p.rope.scaling = RopeScaling::yarn;
      p.rope.factor = p.factor = c.mla.yarn_factor;
      p.rope.original_context = c.mla.yarn_original_max;
      p.original_context = int(c.mla.yarn_original_max);
      p.rope.beta_fast = beta_fast = c.mla.beta_fast;
      p.rope.beta_slow = beta_slow = c.mla.beta_slow;
      p.rope.attention_factor = p.attention_factor = c.mla.attention_factor;
      truncate = true;
    }
  } else {
    p.rope_type = s.type;
    const model::RopeFrequencies f = c.layer_rope(layer, tokens);
    scaled_freq = f.inv_freq;
    p.attention_factor = f.attention_factor;
    p.factor = s.type == model::RopeType::plain ? 1.0 : s.factor;
    p.original_context = s.original_max;
    p.max_positions = s.max_positions;
  }
  const int d = p.rotated_dim, half = d / 2;
  const std::vector<float> unscaled = rope_inv_freq_float32(theta, d);
  p.theta.assign(unscaled.begin(), unscaled.end());
  p.theta_scaled.assign(scaled_freq.begin(), scaled_freq.end());
  for (int k = 0; k < half; ++k) {
    p.wavelength.push_back(2 * std::numbers::pi / p.theta[size_t(k)]);
    p.wavelength_scaled.push_back(2 * std::numbers::pi / p.theta_scaled[size_t(k)]);
    p.stretch.push_back(p.theta[size_t(k)] / p.theta_scaled[size_t(k)]);
  }
  switch (p.rope_type) {
    case model::RopeType::plain: break;
    case model::RopeType::linear: p.band.assign(size_t(half), RopeBand::scaled); break;
    case model::RopeType::dynamic: {
      // _compute_dynamic_ntk_parameters: base·(factor·T/P − (factor − 1))^(d/(d−2)) once T > P
      p.dynamic_base = theta;
      if (tokens > s.max_positions)
        p.dynamic_base = theta * std::pow(s.factor * tokens / s.max_positions - (s.factor - 1), double(d) / (d - 2));
      break;
    }
    case model::RopeType::yarn: {  // _compute_yarn_parameters: pair k against the correction range
      const auto range = yarn_correction_range(theta, d, p.original_context, beta_fast, beta_slow, truncate);
      p.correction_low = range[0], p.correction_high = range[1];
      for (int k = 0; k < half; ++k)
        p.band.push_back(k <= range[0] ? RopeBand::kept : k >= range[1] ? RopeBand::scaled : RopeBand::blended);
      break;
    }
    case model::RopeType::llama3: {  // _compute_llama3_parameters: pair k's wavelength against L/high and L/low
      p.low_freq_wavelength = double(s.original_max) / s.low_freq_factor;
      p.high_freq_wavelength = double(s.original_max) / s.high_freq_factor;
      for (int k = 0; k < half; ++k) {
        const double w = p.wavelength[size_t(k)];
        p.band.push_back(w < p.high_freq_wavelength ? RopeBand::kept
                         : w > p.low_freq_wavelength ? RopeBand::scaled
                                                     : RopeBand::blended);
      }
      break;
    }
    case model::RopeType::longrope:  // longrope_frequency_update: long factors once T > original
      p.long_factors = tokens > s.original_max;
      p.unused_factors = p.long_factors ? s.short_factor : s.long_factor;
      break;
  }
  return p;
}

}  // namespace attnscope
