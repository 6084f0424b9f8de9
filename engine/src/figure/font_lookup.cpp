// font_lookup.cpp — fontconfig queries: FcFontSort by language and family, then the first font
// whose charset covers the code points we need and whose outlines stb_truetype can read.
#include "attnscope/figure/font_lookup.h"

#include <fontconfig/fontconfig.h>

#include <cstring>
#include <mutex>

namespace attnscope {
namespace {

std::mutex fontconfig_mutex;  // fontconfig's default config is not safe to query from two threads

bool readable_by_stb_truetype(FcPattern* font) {
  FcChar8* format = nullptr;
  if (FcPatternGetString(font, FC_FONTFORMAT, 0, &format) != FcResultMatch || !format) return false;
  const char* f = reinterpret_cast<const char*>(format);
  return std::strcmp(f, "TrueType") == 0 || std::strcmp(f, "CFF") == 0;
}

bool covers(FcPattern* font, const std::u32string& code_points) {
  FcCharSet* charset = nullptr;
  if (FcPatternGetCharSet(font, FC_CHARSET, 0, &charset) != FcResultMatch || !charset) return false;
  for (char32_t cp : code_points)
    if (!FcCharSetHasChar(charset, FcChar32(cp))) return false;
  return true;
}

}  // namespace

std::optional<FontFile> find_font(const std::string& lang, const std::string& family,
                                  const std::u32string& must_cover) {
  std::lock_guard<std::mutex> lock(fontconfig_mutex);
  if (!FcInit()) return std::nullopt;
  FcPattern* pattern = FcPatternCreate();
  if (!pattern) return std::nullopt;
  if (!family.empty()) FcPatternAddString(pattern, FC_FAMILY, reinterpret_cast<const FcChar8*>(family.c_str()));
  if (!lang.empty()) FcPatternAddString(pattern, FC_LANG, reinterpret_cast<const FcChar8*>(lang.c_str()));
  FcPatternAddBool(pattern, FC_SCALABLE, FcTrue);
  FcPatternAddInteger(pattern, FC_WEIGHT, FC_WEIGHT_REGULAR);
  FcPatternAddInteger(pattern, FC_SLANT, FC_SLANT_ROMAN);
  FcConfigSubstitute(nullptr, pattern, FcMatchPattern);
  FcDefaultSubstitute(pattern);

  std::optional<FontFile> found;
  FcResult result = FcResultNoMatch;
  // Sorted best-first for the language and family; trim = false keeps every candidate so that a
  // font lower in the list can still be chosen when the first ones do not cover must_cover.
  FcFontSet* sorted = FcFontSort(nullptr, pattern, FcFalse, nullptr, &result);
  if (sorted) {
    for (int i = 0; i < sorted->nfont && !found; ++i) {
      FcPattern* font = sorted->fonts[i];
      FcChar8* file = nullptr;
      if (FcPatternGetString(font, FC_FILE, 0, &file) != FcResultMatch || !file) continue;
      if (!readable_by_stb_truetype(font) || !covers(font, must_cover)) continue;
      int index = 0;
      FcPatternGetInteger(font, FC_INDEX, 0, &index);
      FcChar8* fam = nullptr;
      FcPatternGetString(font, FC_FAMILY, 0, &fam);
      found = FontFile{reinterpret_cast<const char*>(file), index, fam ? reinterpret_cast<const char*>(fam) : ""};
    }
    FcFontSetDestroy(sorted);
  }
  FcPatternDestroy(pattern);
  return found;
}

const SystemFonts& system_fonts() {
  static const SystemFonts fonts = [] {
    SystemFonts f;
    f.latin = find_font("en", "sans-serif", U"AZaz09·…");
    // 中 (U+4E2D), 文 (U+6587), 我 (U+6211), 的 (U+7684): any font that has these covers everyday Chinese.
    f.cjk = find_font("zh-cn", "sans-serif", U"\u4E2D\u6587\u6211\u7684");
    if (!f.latin && !f.cjk)
      f.notice = "no scalable font found through fontconfig: exported images will have no text "
                 "(install fonts-dejavu-core and fonts-wqy-microhei)";
    else if (!f.latin)
      f.notice = "no Latin sans-serif font found through fontconfig: using the CJK font for all text "
                 "(install fonts-dejavu-core)";
    else if (!f.cjk)
      f.notice = "no CJK font found through fontconfig: Chinese and Japanese labels will be drawn as "
                 "empty boxes (install fonts-wqy-microhei or fonts-noto-cjk)";
    return f;
  }();
  return fonts;
}

}  // namespace attnscope
