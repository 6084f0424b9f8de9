// window_menu.cpp — the main menu bar: the view shown in the main area, the other windows, the UI
// scale (also Ctrl + / Ctrl − / Ctrl 0) and theme, and a status line (time of the last result,
// the spinner, save and export messages).
#include <cstdio>
#include <string>

#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

struct ViewEntry {
  const char* id;
  const char* title;
};
constexpr ViewEntry views[] = {
    {"heads", "Heads"},
    {"shapes", "Shapes"},
    {"relpos1d", "Rel. position 1D"},
    {"relpos2d", "Rel. position 2D"},
    {"conv", "Convolution"},
};

}  // namespace

void AdaptSceneToView(Scene& scene, bool may_change_input, bool may_change_preset) {
  const std::string& view = scene.view.view;
  const bool wants_grid = view == "relpos2d" || view == "conv";
  const bool wants_tokens = view == "heads" || view == "shapes" || view == "relpos1d";
  InputSource& source = scene.input.source;
  if (may_change_input) {
    if (wants_grid && source != InputSource::grid) source = InputSource::grid;
    else if (wants_tokens && source == InputSource::grid) source = InputSource::text;
  }
  // The 3×3 / 5×5 offset presets are 2D: a sentence gets a line of offsets instead.
  RelposSettings& r = scene.relpos;
  if (may_change_preset && source != InputSource::grid && view == "relpos1d" && r.deltas.empty() &&
      (r.delta_preset == "conv3x3" || r.delta_preset == "conv5x5"))
    r.delta_preset = "line";
}

void SwitchView(AppState& state, const std::string& view) {
  if (state.scene.view.view == view) return;
  state.scene.view.view = view;
  AdaptSceneToView(state.scene, true, true);
  NoteEdit(state, Panel::startup);
}

void DrawMenuBar(AppState& state) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("Windows")) {
    ImGui::MenuItem("Input", nullptr, &state.show_input);
    ImGui::MenuItem("Model", nullptr, &state.show_model);
    ImGui::MenuItem("Shapes beside the view", nullptr, &state.show_shapes_floating);
    ImGui::MenuItem("Export…", "Ctrl+E", &state.show_export);
    if (ImGui::MenuItem("Export again", "Ctrl+S")) ExportWithLastSettings(state);
    ImGui::Separator();
    if (ImGui::MenuItem("Reset layout")) state.reset_layout = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Display")) {
    ImGui::TextUnformatted("UI scale");
    float percent = state.ui_scale * 100.0f;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
    if (ImGui::SliderFloat("##scale", &percent, 50.0f, 300.0f, "%.0f%%", ImGuiSliderFlags_AlwaysClamp) &&
        std::isfinite(percent))
      state.ui_scale = std::clamp(std::round(percent / 5.0f) * 5.0f, 50.0f, 300.0f) / 100.0f;
    ImGui::TextDisabled("Ctrl + / Ctrl − / Ctrl 0");
    ImGui::Separator();
    if (ImGui::MenuItem("Light theme (projectors)", nullptr, state.light_theme)) state.light_theme = true;
    if (ImGui::MenuItem("Dark theme", nullptr, !state.light_theme)) state.light_theme = false;
    ImGui::EndMenu();
  }
  ImGui::TextDisabled("|");
  // The views, as tabs: the chosen one fills the main area.
  for (const ViewEntry& v : views) {
    const bool current = state.scene.view.view == v.id;
    if (current) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::MenuItem(v.title, nullptr, current)) SwitchView(state, v.id);
    if (current) ImGui::PopStyleColor();
  }
  ImGui::TextDisabled("|");
  if (state.worker && state.worker->seconds_busy() >= 0.1) {
    BusyIndicator(state);
  } else if (state.result_generation > 0) {
    ImGui::TextDisabled("result in %.0f ms", state.result_seconds * 1000.0);
  }
  if (!state.status.empty()) {
    ImGui::TextDisabled("|");
    ImGui::TextUnformatted(state.status.c_str());
  }
  ImGui::EndMainMenuBar();
}

}  // namespace attnscope::gui
