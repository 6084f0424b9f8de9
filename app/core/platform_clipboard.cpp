#include "core/platform_clipboard.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>

#include <vector>

namespace attnscope {
namespace {

// Starts the write (`kind` 0: PNG bytes, 1: UTF-8 text); `window.attnscopeClipboard` holds its answer:
// null while the browser has not answered, "" when it wrote, else its error. Returns 0 when started, 1
// without the Clipboard API (not a secure context), 2 without ClipboardItem (no images).
int start_write(const std::string& bytes, int kind) {
  return EM_ASM_INT(
      {
        const clip = navigator.clipboard;
        if (!clip || !window.isSecureContext) return 1;
        if ($2 === 0 && (typeof ClipboardItem === 'undefined' || !clip.write)) return 2;
        const data = HEAPU8.slice($0, $0 + $1);
        window.attnscopeClipboard = null;
        const written = $2 === 0 ? clip.write([new ClipboardItem({'image/png' : new Blob([data], {type : 'image/png'})})])
                                 : clip.writeText(new TextDecoder().decode(data));
        written.then(() => { window.attnscopeClipboard = ''; },
                     (e) => { window.attnscopeClipboard = String((e && e.name) || 'Error') + ': ' + String((e && e.message) || e); });
        return 0;
      },
      bytes.data(), int(bytes.size()), kind);
}

ClipboardOutcome start(const std::string& bytes, int kind) {
  ClipboardOutcome out;
  out.tool = "navigator.clipboard";
  switch (start_write(bytes, kind)) {
    case 0: out.pending = true; break;
    case 1: out.problem = ClipboardProblem::insecure_page; break;
    default: out.problem = ClipboardProblem::no_image_api; break;
  }
  return out;
}

}  // namespace

ClipboardOutcome copy_png_to_clipboard(const std::string& png) { return start(png, 0); }
ClipboardOutcome copy_text_to_clipboard(const std::string& text) { return start(text, 1); }

std::optional<ClipboardOutcome> finished_clipboard_write() {
  // -1: no answer yet (or no write), else the length of the answer ("" : written).
  const int length = EM_ASM_INT({
    const a = window.attnscopeClipboard;
    return typeof a === 'string' ? lengthBytesUTF8(a) : -1;
  });
  if (length < 0) return std::nullopt;
  std::vector<char> text(size_t(length) + 1);
  EM_ASM(
      {
        stringToUTF8(window.attnscopeClipboard, $0, $1);
        window.attnscopeClipboard = undefined;  // answered once
      },
      text.data(), int(text.size()));
  ClipboardOutcome out;
  out.tool = "navigator.clipboard";
  out.ok = length == 0;
  if (!out.ok) {
    out.problem = ClipboardProblem::refused;
    out.detail = text.data();
  }
  return out;
}

bool clipboard_is_the_browsers() { return true; }

}  // namespace attnscope

#else  // the desktop

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

namespace {

// Hands `bytes` to the session's clipboard tool as `wayland_type` (wl-copy) or `x11_type` (xclip).
ClipboardOutcome copy_to_clipboard(const std::string& bytes, const char* wayland_type, const char* x11_type) {
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
                                      ? std::vector<std::string>{exe, "--type", wayland_type}
                                      : std::vector<std::string>{exe, "-selection", "clipboard", "-t", x11_type, "-i"};
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
  while (written < bytes.size()) {
    const ssize_t n = write(fds[1], bytes.data() + written, bytes.size() - written);
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
  if (written < bytes.size()) {
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

}  // namespace

ClipboardOutcome copy_png_to_clipboard(const std::string& png) { return copy_to_clipboard(png, "image/png", "image/png"); }

ClipboardOutcome copy_text_to_clipboard(const std::string& text) {
  return copy_to_clipboard(text, "text/plain;charset=utf-8", "UTF8_STRING");
}

std::optional<ClipboardOutcome> finished_clipboard_write() { return std::nullopt; }

bool clipboard_is_the_browsers() { return false; }

}  // namespace attnscope
#endif
