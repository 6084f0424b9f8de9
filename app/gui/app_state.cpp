#include "gui/app_state.h"

#include "gui/windows.h"

namespace attnscope::gui {

const char* panel_title(Panel panel) {
  switch (panel) {
    case Panel::startup: return "the command line";
    case Panel::input: return "Input";
    case Panel::model: return "Model";
    case Panel::heads: return "Heads";
    case Panel::shapes: return "Shapes";
    case Panel::relpos: return "Relative position";
    case Panel::conv: return "Convolution";
    case Panel::exporter: return "Export";
  }
  return "";
}

void NoteEdit(AppState& state, Panel panel) {
  state.scene_edited = true;
  state.edited_by = panel;
}

void SubmitIfEdited(AppState& state) {
  if (!state.scene_edited) return;
  state.scene_edited = false;
  state.submitted_generation = state.worker->submit(state.scene);
  state.submitted_by = state.edited_by;
}

bool TakeResult(AppState& state) {
  std::optional<ComputeResult> result = state.worker->take_result();
  if (!result) return false;
  state.result_generation = result->generation;
  state.result_seconds = result->seconds;
  if (!result->error.empty()) {
    // Keep showing the last good pictures; say why the new settings gave none.
    state.error = result->error;
    state.error_panel = state.submitted_by;
    return true;
  }
  state.error.clear();
  if (result->analysis != state.analysis) NoteAnalysisChange(state.shapes, state.analysis.get(), *result->analysis);
  state.analysis = result->analysis;
  state.heads_pixels = result->heads;
  return true;
}

const std::string& ErrorFor(const AppState& state, Panel panel) {
  static const std::string none;
  return state.error_panel == panel ? state.error : none;
}

}  // namespace attnscope::gui
