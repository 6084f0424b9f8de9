// attnscope in the browser — main() of the WebAssembly build (scripts/build-web.sh).
// The page (app/web/index.html) turns its link's parameters into the desktop's flags
// (?lesson=4&step=2&lang=zh → --lesson 4 --step 2 --language zh; app/web/README.md lists them), parsed
// here by the same CLI11 options as the desktop window's, then opens the same window in the canvas.
// A parameter that does not parse opens the default scene with the reason in the window's error line,
// never a blank page.
#include <CLI/CLI.hpp>
#include <emscripten.h>

#include <cstdio>
#include <exception>
#include <algorithm>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "core/scene_options.h"
#include "core/version.h"
#include "gui/window_main.h"

int main(int argc, char** argv) {
  // Static: the window outlives main(), which returns to the browser's event loop.
  static attnscope::cli::SceneOptions scene_options;
  static attnscope::gui::WindowOptions window_options;
  CLI::App root{"attnscope in the browser"};
  attnscope::cli::add_scene_options(root, scene_options, attnscope::cli::flags_all);
  attnscope::gui::add_window_options(root, window_options);
  std::string link_error;
  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    link_error = e.what();
  } catch (const std::exception& e) {  // InputError from an option's check
    link_error = e.what();
  }
  if (!link_error.empty()) {
    std::fprintf(stderr, "error: the link's parameters: %s\n", link_error.c_str());
    scene_options = attnscope::cli::SceneOptions{};
    window_options = attnscope::gui::WindowOptions{};
    // The page's own size and a test's live layout record still apply.
    std::vector<std::string> kept;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if ((a == "--size" || a == "--layout-json") && i + 1 < argc) {
        kept.push_back(a);
        kept.push_back(argv[++i]);
      } else if (a == "--layout-live") {
        kept.push_back(a);
      }
    }
    std::reverse(kept.begin(), kept.end());  // CLI11 parses a vector from its back
    try {
      root.parse(kept);
    } catch (const std::exception&) {
      window_options = attnscope::gui::WindowOptions{};
    }
    window_options.link_error = link_error;
  }
  try {
    return attnscope::gui::run_window(scene_options, window_options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}

// The page's size changed (index.html, in the screen's pixels): the window follows, as a desktop window
// resized by its frame. Not through glfwSetWindowSize: emscripten 3.1.6's asks the browser for full screen
// (with the pointer locked) instead of resizing whenever the size equals the screen's — at devicePixelRatio 1, a
// page the browser shows full screen, or presenting (F11) — which the browser refuses without a click
// ("A user gesture is required to request Pointer Lock"), leaving the canvas at its old size; and its canvas
// listener puts the screen's CSS size back while the page is full screen, half the canvas at ratio 2. So the
// canvas and GLFW's window take the size here, and GLFW's size callbacks are called as its canvas listener does.
extern "C" EMSCRIPTEN_KEEPALIVE void attnscope_web_resize(int width, int height) {
  EM_ASM({
    const win = GLFW.active;
    if (!win || (win.width === $0 && win.height === $1)) return;
    Browser.setCanvasSize($0, $1, true);  // true: not through GLFW's listener (above)
    win.width = $0;
    win.height = $1;
    GLFW.onWindowSizeChanged();
    GLFW.onFramebufferSizeChanged();
  }, width, height);
}
