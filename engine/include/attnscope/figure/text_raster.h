// text_raster.h — UTF-8 text into an Image with stb_truetype, Latin font first, CJK font per glyph.
//
// Each code point is drawn with the Latin font when it has the glyph, else with the CJK font, else
// as the Latin font's "missing glyph" box. Both fonts are scaled so that ascent − descent equals the
// pixel size and share one baseline, so mixed text ("head 3 · 我") sits on one line.
//
// Measuring and drawing agree exactly: text_box(text, px) is the box draw() fills, so a layout made
// from text_box (heatmap_layout.h) never overlaps or clips. A TextRasterizer is read-only after
// construction and may be used from several threads at once.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/figure/font_lookup.h"
#include "attnscope/figure/image.h"

namespace attnscope {

// Size of a line of text in whole pixels: the ink fits in width × height, with the baseline
// `baseline` pixels below the top.
struct TextBox {
  int width = 0;
  int height = 0;
  int baseline = 0;
};

// A line of text rendered as 8-bit coverage: [height, width], 0 = empty, 255 = full ink.
struct TextMask {
  TextBox box;
  std::vector<uint8_t> coverage;
};

class TextRasterizer {
 public:
  // Reads the font files of `fonts`. A missing Latin font falls back to the CJK one for all text;
  // with neither, nothing is drawn and every box has zero width (see notice()).
  // Throws InputError naming the file when a font file cannot be read or is not a font.
  explicit TextRasterizer(const SystemFonts& fonts);
  ~TextRasterizer();
  TextRasterizer(TextRasterizer&&) noexcept;
  TextRasterizer& operator=(TextRasterizer&&) noexcept;

  bool has_latin() const;
  bool has_cjk() const;
  // True when some loaded font has a real glyph for `cp` (not the missing-glyph box).
  bool has_glyph(char32_t cp) const;
  // Empty when both fonts loaded; otherwise what is missing (from SystemFonts::notice).
  const std::string& notice() const;

  // The CSS font-size (em, in pixels) that draws the Latin font as big as `pixel_size` does here,
  // for SVG text; and the CSS font-family list of the loaded fonts ("'DejaVu Sans', 'WenQuanYi
  // Micro Hei', sans-serif").
  float css_font_size(float pixel_size) const;
  std::string css_font_families() const;

  // The box of one line of `utf8` at `pixel_size` (pixels from ascent to descent). The height is
  // the same for every text at one size. Invalid UTF-8 bytes are drawn as U+FFFD.
  TextBox text_box(std::string_view utf8, float pixel_size) const;
  TextMask render(std::string_view utf8, float pixel_size) const;

  // Horizontal text with its box's top-left corner at (x, y).
  void draw(Image& image, std::string_view utf8, int x, int y, float pixel_size, Rgba color) const;
  // Text rotated 90° counter-clockwise (reads bottom to top), occupying the rectangle
  // x … x + box.height − 1, y … y + box.width − 1 (so it is box.height wide and box.width tall).
  void draw_rotated(Image& image, std::string_view utf8, int x, int y, float pixel_size, Rgba color) const;
  // Text set one code point under the other, each centred across (CJK along a column): the box is as
  // wide as the widest character and one line height per character tall; baseline is the first line's.
  TextBox stacked_box(std::string_view utf8, float pixel_size) const;
  void draw_stacked(Image& image, std::string_view utf8, int x, int y, float pixel_size, Rgba color) const;

 private:
  struct Fonts;
  std::unique_ptr<Fonts> fonts_;
};

// One rasteriser over system_fonts(), loaded on first use and shared (thread-safe).
const TextRasterizer& default_text_rasterizer();

// Decodes UTF-8 leniently: each invalid byte becomes U+FFFD (labels must always draw).
std::u32string decode_utf8_lenient(std::string_view utf8);

}  // namespace attnscope
