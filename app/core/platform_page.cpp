#include "core/platform_page.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>

#include <vector>

namespace attnscope {
namespace {

// A JavaScript string expression's value as UTF-8.
std::string js_string(int length, void (*fill)(char*, int)) {
  if (length <= 0) return "";
  std::vector<char> text(size_t(length) + 1);
  fill(text.data(), int(text.size()));
  return text.data();
}

}  // namespace

std::string page_address() {
  const int length = EM_ASM_INT({ return lengthBytesUTF8(location.origin + location.pathname); });
  return js_string(length, [](char* buffer, int size) {
    EM_ASM({ stringToUTF8(location.origin + location.pathname, $0, $1); }, buffer, size);
  });
}

// window.attnscopeFullScreen: {waiting: bool, refused: string} — the state of the last request.
PageFullScreen page_full_screen() {
  const int state = EM_ASM_INT({
    const s = window.attnscopeFullScreen || {};
    if (s.waiting) return 2;
    if (s.refused) return 4;
    return document.fullscreenElement ? 3 : 1;
  });
  switch (state) {
    case 2: return PageFullScreen::waiting;
    case 3: return PageFullScreen::on;
    case 4: return PageFullScreen::refused;
    default: return PageFullScreen::off;
  }
}

void request_page_full_screen(bool on) {
  EM_ASM(
      {
        const s = window.attnscopeFullScreen = window.attnscopeFullScreen || {};
        s.refused = '';
        const element = document.documentElement;
        const fail = (e) => { s.waiting = false; s.refused = String((e && e.name) || 'Error') + ': ' + String((e && e.message) || e); };
        if ($0) {
          if (document.fullscreenElement) return;
          if (!element.requestFullscreen) { fail({name : 'NotSupportedError', message : 'this browser has no Fullscreen API'}); return; }
          s.waiting = true;
          element.requestFullscreen().then(() => { s.waiting = false; }, fail);
        } else if (document.fullscreenElement && document.exitFullscreen) {
          document.exitFullscreen().catch(() => {});
        }
      },
      int(on));
}

std::string page_full_screen_refusal() {
  const int length = EM_ASM_INT({
    const s = window.attnscopeFullScreen || {};
    return s.refused ? lengthBytesUTF8(s.refused) : 0;
  });
  std::string reason = js_string(length, [](char* buffer, int size) {
    EM_ASM({ stringToUTF8(window.attnscopeFullScreen.refused, $0, $1); }, buffer, size);
  });
  EM_ASM({ if (window.attnscopeFullScreen) window.attnscopeFullScreen.refused = ''; });
  return reason;
}

bool frames_drawn_only_when_changed() { return true; }

bool session_saved_while_running() { return true; }

void keep_config_folder() {
  // One write at a time; a request during one is done after it (window.attnscopeStorage).
  EM_ASM({
    const s = window.attnscopeStorage;
    if (!s || !s.mounted) return;  // no IndexedDB (index.html said why in the console)
    if (s.writing) { s.again = true; return; }
    const write = () => {
      s.writing = true;
      s.again = false;
      FS.syncfs(false, (e) => {
        s.writing = false;
        if (e) console.warn('attnscope: the settings could not be kept: ' + e);
        else s.written = (s.written || 0) + 1;
        if (s.again) write();
      });
    };
    write();
  });
}

}  // namespace attnscope

#else  // the desktop

namespace attnscope {

std::string page_address() { return ""; }
PageFullScreen page_full_screen() { return PageFullScreen::none; }
void request_page_full_screen(bool) {}
std::string page_full_screen_refusal() { return ""; }
bool frames_drawn_only_when_changed() { return false; }
bool session_saved_while_running() { return false; }
void keep_config_folder() {}

}  // namespace attnscope
#endif
