// model_view_ablation.h — head ablation in the Model view (issue 38 item 3): switch heads of the open
// checkpoint off (zero, or their mean over the input's positions) and see what changes.
//
//   "Click switches heads off" on: a click on a thumbnail toggles that head (CheckpointWindowState::ablation,
//   part of the undo history) instead of opening it; the worker re-runs the forward with the heads off
//   (pipeline::Request::ablation) and delivers the comparison with the unablated run (AblationComparison).
//   Drawn: a switched-off head greyed and crossed out; every head whose map moved by ≥ 0.05 (largest |ΔA| of
//   a cell) framed in magenta (no K/V group's colour) with "Δ0.43" on it; a panel with the loss on the input before → after and the
//   next-token distribution at the selected query (else the last position) before → after.
//   A linear/mixer layer's heads (Gated DeltaNet, Mamba-2, a trained linear model) cannot be switched off:
//   the tooltip says so and a click does nothing; an attentions file has no model to run again.
#pragma once
#include <imgui.h>

#include <string>

#include "core/model_view.h"
#include "gui/app_state.h"

namespace attnscope::gui {

// A head's change is marked from this largest |ΔA| on (smaller changes are not visible in the colours).
inline constexpr float ablation_marked_change = 0.05f;

// Why head (l, h) cannot be switched off ("" when it can).
std::string AblationRefusal(const AppState& state, const ModelViewPictures& mv, int layer);
// Switches head (l, h) off, or on again; a new forward pass follows.
void ToggleAblatedHead(AppState& state, int layer, int head);
// The controls (click mode, zero/mean, restore all) and, with heads off, the before → after panel.
void DrawAblationPanel(AppState& state);
// Over thumbnail (l, h) at min (side `thumb`): the cross of a switched-off head or the change of a later one.
void DrawAblationMarks(ImDrawList* draw, const AppState& state, const ModelViewPictures& mv, int layer, int head,
                       ImVec2 min, float thumb);
// Lines for the thumbnail's tooltip: switched off, its change, or why it cannot be switched off.
void AblationTooltipLines(const AppState& state, const ModelViewPictures& mv, int layer, int head);

}  // namespace attnscope::gui
