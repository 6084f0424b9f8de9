// trace_json.cpp — trace.json (trace_json.h).
#include "cli/trace_json.h"

namespace attnscope::cli {

// What the kind alone does not say: MLA's ranks and cache, differential attention's λ; null otherwise.
static nlohmann::json variant_json(const Analysis& a) {
  const ModelSettings& m = a.scene.model;
  const AttentionResult& r = a.attention->result;
  if (m.kind == AttentionKind::mla)
    return {{"name", "mla"}, {"kv_rank", m.kv_rank}, {"q_rank", m.q_rank}, {"rope_dim", m.rope_dim},
            {"qk_head_dim", a.attention->latent_shape.qk_dim()}, {"v_head_dim", a.attention->latent_shape.head_dim()},
            {"cache_values_per_token", m.kv_rank + m.rope_dim}};
  if (a.attention->linear) {
    const LinearLayerSpec& spec = a.attention->linear_spec;
    nlohmann::json v = {{"name", to_string(spec.kind)},
                        {"head_kind", linear_kind_name(a.attention->linear_layer.head_kind)},
                        {"state_shape", {a.attention->shape.heads, a.attention->shape.head_dim(), a.attention->shape.head_dim()}},
                        {"state_bytes_per_layer", {{"fp32", a.attention->trace.state_bytes_fp32},
                                                   {"fp16", a.attention->trace.state_bytes_fp16}}}};
    if (spec.kind == LinearLayerKind::linear) v["normalize"] = spec.normalize;
    if (spec.kind == LinearLayerKind::retention) {
      nlohmann::json gammas = nlohmann::json::array();
      for (int h = 0; h < a.attention->shape.heads; ++h)
        gammas.push_back(spec.decay > 0 ? spec.decay : linear_decay_schedule(h, a.attention->shape.heads));
      v["decay"] = gammas;
    }
    return v;
  }
  if (!r.probs_1.empty())
    return {{"name", "differential"}, {"lambda", r.lambda},
            {"lambda_init", differential_lambda_init(a.attention->differential.layer)},
            {"half_head_dim", a.attention->shape.head_dim() / 2}};
  return nullptr;
}

nlohmann::json trace_json(const Analysis& a, const Translations& words) {
  const AttentionAnalysis& att = *a.attention;
  const Trace& t = att.trace;
  nlohmann::json steps = nlohmann::json::array();
  for (const TraceStep& s : t.steps) {
    const auto said = words.trace_steps.find(s.key);
    const bool translated = said != words.trace_steps.end();
    steps.push_back({{"name", translated ? said->second.name : s.name},
                     {"formula", translated && !said->second.formula.empty() ? said->second.formula : s.formula},
                     {"dims", s.dims}, {"shape", s.shape}, {"text", s.text()}});
  }
  const ModelSettings& m = a.scene.model;
  nlohmann::json settings;
  if (!att.source_note.empty()) {
    // A checkpoint's layer: its model and layer, and the numbers of the trace (a Gated DeltaNet layer's
    // heads are its value heads, groups its key heads, head_dim d_k beside v_head_dim d_v).
    const TraceShape& s = t.shape;
    settings = {{"source", att.source_note},
                {"kind", s.linear.empty() ? to_string(m.kind) : s.linear},
                {"tokens", s.tokens},
                {"d_model", s.d_model},
                {"heads", s.heads},
                {"groups", s.groups},
                {"head_dim", s.head_dim},
                {"v_head_dim", s.v_dim > 0 ? s.v_dim : s.head_dim},
                {"causal", s.causal},
                {"rotary", s.rotary},
                {"window", s.window}};
    if (s.conv_kernel > 0) settings["conv_kernel"] = s.conv_kernel;
    if (s.kv_latent > 0) settings["kv_latent"] = s.kv_latent;
  } else {
    nlohmann::json sink_logits = att.options.sink_logits;  // the seeded s_h per head ([] without learned sinks)
    settings = {{"kind", to_string(m.kind)},
                {"tokens", att.x.rows()},
                {"d_model", att.shape.d_model},
                {"heads", att.shape.heads},
                {"groups", att.shape.groups},
                {"head_dim", att.shape.head_dim()},
                {"causal", m.causal},
                {"scale_scores", m.scale_scores},
                {"seed", m.seed},
                {"weights", to_string(m.weights)},
                {"window", m.window},
                {"sinks", m.sinks},
                {"sink_logits", m.sink_logits},
                {"sink_logit_values", sink_logits},
                {"positions", to_string(m.positions)}};
  }
  return {
      {"settings", settings},
      {"variant", att.source_note.empty() ? variant_json(a) : nlohmann::json(nullptr)},
      {"steps", steps},
      {"parameters",
       {{"wq", t.params.wq}, {"wk", t.params.wk}, {"wv", t.params.wv}, {"wo", t.params.wo},
        {"biases", t.params.biases}, {"other", t.params.other}, {"total", t.params.total()}}},
      {"kv_cache_bytes_per_token_per_layer", {{"fp32", t.kv_bytes_per_token_fp32}, {"fp16", t.kv_bytes_per_token_fp16}}},
      {"state_bytes_per_layer", {{"fp32", t.state_bytes_fp32}, {"fp16", t.state_bytes_fp16}}},
  };
}

}  // namespace attnscope::cli
