// window_main.h — the desktop window: flags of its own and the entry point main() calls.
//
//   attnscope [scene options]                          interactive window (restores the last scene
//                                                      and layout when no scene option is given)
//   attnscope [scene options] --screenshot FILE.png    scripted: render N frames, write the
//             [--frames N] [--size WxH] [--layout-json FILE]   screenshot (and layout) and exit
//   attnscope [scene options] --frames N               interactive, closing itself after N frames;
//             [--layout-json FILE [--layout-sweep]]    the layout is written when the window closes
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/scene_options.h"

namespace attnscope::gui {

struct WindowOptions {
  std::string screenshot;   // PNG to write after the last frame; non-empty → scripted run
  int frames = 3;           // frames to render in a scripted run (the last one waits for the result)
  std::string size;         // "WxH" window size in pixels; default 1600x900 (1280x720 scripted)
  std::string layout_json;  // where each heatmap, window and text was drawn, for tests
  bool layout_sweep = false;  // interactive: record every view, window and lesson step (LayoutSweep)
  bool layout_live = false;   // interactive: rewrite layout_json while the window is open (the monkey test)
  float ui_scale = 0.0f;    // 0 → fitted to the screen (content scale, window height / 900)
  std::string theme;        // light | dark (default light)
  std::string pointer;      // scripted: "X,Y" pointer position in window pixels (default: off the window), or
                            // "X1,Y1;X2,Y2…": the next position after each click
  std::vector<int> clicks;  // scripted: frames at which the left button is down (2,4: a double-click)
  std::vector<std::string> keys;  // scripted: "FRAME:ctrl|enter|escape|tab|backspace|text=…|ctrl+equal|ctrl+minus|ctrl+0|ctrl+e"
  bool show_export = false;  // open the Export panel at start
  // Classroom.
  int lesson = 0;            // open lesson N (from 1) at start; 0: none
  int step = 1;              // its step (1-based)
  std::string language;      // en | zh: the UI language (default: the saved one, else en)
  bool show_analysis = false;  // open the Head analysis window
  bool show_kv_cache = false;  // open the KV-cache calculator
  bool show_about = false;    // open Help → About
  bool show_training = false;  // open the Training window
  bool show_model_view = false;  // open the Model view
  bool show_rollout = false;     // open the Rollout view
  bool show_lens = false;        // open the Logit lens
  std::string link_error;  // the browser build: why the page's link parameters were not used (the status line)
  std::string scene_link;  // open the scene of an attnscope link (?scene=…; core/scene_link.h)
  std::string site_url;    // the address of attnscope's web page, for File → Copy link on the desktop
  std::vector<std::string> train_settings;  // its fields, "key=value" (training_worker.h)
  std::vector<std::string> train_actions;   // scripted: its buttons in order (training_windows.h)
  std::string checkpoint;    // open this checkpoint folder at start (the Checkpoint window)
  int layer = 0;             // with checkpoint: the layer the Heads view draws
  std::string ablate;        // with checkpoint: heads switched off once it opens, "1.0,1.3" (the Model view's)
  std::string why;           // with checkpoint: "HEAD,QUERY,KEY", the "why" panel opened on that cell of the layer
  std::string ablate_mode = "zero";
  std::string open_scene;    // read this scene file through the window's Open scene (scripted tests)
  std::string compare_a;     // keep this scene file as A and open Compare A/B
  std::string compare_view = "side-by-side";  // with compare_a: side-by-side | difference
  std::string save_scene;    // scripted: save the final scene here through the window's Save scene
  std::string bench_json;   // frame-time benchmark: write timings here (bench/frame_time.cpp)
  int bench_changes = 20;   // settings changes to time in a benchmark run
  int bench_fps = 60;       // benchmark frame pacing (vsync of a 60 Hz display); 0: unpaced
  CLI::App* app = nullptr;  // where the flags were added, to ask which were given
};

void add_window_options(CLI::App& app, WindowOptions& options);

// Opens the window and runs until it is closed (or the scripted frames are done). Returns the
// process exit code.
int run_window(const attnscope::cli::SceneOptions& scene_options, const WindowOptions& options);

}  // namespace attnscope::gui
