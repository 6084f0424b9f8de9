// test_user_path.cpp — the window's one rule for typed paths (app/core/user_path.h).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "core/user_path.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {
// Sets $HOME for one test and puts the old value back.
struct HomeIs {
  explicit HomeIs(const char* home) {
    if (const char* old = std::getenv("HOME")) saved = old;
    if (home) setenv("HOME", home, 1);
    else unsetenv("HOME");
  }
  ~HomeIs() {
    if (saved) setenv("HOME", saved->c_str(), 1);
    else unsetenv("HOME");
  }
  std::optional<std::string> saved;
};
}  // namespace

TEST_CASE("user path: ~ and ~/… are the home folder") {
  const HomeIs home("/home/teacher");
  CHECK(user_path_text("~") == "/home/teacher");
  CHECK(user_path_text("~/") == "/home/teacher");
  CHECK(user_path_text("~/runs/window") == "/home/teacher/runs/window");
  CHECK(user_path_text("  ~/models/induction  ") == "/home/teacher/models/induction");  // pasted with spaces
  CHECK(user_path("~/a/../b/./c.json") == fs::path("/home/teacher/b/c.json"));
}

TEST_CASE("user path: a relative path is made absolute against the current folder") {
  const HomeIs home("/home/teacher");
  const fs::path here = fs::current_path();
  CHECK(user_path("runs/window") == (here / "runs" / "window").lexically_normal());
  CHECK(user_path("runs/window").is_absolute());
  CHECK(user_path("./scene.json") == (here / "scene.json").lexically_normal());
  CHECK(user_path("../x") == (here.parent_path() / "x").lexically_normal());
  // "~user" is not the home rule: a relative name like any other.
  CHECK(user_path("~bob/x") == (here / "~bob" / "x").lexically_normal());
  CHECK(user_path("x~/y") == (here / "x~" / "y").lexically_normal());
}

TEST_CASE("user path: absolute paths keep their place, empty stays empty") {
  const HomeIs home("/home/teacher");
  CHECK(user_path_text("/data/models/qwen/") == "/data/models/qwen");
  CHECK(user_path_text("/data//models/./qwen") == "/data/models/qwen");
  CHECK(user_path_text("/") == "/");
  CHECK(user_path_text("").empty());
  CHECK(user_path_text("   ").empty());
}

TEST_CASE("user path: without a home folder ~ stays as typed") {
  const HomeIs no_home(nullptr);
  CHECK(user_path("~/x") == (fs::current_path() / "~" / "x").lexically_normal());
}
