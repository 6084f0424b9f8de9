// classroom_state.h — the state of the classroom windows: the Lessons panel, the head
// Analysis window, the KV-cache calculator and the Open/Save scene dialog. AppState holds one of
// each; the windows live in window_lessons.cpp, window_analysis.cpp, window_kv_cache.cpp and
// window_scene.cpp.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "attnscope/attention/kv_cache.h"
#include "attnscope/classroom/lessons.h"
#include "gui/gl_texture.h"
#include "gui/heatmap_grid.h"

namespace attnscope::gui {

struct LessonsWindowState {
  bool loaded = false;           // load_lessons() tried (once, on first use)
  std::vector<Lesson> lessons;   // sorted by number
  std::string load_error;        // why the lessons could not be read
  std::string open_error;        // why the lesson/step asked for (--lesson, --step) does not exist
  int lesson = -1;               // index into lessons of the open lesson (−1: none chosen)
  int step = 0;                  // its current step
};

struct AnalysisWindowState {
  GlTexture similarity;          // the [H, H] Jensen–Shannon matrix as a texture
  ColorBarCache bar;
};

struct KvCacheWindowState {
  bool loaded = false;           // load_model_presets() tried
  std::vector<ModelPreset> presets;
  std::string load_error;
  int preset = 0;                // index into presets; presets.size() = the custom row
  KvCacheInput input;            // what the sliders edit (L, H, G, d_head from the preset or custom)
  bool initialised = false;
};

struct SceneDialogState {
  bool open_save = false, open_open = false;  // the dialogs requested this frame
  std::string path = "scene.json";            // as typed
  std::string message;                        // the last result: path written/read, or the error
  bool ok = true;
  std::vector<std::string> warnings;          // keys the loaded file had that were ignored
};

}  // namespace attnscope::gui
