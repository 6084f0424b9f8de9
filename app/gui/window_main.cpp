// window_main.cpp — run_window: the window's main loop, short like Dear ImGui's example main, with
// each phase in a named function around it.
//
//   0. flag handling      CheckWindowFlags: what kind of run this is (a bad window flag: usage error)
//   1. start-up           LoadStartup (saved preferences, language, size, the first scene), OpenWindow
//                         (GLFW + OpenGL 3.3 core), StartImGui (context, backends, saved layout),
//                         InitState (state, UI scale, theme, the first scene to the engine, --lesson)
//   2. one frame          WaitForEvents → TakeNewestResult → ApplyLook → DrawFrame → SubmitEdits →
//                         DrawPicture → swap
//   3. scripted finish    FinishScriptedRun (screenshot, scene, layout JSON), BenchFrameDone; for
//                         interactive runs SweepLayouts, WriteLiveLayout, AutoCloseNow, FinishInteractiveRun
//                         (layout JSON); SIGTERM / SIGINT close an interactive window (RequestClose)
//   4. saving the session SaveLayoutIfChanged (each frame), SaveSession (at the end), TearDown
//
// Sections: flags · helpers · 0 flag handling · 1 start-up · 2 one frame · 3 scripted finish ·
//           4 saving the session · run_window
#include "gui/window_main.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

#include <algorithm>
#include <array>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "attnscope/core/error.h"
#include "attnscope/scene/scene_json.h"
#include "gui/app_state.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/layout_record.h"
#include "core/compute_worker.h"
#include "core/platform_clipboard.h"
#include "core/picture_change.h"
#include "core/platform_page.h"
#include "core/worker_thread.h"
#include "attnscope/figure/compare.h"
#include "gui/figure_copy.h"
#include "gui/fonts.h"
#include "gui/glfw_compat.h"
#include "gui/gl_texture.h"
#include "gui/key_queue.h"
#include "gui/persistence.h"
#include "gui/scripted_run.h"
#include "gui/training_windows.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {

// ---- flags -------------------------------------------------------------------------------------------

namespace {
const char* const window_flag_names[] = {"--screenshot", "--frames", "--size", "--layout-json", "--ui-scale",
                                         "--theme", "--pointer", "--clicks", "--keys", "--show-export", "--bench-json",
                                         "--bench-changes", "--bench-fps", "--lesson", "--step", "--language",
                                         "--show-analysis", "--show-kv-cache", "--open-scene", "--save-scene",
                                         "--show-about", "--layout-sweep", "--show-training", "--train-settings",
                                         "--train-actions", "--checkpoint", "--layer", "--show-model-view",
                                         "--layout-live", "--show-rollout", "--compare-a", "--compare-view", "--site-url",
                                         "--ablate", "--ablate-mode", "--why"};

// --why HEAD,QUERY,KEY: three whole numbers from 0 (checked against the model when it opens).
std::array<int, 3> parse_why_cell(const std::string& text) {
  std::array<int, 3> cell{};
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? text.find(',', at) : text.size();
    const std::string part = end == std::string::npos ? std::string() : text.substr(at, end - at);
    const bool digits = !part.empty() && part.size() <= 6 && part.find_first_not_of("0123456789") == std::string::npos;
    require(digits && (i < 2 || text.find(',', at) == std::string::npos),
            "--why takes HEAD,QUERY,KEY, three whole numbers from 0 (e.g. 0,5,2), got \"" + text + "\"");
    cell[size_t(i)] = std::stoi(part);
    at = end + 1;
  }
  return cell;
}
}

void add_window_options(CLI::App& app, WindowOptions& o) {
  o.app = &app;
  auto* group = app.add_option_group("Window", "The desktop window (no subcommand); scripted runs for figures and tests");
  group->add_option("--screenshot", o.screenshot, "Render, write this PNG and exit (no saved state is read or written)");
  group->add_option("--frames", o.frames,
                    "Frames to render before the screenshot (default 3; the last waits for the result); without "
                    "--screenshot, close the window after N frames");
  group->add_option("--size", o.size, "Window size WxH in pixels (default 1600x900, 1280x720 with --screenshot)");
  group->add_option("--layout-json", o.layout_json,
                    "Write where each heatmap, window and text was drawn: with --screenshot after its frames, else "
                    "when the window closes");
  group->add_flag("--layout-sweep", o.layout_sweep,
                  "With --layout-json and no --screenshot: show every view, window and lesson step in turn and "
                  "record each one's layout (tests)")
      ->group("");
  group->add_flag("--layout-live", o.layout_live,
                  "With --layout-json and no --screenshot: also rewrite it after every frame while the window is open, "
                  "with the frame number (a test driving the window from outside aims at its controls)")
      ->group("");
  group->add_option("--ui-scale", o.ui_scale, "UI scale, 0.5 to 3 (default: fitted to the window, e.g. 1 at 720p, 1.2 at 1080p, 2.4 at 4K)");
  group->add_option("--theme", o.theme, "light (default, for projectors) | dark");
  group->add_option("--pointer", o.pointer, "Scripted runs: pointer at X,Y (window pixels), to show hovering; X1,Y1;X2,Y2 moves it after each --clicks frame")->group("");
  group->add_option("--clicks", o.clicks, "Scripted runs: frames at which the left button is pressed")
      ->delimiter(',')
      ->group("");
  group->add_option("--keys", o.keys,
                    "Scripted runs: keyboard input at a frame, FRAME:ctrl (held, e.g. with a click), FRAME:enter, "
                    "FRAME:escape, FRAME:tab, FRAME:backspace, FRAME:text=CHARACTERS (typed; no commas), or a shortcut "
                    "FRAME:ctrl+equal, ctrl+minus, ctrl+0, ctrl+e, ctrl+z, ctrl+shift+z, ctrl+y, f11, pagedown, pageup, home, end, right, "
                    "left, space (pressed and released through the GLFW key callback), or FRAME:wheel=STEPS (mouse wheel, "
                    "positive: up)")
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
  group->add_option("--lesson", o.lesson, "Open lesson N (from 1) in the Lessons panel");
  group->add_option("--step", o.step, "With --lesson: start at this step (default 1)");
  group->add_option("--language", o.language, "UI language: en (English) | zh (中文); default: the last one chosen");
  group->add_flag("--show-analysis", o.show_analysis, "Open the Head analysis window");
  group->add_flag("--show-kv-cache", o.show_kv_cache, "Open the KV-cache calculator");
  group->add_flag("--show-about", o.show_about, "Open Help → About (version, git revision, licences)");
  group->add_flag("--show-training", o.show_training, "Open the Training window (Classroom → Training)");
  group->add_option("--train-settings", o.train_settings,
                    "Training window fields, key=value (task, text, level, layers, d_model, heads, groups, mlp, "
                    "attention, softmax_every, seq_len, batch, steps, lr, warmup, seed, threads, snapshot_every, "
                    "speed)")
      ->delimiter(',');
  group->add_option("--train-actions", o.train_actions,
                    "Scripted runs: Training window buttons in order (start, compare, compare-no-softmax, pause, step, reset, save:DIR, "
                    "show:N), each once the runs are idle")
      ->delimiter(',')
      ->group("");
  group->add_option("--checkpoint", o.checkpoint,
                    "Open this Hugging Face checkpoint folder (or attentions computed elsewhere: attentions.npy or .safetensors with tokens.json beside it) in the Checkpoint window; the Heads view draws its layer");
  group->add_flag("--show-model-view", o.show_model_view, "Open the Model view (Windows → Model view): every layer's heads of --checkpoint");
  group->add_flag("--show-lens", o.show_lens, "Open the Logit lens (Windows → Logit lens): the logit lens and direct logit attribution of --checkpoint");
  group->add_option("--layer", o.layer, "With --checkpoint: the layer the Heads view draws (default 0)");
  group->add_flag("--show-rollout", o.show_rollout, "Open the Rollout view (Windows → Rollout): attention rollout and flow of --checkpoint");
  group->add_option("--ablate", o.ablate,
                    "With --checkpoint: switch these heads off once it opens, LAYER.HEAD from 0 (e.g. 1.0,1.3), as the "
                    "Model view does");
  group->add_option("--ablate-mode", o.ablate_mode, "With --ablate: zero (default) or mean");
  group->add_option("--why", o.why,
                    "With --checkpoint: open the Heads view's \"Why does this head attend here?\" panel on the cell "
                    "HEAD,QUERY,KEY (from 0) of --layer, as a right-click on that cell does");
  group->add_option("--open-scene", o.open_scene, "Read a scene file as the window's Open scene… does (warnings in the status line)");
  group->add_option("--compare-a", o.compare_a, "Keep this scene file as A and open Compare A/B (the window's scene is B)");
  group->add_option("--compare-view", o.compare_view, "With --compare-a: side-by-side (default) | difference")->group("");
  group->add_option("--scene-link", o.scene_link,
                    "Open the scene of an attnscope link: the whole https://…?scene=… link File → Copy link made, or "
                    "its scene= value (a link that cannot be read opens the default scene and says why)");
  group->add_option("--site-url", o.site_url,
                    "The address of attnscope's web page (e.g. https://example.org/attnscope/, built by "
                    "scripts/build-web.sh): File → Copy link then copies a link to it that opens the window's scene in "
                    "a browser; without it the desktop has no link to copy")
      ->envname("ATTNSCOPE_SITE_URL");
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
  // The panels are placed by the layout (ComputeLayout): no collapse button and no resize grips, which
  // would only snap back.
  style.WindowMenuButtonPosition = ImGuiDir_None;
  // The light theme's frames are white, as its popups are: a checkbox or a field in a popup (the Heads
  // view's "numbers in cells") showed no box at all. A thin border draws every frame on any background.
  if (light) style.FrameBorderSize = 1.0f;
  for (const ImGuiCol grip : {ImGuiCol_ResizeGrip, ImGuiCol_ResizeGripHovered, ImGuiCol_ResizeGripActive})
    style.Colors[grip] = ImVec4(0, 0, 0, 0);
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

// The UI scale that suits the window: the monitor's content scale (not in scripted runs, whose
// figures must not depend on the machine), and at least the window height over 900 pixels
// (720p → 1, 1080p → 1.2, 4K → 2.4).
float FittedUiScale(GLFWwindow* window, bool scripted) {
  float content_scale = 1.0f;
  glfwGetWindowContentScale(window, &content_scale, nullptr);
  int fb_w = 0, fb_h = 0;
  glfwGetFramebufferSize(window, &fb_w, &fb_h);
  return std::clamp(std::max(scripted ? 1.0f : content_scale, std::round(float(fb_h) / 900.0f * 20.0f) / 20.0f), 1.0f,
                    3.0f);
}

// Ctrl + / Ctrl − / Ctrl 0 for the UI scale (0: the one fitted to the window); Ctrl+E the Export
// panel, Ctrl+S export again. The layout follows the scale on the same frame (ComputeLayout).
void HandleShortcuts(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl) return;
  if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD))
    state.ui_scale = std::min(MaxUiScale(io.DisplaySize), std::round((state.ui_scale + 0.1f) * 20.0f) / 20.0f);
  if (ImGui::IsKeyPressed(GLFW_KEY_MINUS) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT))
    state.ui_scale = std::max(0.5f, std::round((state.ui_scale - 0.1f) * 20.0f) / 20.0f);
  if (ImGui::IsKeyPressed(GLFW_KEY_0) || ImGui::IsKeyPressed(GLFW_KEY_KP_0))
    state.ui_scale = FittedUiScale(glfwGetCurrentContext(), state.scripted);
  if (ImGui::IsKeyPressed(GLFW_KEY_E, false)) state.show_export = !state.show_export;
  if (ImGui::IsKeyPressed(GLFW_KEY_S, false)) ExportWithLastSettings(state);
  // Undo and redo of the scene; in a text field the field's own undo of the typing (ImGui) applies.
  if (!io.WantTextInput && !io.KeyAlt) {
    if (ImGui::IsKeyPressed(GLFW_KEY_Z, false)) io.KeyShift ? Redo(state) : Undo(state);
    if (ImGui::IsKeyPressed(GLFW_KEY_Y, false) && !io.KeyShift) Redo(state);
  }
}

