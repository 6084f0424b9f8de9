// training_state.h — the Training window's state (window_training.cpp): the form, the runs on their
// worker threads (core/training_worker.h), the probe heads as textures, and the scripted actions of
// --train-actions.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/training_worker.h"
#include "gui/gl_texture.h"
#include "gui/heatmap_grid.h"

namespace attnscope::gui {

struct TrainingWindowState {
  TrainingForm form;
  std::vector<std::unique_ptr<TrainingRun>> runs;  // one run, or MHA / GQA / MQA when comparing
  bool comparing = false;
  std::string error;                 // bad settings (shown in the window, nothing started)
  std::string save_path = "runs/window";
  int shown_run = 0;                 // whose heads and induction scores are drawn
  // The shown run's probe heads as textures [L][H], re-sent when a new snapshot arrives.
  std::vector<std::vector<GlTexture>> textures;
  uint64_t uploaded_generation = 0;
  const TrainingRun* uploaded_run = nullptr;
  int heads_step = -1;               // the step of the heads on screen
  int heads_refreshes = 0;           // snapshots uploaded so far (tests: the heads refresh)
  ColorBarCache bar;
  // Scripted runs (--train-actions): done one by one, each once the runs are idle again.
  std::vector<std::string> actions;
  size_t next_action = 0;
  bool drawn_busy = false;  // the last frame was drawn while a run was busy (its final view not yet shown)
};

}  // namespace attnscope::gui
