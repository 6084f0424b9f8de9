// history.h — Edit → Undo / Redo (Ctrl+Z, Ctrl+Shift+Z or Ctrl+Y): one history of every change to what
// the window shows — a slider, the text, the view, a checkpoint's layer and K/V heads, a lesson step —
// and leaving a lesson returns the teacher's own scene.
//
// Nothing calls "record" by hand: once a frame (after every window has drawn) RecordHistory compares
// what the window shows now (a HistoryEntry) with the last recorded one. A difference becomes one
// undo step when no control is held (a slider drag or a typed text is one step, recorded when it is
// let go) and the frame had the user's input; a difference without input (a lesson step's checkpoint
// settings applied a frame later, a model's own default input after it opens) joins the step that
// caused it. Undo puts the entry back as File → Open scene puts a scene (ReplaceScene).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "attnscope/model/forward.h"
#include "attnscope/scene/scene.h"

namespace attnscope::gui {

struct AppState;

// What one undo step restores.
struct HistoryEntry {
  Scene scene;
  int lesson = -1, step = 0;  // the lesson shown (index into the Lessons panel's list; −1 none) and its step
  std::string checkpoint;     // the open checkpoint's path ("" none): its layer and K/V heads apply to it only
  int layer = 0, kv_heads = 0;
  model::HeadAblation ablation;  // the heads the Model view switched off
  bool operator==(const HistoryEntry&) const = default;
};

struct History {
  std::vector<HistoryEntry> undo, redo;      // newest last
  std::optional<HistoryEntry> committed;     // what the window showed after the last recorded change
  std::optional<HistoryEntry> before_lesson; // the teacher's own state when a lesson was first opened
  static constexpr size_t max_steps = 500;   // the oldest steps go beyond this
};

// What the window shows now.
HistoryEntry CaptureEntry(const AppState& state);
// Once a frame, after the windows: records a change (above); a closed Lessons panel with a lesson
// chosen leaves the lesson, returning the teacher's state (one undo step).
void RecordHistory(AppState& state, bool user_input);
bool CanUndo(const AppState& state);
bool CanRedo(const AppState& state);
void Undo(AppState& state);
void Redo(AppState& state);
// Puts a scene on screen as File → Open scene does: the typed path fields follow it, the engine
// recomputes (Panel::startup).
void ReplaceScene(AppState& state, const Scene& scene);
// This frame had input from the user: a key or button pressed or released, a character typed, the wheel.
bool FrameHadUserInput();

}  // namespace attnscope::gui
