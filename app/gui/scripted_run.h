// scripted_run.h — what a scripted run (--screenshot) writes when its frames are done: the
// screenshot PNG, the layout JSON (where each head's heatmap was drawn, the windows and texts) and,
// for the frame-time benchmark, the timings; an interactive run with --layout-json writes the layout
// when the window closes, after the layout sweep if one was asked for. Every file goes through
// write_file_atomic.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "gui/app_state.h"

namespace attnscope::gui {

// rgba: [height, width, 4] rows from the top. Throws InputError when the file cannot be written.
void WriteScreenshot(const std::filesystem::path& path, int width, int height, const std::vector<unsigned char>& rgba);

class LayoutSweep;

// {"width", "height", "view", "colormap", "values", "error", "font_notice", "language", "ui_scale",
//  "translation_problem", "untranslated": [English keys drawn without a translation],
//  "heads": [{"head", "kv_group", "tokens", "x", "y", "w", "h", "cell", "frame", "frame_color", "range"}],
//  "thumbs": [{"layer", "head", "kv_group", "x", "y", "w", "h", "frame", "frame_color", "current"}] (Model view),
//  "labels": [{"axis", "index", "text", "x", "y", "w", "h"}],
//  "menu_bar": {"x", "y", "w", "h"}, "slots": {name: {"x", "y", "w", "h"}} (the layout function's
//  rectangles: "view", each open panel, "dialog", the "left"/"right" columns), "view_shown", "windows": [{"title", "x", "y", "w", "h", "scroll_x", "scroll_y"}],
//  "texts": [{"window", "text", "x", "y", "w", "h", "clip": {"x", "y", "w", "h"}, "scroll_x", "scroll_y"}],
//  "screens": [{"name", "view", "lesson", "lesson_step", "error", "menu_bar", "slots", "view_shown", "windows",
//  "texts", "heads": [{"head", "x", "y", "w", "h"}]}]}
// — framebuffer pixels, y down. "texts" is filled when the run records them (--layout-json given);
// "screens" is the sweep's, when there was one.
// "controls": [{"window", "id", "typed", "x", "y", "w", "h"}] lists every control shown (layout_record.h).
// "checkpoint_current": a checkpoint was the current model in the last frame; "earlier_frames": [{"frame",
// "checkpoint_current", "texts": [{"window", "text"}]}] the frames before it (scripted runs, the first 120).
// `frame` (≥ 0: a live run's --layout-live rewrites) is written as "frame", the frames rendered so far.
// "long_maps_made": a long input's head maps the compute worker made so far (ComputeWorker::long_maps_made).
void WriteLayoutJson(const std::filesystem::path& path, const AppState& state, int width, int height,
                     const LayoutSweep* sweep = nullptr, int frame = -1);

// --layout-sweep: after the start, shows each view, each other window and every step of every lesson
// in turn, as a user clicking through the menus would, and records each screen's layout once its
// result is on screen — so one start of the window checks them all.
class LayoutSweep {
 public:
  LayoutSweep();
  // After a frame is on screen: records it when the screen has settled, then shows the next one.
  // Returns true once every screen is recorded.
  bool after_frame(AppState& state, bool settled);
  bool done() const { return next_ >= plan_.size(); }

  struct Screen {
    std::string name;  // "view relpos2d", "lesson 4 step 2", …
    std::string view, error;
    int lesson = 0, lesson_step = 0;
    LayoutRecord layout;
  };
  const std::vector<Screen>& screens() const { return screens_; }

 private:
  struct Step {
    std::string name;
    std::function<void(AppState&)> show;
  };
  std::vector<Step> plan_;
  size_t next_ = 0;       // the step shown now
  int frames_shown_ = 0;  // frames drawn since it was shown
  std::vector<Screen> screens_;
};

struct BenchTimings {
  std::vector<double> frame_ms;    // every frame after the first result, start of frame → on screen
  std::vector<double> latency_ms;  // settings change → the new heatmaps on screen
  std::vector<double> compute_ms;  // settings change → the worker's result ready
  int texture_uploads = 0;
};
void WriteBenchJson(const std::filesystem::path& path, const BenchTimings& timings);

// The frame-time benchmark (--bench-json): once the first result is on screen, it changes a setting
// every few frames (a new seed for a sentence, another α for a grid: new numbers, same sizes) and
// times each change until the frame that shows its result has finished on the GPU.
class FrameBench {
 public:
  explicit FrameBench(int changes) : changes_(changes) {}
  // Between drawing the windows and submitting: may edit the scene (the next change).
  void before_submit(AppState& state, bool settled);
  // After SubmitIfEdited: notes when the change went to the worker.
  void after_submit(const AppState& state);
  // After the frame is on screen (swap + glFinish): frame time and, when it showed the change's
  // result, the latency. Returns true when the benchmark is done.
  bool after_frame(const AppState& state, double frame_ms, bool settled);
  BenchTimings& timings() { return timings_; }

 private:
  using Clock = std::chrono::steady_clock;
  int changes_;
  bool started_ = false;
  bool change_made_ = false;
  uint64_t waiting_for_ = 0;  // generation of the change in flight (0: none)
  Clock::time_point submitted_;
  int quiet_frames_ = 0;      // frames since the last change's result showed
  BenchTimings timings_;
};

}  // namespace attnscope::gui
