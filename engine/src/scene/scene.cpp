// scene.cpp — kind → (H, G), and the names of the enums.
#include "attnscope/scene/scene.h"

#include "attnscope/core/error.h"

namespace attnscope {

int effective_heads(const ModelSettings& m) {
  if (m.kind == AttentionKind::single) return 1;
  if (m.weights == WeightSource::designed && !m.designed.empty()) return int(m.designed.size());
  return m.heads;
}

int effective_groups(const ModelSettings& m) {
  switch (m.kind) {
    case AttentionKind::single:
    case AttentionKind::mqa: return 1;
    case AttentionKind::mha:
    case AttentionKind::mla:  // MLA: every head its own keys and values
    case AttentionKind::linear:
    case AttentionKind::retention:
    case AttentionKind::mamba2:
    case AttentionKind::deltanet:
    case AttentionKind::gated_deltanet: return effective_heads(m);  // every head its own state
    case AttentionKind::gqa: return m.groups;
  }
  return m.groups;
}

const char* grouping_name(int heads, int groups) { return groups == heads ? "MHA" : groups == 1 ? "MQA" : "GQA"; }

const char* to_string(AttentionKind k) {
  switch (k) {
    case AttentionKind::single: return "single";
    case AttentionKind::mha: return "mha";
    case AttentionKind::mqa: return "mqa";
    case AttentionKind::gqa: return "gqa";
    case AttentionKind::mla: return "mla";
    case AttentionKind::linear: return "linear";
    case AttentionKind::retention: return "retention";
    case AttentionKind::mamba2: return "mamba2";
    case AttentionKind::deltanet: return "deltanet";
    case AttentionKind::gated_deltanet: return "gated-deltanet";
  }
  return "?";
}

const char* to_string(WeightSource s) {
  switch (s) {
    case WeightSource::converted: return "converted";
    case WeightSource::independent: return "independent";
    case WeightSource::loaded: return "loaded";
    case WeightSource::designed: return "designed";
  }
  return "?";
}

const char* to_string(InputSource s) {
  switch (s) {
    case InputSource::text: return "text";
    case InputSource::tensor: return "tensor";
    case InputSource::grid: return "grid";
  }
  return "?";
}

const char* to_string(View v) {
  switch (v) {
    case View::heads: return "heads";
    case View::shapes: return "shapes";
    case View::relpos1d: return "relpos1d";
    case View::relpos2d: return "relpos2d";
    case View::conv: return "conv";
    case View::positions: return "positions";
  }
  return "?";
}

View parse_view(const std::string& name) {
  for (View v : all_views)
    if (name == to_string(v)) return v;
  throw InputError("unknown view '" + name + "' (valid: heads, shapes, positions, relpos1d, relpos2d, conv)");
}

const char* to_string(ScaleMode m) {
  switch (m) {
    case ScaleMode::shared: return "shared";
    case ScaleMode::per_head: return "per-head";
    case ScaleMode::fixed: return "fixed";
    case ScaleMode::locked: return "locked";
  }
  return "?";
}

const char* to_string(TokenSetAxis axis) {
  switch (axis) {
    case TokenSetAxis::queries: return "queries";
    case TokenSetAxis::keys: return "keys";
    case TokenSetAxis::none: break;
  }
  return "none";
}

const char* to_string(SetReduce reduce) { return reduce == SetReduce::mean ? "mean" : "sum"; }

TokenSetAxis parse_token_set_axis(const std::string& text) {
  if (text == "none") return TokenSetAxis::none;
  if (text == "queries") return TokenSetAxis::queries;
  if (text == "keys") return TokenSetAxis::keys;
  throw InputError("a token set's axis is none, queries or keys, got '" + text + "'");
}

SetReduce parse_set_reduce(const std::string& text) {
  if (text == "sum") return SetReduce::sum;
  if (text == "mean") return SetReduce::mean;
  throw InputError("unknown token set reduction '" + text + "' (valid: sum, mean)");
}

ScaleMode parse_scale_mode(const std::string& name) {
  for (ScaleMode m : {ScaleMode::shared, ScaleMode::per_head, ScaleMode::fixed, ScaleMode::locked})
    if (name == to_string(m)) return m;
  throw InputError("unknown scale mode '" + name + "' (valid: shared, per-head, fixed, locked)");
}

AttentionKind parse_attention_kind(const std::string& name) {
  for (auto k : all_attention_kinds)
    if (name == to_string(k)) return k;
  throw InputError("unknown attention kind '" + name +
                   "' (valid: single, mha, mqa, gqa, mla, and without a softmax linear, retention, mamba2, deltanet, "
                   "gated-deltanet)");
}

WeightSource parse_weight_source(const std::string& name) {
  for (auto s : {WeightSource::converted, WeightSource::independent, WeightSource::loaded, WeightSource::designed})
    if (name == to_string(s)) return s;
  throw InputError("unknown weight source '" + name + "' (valid: converted, independent, loaded, designed)");
}

InputSource parse_input_source(const std::string& name) {
  for (auto s : {InputSource::text, InputSource::tensor, InputSource::grid})
    if (name == to_string(s)) return s;
  throw InputError("unknown input source '" + name + "' (valid: text, tensor, grid)");
}

}  // namespace attnscope
