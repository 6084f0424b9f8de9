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
  std::vector<std::unique_ptr<TrainingRun>> runs;  // one run, or MHA / GQA / MQA / MLA (+ window) when comparing
  std::vector<std::string> run_kinds;  // [runs] short names for the loss-against-cache plot ("MLA", "GQA + window")
  bool comparing = false;
  std::string error;                 // bad settings (shown in the window, nothing started)
  std::string save_path = "runs/window";
  // The browser (files_are_downloads): Save checkpoint's folder is offered as one download, a zip of it
  // (core/zip_folder.h), once the save asked for by the button is done; its file name, or why not.
  bool offer_save = false;
  std::string save_download, save_download_error;
  int shown_run = 0;                 // the run Save writes (a comparison: the one picked); see ShownRun
  int layer = -1;                    // the layer whose heads and induction scores are drawn (−1: the last)
  // Each run's probe heads as textures [L][H], re-sent when a new snapshot of that run arrives.
  struct RunHeads {
    const TrainingRun* run = nullptr;
    uint64_t generation = 0;
    std::vector<std::vector<GlTexture>> textures;  // [L][H]
  };
  std::vector<RunHeads> heads;       // [runs]
  int heads_step = -1;               // the step of the shown run's heads on screen
  int heads_refreshes = 0;           // snapshots uploaded so far (tests: the heads refresh)
  ColorBarCache bar;
  ColorBarCache bar_signed;          // a comparison with runs without a softmax: the shared bar of M ÷ max|M|
  bool collapse_settings = false;    // a run just started: fold the settings away (once)
  bool open_settings = false;        // Reset: unfold them again (once)
  // Scripted runs (--train-actions): done one by one, each once the runs are idle again.
  std::vector<std::string> actions;
  size_t next_action = 0;
  bool drawn_busy = false;  // the last frame was drawn while a run was busy (its final view not yet shown)
};

}  // namespace attnscope::gui
