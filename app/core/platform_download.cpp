#include "core/platform_download.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

namespace attnscope::gui {

#ifdef __EMSCRIPTEN__
bool files_are_downloads() { return true; }

void offer_download(const std::filesystem::path& path) {
  // A Blob of the file's bytes behind a link with `download`, clicked once and then released.
  EM_ASM(
      {
        const path = UTF8ToString($0);
        const name = path.split('/').pop();
        let bytes;
        try {
          bytes = FS.readFile(path);
        } catch (e) {
          console.warn('attnscope: cannot offer ' + path + ' as a download: ' + e);
          return;
        }
        const link = document.createElement('a');
        link.href = URL.createObjectURL(new Blob([bytes]));
        link.download = name;
        document.body.appendChild(link);
        link.click();
        setTimeout(() => {
          URL.revokeObjectURL(link.href);
          link.remove();
        }, 1000);
      },
      path.c_str());
}
#else
bool files_are_downloads() { return false; }
void offer_download(const std::filesystem::path&) {}
#endif

}  // namespace attnscope::gui
