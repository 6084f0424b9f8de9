// font_lookup_web.cpp — the browser build's fonts (font_lookup.h): no fontconfig and no system fonts in
// a web page, so the site embeds two files in its virtual file system (scripts/build-web.sh): DejaVu
// Sans for Latin text and a subset of WenQuanYi Micro Hei for Chinese (the characters of the interface,
// the lessons and common Chinese text), the same families the desktop finds through fontconfig on Debian.
#include "attnscope/figure/font_lookup.h"

#include <filesystem>

namespace attnscope {
namespace {

constexpr const char* latin_path = "/fonts/latin.ttf";
constexpr const char* cjk_path = "/fonts/cjk.ttf";

std::optional<FontFile> embedded(const char* path, const char* family) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  return FontFile{path, 0, family};
}

}  // namespace

std::optional<FontFile> find_font(const std::string& lang, const std::string&, const std::u32string&) {
  return lang.rfind("zh", 0) == 0 || lang == "ja" ? embedded(cjk_path, "WenQuanYi Micro Hei (subset)")
                                                  : embedded(latin_path, "DejaVu Sans");
}

const SystemFonts& system_fonts() {
  static const SystemFonts fonts = [] {
    SystemFonts f;
    f.latin = find_font("en", "sans-serif", U"");
    f.cjk = find_font("zh-cn", "sans-serif", U"");
    if (!f.latin || !f.cjk) f.notice = "the site's embedded fonts are missing (rebuild it with scripts/build-web.sh)";
    return f;
  }();
  return fonts;
}

}  // namespace attnscope