// The side panels' show flags, off while a presentation frame is drawn and back afterwards.
class HiddenPanels {
 public:
  explicit HiddenPanels(AppState& state)
      : flags_{&state.show_input, &state.show_model, &state.show_lessons, &state.show_analysis, &state.show_kv_cache,
               &state.show_export, &state.show_about, &state.show_keys, &state.show_checkpoint,
               &state.show_shapes_floating, &state.show_getting_started} {
    for (size_t i = 0; i < flags_.size(); ++i) saved_[i] = *flags_[i], *flags_[i] = false;
  }
  ~HiddenPanels() {
    for (size_t i = 0; i < flags_.size(); ++i) *flags_[i] = saved_[i];
  }
  HiddenPanels(const HiddenPanels&) = delete;
  HiddenPanels& operator=(const HiddenPanels&) = delete;

 private:
  std::array<bool*, 11> flags_;
  std::array<bool, 11> saved_{};
};

}  // namespace

// The type grows for the back row (a quarter larger than the scale fitted to the screen — larger and
// a sentence's key labels no longer fit its cells at 720p); leaving brings back the teacher's scale.
void SetPresenting(AppState& state, bool on) {
  if (state.presenting == on) return;
  state.presenting = on;
  if (on) {
    state.ui_scale_before_presenting = state.ui_scale;
    state.ui_scale = std::min(3.0f, std::round(FittedUiScale(glfwGetCurrentContext(), state.scripted) * 1.25f * 20.0f) / 20.0f);
  } else if (state.ui_scale_before_presenting > 0) {
    state.ui_scale = state.ui_scale_before_presenting;
  }
  state.reset_layout = true;
}

namespace {

// F11 enters or leaves presentation mode, Esc leaves it.
void HandlePresentationKeys(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsKeyPressed(GLFW_KEY_F11, false)) SetPresenting(state, !state.presenting);
  else if (state.presenting && !io.WantTextInput && ImGui::IsKeyPressed(GLFW_KEY_ESCAPE, false)) SetPresenting(state, false);
}

// Where the window was before it went full screen.
struct WindowedPlace {
  int x = 0, y = 0, width = 0, height = 0;
  bool page_asked = false;    // the browser: full screen was asked for (FollowPageFullScreen)
  bool page_entered = false;  // … and the page went full screen
};

// The browser's full screen while presenting (core/platform_page.h): asked for when presenting starts
// (F11 and the menu item are a user's action, which the browser requires), left when presenting ends,
// and presenting ends when the browser leaves full screen (Esc, the browser's own controls). A refusal
// is said in the status line; presenting then goes on inside the page.
void FollowPageFullScreen(AppState& state, WindowedPlace& place) {
  const PageFullScreen page = page_full_screen();
  if (!state.presenting) {
    if (place.page_asked && page == PageFullScreen::on) request_page_full_screen(false);
    place.page_asked = place.page_entered = false;
    return;
  }
  if (!place.page_asked) {
    request_page_full_screen(true);
    place.page_asked = true;
    place.page_entered = false;
  } else if (page == PageFullScreen::on) {
    place.page_entered = true;
  } else if (page == PageFullScreen::refused) {
    state.status = trf("The browser did not allow full screen (%s): presenting inside the page.",
                       page_full_screen_refusal().c_str());
  } else if (page == PageFullScreen::off && place.page_entered) {
    SetPresenting(state, false);
  }
}

