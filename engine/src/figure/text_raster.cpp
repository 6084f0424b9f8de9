// text_raster.cpp — stb_truetype glyphs into coverage masks, blended into an Image.
//
// Sections: lenient UTF-8 · loading fonts · laying out glyphs (shared by measuring and drawing) ·
// rendering a mask · drawing (horizontal and rotated)
#include "attnscope/figure/text_raster.h"

#include <stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <mutex>

#include "attnscope/core/error.h"
#include "attnscope/text/tokenizer.h"

namespace attnscope {

// ---- lenient UTF-8 -------------------------------------------------------------------------------
std::u32string decode_utf8_lenient(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int len = 0;
    char32_t cp = 0, min = 0;
    if (c < 0x80) len = 1, cp = c;
    else if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07, min = 0x10000;
    bool ok = len > 0 && i + size_t(len) <= s.size();
    for (int k = 1; ok && k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + size_t(k)]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out.push_back(cp);
      i += size_t(len);
    } else {
      out.push_back(U'\uFFFD');
      ++i;
    }
  }
  return out;
}

// ---- loading fonts -------------------------------------------------------------------------------
namespace {

struct LoadedFont {
  std::string family;               // fontconfig's family name
  std::vector<unsigned char> data;  // the whole file; stbtt_fontinfo points into it
  stbtt_fontinfo info{};
  int ascent = 0, descent = 0;      // font units (descent < 0)
};

std::unique_ptr<LoadedFont> load_font(const FontFile& file) {
  auto font = std::make_unique<LoadedFont>();
  font->family = file.family;
  std::ifstream in(file.path, std::ios::binary);
  require(bool(in), "cannot read the font file '" + file.path + "'");
  font->data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  // A collection (.ttc) holds several faces; fontconfig told us which one.
  const int offset = stbtt_GetFontOffsetForIndex(font->data.data(), file.index);
  require(offset >= 0 && stbtt_InitFont(&font->info, font->data.data(), offset),
          "'" + file.path + "' (face " + std::to_string(file.index) + ") is not a font stb_truetype can read");
  int line_gap = 0;
  stbtt_GetFontVMetrics(&font->info, &font->ascent, &font->descent, &line_gap);
  return font;
}

}  // namespace

struct TextRasterizer::Fonts {
  std::unique_ptr<LoadedFont> latin, cjk;
  std::string notice;
  // Fonts in fallback order (the Latin one first), skipping missing ones.
  std::vector<const LoadedFont*> order() const {
    std::vector<const LoadedFont*> v;
    if (latin) v.push_back(latin.get());
    if (cjk) v.push_back(cjk.get());
    return v;
  }
};

TextRasterizer::TextRasterizer(const SystemFonts& system) : fonts_(std::make_unique<Fonts>()) {
  if (system.latin) fonts_->latin = load_font(*system.latin);
  if (system.cjk) fonts_->cjk = load_font(*system.cjk);
  fonts_->notice = system.notice;
}
TextRasterizer::~TextRasterizer() = default;
TextRasterizer::TextRasterizer(TextRasterizer&&) noexcept = default;
TextRasterizer& TextRasterizer::operator=(TextRasterizer&&) noexcept = default;

bool TextRasterizer::has_latin() const { return fonts_->latin != nullptr; }
bool TextRasterizer::has_cjk() const { return fonts_->cjk != nullptr; }
const std::string& TextRasterizer::notice() const { return fonts_->notice; }

float TextRasterizer::css_font_size(float pixel_size) const {
  const auto fonts = fonts_->order();
  if (fonts.empty()) return pixel_size;
  const stbtt_fontinfo* info = &fonts.front()->info;
  // ScaleForPixelHeight fits ascent − descent; ScaleForMappingEmToPixels fits the em square.
  return pixel_size * stbtt_ScaleForPixelHeight(info, 1.0f) / stbtt_ScaleForMappingEmToPixels(info, 1.0f);
}

