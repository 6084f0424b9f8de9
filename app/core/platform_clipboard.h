// platform_clipboard.h — a PNG image on the system clipboard, the one platform call of "Copy figure".
//
// Linux has no clipboard of its own to write into: a program owns the selection and answers every
// paste. Under Wayland (WAYLAND_DISPLAY set) wl-copy (package wl-clipboard) does that, under X11
// (DISPLAY set) xclip (package xclip) owns the CLIPBOARD selection with the target image/png (also
// under Wayland without wl-copy when XWayland runs: the compositor shares its clipboard). The
// tool reads the PNG from a pipe, then serves it from the background until something else is copied,
// so the bytes stay pasteable after attnscope closes. A browser port replaces this one file.
#pragma once
#include <string>

namespace attnscope {

// What went wrong, as facts: the window words them in the interface's language.
enum class ClipboardProblem {
  none,
  no_display,    // neither WAYLAND_DISPLAY nor DISPLAY is set
  missing_tool,  // `tool` is not on PATH; `package` installs it
  no_pipe,       // the pipe to the tool could not be made (`detail`: the system's reason)
  cannot_start,  // the tool could not be started (`detail`: the system's reason)
  too_slow,      // the tool did not finish within 5 seconds and was stopped
  short_read,    // the tool stopped before reading the whole image
  tool_failed,   // the tool exited with status `exit_status` (-1: killed by a signal)
};

struct ClipboardOutcome {
  bool ok = false;
  ClipboardProblem problem = ClipboardProblem::none;
  std::string tool;     // the clipboard tool ("xclip", "wl-copy")
  std::string package;  // its Debian package ("xclip", "wl-clipboard")
  std::string detail;   // no_pipe, cannot_start: the system's own words (strerror)
  int exit_status = 0;  // tool_failed
};

// Hands `png` to the clipboard tool of the session (above) as image/png. Blocks until the tool has
// read the bytes and gone to the background — at most about 5 seconds, then the tool is stopped and
// the outcome says so — so call it off the UI thread. Never throws.
ClipboardOutcome copy_png_to_clipboard(const std::string& png);

}  // namespace attnscope
