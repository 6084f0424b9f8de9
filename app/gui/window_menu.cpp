// window_menu.cpp — the main menu bar: the view shown in the view's area (tabs, or one menu when the
// bar is narrow), the other windows (and Reset layout), the UI scale (also Ctrl + / Ctrl − / Ctrl 0)
// and theme, Help → About, and a status line (time of the last result, the spinner, save and export
// messages; one longer than the bar has room for ends in "…" there and shows whole in a note under the
// bar for a few seconds, and on hover).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attnscope/scene/scene_rules.h"
#include "gui/classroom_windows.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/scale_control.h"
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
    {View::positions, TrKey("Positions")},
    {View::relpos1d, TrKey("Rel. position 1D")},
    {View::relpos2d, TrKey("Rel. position 2D")},
    {View::conv, TrKey("Convolution")},
};

// Windows → Reset layout: the panels a first start shows (Input and Model beside the view), every
// other panel closed, dialogs centred again. What the closed panels hold (a lesson's step, an open
// checkpoint, a training run's numbers) is kept for when they are opened again.
void ResetLayout(AppState& state) {
  state.show_input = state.show_model = true;
  state.show_lessons = state.show_checkpoint = state.show_analysis = state.show_kv_cache = false;
  state.show_export = state.show_shapes_floating = state.show_model_view = state.show_training = false;
  state.show_rollout = false;
  state.show_lens = false;
  state.reset_layout = true;
}

// The views, as tabs in the menu bar: the chosen one fills the view's area. When the bar is too
// narrow for them all (800×600, a large UI scale, longer Chinese names), one menu named after the
// current view holds them instead, so every view stays one click away.
void DrawViewTabs(AppState& state) {
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  float tabs = ImGui::CalcTextSize("|").x + spacing;  // the separator after them
  for (const ViewEntry& v : views) tabs += ImGui::CalcTextSize(tr(v.title)).x + 2 * spacing;
  if (tabs <= ImGui::GetContentRegionAvail().x) {
    for (const ViewEntry& v : views) {
      const bool current = state.scene.view.view == v.id;
      if (current) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
      if (ImGui::MenuItem(tr(v.title), nullptr, current)) SwitchView(state, v.id);
      RecordLastItem(state, std::string("menu.view.") + to_string(v.id));
      if (current) ImGui::PopStyleColor();
    }
    return;
  }
  const char* current_title = views[0].title;
  for (const ViewEntry& v : views)
    if (state.scene.view.view == v.id) current_title = v.title;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
  const bool open = ImGui::BeginMenu((trf("View: %s", tr(current_title)) + "###menu_view").c_str());
  ImGui::PopStyleColor();
  RecordLastItem(state, "menu.view");
  if (!open) return;
  for (const ViewEntry& v : views) {
    if (ImGui::MenuItem(tr(v.title), nullptr, state.scene.view.view == v.id)) SwitchView(state, v.id);
    RecordLastItem(state, std::string("menu.view.") + to_string(v.id));
  }
  ImGui::EndMenu();
}

