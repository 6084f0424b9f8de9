// scripted_run.h — what a scripted run (--screenshot) writes when its frames are done: the
// screenshot PNG, the layout JSON (where each head's heatmap was drawn) and, for the frame-time
// benchmark, the timings. Every file goes through write_file_atomic.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "gui/app_state.h"

namespace attnscope::gui {

// rgba: [height, width, 4] rows from the top. Throws InputError when the file cannot be written.
void WriteScreenshot(const std::filesystem::path& path, int width, int height, const std::vector<unsigned char>& rgba);

// {"width", "height", "view", "colormap", "values", "error", "font_notice",
//  "heads": [{"head", "kv_group", "tokens", "x", "y", "w", "h", "cell", "frame", "frame_color", "range"}],
//  "labels": [{"axis", "index", "text", "x", "y", "w", "h"}]}   — framebuffer pixels, y down.
void WriteLayoutJson(const std::filesystem::path& path, const AppState& state, int width, int height);

struct BenchTimings {
  std::vector<double> frame_ms;    // every frame after the first result, start of frame → on screen
  std::vector<double> latency_ms;  // settings change → the new heatmaps on screen
  std::vector<double> compute_ms;  // settings change → the worker's result ready
  int texture_uploads = 0;
};
void WriteBenchJson(const std::filesystem::path& path, const BenchTimings& timings);

}  // namespace attnscope::gui
