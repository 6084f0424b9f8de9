// window_keys.cpp — Help → Keys: every shortcut of the window, keyboard and mouse, in one table in the
// interface's language. key_bindings() is the one list: the menus take their shortcut texts from it, and
// the test presses what it lists.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {

const std::vector<KeyBinding>& key_bindings() {
  // Key names stay as printed on keyboards; pointer actions, groups and what a key does are translated.
  static const std::vector<KeyBinding> bindings = {
      {"ui_scale", TrKey("Anywhere"), "Ctrl + · Ctrl − · Ctrl 0", TrKey("Larger / smaller interface (every panel is laid out again); the scale fitted to the window")},
      {"undo", TrKey("Anywhere"), "Ctrl+Z", TrKey("Undo the last change to the scene: a slider, the text, the view, the layer, a lesson step")},
      {"redo", TrKey("Anywhere"), "Ctrl+Shift+Z · Ctrl+Y", TrKey("Redo what was undone")},
      {"presentation", TrKey("Anywhere"), "F11", TrKey("Presentation: full screen, the view alone, large type (F11 or Esc leaves)")},
      {"export_panel", TrKey("Anywhere"), "Ctrl+E", TrKey("Show or hide the Export panel")},
      {"export_again", TrKey("Anywhere"), "Ctrl+S", TrKey("Export again with the last settings")},
      {"copy_figure", TrKey("Anywhere"), "Ctrl+C", TrKey("Copy the current view's figure as a PNG image, for slides")},
      {"step_next", TrKey("Lessons and presentation"), "PageDown · → · Space", TrKey("The lesson's next step")},
      {"step_previous", TrKey("Lessons and presentation"), "PageUp · ← · Backspace", TrKey("The lesson's previous step")},
      {"step_ends", TrKey("Lessons and presentation"), "Home · End", TrKey("The lesson's first / last step")},
      {"slider_type", TrKey("Sliders and fields"), TrKey("Ctrl+click"), TrKey("Type a slider's value (Enter takes it, Esc keeps the old one)"), true},
      {"next_field", TrKey("Sliders and fields"), "Tab / Shift+Tab", TrKey("The next / previous field")},
      {"text_keys", TrKey("Sliders and fields"), "Ctrl+A · X · C · V · Z", TrKey("In a text field: select all, cut, copy, paste, undo the typing")},
      {"hover_cell", TrKey("Heatmaps"), TrKey("pointer over a cell"), TrKey("The query, the key and the cell's value"), true},
      {"select_query", TrKey("Heatmaps"), TrKey("click"), TrKey("Select that query row in every head (again: deselect)"), true},
      {"open_large", TrKey("Heatmaps"), TrKey("double-click"), TrKey("Open the head large in the view's place"), true},
      {"zoom", TrKey("Heatmaps"), TrKey("mouse wheel · drag"), TrKey("Zoom the heads about the pointer · move a zoomed view"), true},
      {"pick_tokens", TrKey("Heatmaps"), TrKey("drag along the key labels"), TrKey("Only the tokens dragged over, as queries and keys"), true},
      {"relpos_head", TrKey("Relative position"), TrKey("click a head"), TrKey("Edit that head's α and Δ"), true},
      {"relpos_query", TrKey("Relative position"), TrKey("click a cell of the input"), TrKey("Make it the query"), true},
      {"model_thumb", TrKey("Model view"), TrKey("click a head"), TrKey("Open that layer's head large in the Heads view"), true},
  };
  return bindings;
}

const char* shortcut_of(const char* id) {
  for (const KeyBinding& k : key_bindings())
    if (std::string(k.id) == id) return k.keys;
  return nullptr;
}

void DrawKeysWindow(AppState& state) {
  if (!state.show_keys) return;
  // A dialog as wide as About, and as tall as the screen allows: a reference sheet to read whole.
  const ImRect dialog = SlotRect(state, Slot::dialog), area = LayoutInputOf(state).area;
  const float h = std::max(dialog.GetHeight(), area.GetHeight() * 0.94f);
  const ImGuiCond cond = state.scripted || state.reset_layout ? ImGuiCond_Always : ImGuiCond_Appearing;
  ImGui::SetNextWindowPos(ImVec2(dialog.Min.x, std::round(area.Min.y + (area.GetHeight() - h) * 0.5f)), cond);
  ImGui::SetNextWindowSize(ImVec2(dialog.GetWidth(), std::round(h)), cond);
  if (!ImGui::Begin(WindowTitle("Keys", "keys").c_str(), &state.show_keys)) {
    ImGui::End();
    return;
  }
  // The table scrolls inside the window when the window is too short for it (large UI scales), so the
  // window never cuts a row; the header row stays on top.
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp |
                                ImGuiTableFlags_ScrollY;
  if (ImGui::BeginTable("##keys", 2, flags, ImVec2(0.0f, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn(tr("Key or pointer"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn(tr("What it does"), ImGuiTableColumnFlags_WidthStretch, 2.0f);
    ImGui::TableHeadersRow();
    const char* group = "";
    for (const KeyBinding& k : key_bindings()) {
      if (std::string(group) != k.group) {
        group = k.group;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", tr(k.group));
        ImGui::TableNextColumn();
      }
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", k.pointer ? tr(k.keys) : k.keys);
      RecordLastItem(state, std::string("keys.") + k.id);
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", tr(k.action));
    }
    ImGui::EndTable();
  }
  ImGui::End();
}

}  // namespace attnscope::gui