void DrawStatusNote(const std::string& status, bool shortened, float bar_bottom);

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
    // A link that opens this scene in a browser: the page's own address there, --site-url on the desktop.
    const bool can_link = !LinkSite(state).empty();
    if (ImGui::MenuItem(tr("Copy link"), nullptr, false, can_link)) CopyLink(state);
    RecordLastItem(state, "menu.file.copy_link");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", can_link ? tr("Puts a link on the clipboard that opens this scene in a browser (for students, "
                                            "slides or a chat)")
                                       : tr("No web address to link to: start attnscope with --site-url ADDRESS (or set "
                                            "ATTNSCOPE_SITE_URL) to the address of its web page, and this copies a link "
                                            "that opens this scene there"));
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.file");
  if (ImGui::BeginMenu(WindowTitle("Edit", "menu_edit").c_str())) {
    if (ImGui::MenuItem(tr("Undo"), shortcut_of("undo"), false, CanUndo(state))) Undo(state);
    RecordLastItem(state, "menu.edit.undo");
    if (ImGui::MenuItem(tr("Redo"), shortcut_of("redo"), false, CanRedo(state))) Redo(state);
    RecordLastItem(state, "menu.edit.redo");
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.edit");
  if (ImGui::BeginMenu(WindowTitle("Windows", "menu_windows").c_str())) {
    ImGui::MenuItem(tr("Input"), nullptr, &state.show_input);
    ImGui::MenuItem(tr("Model"), nullptr, &state.show_model);
    ImGui::MenuItem(tr("Checkpoint"), nullptr, &state.show_checkpoint);
    // The Model view, the Rollout view and the Logit lens take the same place: opening one closes the others.
    if (ImGui::MenuItem(tr("Model view"), nullptr, &state.show_model_view) && state.show_model_view)
      state.show_rollout = state.show_lens = false;
    RecordLastItem(state, "menu.windows.model_view");
    if (ImGui::MenuItem(tr("Rollout"), nullptr, &state.show_rollout) && state.show_rollout)
      state.show_model_view = state.show_lens = false;
    RecordLastItem(state, "menu.windows.rollout");
    if (ImGui::MenuItem(tr("Logit lens"), nullptr, &state.show_lens) && state.show_lens)
      state.show_model_view = state.show_rollout = false;
    RecordLastItem(state, "menu.windows.lens");
    ImGui::MenuItem(tr("Shapes beside the view"), nullptr, &state.show_shapes_floating);
    ImGui::MenuItem(tr("Export…"), shortcut_of("export_panel"), &state.show_export);
    if (ImGui::MenuItem(tr("Export again"), shortcut_of("export_again"))) ExportWithLastSettings(state);
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Reset layout"))) ResetLayout(state);
    RecordLastItem(state, "menu.windows.reset_layout");
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.windows");
  if (ImGui::BeginMenu(WindowTitle("Classroom", "menu_classroom").c_str())) {
    const bool lessons_clicked = ImGui::MenuItem(tr("Lessons"), nullptr, state.show_lessons);
    RecordLastItem(state, "menu.classroom.lessons");
    if (lessons_clicked) {
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
  RecordLastItem(state, "menu.language");
  if (ImGui::BeginMenu(WindowTitle("Display", "menu_display").c_str())) {
    ImGui::TextUnformatted(tr("UI scale"));
    // Steps of 5% from 50% to the largest scale the window's size holds (MaxUiScale); a typed value is
    // the value, or the nearest step with a note under the slider.
    std::vector<int> percents;
    for (int p = 50; p <= int(std::lround(MaxUiScale(ImGui::GetIO().DisplaySize) * 100.0f)); p += 5) percents.push_back(p);
    int percent = int(std::lround(state.ui_scale * 100.0f));
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
    if (SliderChoice("##scale", &percent, percents, [](int p) { return std::to_string(p) + "%"; }))
      state.ui_scale = float(percent) / 100.0f;
    RecordLastItem(state, "menu.display.scale");
    ImGui::TextDisabled("%s", tr("Ctrl + / Ctrl − / Ctrl 0: larger / smaller / fitted"));
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Presentation"), shortcut_of("presentation"), state.presenting)) SetPresenting(state, true);
    RecordLastItem(state, "menu.display.presentation");
    ImGui::Separator();
    if (ImGui::MenuItem(tr("Light theme (projectors)"), nullptr, state.light_theme)) state.light_theme = true;
    if (ImGui::MenuItem(tr("Dark theme"), nullptr, !state.light_theme)) state.light_theme = false;
    ImGui::Separator();
    ScaleMenuItems(state);  // the heatmaps' colour scale, as in the Heads toolbar
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.display");
  if (ImGui::BeginMenu(WindowTitle("Help", "menu_help").c_str())) {
    if (ImGui::MenuItem(tr("Getting started"), nullptr, state.show_getting_started))
      state.show_getting_started = !state.show_getting_started;
    RecordLastItem(state, "menu.help.getting_started");
    if (ImGui::MenuItem(tr("Keys"), nullptr, state.show_keys)) state.show_keys = !state.show_keys;
    RecordLastItem(state, "menu.help.keys");
    if (ImGui::MenuItem(tr("About attnscope"), nullptr, state.show_about)) state.show_about = !state.show_about;
    ImGui::EndMenu();
  }
  RecordLastItem(state, "menu.help");
  ImGui::TextDisabled("|");
  DrawViewTabs(state);
  ImGui::TextDisabled("|");
  if (state.worker && state.worker->seconds_busy() >= 0.1) {
    BusyIndicator(state);
  } else if (state.result_generation > 0) {
    // Only when it fits: at a large UI scale on a narrow window the bar has no room left for it.
    const std::string took = trf("result in %.0f ms", state.result_seconds * 1000.0);
    if (ImGui::CalcTextSize(took.c_str()).x <= ImGui::GetContentRegionAvail().x) ImGui::TextDisabled("%s", took.c_str());
  }
  bool status_shortened = false;
  const std::string status = WindowTerms(state.status);  // no flag named in the window
  if (!status.empty()) {
    ImGui::TextDisabled("|");
    // What the bar has room for: the whole line, or its start with "…" (whole on hover, and in a note
    // under the bar for a while after it changed: DrawStatusNote).
    const float room = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x;
    status_shortened = ImGui::CalcTextSize(status.c_str()).x > room;
    ImGui::TextUnformatted(status_shortened ? Ellipsize(status, std::max(room, 0.0f)).c_str() : status.c_str());
    if (status_shortened && ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 35.0f);
      ImGui::TextUnformatted(status.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
  }
  const float bar_bottom = ImGui::GetWindowPos().y + ImGui::GetWindowSize().y;
  ImGui::EndMainMenuBar();
  DrawStatusNote(status, status_shortened, bar_bottom);
}

namespace {
void DrawStatusNote(const std::string& status, bool shortened, float bar_bottom) {
  // A status line the bar had to shorten ("Nothing to cop…") shows whole under the bar's right end for
  // a few seconds after it changed, wrapped, then only on hover.
  static std::string last;
  static double since = 0;
  if (status != last) {
    last = status;
    since = ImGui::GetTime();
  }
  if (!shortened || ImGui::GetTime() - since > 8.0) return;
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float font = ImGui::GetFontSize();
  ImGui::SetNextWindowPos(ImVec2(display.x - font * 0.5f, bar_bottom + font * 0.3f), ImGuiCond_Always, ImVec2(1, 0));
  ImGui::SetNextWindowBgAlpha(0.95f);
  ImGui::Begin("##status_note", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoInputs |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoSavedSettings);
  // Over the windows under it (a window that does not take the focus would otherwise open behind them).
  ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() +
                         std::min(ImGui::CalcTextSize(status.c_str()).x + 1.0f, std::min(font * 35.0f, display.x * 0.6f)));
  ImGui::TextUnformatted(status.c_str());
  ImGui::PopTextWrapPos();
  ImGui::End();
}
}  // namespace

void DrawTranslationNotice(AppState& state) {
  const std::string& problem = TranslationProblem();
  if (problem.empty() || problem == state.translation_notice_closed) return;
  PlaceNextWindow(state, Slot::dialog);
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 30, 0), ImGuiCond_Always);
  ImGui::Begin("Language · 语言###translation_notice", nullptr, ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoCollapse);
  ErrorText(problem);
  if (ImGui::Button("OK")) state.translation_notice_closed = problem;
  ImGui::End();
}

}  // namespace attnscope::gui
