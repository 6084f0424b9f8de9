// scene_rules.cpp — consistency rules for a Scene (scene_rules.h).
#include "attnscope/scene/scene_rules.h"

#include <algorithm>

#include "attnscope/attention/designed_heads.h"
#include "attnscope/core/limits.h"

namespace attnscope {
namespace {

// The largest divisor of n that is ≤ at_most and ≤ cap (1 at worst).
int closest_divisor_at_most(int n, int at_most, int cap) {
  for (int d = std::min({n, at_most, cap}); d >= 1; --d)
    if (n % d == 0) return d;
  return 1;
}

}  // namespace

int default_groups(AttentionKind kind, int heads) {
  switch (kind) {
    case AttentionKind::mha:
    case AttentionKind::mla:
    case AttentionKind::linear:
    case AttentionKind::retention:
    case AttentionKind::mamba2:
    case AttentionKind::deltanet:
    case AttentionKind::gated_deltanet: return heads;
    case AttentionKind::single:
    case AttentionKind::mqa: return 1;
    case AttentionKind::gqa: return (heads % 2 == 0 && heads >= 2) ? heads / 2 : 1;
  }
  return 1;
}

void use_designed_heads(ModelSettings& m, std::vector<std::string> patterns) {
  m.weights = WeightSource::designed;
  m.designed = std::move(patterns);
  m.heads = int(m.designed.size());
  m.d_model = designed_d_model(effective_heads(m));
}

Scene normalise_scene(const Scene& scene) {
  Scene s = scene;
  ModelSettings& m = s.model;
  m.heads = effective_heads(m);
  m.groups = effective_groups(m);
  if (m.weights == WeightSource::designed && !m.designed.empty()) m.d_model = designed_d_model(m.heads);
  // A window masks keys after the query as well (i − W < j ≤ i): the answer is causal, and says so
  // (trace.json's settings, the statistics' visible keys, the exported caption).
  if (m.window > 0) m.causal = true;
  // Heads without a softmax read only the tokens so far (their state is built token by token).
  if (is_linear_kind(m.kind)) m.causal = true;
  return s;
}

void keep_shape_valid(ModelSettings& m, int d_model) {
  if (m.weights == WeightSource::designed) {
    if (!m.designed.empty()) m.heads = int(m.designed.size());
    m.d_model = designed_d_model(m.heads);
  } else if (d_model >= 1) {
    m.heads = closest_divisor_at_most(d_model, std::max(m.heads, 1), limits::max_heads);
  }
  switch (m.kind) {
    case AttentionKind::single: break;  // effective_heads/groups force 1 without losing H and G
    case AttentionKind::mha:
    case AttentionKind::mla:
    case AttentionKind::linear:
    case AttentionKind::retention:
    case AttentionKind::mamba2:
    case AttentionKind::deltanet:
    case AttentionKind::gated_deltanet: m.groups = m.heads; break;
    case AttentionKind::mqa: m.groups = 1; break;
    case AttentionKind::gqa: m.groups = closest_divisor_at_most(m.heads, std::max(m.groups, 1), m.heads); break;
  }
}

void adapt_scene_to_view(Scene& scene, bool may_change_input, bool may_change_preset) {
  const View view = scene.view.view;
  const bool wants_grid = view == View::relpos2d || view == View::conv;
  InputSource& source = scene.input.source;
  if (may_change_input) {
    if (wants_grid && source != InputSource::grid) source = InputSource::grid;
    else if (!wants_grid && source == InputSource::grid) source = InputSource::text;
  }
  // The 3×3 / 5×5 offset presets are 2D: a sentence gets a line of offsets instead.
  RelposSettings& r = scene.relpos;
  if (may_change_preset && source != InputSource::grid && view == View::relpos1d && r.deltas.empty() &&
      (r.delta_preset == "conv3x3" || r.delta_preset == "conv5x5"))
    r.delta_preset = "line";
}

void default_relpos_heads(Scene& s) {
  RelposSettings& r = s.relpos;
  if (!r.deltas.empty()) r.heads = int(r.deltas.size());
  else if (r.delta_preset == "conv3x3") r.heads = 9;
  else if (r.delta_preset == "conv5x5") r.heads = 25;
  else if (!r.alphas.empty()) r.heads = int(r.alphas.size());
  else if (r.mixed) r.heads = effective_heads(s.model);
}

}  // namespace attnscope
