// test_render_png_encoder.cpp — the figure PNG encoder (render_png.h, stb_image_write tuned for
// flat figures) against an independent decoder, stb_image.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "attnscope/figure/image.h"
#include "attnscope/figure/render_png.h"
#include "attnscope/core/rng.h"
#include "png_decode.h"

using namespace attnscope;

namespace {

// Decodes with stb_image into RGBA and compares every byte with the source.
void check_round_trip(const Image& img, const std::string& what) {
  INFO(what << " " << img.width << "x" << img.height);
  const Image back = test::decode_png(encode_png(img));
  CHECK(back.width == img.width);
  CHECK(back.height == img.height);
  REQUIRE(back.rgba.size() == img.rgba.size());
  size_t wrong = 0;
  for (size_t i = 0; i < img.rgba.size(); ++i) wrong += back.rgba[i] != img.rgba[i];
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("png encoder: every pixel survives stb_image's decoder, for flat, noisy, wide and translucent images") {
  Rng rng(3);
  // Flat with runs and repeated rows: the case the encoder is made for.
  Image flat(300, 200, {255, 255, 255, 255});
  fill_rect(flat, {10, 10, 100, 50}, {68, 1, 84, 255});
  fill_rect(flat, {150, 20, 30, 170}, {253, 231, 37, 255});
  check_round_trip(flat, "flat");
  // Noise: no matches at all, every byte a literal.
  Image noise(97, 61, {0, 0, 0, 255});
  for (size_t i = 0; i < noise.rgba.size(); ++i)
    if (i % 4 != 3) noise.rgba[i] = uint8_t(rng.uniform(0, 256));
  check_round_trip(noise, "noise");
  // Translucent pixels: written as RGBA.
  Image translucent = noise;
  for (size_t i = 3; i < translucent.rgba.size(); i += 8) translucent.rgba[i] = uint8_t(i % 251);
  check_round_trip(translucent, "translucent");
  // Very wide rows, and one translucent pixel that switches the file to RGBA.
  Image wide(12000, 3, {255, 255, 255, 255});
  fill_rect(wide, {5000, 1, 4000, 1}, {1, 2, 3, 255});
  wide.set_pixel(11999, 2, {9, 9, 9, 128});
  check_round_trip(wide, "wide");
  // Sizes at the edges.
  check_round_trip(Image(1, 1, {12, 34, 56, 255}), "1x1");
  Image stripes(7, 300, {0, 0, 0, 255});
  for (int y = 0; y < 300; y += 2) fill_rect(stripes, {0, y, 7, 1}, {200, 100, 50, 255});
  check_round_trip(stripes, "stripes");
}

TEST_CASE("png encoder: a flat figure compresses far below its raw size") {
  Image img(2000, 1000, {255, 255, 255, 255});
  for (int k = 0; k < 40; ++k) fill_rect(img, {k * 50, 0, 50, 1000}, {uint8_t(k * 6), 80, uint8_t(255 - k * 6), 255});
  const std::string png = encode_png(img);
  CHECK(png.size() < img.rgba.size() / 50);
  CHECK(png.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
}
