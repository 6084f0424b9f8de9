// window_main.cpp — run_window: the window's straight main loop.
//
//   0. scene and window size from the flags (or the last session's scene)
//   1. GLFW window with an OpenGL 3.3 core context
//   2. Dear ImGui: context, backends, fonts (fontconfig), persisted layout
//   3. state and the compute worker; the first scene goes to the engine
//   4. loop: events → newest result → look (scale, theme, fonts) → frame: draw windows →
//      submit edits → render → (scripted: screenshot and exit) → swap → persist layout
//   5. tear down in reverse
//
// Sections: flags · helpers · run_window
#include "gui/window_main.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "attnscope/core/error.h"
#include "gui/app_state.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "core/compute_worker.h"
#include "gui/fonts.h"
#include "gui/gl_texture.h"
#include "gui/persistence.h"
#include "gui/scripted_run.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {

// ---- flags -------------------------------------------------------------------------------------------

namespace {
const char* const window_flag_names[] = {"--screenshot", "--frames", "--size", "--layout-json", "--ui-scale",
                                         "--theme", "--pointer", "--clicks", "--show-export", "--bench-json",
                                         "--bench-changes", "--bench-fps", "--lesson", "--step", "--language",
                                         "--show-analysis", "--show-kv-cache", "--open-scene", "--save-scene"};
}

void add_window_options(CLI::App& app, WindowOptions& o) {
  o.app = &app;
  auto* group = app.add_option_group("Window", "The desktop window (no subcommand); scripted runs for figures and tests");
  group->add_option("--screenshot", o.screenshot, "Render, write this PNG and exit (no saved state is read or written)");
  group->add_option("--frames", o.frames,
                    "Frames to render before the screenshot (default 3; the last waits for the result); without "
                    "--screenshot, close the window after N frames");
  group->add_option("--size", o.size, "Window size WxH in pixels (default 1600x900, 1280x720 with --screenshot)");
  group->add_option("--layout-json", o.layout_json, "With --screenshot: write where each head's heatmap was drawn");
  group->add_option("--ui-scale", o.ui_scale, "UI scale, 0.5 to 3 (default: fitted to the window, e.g. 1 at 720p, 1.2 at 1080p, 2.4 at 4K)");
  group->add_option("--theme", o.theme, "light (default, for projectors) | dark");
  group->add_option("--pointer", o.pointer, "Scripted runs: pointer at X,Y (window pixels), to show hovering")->group("");
  group->add_option("--clicks", o.clicks, "Scripted runs: frames at which the left button is pressed")
      ->delimiter(',')
      ->group("");
  group->add_flag("--show-export", o.show_export, "Open the Export panel (figures of the window, tests)")->group("");
  group->add_option("--bench-json", o.bench_json, "Frame-time benchmark: time settings changes, write the timings here")
      ->group("");
  group->add_option("--bench-changes", o.bench_changes, "Settings changes to time in a benchmark run (default 20)")->group("");
  group->add_option("--bench-fps", o.bench_fps,
                    "Benchmark frame pacing: frames per second, as vsync on a display would allow (default 60; "
                    "0: as fast as possible)")
      ->group("");
  group->add_option("--lesson", o.lesson, "Open lesson N (1 to 5) in the Lessons panel");
  group->add_option("--step", o.step, "With --lesson: start at this step (default 1)");
  group->add_option("--language", o.language, "UI language: en (English) | zh (中文); default: the last one chosen");
  group->add_flag("--show-analysis", o.show_analysis, "Open the Head analysis window");
  group->add_flag("--show-kv-cache", o.show_kv_cache, "Open the KV-cache calculator");
  group->add_option("--open-scene", o.open_scene, "Read a scene file as the window's Open scene… does (warnings in the status line)");
  group->add_option("--save-scene", o.save_scene, "Scripted runs: save the final scene as the window's Save scene… does")->group("");
}

// ---- helpers -----------------------------------------------------------------------------------------

