// scene_rules.h — the rules that keep a Scene consistent, shared by the command line and the window.
//
// Each rule is written once here; the CLI's flags and the GUI's widgets call it instead of keeping
// their own copy.
#pragma once
#include <string>
#include <vector>

#include "attnscope/scene/scene.h"

namespace attnscope {

// The groups G a kind implies for H heads: mha → H, mqa and single → 1, gqa → H/2 (two heads per
// group) when H is even, else 1 — the usual first choice when GQA is picked without a group count.
int default_groups(AttentionKind kind, int heads);

// Designed heads: one pattern per head, so H = patterns (1 for kind single) and d_k = 64, C = 64·H.
void use_designed_heads(ModelSettings& model, std::vector<std::string> patterns);

// The scene analyse() answers: H and G as the kind implies (effective_heads/groups), for designed
// heads C = 64·H, and causal whenever a sliding window is set (the window implies the causal mask).
// Idempotent.
Scene normalise_scene(const Scene& scene);

// Keeps a model's shape valid after an edit to d_model, H or the kind, by choosing the closest valid
// value at most the current one: H a divisor of `d_model` (≤ limits::max_heads), G per the kind and
// a divisor of H; designed heads keep H = patterns and C = 64·H.
void keep_shape_valid(ModelSettings& model, int d_model);

// Adapts a scene to its view: the grid views (relpos2d, conv) want a grid input and the token views
// (heads, shapes, relpos1d) a sentence, when may_change_input; a sentence in the relpos1d view gets
// the 1D "line" of offsets instead of a 2D conv preset, when may_change_preset.
void adapt_scene_to_view(Scene& scene, bool may_change_input, bool may_change_preset);

// The number of relative-position heads implied by the other relpos settings, for a scene whose
// head count was not given: the explicit Δ list, else the conv3x3/conv5x5 preset (9/25), else the α
// list, else in mixed mode the model's heads. Leaves relpos.heads alone when none applies.
void default_relpos_heads(Scene& scene);

}  // namespace attnscope