// Full screen on the window's monitor while presenting (not in scripted runs, whose figures keep
// their --size): the one place the window changes monitor mode. In the browser: the page's full screen.
void FollowPresentation(GLFWwindow* window, AppState& state, WindowedPlace& place) {
  if (page_full_screen() != PageFullScreen::none) {
    if (!state.scripted) FollowPageFullScreen(state, place);
    return;
  }
  const bool full = glfwGetWindowMonitor(window) != nullptr;
  if (state.scripted || full == state.presenting) return;
  if (state.presenting) {
    GLFWmonitor* monitor = glfwGetPrimaryMonitor();
    const GLFWvidmode* video = monitor ? glfwGetVideoMode(monitor) : nullptr;
    if (!video) return;
    glfwGetWindowPos(window, &place.x, &place.y);
    glfwGetWindowSize(window, &place.width, &place.height);
    glfwSetWindowMonitor(window, monitor, 0, 0, video->width, video->height, video->refreshRate);
  } else {
    glfwSetWindowMonitor(window, nullptr, place.x, place.y, std::max(place.width, 320), std::max(place.height, 240), 0);
  }
}

// --keys FRAME:wheel=STEPS: a finite number of wheel steps (positive: away from the user, zoom in).
bool IsScriptedWheel(const std::string& what) {
  if (what.rfind("wheel=", 0) != 0 || what.size() == 6) return false;
  char* end = nullptr;
  const float steps = std::strtof(what.c_str() + 6, &end);
  return *end == 0 && std::isfinite(steps);
}

// --keys FRAME:KEY: the GLFW key codes of KEY ("ctrl+equal": left control and =); empty when unknown.
std::vector<int> ScriptedKeyCodes(const std::string& key) {
  std::vector<int> codes;
  std::string rest = key;
  if (rest.rfind("ctrl+", 0) == 0) {
    codes.push_back(GLFW_KEY_LEFT_CONTROL);
    rest = rest.substr(5);
  }
  if (rest.rfind("shift+", 0) == 0) {
    codes.push_back(GLFW_KEY_LEFT_SHIFT);
    rest = rest.substr(6);
  }
  const int code = rest == "equal" ? GLFW_KEY_EQUAL : rest == "minus" ? GLFW_KEY_MINUS : rest == "0" ? GLFW_KEY_0
                   : rest == "e"   ? GLFW_KEY_E
                   : rest == "z"   ? GLFW_KEY_Z
                   : rest == "y"   ? GLFW_KEY_Y
                   : rest == "f11"      ? GLFW_KEY_F11
                   : rest == "pagedown" ? GLFW_KEY_PAGE_DOWN
                   : rest == "pageup"   ? GLFW_KEY_PAGE_UP
                   : rest == "home"     ? GLFW_KEY_HOME
                   : rest == "end"      ? GLFW_KEY_END
                   : rest == "right"    ? GLFW_KEY_RIGHT
                   : rest == "left"     ? GLFW_KEY_LEFT
                   : rest == "space"    ? GLFW_KEY_SPACE
                                   : -1;
  if (code < 0) return {};
  codes.push_back(code);
  return codes;
}

void DrawViewWindow(AppState& state) {
  switch (state.scene.view.view) {
    case View::heads:
      DrawHeadsWindow(state);
      DrawQkPanel(state);
      DrawCompareWindow(state);
      break;
    case View::shapes: DrawShapesWindow(state, false); break;
    case View::relpos1d: DrawRelpos1dWindow(state); break;
    case View::relpos2d: DrawRelpos2dWindow(state); break;
    case View::conv: DrawConvWindow(state); break;
    case View::positions: DrawPositionsWindow(state); break;
  }
}

// ---- 0. flag handling ----------------------------------------------------------------------------

// What kind of run the window flags ask for.
struct RunMode {
  bool bench = false;       // --bench-json: the frame-time benchmark
  bool scripted = false;    // --screenshot or a benchmark: no saved state, fixed layout, exits by itself
  // --frames without --screenshot: an interactive run (saved state and all) that closes itself after
  // N frames — for demos and for testing what is remembered between runs.
  bool auto_close = false;
  std::vector<ImVec2> pointers;  // --pointer X,Y[;X,Y…]: one position per click, the last one kept
  struct Key {
    int frame = 0;
    std::string what;  // ctrl | enter | escape | tab | backspace | text=…
  };
  std::vector<Key> keys;  // --keys FRAME:WHAT,…
};

// A bad window flag is a usage error (InputError); a bad scene flag is shown in the window instead.
RunMode CheckWindowFlags(const WindowOptions& options) {
  RunMode mode;
  mode.bench = !options.bench_json.empty();
  mode.scripted = !options.screenshot.empty() || mode.bench;
  mode.auto_close = !mode.scripted && cli::flag_given(options.app, "--frames");
  require(options.frames >= 1 && options.frames <= 100000, "--frames must be between 1 and 100000");
  require(options.bench_changes >= 1 && options.bench_changes <= 10000, "--bench-changes must be between 1 and 10000");
  require(options.bench_fps >= 0 && options.bench_fps <= 1000, "--bench-fps must be between 0 (unpaced) and 1000");
  require(!cli::flag_given(options.app, "--layout-json") || !mode.bench, "--layout-json does not go with --bench-json");
  require(!options.layout_sweep || (!options.layout_json.empty() && !mode.scripted),
          "--layout-sweep needs --layout-json FILE and no --screenshot");
  require(!options.layout_live || (!options.layout_json.empty() && !mode.scripted),
          "--layout-live needs --layout-json FILE and no --screenshot");
  require(options.ui_scale == 0.0f || (std::isfinite(options.ui_scale) && options.ui_scale >= 0.5f && options.ui_scale <= 3.0f),
          "--ui-scale must be between 0.5 and 3");
  require(options.theme.empty() || options.theme == "light" || options.theme == "dark",
          "--theme must be light or dark, got '" + options.theme + "'");
  if (!options.language.empty()) parse_language(options.language);  // names the valid ones
  require(options.step >= 1 || !cli::flag_given(options.app, "--lesson"), "--step counts from 1");
  require(!cli::flag_given(options.app, "--step") || cli::flag_given(options.app, "--lesson"), "--step needs --lesson N");
  require(!cli::flag_given(options.app, "--layer") || !options.checkpoint.empty(), "--layer needs --checkpoint DIR");
  require(options.layer >= 0, "--layer counts from 0, got " + std::to_string(options.layer));
  for (const char* flag : {"--ablate", "--ablate-mode"})
    require(!cli::flag_given(options.app, flag) || !options.checkpoint.empty(), std::string(flag) + " needs --checkpoint DIR");
  require(options.ablate_mode == "zero" || options.ablate_mode == "mean",
          "--ablate-mode must be zero or mean, got \"" + options.ablate_mode + "\"");
  require(!cli::flag_given(options.app, "--why") || !options.checkpoint.empty(), "--why needs --checkpoint DIR");
  if (cli::flag_given(options.app, "--why")) (void)parse_why_cell(options.why);  // names the form
  require(options.save_scene.empty() || mode.scripted, "--save-scene needs --screenshot FILE.png");
  TrainingForm form;  // unknown keys and non-numbers are usage errors; bad values show in the window
  for (const std::string& kv : options.train_settings) apply_training_setting(form, kv);
  for (const std::string& a : options.train_actions)
    require(a == "start" || a == "compare" || a == "compare-no-softmax" || a == "pause" || a == "step" || a == "reset" || a.rfind("save:", 0) == 0 ||
                a.rfind("show:", 0) == 0,
            "--train-actions takes start, compare, compare-no-softmax, pause, step, reset, save:DIR and show:N; got '" + a + "'");
  require(options.train_actions.empty() || mode.scripted, "--train-actions needs --screenshot FILE.png");
  // "X,Y" or "X1,Y1;X2,Y2;…": the n-th position from two frames after the (n−1)-th click on.
  for (size_t start = 0; !options.pointer.empty() && start <= options.pointer.size();) {
    const size_t end = std::min(options.pointer.find(';', start), options.pointer.size());
    const std::string one = options.pointer.substr(start, end - start);
    float x = 0, y = 0;
    char comma = 0, extra = 0;
    require(std::sscanf(one.c_str(), "%f%c%f%c", &x, &comma, &y, &extra) == 3 && comma == ',' && std::isfinite(x) &&
                std::isfinite(y),
            "--pointer takes X,Y in window pixels (or X1,Y1;X2,Y2 to move after each click), got '" + options.pointer + "'");
    mode.pointers.push_back(ImVec2(x, y));
    start = end + 1;
  }
  require(options.keys.empty() || mode.scripted, "--keys needs --screenshot FILE.png");
  for (const std::string& k : options.keys) {
    const size_t colon = k.find(':');
    int frame = -1;
    char extra = 0;
    const std::string what = colon == std::string::npos ? "" : k.substr(colon + 1);
    require(colon != std::string::npos && std::sscanf(k.substr(0, colon).c_str(), "%d%c", &frame, &extra) == 1 &&
                frame >= 0 &&
                (what == "ctrl" || what == "enter" || what == "escape" || what == "tab" || what == "backspace" ||
                 what.rfind("text=", 0) == 0 || IsScriptedWheel(what) || !ScriptedKeyCodes(what).empty()),
            "--keys takes FRAME:ctrl, FRAME:enter, FRAME:escape, FRAME:tab, FRAME:backspace, FRAME:text=CHARACTERS, "
            "FRAME:ctrl+equal, FRAME:ctrl+minus, FRAME:ctrl+0, FRAME:ctrl+e, FRAME:ctrl+z, FRAME:ctrl+shift+z, FRAME:ctrl+y, FRAME:f11, FRAME:pagedown, "
            "FRAME:pageup, FRAME:home, FRAME:end, FRAME:right, FRAME:left, FRAME:space or FRAME:wheel=STEPS; got '" + k + "'");
    mode.keys.push_back({frame, what});
  }
  return mode;
}

