// clipboard.h — the X clipboard in the GUI tests: the image the window's Copy figure put there, read back with xclip,
// and checked against the export's PNG pixel for pixel.
#pragma once
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gui_run.h"

namespace attnscope::test {

// The shell line that writes the clipboard's image/png into `out`: for drive_window's `after`, while the window still
// owns the clipboard.
inline std::string clipboard_png_line(const std::filesystem::path& out) {
  return "timeout 10 xclip -o -selection clipboard -t image/png >" + shell_quote(out.string()) + " 2>/dev/null\n";
}

// The clipboard's image/png into `out` now (exit status of xclip).
inline int read_clipboard_png(const std::filesystem::path& out) {
  const int status = std::system(clipboard_png_line(out).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// `pasted` (the clipboard's image) is `paper` (the export's PNG): the same size and every pixel the same.
inline void check_same_pixels(const Png& pasted, const Png& paper) {
  REQUIRE(pasted.width == paper.width);
  REQUIRE(pasted.height == paper.height);
  int differing = 0;
  for (int y = 0; y < paper.height; ++y)
    for (int x = 0; x < paper.width; ++x) differing += pasted.at(x, y) != paper.at(x, y);
  CHECK(differing == 0);
}

}  // namespace attnscope::test
