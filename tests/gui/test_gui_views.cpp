// The window starts, renders each view and exits cleanly (scripted --screenshot runs under Xvfb).
#include <set>

#include "gui_run.h"

namespace attnscope::test {

TEST_SUITE("gui_views") {
  TEST_CASE("window: renders every view and exits cleanly") {
    for (const char* view : {"heads", "shapes", "positions", "relpos1d", "relpos2d", "conv"}) {
      CAPTURE(view);
      const WindowRun w = run_window(std::string("view_") + view, std::string("--view ") + view);
      CHECK(w.png.width == 1280);
      CHECK(w.png.height == 720);
      CHECK(w.layout["view"] == view);
      CHECK(w.layout["error"] == "");
      // Something was drawn: a rendered window has many colours, a blank one a few.
      std::set<uint32_t> colours;
      for (size_t i = 0; i < w.png.rgba.size(); i += 4)
        colours.insert(uint32_t(w.png.rgba[i]) << 16 | uint32_t(w.png.rgba[i + 1]) << 8 | w.png.rgba[i + 2]);
      CHECK(colours.size() > 50);
      // Views with heatmaps say where they drew them.
      if (std::string(view) != "shapes") CHECK(w.layout["heads"].size() > 0);
    }
  }

  TEST_CASE("window: renders at 1920x1080 and 3840x2160 with everything inside the window") {
    for (const char* size : {"1920x1080", "3840x2160"}) {
      CAPTURE(size);
      const WindowRun w = run_window(std::string("size_") + size, std::string("--size ") + size + " --heads 16");
      CHECK(w.png.width == w.layout["width"].get<int>());
      CHECK(w.layout["heads"].size() == 16);
      for (const auto& h : w.layout["heads"]) {
        CHECK(h["x"].get<double>() >= 0);
        CHECK(h["y"].get<double>() >= 0);
        CHECK(h["x"].get<double>() + h["w"].get<double>() <= w.png.width);
        CHECK(h["y"].get<double>() + h["h"].get<double>() <= w.png.height);
      }
      for (const auto& l : w.layout["labels"]) {
        CHECK(l["x"].get<double>() >= 0);
        CHECK(l["x"].get<double>() + l["w"].get<double>() <= w.png.width);
      }
    }
  }
}

}  // namespace attnscope::test
