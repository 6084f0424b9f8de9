#include "gui/history.h"

#include <imgui.h>

#include <algorithm>

#include "gui/app_state.h"

namespace attnscope::gui {
namespace {

void Push(std::vector<HistoryEntry>& stack, HistoryEntry entry) {
  stack.push_back(std::move(entry));
  if (stack.size() > History::max_steps) stack.erase(stack.begin());
}

// Puts `e` on screen: the scene, the lesson and step, and the checkpoint's layer and K/V heads when
// the same checkpoint is open (another one keeps its own).
void Restore(AppState& state, const HistoryEntry& e) {
  ReplaceScene(state, e.scene);
  LessonsWindowState& l = state.lessons;
  if (e.lesson >= 0 && e.lesson < int(l.lessons.size())) {
    if (!state.show_lessons) {
      state.show_lessons = true;
      state.show_input = state.show_model = false;  // the lessons take the left column, as the menu does
    }
    l.lesson = e.lesson;
    l.step = std::clamp(e.step, 0, int(l.lessons[size_t(e.lesson)].steps.size()) - 1);
    // The scene is restored as it was: the step's settings are not applied again.
    l.applied_for = state.checkpoint.model;
    l.open_tried = true;
    l.focus_pending = false;
  } else {
    l.lesson = -1;
  }
  CheckpointWindowState& c = state.checkpoint;
  if (c.is_open() && c.opened == e.checkpoint) {
    c.layer = e.layer;
    c.kv_heads = e.kv_heads;
    c.ablation = e.ablation;
  }
  state.history.committed = CaptureEntry(state);
}

}  // namespace

HistoryEntry CaptureEntry(const AppState& state) {
  HistoryEntry e;
  e.scene = state.scene;
  e.lesson = state.lessons.lesson;
  e.step = state.lessons.lesson >= 0 ? state.lessons.step : 0;
  if (state.checkpoint.is_open()) {
    e.checkpoint = state.checkpoint.opened;
    e.layer = state.checkpoint.layer;
    e.kv_heads = state.checkpoint.kv_heads;
    e.ablation = state.checkpoint.ablation;
  }
  return e;
}

bool FrameHadUserInput() {
  const ImGuiIO& io = ImGui::GetIO();
  for (int b = 0; b < IM_ARRAYSIZE(io.MouseDown); ++b)
    if (io.MouseClicked[b] || io.MouseReleased[b]) return true;
  for (int k = 0; k < IM_ARRAYSIZE(io.KeysDown); ++k)
    if (io.KeysDownDuration[k] == 0.0f || (io.KeysDownDurationPrev[k] >= 0.0f && !io.KeysDown[k])) return true;
  return !io.InputQueueCharacters.empty() || io.MouseWheel != 0.0f || io.MouseWheelH != 0.0f;
}

void RecordHistory(AppState& state, bool user_input) {
  History& h = state.history;
  LessonsWindowState& l = state.lessons;
  // Leaving a lesson (its panel closed, by its × or the menu): the teacher's state comes back.
  if (!state.show_lessons && l.lesson >= 0) {
    if (h.before_lesson) {
      const HistoryEntry teacher = *h.before_lesson;
      h.before_lesson.reset();
      if (h.committed) Push(h.undo, *h.committed);
      h.redo.clear();
      Restore(state, teacher);
      l.lesson = -1;
      h.committed = CaptureEntry(state);
      return;
    }
    l.lesson = -1;  // a lesson opened at start: there is no earlier scene of the teacher's
  }
  HistoryEntry now = CaptureEntry(state);
  if (!h.committed) {
    h.committed = std::move(now);
    return;
  }
  if (now == *h.committed || ImGui::IsAnyItemActive()) return;
  // The first lesson opened: remember what the teacher had.
  if (h.committed->lesson < 0 && now.lesson >= 0) h.before_lesson = *h.committed;
  if (now.lesson < 0) h.before_lesson.reset();
  if (user_input) {
    Push(h.undo, *h.committed);
    h.redo.clear();
  }
  h.committed = std::move(now);
}

bool CanUndo(const AppState& state) { return !state.history.undo.empty(); }
bool CanRedo(const AppState& state) { return !state.history.redo.empty(); }

void Undo(AppState& state) {
  History& h = state.history;
  if (h.undo.empty()) return;
  const HistoryEntry back = h.undo.back();
  h.undo.pop_back();
  Push(h.redo, h.committed ? *h.committed : CaptureEntry(state));
  Restore(state, back);
}

void Redo(AppState& state) {
  History& h = state.history;
  if (h.redo.empty()) return;
  const HistoryEntry again = h.redo.back();
  h.redo.pop_back();
  Push(h.undo, h.committed ? *h.committed : CaptureEntry(state));
  Restore(state, again);
}

void ReplaceScene(AppState& state, const Scene& scene) {
  state.scene = scene;
  state.fonts->request_text(scene.input.text);
  // The typed path fields show the restored paths.
  state.input.tensor_path = scene.input.tensor_path;
  state.input.image_path = scene.input.grid.image_path;
  state.input.tokenizer_path_shown = false;
  state.model.weights_dir = scene.model.weights_dir;
  NoteEdit(state, Panel::startup);
}

}  // namespace attnscope::gui