std::string TextRasterizer::css_font_families() const {
  std::string list;
  for (const LoadedFont* f : fonts_->order())
    if (!f->family.empty() && f->family.find_first_of("'\"<>&") == std::string::npos) list += "'" + f->family + "', ";
  return list + "sans-serif";
}

bool TextRasterizer::has_glyph(char32_t cp) const {
  for (const LoadedFont* f : fonts_->order())
    if (stbtt_FindGlyphIndex(&f->info, int(cp)) != 0) return true;
  return false;
}

// ---- laying out glyphs ---------------------------------------------------------------------------
namespace {

struct PlacedGlyph {
  const LoadedFont* font;
  int glyph;
  float scale;
  int pen_x;      // whole-pixel pen position (before the box's left offset)
  float shift_x;  // sub-pixel remainder
  int x0, y0, x1, y1;  // bitmap box relative to (pen_x, baseline)
};

struct LineLayout {
  TextBox box;
  int left_offset = 0;  // added to every pen_x so that ink left of the first pen position fits
  std::vector<PlacedGlyph> glyphs;
};

LineLayout layout_line(const std::vector<const LoadedFont*>& fonts, std::string_view utf8, float px) {
  LineLayout line;
  if (fonts.empty() || !(px > 0)) return line;
  // One baseline and line height for every font at this size, so every text at `px` is equally tall.
  float ascent = 0, descent = 0;
  for (const LoadedFont* f : fonts) {
    const float s = stbtt_ScaleForPixelHeight(&f->info, px);
    ascent = std::max(ascent, f->ascent * s);
    descent = std::max(descent, -f->descent * s);
  }
  line.box.baseline = int(std::ceil(ascent));
  line.box.height = line.box.baseline + int(std::ceil(descent));

  float pen = 0;
  int min_x = 0, max_x = 0;
  const LoadedFont* previous_font = nullptr;
  int previous_glyph = 0;
  for (char32_t cp : decode_utf8_lenient(utf8)) {
    if (cp == U'\n' || cp == U'\r' || cp == U'\t') cp = U' ';
    const LoadedFont* font = fonts.front();
    int glyph = 0;
    for (const LoadedFont* f : fonts)
      if ((glyph = stbtt_FindGlyphIndex(&f->info, int(cp))) != 0) {
        font = f;
        break;
      }
    if (glyph == 0) font = fonts.front();  // its glyph 0 is the "missing glyph" box
    const float s = stbtt_ScaleForPixelHeight(&font->info, px);
    if (font == previous_font && previous_glyph != 0)
      pen += s * float(stbtt_GetGlyphKernAdvance(&font->info, previous_glyph, glyph));
    PlacedGlyph g{font, glyph, s, int(std::floor(pen)), pen - std::floor(pen), 0, 0, 0, 0};
    stbtt_GetGlyphBitmapBoxSubpixel(&font->info, glyph, s, s, g.shift_x, 0, &g.x0, &g.y0, &g.x1, &g.y1);
    if (g.x1 > g.x0) {
      min_x = std::min(min_x, g.pen_x + g.x0);
      max_x = std::max(max_x, g.pen_x + g.x1);
    }
    int advance = 0, lsb = 0;
    stbtt_GetGlyphHMetrics(&font->info, glyph, &advance, &lsb);
    pen += s * float(advance);
    line.glyphs.push_back(g);
    previous_font = font;
    previous_glyph = glyph;
  }
  line.left_offset = -min_x;
  line.box.width = std::max(int(std::ceil(pen)), max_x) + line.left_offset;
  return line;
}

}  // namespace

TextBox TextRasterizer::text_box(std::string_view utf8, float pixel_size) const {
  return layout_line(fonts_->order(), utf8, pixel_size).box;
}

