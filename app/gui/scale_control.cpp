// scale_control.cpp — the colour-scale control (scale_control.h).
#include "gui/scale_control.h"

#include <imgui.h>

#include <algorithm>

#include "attnscope/figure/export.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

const ScaleMode kModes[] = {ScaleMode::shared, ScaleMode::per_head, ScaleMode::fixed, ScaleMode::locked};

const char* ModeLabel(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::shared: return tr("shared scale");
    case ScaleMode::per_head: return tr("per head");
    case ScaleMode::fixed: return tr("fixed 0–1");
    case ScaleMode::locked: return tr("locked");
  }
  return "";
}

const char* ModeHint(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::shared: return tr("One colour range over all heads: heads compare with each other.");
    case ScaleMode::per_head: return tr("Each head its own range and colour bar: faint heads show their pattern.");
    case ScaleMode::fixed: return tr("Probability p is colour p: pictures of different settings compare by eye.");
    case ScaleMode::locked: return tr("Keeps the range shown now while the settings change; values beyond it take the end colours.");
  }
  return "";
}

// The values on screen are scores (not probabilities) only in the heads views with scores chosen.
bool ShowsScores(const AppState& state) {
  const ViewSettings& v = state.scene.view;
  return v.show_scores && (v.view == View::heads || v.view == View::shapes || v.view == View::positions);
}

// The union of the ranges of the heatmaps on screen (each head's in per-head mode).
ValueRange RangeOnScreen(const AppState& state) {
  if (!state.pictures) return {0.0f, 1.0f};
  const Pictures& p = *state.pictures;
  const bool relpos = state.scene.view.view == View::relpos1d || state.scene.view.view == View::relpos2d;
  const std::vector<Picture>& tiles = relpos ? p.relpos_heads : p.heads;
  if (tiles.empty()) return relpos ? p.relpos_range : p.heads_range;
  ValueRange all = tiles.front().range;
  for (const Picture& t : tiles) all = {std::min(all.lo, t.range.lo), std::max(all.hi, t.range.hi)};
  if (relpos && state.scene.view.view == View::relpos2d)
    all = {std::min(all.lo, p.relpos_combined.range.lo), std::max(all.hi, p.relpos_combined.range.hi)};
  return all;
}

bool Offered(const AppState& state, ScaleMode mode) { return mode != ScaleMode::fixed || !ShowsScores(state); }

void ModeTooltip(const AppState& state, ScaleMode mode) {
  if (!ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) return;
  ImGui::SetTooltip("%s", Offered(state, mode) ? ModeHint(mode)
                                               : tr("Scores are not probabilities: the fixed 0–1 scale is for probabilities."));
}

}  // namespace

void SetScaleMode(AppState& state, ScaleMode mode) {
  ViewSettings& view = state.scene.view;
  if (!Offered(state, mode)) return;
  if (mode == ScaleMode::locked) {
    const ValueRange r = lockable_range(RangeOnScreen(state));
    view.locked_lo = r.lo;
    view.locked_hi = r.hi;
  } else if (mode == view.scale) {
    return;
  }
  view.scale = mode;
  NoteEdit(state, view.view == View::relpos1d || view.view == View::relpos2d ? Panel::relpos : Panel::heads);
}

float ScaleComboWidth() {
  float w = 0;
  for (ScaleMode m : kModes) w = std::max(w, ImGui::CalcTextSize(ModeLabel(m)).x);
  return w + ImGui::GetFrameHeight() * 1.6f;
}

bool ScaleCombo(AppState& state, float width) {
  const ScaleMode before = state.scene.view.scale;
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo("##scale_mode", ModeLabel(before))) {
    for (ScaleMode m : kModes) {
      const bool offered = Offered(state, m);
      // Choosing "locked" again takes the range on screen now.
      if (ImGui::Selectable(ModeLabel(m), m == before, offered ? 0 : ImGuiSelectableFlags_Disabled)) SetScaleMode(state, m);
      ModeTooltip(state, m);
    }
    ImGui::EndCombo();
  }
  RecordLastItem(state, "scale_mode");
  if (ImGui::IsItemHovered() && !ImGui::IsPopupOpen("##scale_mode")) ImGui::SetTooltip("%s", tr("colour scale"));
  return state.scene.view.scale != before;
}

void ScaleComboLine(AppState& state) {
  // A controls column too narrow for the combo (side panels open at 1280 × 720) leaves it to the Display
  // menu rather than clip its words; its name goes below it when only the combo fits.
  if (ImGui::GetContentRegionAvail().x < ScaleComboWidth()) return;
  ScaleCombo(state, ScaleComboWidth());
  SameLineIfFits(ImGui::CalcTextSize(tr("colour scale")).x);
  ImGui::TextUnformatted(tr("colour scale"));
}

void ScaleMenuItems(AppState& state) {
  ImGui::TextUnformatted(tr("colour scale"));
  for (ScaleMode m : kModes) {
    if (ImGui::MenuItem(ModeLabel(m), nullptr, state.scene.view.scale == m, Offered(state, m))) SetScaleMode(state, m);
    ModeTooltip(state, m);
  }
}

std::string ScaleNote(const ColorScale& scale) { return scale_bar_title("", scale, UiFigureWords()); }

}  // namespace attnscope::gui
