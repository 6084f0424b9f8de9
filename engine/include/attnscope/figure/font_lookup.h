// font_lookup.h — finding font files through fontconfig, never by hard-coded path.
//
// Two fonts are looked up: a Latin UI font (sans-serif, must cover basic Latin) and a CJK-capable
// font (language "zh-cn", must cover common ideographs). The GUI loads both into ImGui (the CJK one
// merged for its glyph ranges); the exporter's text rasteriser (text_raster.h) falls back from the
// first to the second per glyph. A font file may be a collection (.ttc): `index` is the face.
#pragma once
#include <optional>
#include <string>

namespace attnscope {

struct FontFile {
  std::string path;  // absolute path of a .ttf / .otf / .ttc file
  int index = 0;     // face index inside a collection (0 for a single-font file)
  std::string family;  // e.g. "DejaVu Sans", for messages
};

struct SystemFonts {
  std::optional<FontFile> latin;  // sans-serif UI font covering basic Latin
  std::optional<FontFile> cjk;    // covers CJK ideographs (simplified Chinese first)
  // Empty when both were found; otherwise one sentence saying what is missing, its effect, and what
  // to install, e.g. "no CJK font found through fontconfig: Chinese and Japanese labels will be
  // drawn as empty boxes (install fonts-wqy-microhei or fonts-noto-cjk)".
  std::string notice;
};

// The best installed scalable font (TrueType or CFF outlines, which stb_truetype reads) for
// `lang` (an RFC 3066 tag as fontconfig uses: "en", "zh-cn", "ja") and `family` (a name or a
// generic "sans-serif"), that covers `must_cover` (UTF-32 code points). Nothing when no such font.
std::optional<FontFile> find_font(const std::string& lang, const std::string& family,
                                  const std::u32string& must_cover);

// The Latin and CJK fonts, looked up once per process (fontconfig's scan is slow) and cached.
// Thread-safe.
const SystemFonts& system_fonts();

}  // namespace attnscope
