#include "core/platform_open.h"

#include <cstdio>
#include <exception>
#include <utility>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

namespace attnscope::gui {
namespace {

// Half of the 4 GiB a 32-bit WebAssembly memory can grow to: the loader maps a file's bytes into that
// memory and widens its weights to float32 beside them, so float32 files need about twice their size
// (GPT-2 small: 0.5 GiB of files, about 1 GiB of memory) and float16/bfloat16 files three times.
constexpr uint64_t default_folder_limit = uint64_t(2) << 30;
uint64_t folder_limit = default_folder_limit;
PickedFolderHandler handler;
FolderCopy current_copy;

}  // namespace

uint64_t picked_folder_limit() { return folder_limit; }
void set_picked_folder_limit(uint64_t bytes) { folder_limit = bytes > 0 ? bytes : default_folder_limit; }
void set_picked_folder_handler(PickedFolderHandler h) { handler = std::move(h); }
const FolderCopy& folder_copy() { return current_copy; }

std::string byte_size_text(double bytes) {
  char text[32];
  if (bytes >= double(uint64_t(1) << 30)) std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(uint64_t(1) << 30));
  else if (bytes >= double(1 << 20)) std::snprintf(text, sizeof text, "%.1f MiB", bytes / double(1 << 20));
  else if (bytes >= 1024) std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  else std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  return text;
}

#ifdef __EMSCRIPTEN__
bool folders_are_picked() { return true; }

void pick_checkpoint_folder() {
  // The page's <input type=file webkitdirectory> (checkpoint_picker.js); the click that asked for it is
  // still the page's user activation, which a file picker needs.
  EM_ASM({
    if (Module.attnscopePicker) Module.attnscopePicker.pick();
    else console.warn('attnscope: the page has no folder picker (checkpoint_picker.js)');
  });
}
#else
bool folders_are_picked() { return false; }
void pick_checkpoint_folder() {}
#endif

}  // namespace attnscope::gui

#ifdef __EMSCRIPTEN__
// Called by the page (app/web/checkpoint_picker.js) between frames.
namespace {
using namespace attnscope::gui;
template <class F>
void report(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: a picked folder: %s\n", e.what());
  }
}
}  // namespace

extern "C" {
EMSCRIPTEN_KEEPALIVE double attnscope_web_folder_limit() { return double(picked_folder_limit()); }
EMSCRIPTEN_KEEPALIVE void attnscope_web_set_folder_limit(double bytes) { set_picked_folder_limit(uint64_t(bytes)); }

EMSCRIPTEN_KEEPALIVE void attnscope_web_folder_copying(const char* name, double done, double total) {
  current_copy = FolderCopy{name, done, total};
}

EMSCRIPTEN_KEEPALIVE void attnscope_web_folder_copied(const char* dir) {
  current_copy = FolderCopy{};
  report([&] { if (handler.copied) handler.copied(dir); });
}

EMSCRIPTEN_KEEPALIVE void attnscope_web_folder_too_big(const char* name, double total) {
  current_copy = FolderCopy{};
  FolderRefusal r;
  r.kind = FolderRefusal::Kind::too_big;
  r.name = name;
  r.total = total;
  r.limit = double(picked_folder_limit());
  report([&] { if (handler.refused) handler.refused(r); });
}

EMSCRIPTEN_KEEPALIVE void attnscope_web_folder_unreadable(const char* name, const char* file, const char* reason) {
  current_copy = FolderCopy{};
  FolderRefusal r;
  r.kind = FolderRefusal::Kind::unreadable;
  r.name = name;
  r.file = file;
  r.reason = reason;
  report([&] { if (handler.refused) handler.refused(r); });
}
}
#endif