// ---- rendering a mask ----------------------------------------------------------------------------
TextMask TextRasterizer::render(std::string_view utf8, float pixel_size) const {
  const LineLayout line = layout_line(fonts_->order(), utf8, pixel_size);
  TextMask mask;
  mask.box = line.box;
  mask.coverage.assign(size_t(line.box.width) * size_t(line.box.height), 0);
  std::vector<unsigned char> glyph_bitmap;
  for (const PlacedGlyph& g : line.glyphs) {
    const int gw = g.x1 - g.x0, gh = g.y1 - g.y0;
    if (gw <= 0 || gh <= 0) continue;
    glyph_bitmap.assign(size_t(gw) * size_t(gh), 0);
    stbtt_MakeGlyphBitmapSubpixel(&g.font->info, glyph_bitmap.data(), gw, gh, gw, g.scale, g.scale, g.shift_x, 0,
                                  g.glyph);
    const int ox = line.left_offset + g.pen_x + g.x0, oy = line.box.baseline + g.y0;
    for (int y = 0; y < gh; ++y) {
      const int my = oy + y;
      if (my < 0 || my >= line.box.height) continue;  // ink beyond the font's ascent/descent
      for (int x = 0; x < gw; ++x) {
        const int mx = ox + x;
        if (mx < 0 || mx >= line.box.width) continue;
        uint8_t& dst = mask.coverage[size_t(my) * size_t(line.box.width) + size_t(mx)];
        dst = std::max(dst, glyph_bitmap[size_t(y) * size_t(gw) + size_t(x)]);
      }
    }
  }
  return mask;
}

// ---- drawing -------------------------------------------------------------------------------------
void TextRasterizer::draw(Image& image, std::string_view utf8, int x, int y, float pixel_size, Rgba color) const {
  const TextMask mask = render(utf8, pixel_size);
  for (int my = 0; my < mask.box.height; ++my)
    for (int mx = 0; mx < mask.box.width; ++mx)
      blend_pixel(image, x + mx, y + my, color, mask.coverage[size_t(my) * size_t(mask.box.width) + size_t(mx)]);
}

void TextRasterizer::draw_rotated(Image& image, std::string_view utf8, int x, int y, float pixel_size,
                                  Rgba color) const {
  const TextMask mask = render(utf8, pixel_size);
  // Rotating 90° counter-clockwise: the mask's column mx lands on row y + width − 1 − mx, and its
  // row my on column x + my (the top of the letters faces left).
  for (int my = 0; my < mask.box.height; ++my)
    for (int mx = 0; mx < mask.box.width; ++mx)
      blend_pixel(image, x + my, y + mask.box.width - 1 - mx, color,
                  mask.coverage[size_t(my) * size_t(mask.box.width) + size_t(mx)]);
}

namespace {
std::vector<std::string> code_points(std::string_view utf8) {
  std::vector<std::string> out;
  for (char32_t cp : decode_utf8_lenient(utf8)) out.push_back(encode_utf8(cp));
  return out;
}
}  // namespace

TextBox TextRasterizer::stacked_box(std::string_view utf8, float pixel_size) const {
  TextBox box;
  for (const std::string& c : code_points(utf8)) {
    const TextBox one = text_box(c, pixel_size);
    if (box.height == 0) box.baseline = one.baseline;
    box.width = std::max(box.width, one.width);
    box.height += one.height;
  }
  return box;
}

void TextRasterizer::draw_stacked(Image& image, std::string_view utf8, int x, int y, float pixel_size,
                                  Rgba color) const {
  const int width = stacked_box(utf8, pixel_size).width;
  for (const std::string& c : code_points(utf8)) {
    const TextBox one = text_box(c, pixel_size);
    draw(image, c, x + (width - one.width) / 2, y, pixel_size, color);
    y += one.height;
  }
}

const TextRasterizer& default_text_rasterizer() {
  static const TextRasterizer rasterizer(system_fonts());
  return rasterizer;
}

}  // namespace attnscope
