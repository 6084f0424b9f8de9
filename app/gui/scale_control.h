// scale_control.h — the heatmaps' colour scale (shared, per head, fixed 0–1, locked) as a combo for the
// Heads toolbar and as items of the Display menu. Both edit state.scene.view (persisted with the scene,
// carried into Export and Copy figure through export_request_for_view).
#pragma once
#include <string>

#include "attnscope/figure/color_scale.h"
#include "gui/app_state.h"

namespace attnscope::gui {

// Sets the mode. Locking freezes the range on screen now (every heatmap of the current view), so the
// colours keep their meaning while sliders move; fixed applies to probabilities only (else ignored).
void SetScaleMode(AppState& state, ScaleMode mode);
// The combo, `width` wide; returns true when the mode changed.
bool ScaleCombo(AppState& state, float width);
// The combo and its name on a line of their own (the relative-position views' controls); nothing when the
// line is narrower than the combo (the Display menu has the same choice).
void ScaleComboLine(AppState& state);
// Its width for the longest item in the UI's language.
float ScaleComboWidth();
// One radio item per mode (the Display menu).
void ScaleMenuItems(AppState& state);
// What a colour bar's title adds for `scale`, in the UI's language: "" (shared), " · per head",
// " · fixed 0–1", " · locked 0.02–0.61" (the exports' words: scale_bar_title).
std::string ScaleNote(const ColorScale& scale);

}  // namespace attnscope::gui