namespace {

// True when the command line names any scene setting (then the last session's scene is not restored).
bool AnySceneFlag(const cli::SceneOptions& options) {
  if (!options.app) return false;
  for (const CLI::Option* opt : options.app->get_options()) {
    if (opt->count() == 0) continue;
    const std::string name = opt->get_name();
    const bool window_flag = std::find_if(std::begin(window_flag_names), std::end(window_flag_names),
                                          [&](const char* f) { return name == f; }) != std::end(window_flag_names);
    if (!window_flag && name != "--help" && name != "--version") return true;
  }
  return false;
}

struct WindowSize {
  int width = 0, height = 0;
};

WindowSize ParseSize(const std::string& text) {
  int w = 0, h = 0;
  char x = 0, extra = 0;
  const int n = std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra);
  require(n == 3 && (x == 'x' || x == 'X'), "--size takes WxH in pixels, e.g. 1280x720; got '" + text + "'");
  require(w >= 320 && w <= 7680 && h >= 240 && h <= 4320,
          "--size must be between 320x240 and 7680x4320, got '" + text + "'");
  return {w, h};
}

void ApplyStyle(bool light, float scale) {
  ImGuiStyle style;
  if (light) ImGui::StyleColorsLight(&style);
  else ImGui::StyleColorsDark(&style);
  style.WindowRounding = 4.0f;
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.WindowPadding = ImVec2(10, 10);
  style.ItemSpacing = ImVec2(8, 6);
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

// Ctrl + / Ctrl − / Ctrl 0 for the UI scale; Ctrl+E the Export panel, Ctrl+S export again.
void HandleShortcuts(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl) return;
  if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD))
    state.ui_scale = std::min(3.0f, std::round((state.ui_scale + 0.1f) * 20.0f) / 20.0f);
  if (ImGui::IsKeyPressed(GLFW_KEY_MINUS) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT))
    state.ui_scale = std::max(0.5f, std::round((state.ui_scale - 0.1f) * 20.0f) / 20.0f);
  if (ImGui::IsKeyPressed(GLFW_KEY_0) || ImGui::IsKeyPressed(GLFW_KEY_KP_0)) state.ui_scale = 1.0f;
  if (ImGui::IsKeyPressed(GLFW_KEY_E, false)) state.show_export = !state.show_export;
  if (ImGui::IsKeyPressed(GLFW_KEY_S, false)) ExportWithLastSettings(state);
}

void DrawViewWindow(AppState& state) {
  switch (state.scene.view.view) {
    case View::heads: DrawHeadsWindow(state); break;
    case View::shapes: DrawShapesWindow(state, false); break;
    case View::relpos1d: DrawRelpos1dWindow(state); break;
    case View::relpos2d: DrawRelpos2dWindow(state); break;
    case View::conv: DrawConvWindow(state); break;
  }
}


}  // namespace

// ---- run_window --------------------------------------------------------------------------------------

