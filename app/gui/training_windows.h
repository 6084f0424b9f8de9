// training_windows.h — the Training window (window_training.cpp) and what the main loop and the
// scripted runs need of it.
#pragma once
#include <nlohmann/json.hpp>

#include "gui/app_state.h"

namespace attnscope::gui {

// Also runs the scripted --train-actions (one per frame, each once the runs are idle).
void DrawTrainingWindow(AppState& state);
// Opens the Training window with these settings (a lesson step): when they differ from the form's,
// the runs are reset (joined) and the form takes them; the same settings keep what is training.
void ShowTrainingWith(AppState& state, const train::TrainSettings& settings);
// True while a run trains or saves, or scripted actions are still to come (a scripted run waits).
bool TrainingBusy(const AppState& state);
// Scripted runs: sleeps a little each frame while training, so the renderer leaves the cores to it.
void ScriptedTrainingPause(const AppState& state);
// {"shown", "error", "comparing", "heads_step", "heads_refreshes", "heads_textures" (of every run),
//  "layer" (whose heads and scores are drawn), "shown_run" (the one Save writes), "speed" (steps/s, 0: no limit),
//  "runs": [{"label", "state", "error", "save", "save_ok", "step", "total_steps", "losses", "layers",
//            "heads", "groups", "kv_cache_bytes_per_token", "steps_per_second", "induction" [L][H],
//            "induction_history": [{"step", "scores"}], "probe_tokens"}]} — for --layout-json.
nlohmann::json TrainingLayoutJson(const AppState& state);

}  // namespace attnscope::gui
