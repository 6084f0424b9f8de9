// classroom_state.h — the state of the classroom windows: the Lessons panel, the head
// Analysis window, the KV-cache calculator and the Open/Save scene dialog. AppState holds one of
// each; the windows live in window_lessons.cpp, window_analysis.cpp, window_kv_cache.cpp and
// window_scene.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/attention/kv_cache.h"
#include "attnscope/classroom/lessons.h"
#include "attnscope/model/model.h"
#include "gui/gl_texture.h"
#include "gui/heatmap_grid.h"

namespace attnscope {
struct ModelLayerRun;
namespace model {
struct Model;
}
}  // namespace attnscope

namespace attnscope::gui {

struct LessonsWindowState {
  bool loaded = false;           // load_lessons() tried (once, on first use)
  std::vector<Lesson> lessons;   // sorted by number
  std::string load_error;        // why the lessons could not be read
  std::string open_error;        // why the lesson/step asked for (--lesson, --step) does not exist
  int lesson = -1;               // index into lessons of the open lesson (−1: none chosen)
  int step = 0;                  // its current step
  // A step's "checkpoint" (lesson 6): applied once per step and open model (the ids of a repeated
  // sequence come from that model's vocabulary), the shipped model opened at most once per step, and
  // a head chosen by its pattern score once the step's run has come back.
  std::weak_ptr<const model::Model> applied_for;  // the model the step's settings were applied for
  bool open_tried = false;                     // the step's "open" asked the loader already
  bool focus_pending = false;                  // a "head": "induction" … waits for the step's run
  uint64_t focus_generation = 0;               // the submission whose result it waits for (0: not yet sent)
  // What the lesson itself put on screen, taken away again by a step that is not about it: the shipped
  // model a step's "open" opened (its path as given to OpenCheckpoint; "" none) and the Training window a
  // step's "training" showed.
  std::string opened_model;
  // The view a step opened in the view's place (lessons.h step_view: the Model view of a step that switches heads
  // off, the Rollout or the Logit lens of a step's "view"); a step that shows another (or none) closes it.
  std::optional<LessonViewKind> opened_view;
  bool showed_training = false;
  // (The pattern scores of the run on screen come from the compute worker: CheckpointWindowState.)
};

struct AnalysisWindowState {
  GlTexture similarity;          // the [H, H] Jensen–Shannon matrix as a texture
  ColorBarCache bar;
};

struct KvCacheWindowState {
  bool loaded = false;           // load_model_presets() tried
  std::vector<ModelPreset> presets;
  std::string load_error;
  int preset = 0;                // index into presets; presets.size() = the custom row; −1 the open checkpoint
  KvCacheInput input;            // what the sliders edit (L, H, G, d_head from the preset or custom)
  bool initialised = false;
  // The checkpoint whose L, H, G, d_head were put in (empty: none); weak, so that another model opened later
  // at the same address is not taken for it.
  std::weak_ptr<const model::Model> checkpoint;
};

struct SceneDialogState {
  bool open_save = false, open_open = false;  // the dialogs requested this frame
  std::string path = "scene.json";            // as typed
  std::string message;                        // the last result: path written/read, or the error
  bool ok = true;
  std::vector<std::string> warnings;          // keys the loaded file had that were ignored
};

}  // namespace attnscope::gui
