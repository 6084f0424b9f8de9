#include "core/platform_clipboard.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

extern char** environ;

namespace attnscope {
namespace {

// The executable `name` on PATH, or "" when there is none.
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string full = dir + "/" + name;
    if (access(full.c_str(), X_OK) == 0) return full;
    start = end + 1;
  }
  return "";
}

bool set(const char* variable) {
  const char* v = std::getenv(variable);
  return v && *v;
}

}  // namespace

ClipboardOutcome copy_png_to_clipboard(const std::string& png) {
  ClipboardOutcome out;
  const bool wayland = set("WAYLAND_DISPLAY");
  if (!wayland && !set("DISPLAY")) {
    out.problem = ClipboardProblem::no_display;
    return out;
  }
  std::string tool = wayland ? "wl-copy" : "xclip";
  std::string exe = find_on_path(tool);
  // Wayland without wl-copy: XWayland's clipboard (xclip), which the compositor shares with Wayland.
  if (exe.empty() && wayland && set("DISPLAY") && !find_on_path("xclip").empty()) {
    tool = "xclip";
    exe = find_on_path(tool);
  }
  out.tool = tool;
  out.package = tool == "wl-copy" ? "wl-clipboard" : "xclip";
  if (exe.empty()) {
    out.problem = ClipboardProblem::missing_tool;
    return out;
  }
  std::vector<std::string> args = tool == "wl-copy"
                                      ? std::vector<std::string>{exe, "--type", "image/png"}
                                      : std::vector<std::string>{exe, "-selection", "clipboard", "-t", "image/png", "-i"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // A tool that dies before reading everything must not end attnscope with SIGPIPE.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    out.problem = ClipboardProblem::no_pipe;
    out.detail = std::strerror(errno);
    return out;
  }
  // The tool's stdin is the pipe; its stdout and stderr go nowhere, so that the background server it
  // leaves behind holds none of attnscope's own streams open.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  if (spawned != 0) {
    close(fds[1]);
    out.problem = ClipboardProblem::cannot_start;
    out.detail = std::strerror(spawned);
    return out;
  }
  size_t written = 0;
  while (written < png.size()) {
    const ssize_t n = write(fds[1], png.data() + written, png.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += size_t(n);
  }
  close(fds[1]);
  // The tool forks its selection server and exits once it has the bytes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    out.problem = ClipboardProblem::too_slow;
    return out;
  }
  if (written < png.size()) {
    out.problem = ClipboardProblem::short_read;
    return out;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.problem = ClipboardProblem::tool_failed;
    out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace attnscope
