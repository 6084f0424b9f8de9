// platform_page.h — what only the browser build has: the page's own address (for File → Copy link) and
// the browser's full screen (presentation mode). On the desktop the address is empty and the window's
// own monitor mode does full screen (window_main.cpp), so these say "none" there.
#pragma once
#include <string>

namespace attnscope {

// The browser: the page's address without its query or fragment (location.origin + location.pathname),
// to which ?scene= is added. The desktop: "".
std::string page_address();

// The browser's full screen (the Fullscreen API on the whole page).
enum class PageFullScreen {
  none,     // the desktop: no page
  off,      // the page is not full screen and no request is waiting
  waiting,  // a request is waiting for the browser's answer
  on,       // the page is full screen
  refused,  // the browser refused the last request (refusal_reason() says why); reading it clears it
};
PageFullScreen page_full_screen();
// Asks the browser to show the page full screen (on) or to leave full screen (off). A request needs a
// user's key press or click shortly before it (F11 or the menu item are); otherwise the browser refuses.
void request_page_full_screen(bool on);
// The browser's words for the last refusal ("" if none).
std::string page_full_screen_refusal();

// True where a frame that draws nothing leaves the last picture on screen and each frame drawn costs a
// composite of the whole page (the browser: without a GPU, tens of milliseconds of a core), so the window
// draws a frame only when its picture changed (core/picture_change.h). The desktop draws every frame: its
// back buffer is undefined after a swap.
bool frames_drawn_only_when_changed();

// True where the window is never closed, only left (the browser: a tab closed or reloaded), so it saves
// its session (gui/persistence.h) while it runs rather than at the end.
bool session_saved_while_running();
// The browser: writes the config folder (IndexedDB under it, mounted by index.html) to the browser's
// storage, so that the next visit reads what was saved. The desktop: nothing (its disk keeps files).
void keep_config_folder();

}  // namespace attnscope
