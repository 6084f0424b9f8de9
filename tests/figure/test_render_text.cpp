// test_render_text.cpp — image buffer, font lookup (fontconfig) and the stb_truetype rasteriser.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "attnscope/core/error.h"
#include "attnscope/figure/font_lookup.h"
#include "attnscope/figure/image.h"
#include "attnscope/figure/text_raster.h"

using namespace attnscope;

namespace {
const Rgba white{255, 255, 255, 255};
const Rgba black{0, 0, 0, 255};

int64_t ink(const TextMask& m) {
  int64_t n = 0;
  for (uint8_t c : m.coverage) n += c > 64;
  return n;
}
}  // namespace

TEST_CASE("image: fill, stroke and count stay inside the image") {
  Image img(20, 10, white);
  CHECK(img.rgba.size() == 20 * 10 * 4);
  fill_rect(img, {-5, -5, 10, 10}, black);  // clipped to the top-left 5×5
  CHECK(count_pixels_unlike(img, {0, 0, 20, 10}, white) == 25);
  stroke_rect(img, {10, 2, 6, 6}, 1, black);
  CHECK(count_pixels_unlike(img, {10, 2, 6, 6}, white) == 20);
  CHECK(img.pixel(12, 4) == white);  // the inside of a stroked rectangle is untouched
  blend_pixel(img, 19, 9, Rgba{255, 0, 0, 255}, 128);
  CHECK(img.pixel(19, 9).g == 127);
  blend_pixel(img, 25, 25, black, 255);  // outside: ignored
}

TEST_CASE("image: sizes beyond the export limits are refused with the size in the message") {
  CHECK_THROWS_AS(Image(-1, 5, white), InputError);
  try {
    Image too_big(image_max_side + 1, 10, white);
    FAIL("an over-wide image was allocated");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(std::to_string(image_max_side + 1)) != std::string::npos);
  }
  CHECK_THROWS_AS(Image(image_max_side, image_max_side, white), InputError);  // 2^28 pixels
}

TEST_CASE("font lookup: fontconfig finds a Latin font and a CJK font that stb_truetype reads") {
  const SystemFonts& fonts = system_fonts();
  REQUIRE(fonts.latin.has_value());
  CHECK(std::filesystem::is_regular_file(fonts.latin->path));
  // This machine has fonts-wqy-microhei installed (scripts/deps), found through fontconfig.
  REQUIRE(fonts.cjk.has_value());
  CHECK(std::filesystem::is_regular_file(fonts.cjk->path));
  CHECK(fonts.notice.empty());
  const TextRasterizer& r = default_text_rasterizer();
  CHECK(r.has_latin());
  CHECK(r.has_cjk());
  CHECK(r.has_glyph(U'A'));
  CHECK(r.has_glyph(U'\u00B7'));  // the middle dot of "head 3 · kv group 1"
  CHECK(r.has_glyph(U'\u7403'));  // 球
  CHECK_FALSE(r.has_glyph(char32_t(0x10FFFD)));  // a private-use code point no font has
}

TEST_CASE("font lookup: a family that cannot cover the asked code points gives nothing") {
  // No font covers a private-use plane-16 code point, so the search must come back empty.
  CHECK_FALSE(find_font("en", "sans-serif", U"A\U0010FFFD").has_value());
}

TEST_CASE("text raster: boxes grow with the text and share one height per size") {
  const TextRasterizer& r = default_text_rasterizer();
  const TextBox a = r.text_box("cat", 16);
  const TextBox b = r.text_box("category", 16);
  const TextBox c = r.text_box("篮球", 16);
  CHECK(a.width > 0);
  CHECK(b.width > a.width);
  CHECK(a.height == b.height);
  CHECK(a.height == c.height);
  CHECK(a.height >= 16);
  CHECK(a.baseline > 0);
  CHECK(a.baseline < a.height);
  CHECK(r.text_box("cat", 32).width > a.width);
  CHECK(r.text_box("", 16).width == 0);
  const TextMask m = r.render("category", 16);
  CHECK(m.coverage.size() == size_t(b.width) * size_t(b.height));
}