// ---- 1. start-up -----------------------------------------------------------------------------------

// What the window starts from: the last session's preferences and the first scene.
struct Startup {
  explicit Startup(bool persist) : persistence(persist) {}
  Persistence persistence;
  WindowPreferences preferences;
  Language language = Language::en;
  WindowSize size;
  bool fit_size_to_screen = false;  // the size is the default: made smaller on a smaller screen
  Scene scene;
  std::string error;   // a refused scene flag (shown in the window)
  std::string status;  // the last scene's warnings (shown in the status line)
  // An interactive start with nothing saved (no scene, preferences or layout) and no scene flag: a
  // newcomer's, which opens on lesson 1 and Help → Getting started (InitState).
  bool first_start = false;
};

Startup LoadStartup(const cli::SceneOptions& scene_options, const WindowOptions& options, const RunMode& mode) {
  const bool scripted = mode.scripted;
  Startup startup(!scripted);
  const Persistence& persistence = startup.persistence;
  const WindowPreferences& preferences = startup.preferences = persistence.load_preferences();
  // The language first: the startup messages below (the last scene's warnings) are written in it.
  LoadTranslations();
  const Language language = !options.language.empty() ? parse_language(options.language)
                            : (!scripted && !preferences.language.empty()) ? parse_language(preferences.language)
                                                                            : Language::en;
  SetUiLanguage(language);
  startup.language = language;
  // Size: the flag, else the last session's (so its saved layout fits), else a default.
  WindowSize size = scripted ? WindowSize{1280, 720} : WindowSize{1600, 900};
  if (!options.size.empty()) size = ParseSize(options.size);
  else if (preferences.width > 0) size = {preferences.width, preferences.height};
  startup.size = size;
  startup.fit_size_to_screen = !scripted && options.size.empty() && preferences.width <= 0;
  Scene& scene = startup.scene;
  std::string& startup_error = startup.error;
  std::string& startup_status = startup.status;
  try {
    std::optional<Scene> last;
    if (!AnySceneFlag(scene_options)) last = persistence.load_scene(startup_status);
    startup.first_start = !scripted && !AnySceneFlag(scene_options) && !last && preferences.width <= 0 &&
                          !persistence.load_layout().has_value();
    if (last) {
      scene = *last;
    } else {
      scene = cli::build_window_scene(scene_options);  // `--view relpos2d` alone shows a grid
    }
  } catch (const InputError& e) {
    startup_error = e.what();
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return startup;
}

// The window and its OpenGL 3.3 core context; null (after saying why) when there is none. A default
// size larger than the screen's work area (a 1280×720 projector) is fitted to it.
GLFWwindow* OpenWindow(WindowSize size, bool fit_to_screen, bool scripted) {
  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "glfw error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "error: cannot open a window (no display?). Set DISPLAY, run under `xvfb-run -a`, or use a "
                         "subcommand such as `attnscope compute`.\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  int area_x = 0, area_y = 0, area_w = 0, area_h = 0;
  if (GLFWmonitor* monitor = fit_to_screen ? glfwGetPrimaryMonitor() : nullptr) {
    glfwGetMonitorWorkarea(monitor, &area_x, &area_y, &area_w, &area_h);
    if (area_w >= 320 && area_h >= 240) size = {std::min(size.width, area_w), std::min(size.height, area_h)};
  }
  GLFWwindow* window = glfwCreateWindow(size.width, size.height, "attnscope", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "error: cannot create an OpenGL 3.3 window (see the glfw error above)\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(scripted ? 0 : 1);
  return window;
}

// Dear ImGui with the saved layout (imgui.ini is written by us, atomically, not by ImGui).
void StartImGui(GLFWwindow* window, const Persistence& persistence) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::GetIO().ConfigWindowsResizeFromEdges = false;  // the layout sizes the panels
  if (const auto ini = persistence.load_layout()) ImGui::LoadIniSettingsFromMemory(ini->data(), ini->size());
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  if (clipboard_is_the_browsers()) {  // emscripten's GLFW has none: a text field's copy goes to the browser's
    static std::string copied;        // and a paste gives back what the window copied last
    ImGui::GetIO().SetClipboardTextFn = [](void*, const char* text) {
      copied = text ? text : "";
      copy_text_to_clipboard(copied);
    };
    ImGui::GetIO().GetClipboardTextFn = [](void*) { return copied.c_str(); };
  }
  InstallKeyQueue(window);  // a press released before the next frame is still seen (key_queue.h)
#ifdef __EMSCRIPTEN__
  ImGui_ImplOpenGL3_Init("#version 300 es");  // WebGL 2
#else
  ImGui_ImplOpenGL3_Init("#version 330 core");
#endif
}

// The state the windows share: flags, saved look, the first scene to the engine, and a lesson or
// scene file named on the command line.
void InitState(AppState& state, const Startup& startup, const WindowOptions& options, const RunMode& mode,
               GLFWwindow* window) {
  const bool scripted = mode.scripted;
  const WindowPreferences& preferences = startup.preferences;
  state.scene = startup.scene;
  state.scripted = scripted;
  state.status = startup.status;
  state.show_export = options.show_export;
  state.show_analysis = options.show_analysis;
  state.show_kv_cache = options.show_kv_cache;
  state.show_training = options.show_training;
  state.show_model_view = options.show_model_view;
  state.show_rollout = options.show_rollout;
  state.show_lens = options.show_lens;
  state.training.actions = options.train_actions;
  for (const std::string& kv : options.train_settings) apply_training_setting(state.training.form, kv);
  // A missing assets folder is said at once, in the About box that names the folders tried.
  state.show_about = options.show_about || !LocateAssets(state);
  state.language = startup.language;
  if (!scripted) state.input.recent_tokenizers = preferences.recent_tokenizers;
  RequestUiGlyphs(*state.fonts);
  // UI scale: the flag, else the saved one, else what suits the screen (FittedUiScale).
  const float fitted = FittedUiScale(window, scripted);
  state.ui_scale = options.ui_scale > 0                    ? options.ui_scale
                   : (!scripted && preferences.ui_scale > 0) ? preferences.ui_scale
                                                            : fitted;
  if (options.ui_scale <= 0 && (scripted || preferences.ui_scale <= 0)) state.fitted_ui_scale = fitted;
  state.light_theme = options.theme.empty() ? (scripted || preferences.light_theme) : options.theme == "light";
  // A saved layout fits the window size it was saved at; at another size (a --size flag, another
  // screen) the windows are laid out afresh, as after a resize.
  int window_w = 0, window_h = 0;
  glfwGetWindowSize(window, &window_w, &window_h);
  const bool layout_fits = preferences.width == window_w && preferences.height == window_h;
  state.reset_layout = !startup.persistence.load_layout().has_value() || !layout_fits;
  if (!options.layout_json.empty()) RecordTextsInto(&state.layout.texts);
  if (startup.error.empty()) {
    NoteEdit(state, Panel::startup);
  } else {
    state.error = startup.error;
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
  // A newcomer's first start (nothing saved, nothing asked for on the command line) opens on something
  // to understand — lesson 1's first step, its designed heads named, the Lessons panel in the left
  // column — with Getting started over it saying where the lessons are and how to present them.
  // A window asked for by name (--show-training, …) is something asked for too.
  const bool window_asked = options.show_export || options.show_analysis || options.show_kv_cache ||
                            options.show_training || options.show_model_view || options.show_about ||
                            options.show_rollout || options.show_lens;
  if (startup.first_start && options.lesson <= 0 && options.open_scene.empty() && options.scene_link.empty() &&
      options.compare_a.empty() &&
      options.checkpoint.empty() && !window_asked) {
    if (OpenLesson(state, 1, 0).empty()) state.show_input = state.show_model = false;
    state.show_getting_started = true;
  }
  state.figure_copy.site_url = options.site_url;
  // A link's scene (?scene= in the browser, --scene-link on the desktop); one that cannot be read says
  // why in the status line over the default scene.
  const bool link_given = !options.scene_link.empty() || (options.app && options.app->count("--scene-link") > 0);
  if (link_given && !OpenSceneLink(state, options.scene_link))
    std::fprintf(stderr, "error: %s\n", state.status.c_str());
  if (!options.open_scene.empty() && !OpenSceneFile(state, options.open_scene))
    std::fprintf(stderr, "error: %s\n", state.scene_dialog.message.c_str());
  if (!options.compare_a.empty()) {
    if (!KeepSceneFileAsA(state, options.compare_a, parse_compare_view(options.compare_view)))
      std::fprintf(stderr, "error: %s\n", state.status.c_str());
  }
  // The browser: a link whose parameters did not parse says so in the status line over the default
  // scene (the error line is the scene's, cleared by its first result).
  if (!options.link_error.empty())
    state.status = trf("The link's parameters were not used (%s): this is the default scene.", options.link_error.c_str());
  state.checkpoint.recent = startup.preferences.recent_checkpoints;
  state.checkpoint.layer = options.layer;  // kept below L when the model opens
  state.checkpoint.open_ablate = options.ablate;  // checked against the model when it opens
  state.checkpoint.open_ablate_mode = options.ablate_mode;
  if (!options.why.empty()) state.qk.open_cell = parse_why_cell(options.why);  // opened with the model
  if (!options.checkpoint.empty()) OpenCheckpoint(state, options.checkpoint);
  // A folder (or a file in one) dropped onto the window opens as a checkpoint, or as attentions computed
  // elsewhere (the loader tells them apart).
  glfwSetWindowUserPointer(window, &state);
  glfwSetDropCallback(window, [](GLFWwindow* w, int count, const char** paths) {
    if (count < 1) return;
    OpenCheckpoint(*static_cast<AppState*>(glfwGetWindowUserPointer(w)), paths[0]);
  });
  // The browser: a folder picked in the page (or dropped onto it) opens the same way once the page has
  // copied its files into memory; a folder the page refused says why in the Checkpoint window.
  set_picked_folder_handler({[&state](const std::string& dir) {
                               state.checkpoint.picker_refusal.reset();
                               OpenCheckpoint(state, dir);
                             },
                             [&state](const FolderRefusal& refusal) {
                               state.checkpoint.picker_refusal = refusal;
                               state.show_checkpoint = true;
                             }});
}

// ---- 2. one frame ----------------------------------------------------------------------------------

// What the loop carries from one frame to the next.
struct FrameLoop {
  FrameLoop(const RunMode& m, const WindowOptions& o, const AppState& state)
      : mode(m), options(o), applied_light(!state.light_theme), frames_wanted(std::max(o.frames, 2)),
        bench(o.bench_changes) {
    if (o.layout_sweep) sweep.emplace();
  }
  const RunMode& mode;
  const WindowOptions& options;
  float applied_scale = 0.0f;  // the UI scale and theme the style was built for
  bool applied_light;
  bool device_ready = false;   // the GL backend exists (after the first NewFrame): fonts may upload
  int frame = 0;               // frames shown (drawn or, in the browser, left as they were)
  int frames_since_result = 0;
  int frames_wanted;           // scripted: frames before the screenshot
  FrameBench bench;
  std::optional<LayoutSweep> sweep;  // --layout-sweep
  bool dropped_last_frame = false;
  ImVec2 last_display{0, 0};
  WindowSize framebuffer;      // of the last frame shown
  PictureChange picture;       // the browser: the last picture drawn (DrawPicture)
  bool pumped_work = false;    // the workers without threads (the browser) did some in the last frame
  WindowedPlace windowed;      // the window's place before presentation mode made it full screen

  // Settled: the newest result is on screen. A scripted figure also waits for the head statistics;
  // the benchmark, like a user, goes on once the heatmaps are there.
  bool settled(const ComputeWorker& worker) const {
    return (mode.bench ? !worker.busy() : worker.idle()) && frames_since_result >= 1;
  }
};

// a. Events: wait when idle so the window costs nothing while a teacher talks. Under way: a result to come, the
// first frames, a checkpoint opening, an edit waiting for a pause in typing (sent without another event).
bool UnderWay(const FrameLoop& loop, const ComputeWorker& worker, const AppState& state) {
  return !worker.idle() || loop.frame < 3 || !state.checkpoint.loading.empty() || state.scene_edited;
}
void WaitForEvents(const FrameLoop& loop, const ComputeWorker& worker, const AppState& state) {
  if (loop.mode.scripted || loop.mode.auto_close) glfwPollEvents();
  else if (UnderWay(loop, worker, state)) glfwWaitEventsTimeout(1.0 / 60.0);
  else glfwWaitEventsTimeout(0.5);
}

// b. The worker's newest result. A scripted run waits for it before its last frames.
// (With simulated clicks every frame waits, so each click lands on the current result.)
void TakeNewestResult(FrameLoop& loop, AppState& state) {
  const RunMode& mode = loop.mode;
  if (mode.scripted && !mode.bench &&
      (loop.frame >= loop.frames_wanted - 2 || !loop.options.clicks.empty() || !loop.options.keys.empty())) {
    state.checkpoint.loader->wait_until_idle();
    // A checkpoint that just opened is submitted at the end of this frame; the wait is then the next one's.
    if (!TakeCheckpoint(state)) state.worker->wait_until_prefetched();  // a long input's other heads too
  } else {
    TakeCheckpoint(state);
  }
  const bool got_result = TakeResult(state);
  UploadTextures(state);
  loop.frames_since_result = got_result ? 0 : loop.frames_since_result + 1;
}

// c. Look: style and fonts follow the UI scale and theme; new text may need new glyphs.
void ApplyLook(FrameLoop& loop, AppState& state) {
  // A window made smaller (or a scale saved on a larger screen) holds no more than MaxUiScale.
  int width = 0, height = 0;
  glfwGetWindowSize(glfwGetCurrentContext(), &width, &height);
  if (width > 0 && height > 0) state.ui_scale = std::min(state.ui_scale, MaxUiScale(ImVec2(float(width), float(height))));
  if (state.ui_scale != loop.applied_scale || state.light_theme != loop.applied_light) {
    ApplyStyle(state.light_theme, state.ui_scale);
    loop.applied_scale = state.ui_scale;
    loop.applied_light = state.light_theme;
  }
  state.fonts->rebuild_if_needed(std::round(16.0f * state.ui_scale), loop.device_ready);
}

// A scripted run's frame before this one, for the layout JSON's "earlier_frames" (the first 120 frames: a
// model's first frames are what tests look for).
void KeepEarlierFrame(const FrameLoop& loop, AppState& state) {
  if (!loop.mode.scripted || loop.mode.bench || loop.options.layout_json.empty() || loop.frame == 0 ||
      state.earlier_frames.size() >= 120)
    return;
  AppState::EarlierFrame& f = state.earlier_frames.emplace_back();
  f.frame = loop.frame - 1;
  f.checkpoint_current = state.layout.checkpoint_current;
  for (const LayoutRecord::Text& t : state.layout.texts) f.texts.emplace_back(t.window, t.text);
}

// d. The frame: every window reads the state and edits the scene.
void DrawFrame(FrameLoop& loop, AppState& state) {
  const RunMode& mode = loop.mode;
  ImGuiIO& io = ImGui::GetIO();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (mode.scripted) {  // the pointer of a headless display must not hover anything in a figure
    const std::vector<int>& clicks = loop.options.clicks;
    // The pointer moves on once a click's button is up again (ImGui presses a button on release).
    const size_t clicked = size_t(std::count_if(clicks.begin(), clicks.end(), [&](int f) { return f + 1 < loop.frame; }));
    io.MousePos = mode.pointers.empty() ? ImVec2(-FLT_MAX, -FLT_MAX)
                                        : mode.pointers[std::min(clicked, mode.pointers.size() - 1)];
    for (bool& down : io.MouseDown) down = false;
    io.MouseDown[0] = std::find(clicks.begin(), clicks.end(), loop.frame) != clicks.end();
    // Keys as GLFW's callbacks would report them (ImGui 1.86 reads io.KeysDown by GLFW key code).
    io.KeyCtrl = false;
    for (const int key : {GLFW_KEY_ENTER, GLFW_KEY_ESCAPE, GLFW_KEY_TAB, GLFW_KEY_BACKSPACE}) io.KeysDown[key] = false;
    for (const RunMode::Key& k : mode.keys) {
      if (k.frame != loop.frame) continue;
      if (k.what == "ctrl") io.KeyCtrl = true;
      else if (k.what == "enter") io.KeysDown[GLFW_KEY_ENTER] = true;
      else if (k.what == "escape") io.KeysDown[GLFW_KEY_ESCAPE] = true;
      else if (k.what == "tab") io.KeysDown[GLFW_KEY_TAB] = true;
      else if (k.what == "backspace") io.KeysDown[GLFW_KEY_BACKSPACE] = true;
      else if (k.what.rfind("text=", 0) == 0) io.AddInputCharactersUTF8(k.what.substr(5).c_str());
      else if (k.what.rfind("wheel=", 0) == 0) io.MouseWheel += std::strtof(k.what.c_str() + 6, nullptr);
    }
    // Shortcuts (ctrl+equal, …) go through the GLFW backend's own key callback, as a keyboard's do: down
    // on their frame, up on the next.
    for (const RunMode::Key& k : mode.keys) {
      const std::vector<int> codes = ScriptedKeyCodes(k.what);
      const int action = k.frame == loop.frame ? GLFW_PRESS : k.frame + 1 == loop.frame ? GLFW_RELEASE : -1;
      if (codes.empty() || action < 0) continue;
      const int mods = codes.front() == GLFW_KEY_LEFT_CONTROL ? GLFW_MOD_CONTROL : 0;
      for (const int code : codes)
        ImGui_ImplGlfw_KeyCallback(glfwGetCurrentContext(), code, glfwGetKeyScancode(code), action, mods);
    }
  }
  FeedQueuedKeys(glfwGetCurrentContext());
  ImGui::NewFrame();
  loop.device_ready = true;
  state.framebuffer_scale = io.DisplayFramebufferScale;
  // The panels follow the window's size by themselves (ComputeLayout, every frame); a dialog is
  // centred again (e.g. when the window moves to a projector of another size).
  if (loop.frame > 0 && (io.DisplaySize.x != loop.last_display.x || io.DisplaySize.y != loop.last_display.y))
    state.reset_layout = true;
  loop.last_display = io.DisplaySize;
  KeepEarlierFrame(loop, state);
  state.layout.clear();
  state.layout.checkpoint_current = state.checkpoint.current();
  ClearControls();
  HandleShortcuts(state);
  HandlePresentationKeys(state);
  HandleLessonKeys(state);
  SetUiLanguage(state.language);
  // Presentation: no menu bar, and the side panels are hidden for this frame (each window still does
  // its per-frame work, e.g. a finished export's message); the view fills the screen.
  std::optional<HiddenPanels> hidden;
  if (state.presenting) hidden.emplace(state);
  else {
    DrawMenuBar(state);
    KeepWindowsBelowMenuBar(state);
  }
  UpdateLessonCheckpoint(state);  // before the views draw, so they show what the lesson step set
  DrawInputWindow(state);
  DrawModelWindow(state);
  // Training and the Model view take the view's place while open: the view is not drawn under them.
  if (ComputeLayout(LayoutInputOf(state)).view_shown) DrawViewWindow(state);
  const bool lessons_were_open = state.show_lessons;
  DrawLessonsWindow(state);
  // Closing the Lessons panel gives the left column back to Input and Model (as the menu does).
  if (lessons_were_open && !state.show_lessons && !state.show_input && !state.show_model)
    state.show_input = state.show_model = true;
  DrawShapesWindow(state, true);
  DrawAnalysisWindow(state);
  DrawKvCacheWindow(state);
  DrawTrainingWindow(state);
  DrawExportWindow(state);
  DrawAboutWindow(state);
  DrawKeysWindow(state);
  DrawGettingStartedWindow(state);
  DrawCheckpointWindow(state);
  DrawModelViewWindow(state);
  DrawRolloutWindow(state);
  DrawLensWindow(state);
  DrawLessonBanner(state);
  DrawSceneDialogs(state);
  DrawTranslationNotice(state);
  hidden.reset();
  RecordHistory(state, FrameHadUserInput());  // after every window: what this frame changed is one step
  RecordWindows(state);
  state.reset_layout = false;
  if (mode.bench) loop.bench.before_submit(state, loop.settled(*state.worker));
  ImGui::Render();
}

// e. Edited settings go to the engine (the newest wins). A result that comes back within a few
//    milliseconds (small T) is shown at once: this frame is dropped before rendering (returns true)
//    and the next one, built right away with the result, is the one that reaches the screen.
bool SubmitEdits(FrameLoop& loop, AppState& state) {
  const RunMode& mode = loop.mode;
  const uint64_t submitted_before = state.submitted_generation;
  SubmitIfEdited(state);
  const bool just_submitted = state.submitted_generation != submitted_before;
  if (mode.bench) loop.bench.after_submit(state);
  if (just_submitted && !loop.dropped_last_frame && !(mode.scripted && !mode.bench) &&
      state.worker->wait_for_result(std::chrono::milliseconds(4))) {
    loop.dropped_last_frame = true;
    return true;
  }
  loop.dropped_last_frame = false;
  return false;
}

// f. Render into the back buffer, where it changes what is on screen. Returns the framebuffer's size.
// The browser draws a frame only when its picture changed (platform_page.h): everything the picture is made
// of — the framebuffer's size, the clear colour, the textures' and the font atlas's changes, every draw
// list's vertices, indices and commands — against the last frame's, byte for byte (core/picture_change.h).
// A scripted run reads its back buffer for the screenshot, so it draws every frame.
bool PictureChanged(FrameLoop& loop, const FontAtlas& fonts, WindowSize fb, const ImVec4& clear) {
  if (loop.mode.scripted || !frames_drawn_only_when_changed()) return true;
  PictureChange& c = loop.picture;
  c.add_value(fb.width);
  c.add_value(fb.height);
  c.add(&clear, sizeof clear);
  c.add_value(texture_changes());
  c.add_value(fonts.generation());
  const ImDrawData* d = ImGui::GetDrawData();
  c.add_value(d != nullptr);
  if (d) {
    c.add(&d->DisplayPos, sizeof d->DisplayPos);
    c.add(&d->DisplaySize, sizeof d->DisplaySize);
    c.add(&d->FramebufferScale, sizeof d->FramebufferScale);
    c.add_value(d->CmdListsCount);
    for (int i = 0; i < d->CmdListsCount; ++i) {
      const ImDrawList* list = d->CmdLists[i];
      c.add_value(list->VtxBuffer.Size);
      c.add(list->VtxBuffer.Data, size_t(list->VtxBuffer.Size) * sizeof(ImDrawVert));
      c.add_value(list->IdxBuffer.Size);
      c.add(list->IdxBuffer.Data, size_t(list->IdxBuffer.Size) * sizeof(ImDrawIdx));
      c.add_value(list->CmdBuffer.Size);
      for (const ImDrawCmd& cmd : list->CmdBuffer) {
        c.add(&cmd.ClipRect, sizeof cmd.ClipRect);
        c.add_value(cmd.TextureId);
        c.add_value(cmd.VtxOffset);
        c.add_value(cmd.IdxOffset);
        c.add_value(cmd.ElemCount);
        c.add_value(cmd.UserCallback);
        c.add_value(cmd.UserCallbackData);
      }
    }
  }
  return c.finish();
}

WindowSize DrawPicture(FrameLoop& loop, AppState& state, const FontAtlas& fonts, GLFWwindow* window) {
  WindowSize fb;
  glfwGetFramebufferSize(window, &fb.width, &fb.height);
  const ImVec4 clear = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  if (!PictureChanged(loop, fonts, fb, clear)) return fb;
  glViewport(0, 0, fb.width, fb.height);
  glClearColor(clear.x, clear.y, clear.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  ++state.frames_drawn;
  return fb;
}

// ---- 3. scripted finish ----------------------------------------------------------------------------

// g. A scripted figure is done after the wanted frames, once the result has been on screen for a frame.
bool ScriptedRunDone(const FrameLoop& loop, const AppState& state) {
  ScriptedTrainingPause(state);
  return loop.mode.scripted && !loop.mode.bench && loop.frame >= loop.frames_wanted && loop.settled(*state.worker) &&
         !ExportRunning(state) && !FigureCopyRunning(state) && !TrainingBusy(state) && !state.checkpoint.loader->loading() &&
         state.checkpoint.loading.empty() && !state.scene_edited && !RolloutBusy(state);
}

// Writes the screenshot of the back buffer, the scene and the layout JSON. Returns the exit code.
int FinishScriptedRun(AppState& state, const WindowOptions& options, const std::string& startup_error, WindowSize fb) {
  if (!state.error.empty() && state.error != startup_error) std::fprintf(stderr, "error: %s\n", state.error.c_str());
  try {
    const std::vector<unsigned char> pixels = read_back_buffer(fb.width, fb.height);
    WriteScreenshot(options.screenshot, fb.width, fb.height, pixels);
    if (!options.save_scene.empty() && !SaveSceneFile(state, options.save_scene))
      throw InputError(state.scene_dialog.message);
    if (!options.layout_json.empty()) WriteLayoutJson(options.layout_json, state, fb.width, fb.height);
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}

// The benchmark times each frame once it is on screen. Returns true when it has timed enough.
bool BenchFrameDone(FrameLoop& loop, const AppState& state, std::chrono::steady_clock::time_point frame_start) {
  gl_finish();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - frame_start).count();
  if (loop.bench.after_frame(state, ms, loop.frame >= 3 && loop.settled(*state.worker))) return true;
  // Xvfb has no vsync: wait out the rest of the frame as a 60 Hz display would, so that the
  // worker shares the cores with the renderer as it does on a real screen.
  if (loop.options.bench_fps > 0)
    std::this_thread::sleep_until(frame_start + std::chrono::microseconds(1000000 / loop.options.bench_fps));
  return false;
}

// Writes the benchmark's timings. Returns the exit code.
int FinishBench(FrameLoop& loop, const AppState& state) {
  BenchTimings& timings = loop.bench.timings();
  timings.texture_uploads = state.textures.uploads;
  try {
    WriteBenchJson(loop.options.bench_json, timings);
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}

// --layout-sweep: records the screen once the newest edit's result is on it, then shows the next.
void SweepLayouts(FrameLoop& loop, AppState& state) {
  if (!loop.sweep) return;
  loop.sweep->after_frame(state, loop.settled(*state.worker) && state.result_generation >= state.submitted_generation &&
                                     !RolloutBusy(state));
}

// --layout-live: the layout JSON of each frame shown (about 40 kB; a failed write goes to stderr: the test
// reading it then times out and says so).
void WriteLiveLayout(const FrameLoop& loop, const AppState& state) {
  if (!loop.options.layout_live) return;
  try {
    WriteLayoutJson(loop.options.layout_json, state, loop.framebuffer.width, loop.framebuffer.height, nullptr, loop.frame);
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
}

// An interactive run with --frames N closes itself after N frames once the result is on screen, and
// after the layout sweep's last screen when there is one.
bool AutoCloseNow(const FrameLoop& loop, const AppState& state) {
  return loop.frame >= loop.options.frames && state.worker->idle() && state.checkpoint.loading.empty() &&
         !state.scene_edited && (!loop.sweep || loop.sweep->done());
}

// An interactive run's --layout-json, written when the window closes. Returns the exit code.
int FinishInteractiveRun(const FrameLoop& loop, const AppState& state) {
  try {
    WriteLayoutJson(loop.options.layout_json, state, loop.framebuffer.width, loop.framebuffer.height,
                    loop.sweep ? &*loop.sweep : nullptr, loop.options.layout_live ? loop.frame : -1);
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}

// ---- 4. saving the session -------------------------------------------------------------------------

// h. The layout, when ImGui says it changed (a save failure goes to the status line).
void SaveLayoutIfChanged(AppState& state, const Persistence& persistence) {
  ImGuiIO& io = ImGui::GetIO();
  if (!io.WantSaveIniSettings) return;
  size_t ini_size = 0;
  const char* ini = ImGui::SaveIniSettingsToMemory(&ini_size);
  if (const std::string failure = persistence.save_layout(std::string(ini, ini_size)); !failure.empty())
    state.status = failure;
  io.WantSaveIniSettings = false;
}

// Remembers this session (interactive runs only): layout, scene and preferences.
void SaveSession(const AppState& state, const Startup& startup, GLFWwindow* window) {
  const Persistence& persistence = startup.persistence;
  size_t ini_size = 0;
  const char* ini = ImGui::SaveIniSettingsToMemory(&ini_size);
  persistence.save_layout(std::string(ini, ini_size));
  if (startup.error.empty() || state.result_generation > 0) persistence.save_scene(state.scene);
  int window_w = 0, window_h = 0;
  glfwGetWindowSize(window, &window_w, &window_h);
  // A scale nobody chose (the one fitted at start) is not remembered: the next start fits its own
  // screen (1.2 on a 1080p laptop, 1 on a 720p projector).
  const float chosen_scale = state.ui_scale == state.fitted_ui_scale ? 0.0f : state.ui_scale;
  persistence.save_preferences(
      {chosen_scale, state.light_theme, window_w, window_h, to_string(state.language), state.input.recent_tokenizers,
       state.checkpoint.recent});
}

// The browser (session_saved_while_running): a page is left, never closed, so its session is saved
// while it runs — at most every 2 seconds, when the scene or a preference changed — and handed to the
// browser's storage (keep_config_folder), so that a reload or the next visit opens as it was left.
struct RunningSave {
  std::chrono::steady_clock::time_point last{};
  std::string saved;  // what was saved last: the scene and the preferences, as text
};
void SaveSessionWhileRunning(const AppState& state, const Startup& startup, GLFWwindow* window, RunningSave& save) {
  const auto now = std::chrono::steady_clock::now();
  if (!startup.persistence.enabled() || now - save.last < std::chrono::seconds(2)) return;
  save.last = now;
  const float chosen_scale = state.ui_scale == state.fitted_ui_scale ? 0.0f : state.ui_scale;
  std::string what = scene_to_json(state.scene).dump() + "|" + std::to_string(chosen_scale) + "|" +
                     std::to_string(state.light_theme) + "|" + to_string(state.language);
  for (const std::string& r : state.input.recent_tokenizers) what += "|" + r;
  for (const std::string& r : state.checkpoint.recent) what += "|" + r;
  if (what == save.saved) return;
  save.saved = std::move(what);
  SaveSession(state, startup, window);
  keep_config_folder();
}

// SIGTERM or SIGINT (Ctrl+C in the terminal, a test ending the window) closes an interactive window as its
// close button does: the session is saved and everything is freed (the loop wakes at least twice a second).
volatile std::sig_atomic_t close_requested = 0;
void RequestClose(int) { close_requested = 1; }

// Tear down in reverse.
void TearDown(GLFWwindow* window) {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

}  // namespace

// ---- run_window --------------------------------------------------------------------------------------

namespace {

// Everything a window keeps from its first frame to its last, made in this order (the workers before
// the state that points at them).
struct Session {
  Session(const RunMode& m, const WindowOptions& o, const Startup& s, GLFWwindow* w)
      : mode(m), options(o), startup(s), window(w), worker([] { glfwPostEmptyEvent(); }),
        loader([] { glfwPostEmptyEvent(); }) {
    fonts.request_text(startup.scene.input.text);
    state.worker = &worker;
    state.checkpoint.loader = &loader;
    state.fonts = &fonts;
    InitState(state, startup, options, mode, window);
    loop.emplace(mode, options, state);
  }
  const RunMode& mode;
  const WindowOptions& options;
  const Startup& startup;
  GLFWwindow* window;
  FontAtlas fonts;
  ComputeWorker worker;
  CheckpointLoader loader;
  AppState state;
  std::optional<FrameLoop> loop;
  RunningSave running_save;  // the browser's (SaveSessionWhileRunning)
  int exit_code = 0;
};

// One frame: false once the window is done (its exit code in session.exit_code).
bool Frame(Session& session) {
  FrameLoop& loop = *session.loop;
  AppState& state = session.state;
  GLFWwindow* window = session.window;
  const RunMode& mode = session.mode;
  const auto frame_start = std::chrono::steady_clock::now();
  WaitForEvents(loop, session.worker, state);
  const auto work_start = std::chrono::steady_clock::now();
  // Without threads (the browser) the workers run here, in a share of the frame (worker_thread.h).
  loop.pumped_work = pump_workers(std::chrono::milliseconds(25));
  TakeNewestResult(loop, state);
  if (!loop.sweep) FollowPresentation(window, state, loop.windowed);  // a sweep keeps the window's size
  ApplyLook(loop, state);
  DrawFrame(loop, state);
  if (SubmitEdits(loop, state)) return true;  // dropped: the next frame shows the result at once
  loop.framebuffer = DrawPicture(loop, state, session.fonts, window);
  ++loop.frame;
  if (ScriptedRunDone(loop, state)) {
    session.exit_code = FinishScriptedRun(state, session.options, session.startup.error, loop.framebuffer);
    return false;
  }
  if (state.result_generation > 0)
    state.slowest_frame_work_ms = std::max(
        state.slowest_frame_work_ms,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - work_start).count());
  glfwSwapBuffers(window);
  session.worker.presented(state.result_generation);
  SweepLayouts(loop, state);
  WriteLiveLayout(loop, state);
  if (mode.auto_close && AutoCloseNow(loop, state)) glfwSetWindowShouldClose(window, GLFW_TRUE);
  if (mode.bench && BenchFrameDone(loop, state, frame_start)) return false;
  SaveLayoutIfChanged(state, session.startup.persistence);
  if (session_saved_while_running() && !mode.scripted)
    SaveSessionWhileRunning(state, session.startup, window, session.running_save);
  return !glfwWindowShouldClose(window) && !close_requested;
}

// After the last frame: the benchmark's or the layout's file, and what the next start restores.
void Finish(Session& session) {
  if (session.mode.bench) session.exit_code = FinishBench(*session.loop, session.state);
  if (!session.mode.scripted && !session.options.layout_json.empty())
    session.exit_code = FinishInteractiveRun(*session.loop, session.state);
  RecordTextsInto(nullptr);
  set_picked_folder_handler({});  // it points at this session's state
  // Remember this session while the GL context lives (the textures are freed with the state).
  if (!session.mode.scripted) SaveSession(session.state, session.startup, session.window);
}

}  // namespace

#ifdef __EMSCRIPTEN__
namespace {
// The browser's WaitForEvents: emscripten's GLFW cannot wait, the page is called each animation frame. A frame is
// built at once after anything the user or the browser did (index.html's listeners set window.attnscopeInput)
// and while something is under way or the workers without threads have work (training, an export); otherwise
// ten a second, so a page left open while a teacher talks costs little (the desktop waits up to half a second),
// and what the browser answers without an event (a clipboard's promise) is seen within 100 ms.
bool FrameDue(const Session& session) {
  static std::chrono::steady_clock::time_point last{};
  const bool input = EM_ASM_INT({
    const input = window.attnscopeInput === true;
    window.attnscopeInput = false;
    return input;
  }) != 0;
  const auto now = std::chrono::steady_clock::now();
  const FrameLoop& loop = *session.loop;
  const bool due = session.mode.scripted || session.mode.auto_close || input || loop.pumped_work ||
                   UnderWay(loop, session.worker, session.state) || TrainingBusy(session.state) ||
                   now - last >= std::chrono::milliseconds(100);
  if (due) last = now;
  return due;
}
}  // namespace

// The browser asks each animation frame whether a frame is due (FrameDue) and builds it; the window lives as long
// as the page (the session is never destroyed: the tab's closing frees it). A scripted run (the frame-time
// benchmark of bench/web_settings_change.mjs) ends as on the desktop: its last frame writes its file, and the
// page stops drawing; a user's page never stops.
int run_window(const cli::SceneOptions& scene_options, const WindowOptions& options) {
  static const RunMode mode = CheckWindowFlags(options);
  static const Startup startup = LoadStartup(scene_options, options, mode);
  GLFWwindow* window = OpenWindow(startup.size, startup.fit_size_to_screen, mode.scripted);
  if (!window) return 1;
  StartImGui(window, startup.persistence);
  auto* session = new Session(mode, options, startup, window);
  emscripten_set_main_loop_arg(
      [](void* s) {
        Session& session = *static_cast<Session*>(s);
        if (!FrameDue(session)) return;
        if (!Frame(session) && session.mode.scripted) {
          Finish(session);
          emscripten_cancel_main_loop();
        }
      },
      session, 0, false);
  return 0;
}
#else
int run_window(const cli::SceneOptions& scene_options, const WindowOptions& options) {
  const RunMode mode = CheckWindowFlags(options);
  const Startup startup = LoadStartup(scene_options, options, mode);
  GLFWwindow* window = OpenWindow(startup.size, startup.fit_size_to_screen, mode.scripted);
  if (!window) return 1;
  StartImGui(window, startup.persistence);
  int exit_code = 0;
  {
    Session session(mode, options, startup, window);
    if (!mode.scripted) {
      std::signal(SIGTERM, RequestClose);
      std::signal(SIGINT, RequestClose);
    }
    while (!glfwWindowShouldClose(window) && !close_requested && Frame(session)) {
    }
    Finish(session);
    exit_code = session.exit_code;
  }
  TearDown(window);
  return exit_code;
}
#endif

}  // namespace attnscope::gui
