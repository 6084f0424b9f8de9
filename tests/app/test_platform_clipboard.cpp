// The clipboard's one platform call: which tool it asks for, and that a missing tool or display is an
// outcome naming it (the window shows it), never a throw or a hang.
#include <doctest/doctest.h>

#include <chrono>
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
