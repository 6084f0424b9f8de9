// The clipboard's one platform call: which tool it asks for, and that a missing tool or display is an
// outcome naming it (the window shows it), never a throw or a hang.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/platform_clipboard.h"
#include "run_cli.h"

using namespace attnscope;

namespace {

// Sets an environment variable for one scope and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("platform clipboard: without the tool the outcome names it and its package, at once") {
  const auto empty = attnscope::test::fresh_dir("platform_clipboard_empty_path");
  ScopedEnv path("PATH", empty.c_str());
  {
    ScopedEnv wayland("WAYLAND_DISPLAY", nullptr);
    ScopedEnv display("DISPLAY", ":99");
    const auto start = std::chrono::steady_clock::now();
    const ClipboardOutcome x11 = copy_png_to_clipboard("\x89PNG");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    CHECK_FALSE(x11.ok);
    CHECK(x11.problem == ClipboardProblem::missing_tool);
    CHECK(x11.tool == "xclip");
    CHECK(x11.package == "xclip");
  }
  {
    ScopedEnv wayland("WAYLAND_DISPLAY", "wayland-0");
    ScopedEnv display("DISPLAY", nullptr);
    const ClipboardOutcome w = copy_png_to_clipboard("\x89PNG");
    CHECK_FALSE(w.ok);
    CHECK(w.problem == ClipboardProblem::missing_tool);
    CHECK(w.tool == "wl-copy");
    CHECK(w.package == "wl-clipboard");
  }
}

TEST_CASE("platform clipboard: with no display at all the outcome says so") {
  ScopedEnv wayland("WAYLAND_DISPLAY", nullptr);
  ScopedEnv display("DISPLAY", nullptr);
  const ClipboardOutcome out = copy_png_to_clipboard("\x89PNG");
  CHECK_FALSE(out.ok);
  CHECK(out.problem == ClipboardProblem::no_display);
}

TEST_CASE("platform clipboard: text goes to the tool as UTF-8 text, an image as image/png") {
  // A stand-in xclip on PATH that keeps its arguments and what it read.
  const auto dir = attnscope::test::fresh_dir("platform_clipboard_fake_xclip");
  const std::string tool = (dir / "xclip").string();
  {
    std::FILE* f = std::fopen(tool.c_str(), "w");
    REQUIRE(f);
    std::fprintf(f, "#!/bin/sh\necho \"$@\" > '%s/args'\ncat > '%s/stdin'\n", dir.c_str(), dir.c_str());
    std::fclose(f);
  }
  REQUIRE(chmod(tool.c_str(), 0755) == 0);
  ScopedEnv path("PATH", (dir.string() + ":/usr/bin:/bin").c_str());
  ScopedEnv wayland("WAYLAND_DISPLAY", nullptr);
  ScopedEnv display("DISPLAY", ":99");
  auto read = [&](const char* name) {
    std::ifstream in(dir / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string link = "https://example.org/attnscope/?scene=eJyrVsrJT0osUrKqVsrMTUnNK1GyMtRRys8rSc0rAQBCewbs";
  const ClipboardOutcome text = copy_text_to_clipboard(link);
  CHECK(text.ok);
  CHECK_FALSE(text.pending);
  CHECK(read("args") == "-selection clipboard -t UTF8_STRING -i\n");
  CHECK(read("stdin") == link);
  const ClipboardOutcome image = copy_png_to_clipboard("\x89PNG");
  CHECK(image.ok);
  CHECK(read("args") == "-selection clipboard -t image/png -i\n");
  CHECK(read("stdin") == "\x89PNG");
  CHECK_FALSE(finished_clipboard_write().has_value());  // the desktop's writes never pend
  CHECK_FALSE(clipboard_is_the_browsers());
}
