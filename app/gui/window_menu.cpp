// window_menu.cpp — the main menu bar: the view shown in the main area, the other windows, the UI
// scale (also Ctrl + / Ctrl − / Ctrl 0) and theme, Help → About, and a status line (time of the
// last result, the spinner, save and export messages).
#include <cstdio>
#include <string>

#include "attnscope/scene/scene_rules.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

struct ViewEntry {
  View id;
  const char* title;
};
constexpr ViewEntry views[] = {
    {View::heads, TrKey("Heads")},
    {View::shapes, TrKey("Shapes")},
    {View::relpos1d, TrKey("Rel. position 1D")},
    {View::relpos2d, TrKey("Rel. position 2D")},
    {View::conv, TrKey("Convolution")},
};

}  // namespace

void SwitchView(AppState& state, View view) {
  if (state.scene.view.view == view) return;
  state.scene.view.view = view;
  adapt_scene_to_view(state.scene, true, true);
  NoteEdit(state, Panel::startup);
}

void DrawMenuBar(AppState& state) {
  if (!ImGui::BeginMainMenuBar()) return;
  // Its place this frame: the other windows are laid out and kept below it (SlotRect,
  // KeepWindowsBelowMenuBar).
  state.layout.menu_bar_min = ImGui::GetWindowPos();
  state.layout.menu_bar_max = ImVec2(state.layout.menu_bar_min.x + ImGui::GetWindowWidth(),
                                     state.layout.menu_bar_min.y + ImGui::GetWindowHeight());
  // Menu titles keep a stable ImGui id ("###…") so an open menu survives a language switch.
  if (ImGui::BeginMenu(WindowTitle("File", "menu_file").c_str())) {
    if (ImGui::MenuItem(tr("Open scene…"))) state.scene_dialog.open_open = true;
    if (ImGui::MenuItem(tr("Save scene…"))) state.scene_dialog.open_save = true;
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.file");
  if (ImGui::BeginMenu(WindowTitle("Windows", "menu_windows").c_str())) {
    ImGui::MenuItem(tr("Input"), nullptr, &state.show_input);
    ImGui::MenuItem(tr("Model"), nullptr, &state.show_model);
    ImGui::MenuItem(tr("Checkpoint"), nullptr, &state.show_checkpoint);
    ImGui::MenuItem(tr("Model view"), nullptr, &state.show_model_view);
    ImGui::MenuItem(tr("Shapes beside the view"), nullptr, &state.show_shapes_floating);
    ImGui::MenuItem(tr("Export…"), "Ctrl+E", &state.show_export);
    if (ImGui::MenuItem(tr("Export again"), "Ctrl+S")) ExportWithLastSettings(state);
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Reset layout"))) state.reset_layout = true;
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.windows");
  if (ImGui::BeginMenu(WindowTitle("Classroom", "menu_classroom").c_str())) {
    if (ImGui::MenuItem(tr("Lessons"), nullptr, state.show_lessons)) {
      state.show_lessons = !state.show_lessons;
      if (state.show_lessons) state.show_input = state.show_model = false;  // the lessons take the left column
      else state.show_input = state.show_model = true;
    }
    ImGui::MenuItem(tr("Head analysis"), nullptr, &state.show_analysis);
    ImGui::MenuItem(tr("KV-cache calculator"), nullptr, &state.show_kv_cache);
    ImGui::MenuItem(tr("Training"), nullptr, &state.show_training);
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.classroom");
  // Named in both languages, so either reader finds it.
  if (ImGui::BeginMenu("Language · 语言###menu_language")) {
    if (ImGui::MenuItem("English", nullptr, state.language == Language::en)) state.language = Language::en;
    if (ImGui::MenuItem("中文", nullptr, state.language == Language::zh)) state.language = Language::zh;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(WindowTitle("Display", "menu_display").c_str())) {
    ImGui::TextUnformatted(tr("UI scale"));
    float percent = state.ui_scale * 100.0f;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
    if (ImGui::SliderFloat("##scale", &percent, 50.0f, 300.0f, "%.0f%%", ImGuiSliderFlags_AlwaysClamp) &&
        std::isfinite(percent))
      state.ui_scale = std::clamp(std::round(percent / 5.0f) * 5.0f, 50.0f, 300.0f) / 100.0f;
    ImGui::TextDisabled("%s", tr("Ctrl + / Ctrl − / Ctrl 0: larger / smaller / fitted"));
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Light theme (projectors)"), nullptr, state.light_theme)) state.light_theme = true;
    if (ImGui::MenuItem(tr("Dark theme"), nullptr, !state.light_theme)) state.light_theme = false;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(WindowTitle("Help", "menu_help").c_str())) {
    if (ImGui::MenuItem(tr("About attnscope"), nullptr, state.show_about)) state.show_about = !state.show_about;
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.help");
  ImGui::TextDisabled("|");
  // The views, as tabs: the chosen one fills the main area.
  for (const ViewEntry& v : views) {
    const bool current = state.scene.view.view == v.id;
    if (current) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::MenuItem(tr(v.title), nullptr, current)) SwitchView(state, v.id);
    if (current) ImGui::PopStyleColor();
  }
  ImGui::TextDisabled("|");
  if (state.worker && state.worker->seconds_busy() >= 0.1) {
    BusyIndicator(state);
  } else if (state.result_generation > 0) {
    ImGui::TextDisabled("%s", trf("result in %.0f ms", state.result_seconds * 1000.0).c_str());
  }
  if (!state.status.empty()) {
    ImGui::TextDisabled("|");
    ImGui::TextUnformatted(WindowTerms(state.status).c_str());  // no flag named in the window
  }
  ImGui::EndMainMenuBar();
}

void DrawTranslationNotice(AppState& state) {
  const std::string& problem = TranslationProblem();
  if (problem.empty() || problem == state.translation_notice_closed) return;
  PlaceNextWindow(state, Slot::centre);
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 30, 0), ImGuiCond_Always);
  ImGui::Begin("Language · 语言###translation_notice", nullptr, ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoCollapse);
  ErrorText(problem);
  if (ImGui::Button("OK")) state.translation_notice_closed = problem;
  ImGui::End();
}

}  // namespace attnscope::gui
