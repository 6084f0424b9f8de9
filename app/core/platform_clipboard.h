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

struct ClipboardOutcome {
  bool ok = false;
  std::string missing_tool;     // the tool that is not installed ("xclip", "wl-copy"), when that is why
  std::string missing_package;  // its Debian package ("xclip", "wl-clipboard")
  std::string error;            // otherwise, what went wrong (English, one sentence)
};

// Hands `png` to the clipboard tool of the session (above) as image/png. Blocks until the tool has
// read the bytes and gone to the background — at most about 5 seconds, then the tool is stopped and
// the outcome says so — so call it off the UI thread. Never throws.
ClipboardOutcome copy_png_to_clipboard(const std::string& png);

}  // namespace attnscope
