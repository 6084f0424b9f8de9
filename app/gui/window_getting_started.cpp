// window_getting_started.cpp — Help → Getting started: what attnscope shows and where to begin, in a
// few lines a newcomer reads in a minute — the lessons (Classroom → Lessons), presenting them (F11,
// PageDown / PageUp), a real model (Windows → Checkpoint) and the keys. A first start with nothing saved
// opens it beside lesson 1 (window_main.cpp, InitState); its button opens lesson 1 from anywhere.
#include <string>

#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {

void DrawGettingStartedWindow(AppState& state) {
  if (!state.show_getting_started) return;
  // The dialog's place each time it appears, never a saved one: a first start saves its layout at that
  // screen's size, and the next time it opens may be on a smaller one.
  const ImRect r = SlotRect(state, Slot::dialog);
  const ImGuiCond cond = state.scripted || state.reset_layout ? ImGuiCond_Always : ImGuiCond_Appearing;
  ImGui::SetNextWindowPos(r.Min, cond);
  ImGui::SetNextWindowSize(r.GetSize(), cond);
  if (!ImGui::Begin(WindowTitle("Getting started", "getting_started").c_str(), &state.show_getting_started,
                    ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::End();
    return;
  }
  WrappedText(tr("attnscope draws attention heads. Each square is one head: row i is query token i, column j is "
                 "key token j, and the brighter a cell, the more attention token i pays to token j."));
  RecordLastItem(state, "getting_started.what");
  SectionHeader(tr("Lessons"));
  WrappedText(tr("Classroom → Lessons: each lesson sets up the views and says what to look at, one step at a "
                 "time (◀ Previous, Next ▶)."));
  RecordLastItem(state, "getting_started.lessons");
  SectionHeader(tr("In front of a class"));
  WrappedText(tr("F11 presents: full screen, the view alone with the step's text under it, in large type. "
                 "PageDown or → goes to the next step, PageUp or ← back; Esc leaves."));
  SectionHeader(tr("A real model"));
  WrappedText(tr("Windows → Checkpoint opens a Hugging Face folder (GPT-2, Llama-style models) or the small "
                 "model attnscope ships; lesson 6 opens it for you."));
  HintText(tr("Help → Keys lists every shortcut; this window is Help → Getting started."));
  ImGui::Spacing();
  if (ImGui::Button(tr("Start lesson 1"))) {
    if (OpenLesson(state, 1, 0).empty()) state.show_input = state.show_model = false;  // the lessons take the left column
    state.show_getting_started = false;
  }
  RecordLastItem(state, "getting_started.lesson1");
  ImGui::SameLine();
  if (ImGui::Button(tr("Close"))) state.show_getting_started = false;
  RecordLastItem(state, "getting_started.close");
  ImGui::End();
}

}  // namespace attnscope::gui