TEST_CASE("text raster: Chinese glyphs come from the CJK font, not the missing-glyph box") {
  const SystemFonts& fonts = system_fonts();
  REQUIRE(fonts.cjk.has_value());
  SystemFonts latin_only = fonts;
  latin_only.cjk.reset();
  const TextRasterizer without_cjk(latin_only);
  const TextRasterizer& with_cjk = default_text_rasterizer();
  const TextMask drawn = with_cjk.render("我喜欢打篮球", 24);
  const TextMask boxes = without_cjk.render("我喜欢打篮球", 24);
  CHECK(ink(drawn) > 100);
  CHECK(drawn.coverage != boxes.coverage);
  // Different ideographs give different ink; the missing-glyph boxes are all alike.
  CHECK(with_cjk.render("我", 24).coverage != with_cjk.render("球", 24).coverage);
  CHECK(without_cjk.render("我", 24).coverage == without_cjk.render("球", 24).coverage);
}

TEST_CASE("text raster: drawing stays inside the measured box, horizontal and rotated") {
  const TextRasterizer& r = default_text_rasterizer();
  const std::string text = "because 篮球 Ågj";
  const TextBox box = r.text_box(text, 14);
  Image img(200, 200, white);
  r.draw(img, text, 10, 20, 14, black);
  const Rect horizontal{10, 20, box.width, box.height};
  CHECK(count_pixels_unlike(img, horizontal, white) > 50);
  CHECK(count_pixels_unlike(img, {0, 0, 200, 200}, white) == count_pixels_unlike(img, horizontal, white));

  Image rot(200, 200, white);
  r.draw_rotated(rot, text, 30, 40, 14, black);
  const Rect vertical{30, 40, box.height, box.width};
  CHECK(count_pixels_unlike(rot, vertical, white) > 50);
  CHECK(count_pixels_unlike(rot, {0, 0, 200, 200}, white) == count_pixels_unlike(rot, vertical, white));
  // Same ink, just turned: the counts of drawn pixels agree.
  CHECK(count_pixels_unlike(rot, vertical, white) == count_pixels_unlike(img, horizontal, white));
}

TEST_CASE("text raster: stacked text is one character under the other, inside its box") {
  const TextRasterizer& r = default_text_rasterizer();
  const std::string text = "我喜欢";
  const TextBox one = r.text_box("我", 14);
  const TextBox box = r.stacked_box(text, 14);
  CHECK(box.height == 3 * one.height);
  CHECK(box.width == std::max({one.width, r.text_box("喜", 14).width, r.text_box("欢", 14).width}));
  Image img(100, 100, white);
  r.draw_stacked(img, text, 20, 10, 14, black);
  const Rect stack{20, 10, box.width, box.height};
  CHECK(count_pixels_unlike(img, {0, 0, 100, 100}, white) == count_pixels_unlike(img, stack, white));
  // Each character has its own line with ink in it, and the same ink as drawn alone.
  for (int i = 0; i < 3; ++i) CHECK(count_pixels_unlike(img, {20, 10 + i * one.height, box.width, one.height}, white) > 15);
  Image alone(100, 100, white);
  r.draw(alone, "我", 20, 10, 14, black);
  CHECK(count_pixels_unlike(img, {20, 10, box.width, one.height}, white) == count_pixels_unlike(alone, {0, 0, 100, 100}, white));
}

TEST_CASE("text raster: invalid UTF-8 is drawn as replacement characters, never an error") {
  CHECK(decode_utf8_lenient("a\xFF" "b") == U"a\uFFFDb");
  CHECK(decode_utf8_lenient("\xE4\xB8") == U"\uFFFD\uFFFD");  // truncated 3-byte sequence
  CHECK(decode_utf8_lenient("\xC0\x80") == U"\uFFFD\uFFFD");  // overlong NUL
  CHECK(decode_utf8_lenient("中") == U"中");
  CHECK(default_text_rasterizer().text_box("a\xFF" "b", 12).width > default_text_rasterizer().text_box("ab", 12).width);
}
