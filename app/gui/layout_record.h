// layout_record.h — the parts of the layout record (--layout-json) that cover the whole screen: the
// main menu bar, the layout's slots, every window shown, and every text drawn with the rectangle it
// is clipped to. The
// GUI tests check from it that no window covers the menu bar and that no text runs past what its
// window shows (tests/gui/test_gui_layout.cpp).
//
// Dear ImGui draws every text — its own labels, titles, menus and buttons as well as ours — through
// ImDrawList::AddText. The executable's link wraps both overloads (ld --wrap, app/gui/CMakeLists.txt),
// so each call passes through layout_record.cpp first; while no record is wanted that costs one
// pointer test.
#pragma once
#include <string>
#include <vector>

#include "gui/app_state.h"

namespace attnscope::gui {

// Texts drawn from now on are appended to `texts` (null: none are recorded).
void RecordTextsInto(std::vector<LayoutRecord::Text>* texts);

// Every control shown in a frame: each ImGui::ItemAdd with an id (a button, slider, field, menu item, tab
// or checkbox of imgui_widgets.cpp), which the link wraps as it does AddText. Recorded while texts are.
struct ControlRecord {
  std::string window;  // the root window's name (as LayoutRecord::Window::title; "##Menu_00" for a menu)
  unsigned id = 0;     // ImGui's id: the same control keeps it from frame to frame
  bool typed = false;  // takes typed input: a slider, drag or text field (Ctrl+click a slider to type)
  ImVec2 min, max;     // the part inside its window's clip rectangle
  ImVec2 full_min, full_max;  // the whole control: more than min, max when its window cuts it
  bool scroll_x = false, scroll_y = false;  // its (child) window has that scrollbar: the cut part can be scrolled to
  bool has_grab = false;       // a slider of ours (SliderChoice) that says where its grab is drawn
  ImVec2 grab_min, grab_max;
};
// The controls of the frame being drawn (of the last frame once it is drawn); ClearControls at its start.
const std::vector<ControlRecord>& RecordedControls();
void ClearControls();
// The grab of the slider `id` recorded this frame (text drawn in the slider must stay off it: tests).
void RecordSliderGrab(unsigned id, ImVec2 min, ImVec2 max);

// While one is alive, drawn text is not recorded: for text moved after it is drawn (rotated labels),
// which RecordText then records where it ends up.
class TextRecordPause {
 public:
  TextRecordPause();
  ~TextRecordPause();
  TextRecordPause(const TextRecordPause&) = delete;
  TextRecordPause& operator=(const TextRecordPause&) = delete;

 private:
  std::vector<LayoutRecord::Text>* paused_;
};
void RecordText(const std::string& text, ImVec2 min, ImVec2 max);

// Adds every root window shown this frame (not the menu bar, tooltips or popups) to
// state.layout.windows, and the layout function's slots (widgets.h, ComputeLayout) for the panels
// open at the end of the frame to state.layout.slots. Call after the frame's last window, before
// ImGui::Render.
void RecordWindows(AppState& state);

// Keeps every window below the main menu bar (state.layout.menu_bar_max.y): a window above it —
// from a layout saved before the bar was accounted for, or dragged there — is moved down, and
// shortened if it then reaches past the bottom of the screen. Call after DrawMenuBar, before the
// other windows.
void KeepWindowsBelowMenuBar(const AppState& state);

}  // namespace attnscope::gui
