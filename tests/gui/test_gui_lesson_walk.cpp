// Every lesson walked as a teacher walks it with a clicker: the window started on the lesson, F11 (or
// not: the same walk windowed, the Lessons panel beside the view), PageDown to the last step and PageUp
// back to the first, pressed as real keys through the X server (xdotool), in English and in Chinese:
// presented at 1280×720 and 1920×1080, windowed at 1280×720, and presented at 1280×720 in the sanitized
// build too (tests/gui/monkey/CMakeLists.txt). The window rewrites its layout record every frame
// (--layout-live); at each step, once the screen has settled (the model loaded, the step's run on screen,
// its head chosen), the record must show that lesson and step, no error, the shipped model when the step
// says "open", the head shown large when the step names one (and none when it does not), the step's view
// (or the Training window for lesson 7), presentation mode still on (or the Lessons panel shown), and no
// text cut by its window. Going back must put each step on screen whole, as going forward did — not what
// the step after left.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "attnscope/classroom/lessons.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Runs a shell command and returns its standard output.
std::string output_of(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

double right(const json& r) { return r.at("x").get<double>() + r.at("w").get<double>(); }
double bottom(const json& r) { return r.at("y").get<double>() + r.at("h").get<double>(); }

// The texts that run past what their window shows (and cannot be scrolled to), as gui_layout counts them.
std::vector<std::string> cut_texts(const json& layout) {
  std::vector<std::string> out;
  constexpr double tolerance = 1.0;
  for (const json& t : layout.at("texts")) {
    const json& clip = t.at("clip");
    bool cut = false;
    if (!t.at("scroll_x").get<bool>())
      cut |= right(t) - right(clip) > tolerance || clip.at("x").get<double>() - t.at("x").get<double>() > tolerance;
    if (!t.at("scroll_y").get<bool>())
      cut |= bottom(t) - bottom(clip) > tolerance || clip.at("y").get<double>() - t.at("y").get<double>() > tolerance;
    if (cut) out.push_back(t.at("text").get<std::string>().substr(0, 60) + " (in " + t.at("window").get<std::string>() + ")");
  }
  return out;
}

// A private X server with a projector's screen (1280×720, 1920×1080), for as long as it lives:
// presentation mode makes the window full screen (the suite's own server is 4K).
class Screen {
 public:
  explicit Screen(const std::string& size) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      close(fds[0]);
      const std::string fd = std::to_string(fds[1]);
      if (!freopen("/dev/null", "w", stderr)) _exit(127);
      execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", size.c_str(), "-nolisten", "tcp", "-noreset",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    std::string number;
    char c = 0;
    while (read(fds[0], &c, 1) == 1 && c != '\n') number += c;
    close(fds[0]);
    REQUIRE_MESSAGE(!number.empty(), "Xvfb did not start");
    if (const char* d = std::getenv("DISPLAY")) outer_ = d;
    setenv("DISPLAY", (":" + number).c_str(), 1);
  }
  ~Screen() {
    if (outer_.empty()) unsetenv("DISPLAY");
    else setenv("DISPLAY", outer_.c_str(), 1);
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

 private:
  pid_t pid_ = -1;
  std::string outer_;
};

// What a record says about the lesson, for a failure's message.
std::string brief(const json& r) {
  json b = json::object();
  for (const char* k : {"frame", "lesson", "lesson_step", "presenting", "settled", "error", "checkpoint", "view"})
    if (r.is_object() && r.contains(k)) b[k] = r[k];
  return b.dump();
}

// One interactive window on a lesson, driven by real keys; reads its live layout record.
class LessonWindow {
 public:
  LessonWindow(const fs::path& dir, const std::string& args, int width, int height) : dir_(dir) {
    fs::remove_all(dir);
    fs::create_directories(dir / "config");
    REQUIRE_MESSAGE(std::system("command -v xdotool >/dev/null 2>&1") == 0,
                    "the lesson walk presses keys through the X server with xdotool (apt-get install xdotool)");
    // The pointer rests in the screen's bottom-right corner before the window appears too: left at the screen's
    // centre it lies over the first heatmap until the move below, and a first frame drawn then shows its
    // tooltip (CI caught one cut by the window's edge at lesson 1, step 1).
    std::system(("xdotool mousemove " + std::to_string(width - 1) + " " + std::to_string(height - 1) + " >/dev/null 2>&1").c_str());
    const std::string command = "exec " + shell_quote(ATTNSCOPE_BIN) + " " + args + " --layout-live --layout-json " +
                                shell_quote((dir / "layout.json").string());
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      setenv("XDG_CONFIG_HOME", (dir / "config").c_str(), 1);
      if (!freopen((dir / "out.txt").c_str(), "w", stdout) || !freopen((dir / "out.txt").c_str(), "a", stderr)) _exit(127);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    wid_ = output_of("timeout 60 xdotool search --sync --onlyvisible --pid " + std::to_string(pid_) + " | head -1");
    REQUIRE_MESSAGE(!wid_.empty(), "the window did not appear: " << output());
    // The pointer rests in the screen's bottom-right corner, as a presenter's does (not on a heatmap,
    // whose tooltip would cover the view).
    std::system(("xdotool windowfocus --sync " + wid_ + " mousemove " + std::to_string(width - 1) + " " +
                 std::to_string(height - 1) + " >/dev/null 2>&1").c_str());
  }
  ~LessonWindow() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 200; ++i) {
      if (waitpid(pid_, &status_, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
  LessonWindow(const LessonWindow&) = delete;
  LessonWindow& operator=(const LessonWindow&) = delete;

  std::string output() const {
    std::ifstream f(dir_ / "out.txt");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

  // The newest record (an empty object while there is none yet; written atomically, so never half).
  json record() const {
    std::ifstream f(dir_ / "layout.json");
    if (!f.good()) return json::object();
    return json::parse(f, nullptr, false);
  }

  // Presses a key (an X keysym: F11, Next, Prior) as a keyboard does.
  void press(const std::string& keysym) {
    last_key_ = keysym;
    last_frame_ = record().value("frame", -1);
    // Focused again first: going full screen maps the window anew, and with no window manager the focus
    // does not follow it. Held for a moment, as a finger does: a press and release that reach the window
    // between two frames are one key down for no frame (ImGui 1.86 reads the keys' state, not events).
    std::system(("xdotool windowfocus --sync " + wid_ + " keydown " + keysym + " sleep 0.25 keyup " + keysym +
                 " >/dev/null 2>&1").c_str());
  }

  // Waits until a record drawn after the last key press is settled and `ready` says it is the one wanted;
  // returns it (or the last record seen, with `timed_out`).
  // On a loaded machine one frame can outlast the key's hold, and ImGui 1.86 then never sees it down:
  // a key whose press left the settled window on the step it was on for 3 s is pressed again (at most
  // twice; a press that did arrive moves the step, so it is never repeated).
  template <class Ready>
  json settled(Ready ready, bool& timed_out) {
    const auto start = std::chrono::steady_clock::now(), until = start + std::chrono::seconds(40);
    const int step_before = record().value("lesson_step", 0);
    const bool presenting_before = record().value("presenting", false);
    auto pressed_at = start;
    int retries = 0;
    json last;
    while (std::chrono::steady_clock::now() < until) {
      if (!last_key_.empty() && retries < 2 && std::chrono::steady_clock::now() - pressed_at > std::chrono::seconds(3) &&
          !last.is_null() && last.value("settled", false) && last.value("lesson_step", 0) == step_before &&
          last.value("presenting", false) == presenting_before && !ready(last)) {
        ++retries;
        pressed_at = std::chrono::steady_clock::now();
        press(last_key_);
      }
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {
        pid_ = 0;
        FAIL("the window ended: " << output());
      }
      json r = record();
      if (r.is_object() && r.contains("frame") && r["frame"].get<int>() > last_frame_ + 1 && r.value("settled", false) &&
          ready(r))
        return r;
      if (r.is_object() && r.contains("frame")) last = std::move(r);
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
    timed_out = true;
    return last;
  }

 private:
  fs::path dir_;
  pid_t pid_ = -1;
  int status_ = 0;
  std::string wid_;
  int last_frame_ = -1;
  std::string last_key_;  // the key pressed last ("" none yet)
};

// What one step's record must show.
void check_step(const json& r, const Lesson& lesson, int step, bool presenting, int width, int height,
                const std::string& where) {
  INFO(where);
  const LessonStep& s = lesson.steps[size_t(step)];
  CHECK(r.at("lesson") == lesson.number);
  CHECK(r.at("lesson_step") == step + 1);
  CHECK(r.at("lesson_shown") == true);
  CHECK(r.at("presenting") == presenting);
  CHECK(r.at("width") == width);
  CHECK(r.at("height") == height);
  if (!presenting) CHECK(r.at("slots").contains("lessons"));
  CHECK(r.at("error") == "");
  CHECK(r.at("checkpoint_error") == "");
  CHECK(r.at("translation_problem") == "");
  CHECK_MESSAGE(r.at("untranslated").empty(), r.at("untranslated").dump());
  const std::string checkpoint = r.at("checkpoint").get<std::string>();
  if (s.checkpoint && s.checkpoint->open) {
    CHECK_MESSAGE(fs::path(checkpoint).filename() == s.checkpoint->model_dir.filename(),
                  "the step opens " << s.checkpoint->model << ", the views draw \"" << checkpoint << "\"");
  } else if (!s.checkpoint) {
    CHECK_MESSAGE(checkpoint.empty(), "a step about the synthetic model draws the checkpoint " << checkpoint);
  }
  // The head shown large is the step's (a checkpoint step's number or top head of a pattern), or none.
  const bool names_head = s.checkpoint && !checkpoint.empty() && (s.checkpoint->head || s.checkpoint->top_head);
  if (names_head) CHECK(r.at("large_head").get<int>() >= 0);
  else CHECK(r.at("large_head") == -1);
  // Presented, such a step draws the lesson's table of the model's top heads beside the head (its
  // captions point at the table; the Lessons panel that holds it windowed is hidden).
  if (presenting && names_head) CHECK(r.at("widgets").contains("lesson.top_heads"));
  // The step's view, or the Training window in its place (lesson 7), or the view a checkpoint step shows in its
  // place (lesson 11: the Logit lens on the step's page and position, the Rollout, the Model view for a step that
  // switches heads off) — that window and not the other two.
  if (s.training) {
    CHECK(r.at("slots").contains("training"));
  } else if (const std::optional<LessonViewKind> view = step_view(s)) {
    CHECK(r.at("slots").contains("model_view"));
    const std::string wanted = *view == LessonViewKind::model ? "model_view" : to_string(*view);
    for (const char* id : {"model_view", "rollout", "lens"}) {
      bool shown = false;
      for (const json& w : r.at("windows")) shown = shown || w.at("title").get<std::string>().ends_with(std::string("###") + id);
      CHECK_MESSAGE(shown == (wanted == id), "window " << id << (shown ? " shown" : " not shown") << ", the step's view is " << wanted);
    }
    if (*view == LessonViewKind::lens) {
      CHECK(r.at("lens_page") == (s.checkpoint->view->attribution ? "attribution" : "lens"));
      CHECK(r.at("lens_position") == s.checkpoint->view->position.value_or(-1));
    }
  } else {
    CHECK(r.at("view_shown") == true);
    CHECK(r.at("view") == to_string(s.scene.view.view));
  }
  for (const std::string& cut : cut_texts(r)) FAIL_CHECK("text cut: " << cut);
}

// Walks lesson `number` down to its last step and back up, checking every step both ways.
// The screen must be width×height (a Screen of that size): presenting fills it.
void walk(const Lesson& lesson, const std::string& language, bool presenting, int width = 1280, int height = 720) {
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  const std::string name = "walk_" + std::to_string(lesson.number) + "_" + language + (presenting ? "_present_" : "_windowed_") + size;
  CAPTURE(name);
  LessonWindow window(test_tmp() / "gui" / "walk" / name,
                      "--size " + size + " --language " + language + " --lesson " + std::to_string(lesson.number), width, height);
  const int steps = int(lesson.steps.size());
  auto at_step = [&](int step, bool want_presenting) {
    return [step, want_presenting](const json& r) {
      return r.value("lesson_step", 0) == step + 1 && r.value("presenting", false) == want_presenting;
    };
  };
  bool timed_out = false;
  json r = window.settled(at_step(0, false), timed_out);
  REQUIRE_MESSAGE(!timed_out, "the first step never settled: " << brief(r));
  if (presenting) {
    window.press("F11");
    r = window.settled(at_step(0, true), timed_out);
    REQUIRE_MESSAGE(!timed_out, "F11 did not present: " << brief(r));
  }
  check_step(r, lesson, 0, presenting, width, height, name + " step 1");
  for (int step = 1; step < steps; ++step) {
    window.press("Next");
    r = window.settled(at_step(step, presenting), timed_out);
    REQUIRE_MESSAGE(!timed_out, "PageDown to step " << step + 1 << " never settled: " << brief(r));
    check_step(r, lesson, step, presenting, width, height, name + " PageDown to step " + std::to_string(step + 1));
  }
  for (int step = steps - 2; step >= 0; --step) {
    window.press("Prior");
    r = window.settled(at_step(step, presenting), timed_out);
    REQUIRE_MESSAGE(!timed_out, "PageUp to step " << step + 1 << " never settled: " << brief(r));
    check_step(r, lesson, step, presenting, width, height, name + " PageUp to step " + std::to_string(step + 1));
  }
}

}  // namespace

TEST_SUITE("gui_lesson_walk") {
  TEST_CASE("lesson walk: every lesson presented (F11), PageDown to the last step and PageUp back, in English and Chinese") {
    const std::vector<Lesson> lessons = load_lessons();
    REQUIRE(!lessons.empty());
    const Screen screen("1280x720x24");
    for (const char* language : {"en", "zh"})
      for (const Lesson& lesson : lessons) walk(lesson, language, true);
  }
}

TEST_SUITE("gui_lesson_walk_1080") {
  TEST_CASE("lesson walk: every lesson presented (F11) at 1920×1080, PageDown to the last step and PageUp back, in English and Chinese") {
    const std::vector<Lesson> lessons = load_lessons();
    REQUIRE(!lessons.empty());
    const Screen screen("1920x1080x24");
    for (const char* language : {"en", "zh"})
      for (const Lesson& lesson : lessons) walk(lesson, language, true, 1920, 1080);
  }
}

TEST_SUITE("gui_lesson_walk_windowed") {
  TEST_CASE("lesson walk: lesson 7's next step draws the layer its caption names, not one a student picked before") {
    // Step 2, one training step taken (the heads and the layer slider drawn), layer 0 picked by a click
    // at the slider's left end; then PageDown: step 3 (the same settings, the run kept) and step 4 (new
    // settings) draw the last layer, where the captions' induction heads form.
    const std::string args = "--size 1280x720 --lesson 7 --step 2 --train-actions step";
    const WindowRun plain = run_window("walk_7_layer_start", args + " --frames 8");
    REQUIRE(plain.layout.at("widgets").contains("training.layer"));
    const json& slider = plain.layout.at("widgets").at("training.layer");
    const std::string at_left = std::to_string(int(slider.at("x").get<double>() + 2)) + "," +
                                std::to_string(int(slider.at("y").get<double>() + slider.at("h").get<double>() / 2));
    const int layers = plain.layout.at("training").at("runs").at(0).at("layers").get<int>();
    REQUIRE(layers > 1);
    CHECK(plain.layout.at("training").at("layer") == layers - 1);
    const WindowRun picked = run_window("walk_7_layer_picked", args + " --frames 14 --clicks 10 --pointer " + at_left);
    REQUIRE(picked.layout.at("training").at("layer") == 0);  // the click did pick layer 0
    const WindowRun next = run_window("walk_7_layer_step3", args + " --frames 18 --clicks 10 --pointer " + at_left + " --keys 14:pagedown");
    CHECK(next.layout.at("lesson_step") == 3);
    CHECK(next.layout.at("training").at("layer") == layers - 1);
    const WindowRun compare =
        run_window("walk_7_layer_step4", args + " --frames 20 --clicks 10 --pointer " + at_left + " --keys 14:pagedown,16:pagedown");
    CHECK(compare.layout.at("lesson_step") == 4);
    CHECK(compare.layout.at("training").at("layer") == -1);  // no run yet: the last layer once one starts
  }

  TEST_CASE("lesson walk: every lesson in its panel, PageDown to the last step and PageUp back, in English and Chinese") {
    const std::vector<Lesson> lessons = load_lessons();
    REQUIRE(!lessons.empty());
    const Screen screen("1280x720x24");
    for (const char* language : {"en", "zh"})
      for (const Lesson& lesson : lessons) walk(lesson, language, false);
  }
}

}  // namespace attnscope::test
