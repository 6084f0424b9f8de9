#include "gui/layout_record.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

// A text can be scrolled to when its window or a window it sits in has that scrollbar: a child
// (the Training window's rows of heads) inside a scrolling window moves with it.
void ScrollOf(const ImGuiWindow* window, LayoutRecord::Text& t) {
  for (const ImGuiWindow* w = window; w; w = (w->Flags & ImGuiWindowFlags_ChildWindow) ? w->ParentWindow : nullptr) {
    t.scroll_x = t.scroll_x || w->ScrollbarX;
    t.scroll_y = t.scroll_y || w->ScrollbarY;
  }
}

std::vector<LayoutRecord::Text>* text_sink = nullptr;
bool record_controls = false;
std::vector<ControlRecord> controls;

bool IsRootWindow(const ImGuiWindow* w) {
  const ImGuiWindowFlags not_root = ImGuiWindowFlags_ChildWindow | ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_Popup |
                                    ImGuiWindowFlags_Modal | ImGuiWindowFlags_ChildMenu;
  // Nor ImGui's implicit "Debug##Default" window, which holds nothing here.
  return !(w->Flags & not_root) && !w->IsFallbackWindow && std::strcmp(w->Name, "##MainMenuBar") != 0;
}

// One call of ImDrawList::AddText: the text's whole layout rectangle and what of the screen it may
// draw into (the draw list's clip rectangle, narrowed by AddText's own clip rectangle when given).
void NoteText(const ImDrawList* draw, const ImFont* font, float size, ImVec2 pos, const char* begin, const char* end,
              float wrap_width, const ImVec4* fine_clip) {
  if (!text_sink || !begin) return;
  if (!end) end = begin + std::strlen(begin);
  if (begin == end) return;
  if (!font) font = draw->_Data->Font;
  if (size == 0.0f) size = draw->_Data->FontSize;
  const ImVec2 extent = font->CalcTextSizeA(size, FLT_MAX, wrap_width, begin, end);
  ImVec4 clip = draw->_CmdHeader.ClipRect;
  if (fine_clip) {
    clip.x = std::max(clip.x, fine_clip->x);
    clip.y = std::max(clip.y, fine_clip->y);
    clip.z = std::min(clip.z, fine_clip->z);
    clip.w = std::min(clip.w, fine_clip->w);
  }
  LayoutRecord::Text t;
  const ImGuiWindow* window = ImGui::GetCurrentContext() ? ImGui::GetCurrentContext()->CurrentWindow : nullptr;
  if (window) {
    t.window = window->RootWindow ? window->RootWindow->Name : window->Name;
    ScrollOf(window, t);
  } else {
    t.window = draw->_OwnerName ? draw->_OwnerName : "";
  }
  // A single-line input field (an Inputable item drawing its text one frame padding in from its clip,
  // or further left when scrolled) scrolls its text: what lies past its edge is reached by the cursor.
  // A slider's value, also Inputable, starts right at its clip when cut, and counts as cut.
  const ImGuiContext* g = ImGui::GetCurrentContext();
  if (g && fine_clip && (g->LastItemData.InFlags & ImGuiItemFlags_Inputable) && std::fabs(pos.x - fine_clip->x) > 0.5f &&
      pos.x <= fine_clip->x + g->Style.FramePadding.x + 0.5f)
    t.scroll_x = true;
  t.text.assign(begin, end);
  t.min = pos;
  t.max = ImVec2(pos.x + extent.x, pos.y + extent.y);
  t.clip_min = ImVec2(clip.x, clip.y);
  t.clip_max = ImVec2(clip.z, clip.w);
  text_sink->push_back(std::move(t));
}

// One control ImGui has just added (and not clipped away): its rectangle inside what its window shows.
void NoteControl(const ImRect& bb, ImGuiID id, ImGuiItemFlags flags) {
  const ImGuiWindow* window = ImGui::GetCurrentContext() ? ImGui::GetCurrentContext()->CurrentWindow : nullptr;
  if (!window || window->Hidden) return;  // laid out unseen (a popup's sizing frame): not where it is drawn
  ImRect shown = bb;
  shown.ClipWithFull(window->ClipRect);
  if (shown.GetWidth() < 1.0f || shown.GetHeight() < 1.0f) return;
  ControlRecord c;
  c.window = window->RootWindow ? window->RootWindow->Name : window->Name;
  c.id = id;
  c.typed = (flags & ImGuiItemFlags_Inputable) != 0;
  c.min = shown.Min;
  c.max = shown.Max;
  c.full_min = bb.Min;
  c.full_max = bb.Max;
  for (const ImGuiWindow* w = window; w; w = (w->Flags & ImGuiWindowFlags_ChildWindow) ? w->ParentWindow : nullptr) {
    c.scroll_x = c.scroll_x || w->ScrollbarX;
    c.scroll_y = c.scroll_y || w->ScrollbarY;
  }
  controls.push_back(std::move(c));
}

}  // namespace

void RecordTextsInto(std::vector<LayoutRecord::Text>* texts) {
  text_sink = texts;
  record_controls = texts != nullptr;
}

const std::vector<ControlRecord>& RecordedControls() { return controls; }
void ClearControls() { controls.clear(); }

void RecordSliderGrab(unsigned id, ImVec2 min, ImVec2 max) {
  if (!record_controls) return;
  for (auto it = controls.rbegin(); it != controls.rend(); ++it)
    if (it->id == id) {
      it->has_grab = true;
      it->grab_min = min;
      it->grab_max = max;
      return;
    }
}

