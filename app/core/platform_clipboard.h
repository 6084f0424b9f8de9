// platform_clipboard.h — a PNG image on the system clipboard, the one platform call of "Copy figure".
//
// Linux has no clipboard of its own to write into: a program owns the selection and answers every
// paste. Under Wayland (WAYLAND_DISPLAY set) wl-copy (package wl-clipboard) does that, under X11
// (DISPLAY set) xclip (package xclip) owns the CLIPBOARD selection with the target image/png (also
// under Wayland without wl-copy when XWayland runs: the compositor shares its clipboard). The
// tool reads the PNG from a pipe, then serves it from the background until something else is copied,
// so the bytes stay pasteable after attnscope closes.
//
// In the browser (platform_clipboard.cpp's other half) the page's Clipboard API does it:
// navigator.clipboard.write with an image/png ClipboardItem, writeText for text. The browser answers
// later (a promise), so a write there returns `pending` and finished_clipboard_write() gives its outcome
// on a later frame; a page that may not use the clipboard (not https, an older browser) is said at once.
#pragma once
#include <optional>
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
  // The browser.
  insecure_page,  // no Clipboard API: the page is not https:// (nor localhost)
  no_image_api,   // the browser has no ClipboardItem: it cannot put an image on the clipboard
  refused,        // the browser refused the write (`detail`: its words, e.g. NotAllowedError: …)
};

struct ClipboardOutcome {
  bool ok = false;
  ClipboardProblem problem = ClipboardProblem::none;
  std::string tool;     // the clipboard tool ("xclip", "wl-copy")
  std::string package;  // its Debian package ("xclip", "wl-clipboard")
  std::string detail;   // no_pipe, cannot_start: the system's own words (strerror)
  int exit_status = 0;  // tool_failed
  bool pending = false;  // the browser: the write is under way (finished_clipboard_write tells how it ends)
};

// Hands `png` to the clipboard tool of the session (above) as image/png. Blocks until the tool has
// read the bytes and gone to the background — at most about 5 seconds, then the tool is stopped and
// the outcome says so — so call it off the UI thread. Never throws.
ClipboardOutcome copy_png_to_clipboard(const std::string& png);

// The same for text (a link): on the desktop the tool with the text type (UTF8_STRING, text/plain), in
// the browser writeText.
ClipboardOutcome copy_text_to_clipboard(const std::string& text);

// The browser: the outcome of the last pending write once the browser has answered, else nothing (and
// always nothing on the desktop, whose writes never pend). Call from the UI thread.
std::optional<ClipboardOutcome> finished_clipboard_write();

// True where the clipboard is the browser's (Dear ImGui's own text copy then goes through
// copy_text_to_clipboard too: emscripten's GLFW has no clipboard).
bool clipboard_is_the_browsers();

}  // namespace attnscope
