// attnscope — one executable, two faces.
//   attnscope                    → the window (app/gui), on the default or given scene
//   attnscope <command> [flags]  → the command line (app/cli/cmd_*.cpp): compute, relpos, conv, …
// Phases: 1. declare flags and subcommands  2. parse  3. run the command or open the window.
// Every InputError ends as one line "error: …" on stderr and exit code 2.
#include <CLI/CLI.hpp>
#include <malloc.h>

#include <cstdio>
#include <exception>

#include "attnscope/core/error.h"
#include "cli/commands.h"
#include "core/version.h"
#include "core/scene_options.h"
#ifdef ATTNSCOPE_WITH_GUI
#include "gui/window_main.h"
#endif

int main(int argc, char** argv) {
  // Keep freed tensor memory for the next analysis instead of returning it to the kernel: every
  // slider move allocates [H, T, T] tensors again, and fresh pages cost more than the maths.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // 1. Flags and subcommands.
  CLI::App root{"attnscope — see attention: single-head, MHA, MQA, GQA and relative-position heads"};
  root.set_version_flag("--version", attnscope::version_line(), "Print the version and the git revision it was built from");
  for (auto add : attnscope::cli::command_registry()) add(root);
  attnscope::cli::SceneOptions scene_options;
  attnscope::cli::add_scene_options(root, scene_options, attnscope::cli::flags_all);
#ifdef ATTNSCOPE_WITH_GUI
  attnscope::gui::WindowOptions window_options;
  attnscope::gui::add_window_options(root, window_options);
#endif

  // 2. Parse. CLI11 reports unknown flags and missing values itself (exit code 2 for usage errors).
  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return root.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const attnscope::InputError& e) {  // raised by a subcommand's callback
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  if (!root.get_subcommands().empty()) return 0;  // a subcommand ran in its callback

  // 3. No subcommand: the window.
#ifdef ATTNSCOPE_WITH_GUI
  try {
    return attnscope::gui::run_window(scene_options, window_options);
  } catch (const attnscope::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
#else
  std::fprintf(stderr,
               "error: this attnscope was built without the window (ATTNSCOPE_BUILD_APP=OFF); run a "
               "subcommand, e.g. `attnscope compute --text \"The cat sat.\" --out out/` (see --help)\n");
  return 2;
#endif
}