TextRecordPause::TextRecordPause() : paused_(text_sink) { text_sink = nullptr; }
TextRecordPause::~TextRecordPause() { text_sink = paused_; }

void RecordText(const std::string& text, ImVec2 min, ImVec2 max) {
  if (!text_sink) return;
  const ImGuiWindow* window = ImGui::GetCurrentWindowRead();
  const ImDrawList* draw = ImGui::GetWindowDrawList();
  LayoutRecord::Text t;
  t.window = window->RootWindow->Name;
  ScrollOf(window, t);
  t.text = text;
  t.min = min;
  t.max = max;
  t.clip_min = draw->GetClipRectMin();
  t.clip_max = draw->GetClipRectMax();
  text_sink->push_back(std::move(t));
}

void RecordWindows(AppState& state) {
  const Layout layout = ComputeLayout(LayoutInputOf(state));
  for (int i = 0; i < int(Slot::count); ++i)
    if (layout.open[i]) state.layout.slots.push_back({SlotName(Slot(i)), layout.rect[i].Min, layout.rect[i].Max});
  if (layout.left.GetWidth() > 0) state.layout.slots.push_back({"left", layout.left.Min, layout.left.Max});
  if (layout.right.GetWidth() > 0) state.layout.slots.push_back({"right", layout.right.Min, layout.right.Max});
  state.layout.view_shown = layout.view_shown;
  for (const ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    if (!w->Active || w->Hidden || !IsRootWindow(w)) continue;
    state.layout.windows.push_back(
        {w->Name, w->Pos, ImVec2(w->Pos.x + w->Size.x, w->Pos.y + w->Size.y), w->ScrollbarX, w->ScrollbarY});
  }
}

void KeepWindowsBelowMenuBar(const AppState& state) {
  ImGuiContext& g = *ImGui::GetCurrentContext();
  const float top = state.layout.menu_bar_max.y;
  const float bottom = ImGui::GetMainViewport()->Pos.y + ImGui::GetMainViewport()->Size.y;
  if (top <= 0) return;
  // Windows met before (ImGui places them from their own position)…
  for (ImGuiWindow* w : g.Windows) {
    if (!IsRootWindow(w) || w->Pos.y >= top) continue;
    const float height = std::max(std::min(w->Size.y, bottom - top), g.Style.WindowMinSize.y);
    ImGui::SetWindowPos(w, ImVec2(w->Pos.x, top), ImGuiCond_Always);
    if (height < w->Size.y) ImGui::SetWindowSize(w, ImVec2(w->Size.x, height), ImGuiCond_Always);
  }
  // …and the saved layout of windows not created yet (ImGui places them from it when they are).
  for (ImGuiWindowSettings* s = g.SettingsWindows.begin(); s != nullptr; s = g.SettingsWindows.next_chunk(s)) {
    if (s->Pos.y >= top) continue;
    const float height = std::max(std::min(float(s->Size.y), bottom - top), g.Style.WindowMinSize.y);
    s->Pos.y = short(std::ceil(top));
    s->Size.y = short(std::min(float(s->Size.y), height));
  }
}

}  // namespace attnscope::gui

// ---- the wrapped ImDrawList::AddText ----------------------------------------------------------------
// ld's --wrap=SYMBOL sends every call of SYMBOL from another object file to __wrap_SYMBOL, and
// __real_SYMBOL to the original. These are ImGui 1.86's two AddText overloads, under their mangled
// names (a member function takes `this` as its first argument).
extern "C" {
void __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(ImDrawList*, const ImFont*, float, const ImVec2&,
                                                                          ImU32, const char*, const char*, float,
                                                                          const ImVec4*);
void __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList*, const ImVec2&, ImU32, const char*, const char*);

void __wrap__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(ImDrawList* self, const ImFont* font, float size,
                                                                          const ImVec2& pos, ImU32 col, const char* begin,
                                                                          const char* end, float wrap_width,
                                                                          const ImVec4* fine_clip) {
  attnscope::gui::NoteText(self, font, size, pos, begin, end, wrap_width, fine_clip);
  __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(self, font, size, pos, col, begin, end, wrap_width,
                                                                      fine_clip);
}

void __wrap__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList* self, const ImVec2& pos, ImU32 col, const char* begin,
                                                      const char* end) {
  attnscope::gui::NoteText(self, nullptr, 0.0f, pos, begin, end, 0.0f, nullptr);
  __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(self, pos, col, begin, end);
}

// ImGui::ItemAdd(const ImRect& bb, ImGuiID id, const ImRect* nav_bb, ImGuiItemFlags extra_flags): every
// button, slider, field, menu item, tab and checkbox of imgui_widgets.cpp passes through it.
bool __real__ZN5ImGui7ItemAddERK6ImRectjPS1_i(const ImRect&, ImGuiID, const ImRect*, ImGuiItemFlags);
bool __wrap__ZN5ImGui7ItemAddERK6ImRectjPS1_i(const ImRect& bb, ImGuiID id, const ImRect* nav_bb, ImGuiItemFlags flags) {
  const bool shown = __real__ZN5ImGui7ItemAddERK6ImRectjPS1_i(bb, id, nav_bb, flags);
  if (shown && id != 0 && attnscope::gui::record_controls) attnscope::gui::NoteControl(bb, id, flags);
  return shown;
}
}