int run_window(const cli::SceneOptions& scene_options, const WindowOptions& options) {
  using Clock = std::chrono::steady_clock;
  // 0. Scene and size. A bad scene flag is shown in the window (and on stderr); a bad window flag
  //    is a usage error.
  const bool bench = !options.bench_json.empty();
  const bool scripted = !options.screenshot.empty() || bench;
  // --frames without --screenshot: an interactive run (saved state and all) that closes itself after
  // N frames — for demos and for testing what is remembered between runs.
  const bool auto_close = !scripted && cli::flag_given(options.app, "--frames");
  require(options.frames >= 1 && options.frames <= 100000, "--frames must be between 1 and 100000");
  require(options.bench_changes >= 1 && options.bench_changes <= 10000, "--bench-changes must be between 1 and 10000");
  require(options.bench_fps >= 0 && options.bench_fps <= 1000, "--bench-fps must be between 0 (unpaced) and 1000");
  require(!cli::flag_given(options.app, "--layout-json") || !options.screenshot.empty(), "--layout-json needs --screenshot FILE.png");
  require(options.ui_scale == 0.0f || (std::isfinite(options.ui_scale) && options.ui_scale >= 0.5f && options.ui_scale <= 3.0f),
          "--ui-scale must be between 0.5 and 3");
  require(options.theme.empty() || options.theme == "light" || options.theme == "dark",
          "--theme must be light or dark, got '" + options.theme + "'");
  if (!options.language.empty()) parse_language(options.language);  // names the valid ones
  require(options.step >= 1 || !cli::flag_given(options.app, "--lesson"), "--step counts from 1");
  require(!cli::flag_given(options.app, "--step") || cli::flag_given(options.app, "--lesson"), "--step needs --lesson N");
  require(options.save_scene.empty() || scripted, "--save-scene needs --screenshot FILE.png");
  std::optional<ImVec2> pointer;
  if (!options.pointer.empty()) {
    float x = 0, y = 0;
    char comma = 0, extra = 0;
    require(std::sscanf(options.pointer.c_str(), "%f%c%f%c", &x, &comma, &y, &extra) == 3 && comma == ',' &&
                std::isfinite(x) && std::isfinite(y),
            "--pointer takes X,Y in window pixels, got '" + options.pointer + "'");
    pointer = ImVec2(x, y);
  }
  Persistence persistence(!scripted);
  const WindowPreferences preferences = persistence.load_preferences();
  // The language first: the startup messages below (the last scene's warnings) are written in it.
  const Language language = !options.language.empty() ? parse_language(options.language)
                            : (!scripted && !preferences.language.empty()) ? parse_language(preferences.language)
                                                                            : Language::en;
  SetUiLanguage(language);
  // Size: the flag, else the last session's (so its saved layout fits), else a default.
  WindowSize size = scripted ? WindowSize{1280, 720} : WindowSize{1600, 900};
  if (!options.size.empty()) size = ParseSize(options.size);
  else if (preferences.width > 0) size = {preferences.width, preferences.height};
  Scene scene;
  std::string startup_error, startup_status;
  try {
    std::optional<Scene> last;
    if (!AnySceneFlag(scene_options)) last = persistence.load_scene(startup_status);
    if (last) {
      scene = *last;
    } else {
      scene = cli::build_window_scene(scene_options);  // `--view relpos2d` alone shows a grid
    }
  } catch (const InputError& e) {
    startup_error = e.what();
    std::fprintf(stderr, "error: %s\n", e.what());
  }

  // 1. The window and its OpenGL 3.3 core context.
  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "glfw error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "error: cannot open a window (no display?). Set DISPLAY, run under `xvfb-run -a`, or use a "
                         "subcommand such as `attnscope compute`.\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(size.width, size.height, "attnscope", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "error: cannot create an OpenGL 3.3 window (see the glfw error above)\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(scripted ? 0 : 1);

  // 2. Dear ImGui with the system fonts and the saved layout (imgui.ini is written by us, atomically).
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  if (const auto ini = persistence.load_layout()) ImGui::LoadIniSettingsFromMemory(ini->data(), ini->size());
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  FontAtlas fonts;
  fonts.request_text(scene.input.text);

  int exit_code = 0;
  {
    // 3. State and the compute worker.
    ComputeWorker worker([] { glfwPostEmptyEvent(); });
    AppState state;
    state.worker = &worker;
    state.fonts = &fonts;
    state.scene = scene;
    state.scripted = scripted;
    state.status = startup_status;
    state.show_export = options.show_export;
    state.show_analysis = options.show_analysis;
    state.show_kv_cache = options.show_kv_cache;
    state.language = language;
    RequestUiGlyphs(fonts);
    // UI scale: the flag, else the saved one, else what suits the screen: the monitor's content
    // scale, and at least the window height over 900 pixels (1080p → 1.2, 4K → 2.4).
    float content_scale = 1.0f;
    glfwGetWindowContentScale(window, &content_scale, nullptr);
    int fb_w0 = 0, fb_h0 = 0;
    glfwGetFramebufferSize(window, &fb_w0, &fb_h0);
    const float fitted = std::clamp(std::max(scripted ? 1.0f : content_scale, std::round(float(fb_h0) / 900.0f * 20.0f) / 20.0f),
                                    1.0f, 3.0f);
    state.ui_scale = options.ui_scale > 0                    ? options.ui_scale
                     : (!scripted && preferences.ui_scale > 0) ? preferences.ui_scale
                                                              : fitted;
    state.light_theme = options.theme.empty() ? (scripted || preferences.light_theme) : options.theme == "light";
    state.reset_layout = !persistence.load_layout().has_value();
    if (startup_error.empty()) {
      NoteEdit(state, Panel::startup);
    } else {
      state.error = startup_error;
      state.error_panel = Panel::startup;
    }
    // A lesson or a scene file named on the command line replaces the scene (errors show in the window).
    if (options.lesson > 0) {
      if (const std::string failure = OpenLesson(state, options.lesson, options.step - 1); !failure.empty()) {
        state.status = failure;  // and in the Lessons panel, opened to choose another
        state.show_lessons = true;
        state.show_input = state.show_model = false;
        std::fprintf(stderr, "error: %s\n", failure.c_str());
      } else {
        state.show_input = state.show_model = false;  // the lesson takes the left column
      }
    }
    if (!options.open_scene.empty() && !OpenSceneFile(state, options.open_scene))
      std::fprintf(stderr, "error: %s\n", state.scene_dialog.message.c_str());

    float applied_scale = 0.0f;
    bool applied_light = !state.light_theme;
    bool device_ready = false;
    int frame = 0, frames_since_result = 0;
    const int frames_wanted = std::max(options.frames, 2);
    FrameBench frame_bench(options.bench_changes);
    bool dropped_last_frame = false;
    ImVec2 last_display(0, 0);
    // Settled: the newest result is on screen. A scripted figure also waits for the head statistics; the
    // benchmark, like a user, goes on once the heatmaps are there.
    const auto settled_now = [&] { return (bench ? !worker.busy() : worker.idle()) && frames_since_result >= 1; };

    // 4. The loop.
    while (!glfwWindowShouldClose(window)) {
      const Clock::time_point frame_start = Clock::now();
      // a. Events: wait when idle so the window costs nothing while a teacher talks.
      if (scripted || auto_close) glfwPollEvents();
      else if (!worker.idle() || frame < 3) glfwWaitEventsTimeout(1.0 / 60.0);
      else glfwWaitEventsTimeout(0.5);

      // b. The worker's newest result. A scripted run waits for it before its last frames.
      // (With simulated clicks every frame waits, so each click lands on the current result.)
      if (scripted && !bench && (frame >= frames_wanted - 2 || !options.clicks.empty())) worker.wait_until_idle();
      const bool got_result = TakeResult(state);
      UploadTextures(state);
      frames_since_result = got_result ? 0 : frames_since_result + 1;

      // c. Look: style and fonts follow the UI scale and theme; new text may need new glyphs.
      if (state.ui_scale != applied_scale || state.light_theme != applied_light) {
        ApplyStyle(state.light_theme, state.ui_scale);
        applied_scale = state.ui_scale;
        applied_light = state.light_theme;
      }
      fonts.rebuild_if_needed(std::round(16.0f * state.ui_scale), device_ready);

      // d. The frame: every window reads the state and edits the scene.
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      if (scripted) {  // the pointer of a headless display must not hover anything in a figure
        io.MousePos = pointer ? *pointer : ImVec2(-FLT_MAX, -FLT_MAX);
        for (bool& down : io.MouseDown) down = false;
        io.MouseDown[0] = std::find(options.clicks.begin(), options.clicks.end(), frame) != options.clicks.end();
      }
      ImGui::NewFrame();
      device_ready = true;
      state.framebuffer_scale = io.DisplayFramebufferScale;
      // Without docking, windows do not follow a resized main window: lay them out afresh (e.g. when
      // the window moves to a projector of another size).
      if (frame > 0 && (io.DisplaySize.x != last_display.x || io.DisplaySize.y != last_display.y)) state.reset_layout = true;
      last_display = io.DisplaySize;
      state.layout.clear();
      HandleShortcuts(state);
      SetUiLanguage(state.language);
      DrawMenuBar(state);
      DrawInputWindow(state);
      DrawModelWindow(state);
      DrawViewWindow(state);
      DrawLessonsWindow(state);
      DrawShapesWindow(state, true);
      DrawAnalysisWindow(state);
      DrawKvCacheWindow(state);
      DrawExportWindow(state);
      DrawSceneDialogs(state);
      state.reset_layout = false;
      if (bench) frame_bench.before_submit(state, settled_now());
      ImGui::Render();

      // e. Edited settings go to the engine (the newest wins). A result that comes back within a few
      //    milliseconds (small T) is shown at once: this frame is dropped before rendering and the next
      //    one, built right away with the result, is the one that reaches the screen.
      const uint64_t submitted_before = state.submitted_generation;
      SubmitIfEdited(state);
      const bool just_submitted = state.submitted_generation != submitted_before;
      if (bench) frame_bench.after_submit(state);
      if (just_submitted && !dropped_last_frame && !(scripted && !bench) &&
          worker.wait_for_result(std::chrono::milliseconds(4))) {
        dropped_last_frame = true;
        continue;
      }
      dropped_last_frame = false;

      // f. Render.
      int fb_w = 0, fb_h = 0;
      glfwGetFramebufferSize(window, &fb_w, &fb_h);
      glViewport(0, 0, fb_w, fb_h);
      const ImVec4 clear = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
      glClearColor(clear.x, clear.y, clear.z, 1.0f);
      glClear(GL_COLOR_BUFFER_BIT);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
      ++frame;

      // g. Scripted: after the wanted frames, once the result has been on screen for a frame.
      if (scripted && !bench && frame >= frames_wanted && settled_now() && !ExportRunning(state)) {
        if (!state.error.empty() && state.error != startup_error) std::fprintf(stderr, "error: %s\n", state.error.c_str());
        try {
          const std::vector<unsigned char> pixels = read_back_buffer(fb_w, fb_h);
          WriteScreenshot(options.screenshot, fb_w, fb_h, pixels);
          if (!options.save_scene.empty() && !SaveSceneFile(state, options.save_scene))
            throw InputError(state.scene_dialog.message);
          if (!options.layout_json.empty()) WriteLayoutJson(options.layout_json, state, fb_w, fb_h);
        } catch (const InputError& e) {
          std::fprintf(stderr, "error: %s\n", e.what());
          exit_code = 2;
        }
        break;
      }
      glfwSwapBuffers(window);
      worker.presented(state.result_generation);
      if (auto_close && frame >= options.frames && worker.idle()) glfwSetWindowShouldClose(window, GLFW_TRUE);

      if (bench) {
        gl_finish();
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - frame_start).count();
        if (frame_bench.after_frame(state, ms, frame >= 3 && settled_now())) break;
        // Xvfb has no vsync: wait out the rest of the frame as a 60 Hz display would, so that the
        // worker shares the cores with the renderer as it does on a real screen.
        if (options.bench_fps > 0)
          std::this_thread::sleep_until(frame_start + std::chrono::microseconds(1000000 / options.bench_fps));
      }

      // h. Persist the layout when ImGui says it changed.
      if (io.WantSaveIniSettings) {
        size_t ini_size = 0;
        const char* ini = ImGui::SaveIniSettingsToMemory(&ini_size);
        if (const std::string failure = persistence.save_layout(std::string(ini, ini_size)); !failure.empty())
          state.status = failure;
        io.WantSaveIniSettings = false;
      }
    }

    if (bench) {
      BenchTimings& timings = frame_bench.timings();
      timings.texture_uploads = state.textures.uploads;
      try {
        WriteBenchJson(options.bench_json, timings);
      } catch (const InputError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        exit_code = 2;
      }
    }

    // 5a. Remember this session (interactive runs only) and free GL textures while the context lives.
    if (!scripted) {
      size_t ini_size = 0;
      const char* ini = ImGui::SaveIniSettingsToMemory(&ini_size);
      persistence.save_layout(std::string(ini, ini_size));
      if (startup_error.empty() || state.result_generation > 0) persistence.save_scene(state.scene);
      int window_w = 0, window_h = 0;
      glfwGetWindowSize(window, &window_w, &window_h);
      persistence.save_preferences({state.ui_scale, state.light_theme, window_w, window_h, to_string(state.language)});
    }
  }

  // 5b. Tear down in reverse.
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace attnscope::gui
