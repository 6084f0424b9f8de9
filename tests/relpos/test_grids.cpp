// Grids: procedural patterns, images decoded by stb_image and shrunk by area averaging, and the
// errors for bad sizes, names and files.
#include <doctest/doctest.h>

#include <stb_image_write.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/relpos/grids.h"
#include "attnscope/core/rng.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using attnscope::test::check_close;
namespace fs = std::filesystem;

namespace {

using attnscope::test::contains;
using attnscope::test::error_of;

// Encodes 8-bit pixels [h, w, comp] as a PNG in memory.
std::string encode_png(const std::vector<unsigned char>& pixels, int width, int height, int comp) {
  std::string png;
  stbi_write_png_to_func(
      [](void* context, void* data, int size) { static_cast<std::string*>(context)->append(static_cast<char*>(data), size); },
      &png, width, height, comp, pixels.data(), width * comp);
  return png;
}

}  // namespace

TEST_CASE("grid patterns: every pattern has the asked size, values in [0, 1], is deterministic and not flat") {
  for (const std::string& name : grid_pattern_names())
    for (const auto& shape : {std::pair{16, 16}, std::pair{5, 23}, std::pair{64, 64}, std::pair{1, 1}}) {
      const int rows = shape.first, cols = shape.second;  // not a binding: CAPTURE cannot name one (clang 14)
      CAPTURE(name);
      CAPTURE(rows);
      CAPTURE(cols);
      const Grid g = make_pattern(name, rows, cols, 7);
      CHECK(g.rows == rows);
      CHECK(g.cols == cols);
      CHECK(g.channels == 1);
      REQUIRE(g.values.rows() == rows * cols);
      REQUIRE(g.values.cols() == 1);
      CHECK(g.values.minCoeff() >= 0.0f);
      CHECK(g.values.maxCoeff() <= 1.0f);
      if (rows * cols >= 64) CHECK(g.values.maxCoeff() - g.values.minCoeff() > 0.5f);
      check_close(g.values, make_pattern(name, rows, cols, 7).values, 0, "same pattern twice");
      CHECK(contains(g.description, name));
    }
}

TEST_CASE("grid patterns: checkerboard alternates, gradient runs from 0 to 1, noise follows its seed") {
  const Grid checker = make_pattern("checkerboard", 16, 16, 0);  // squares of 2 cells
  CHECK(checker.values(0, 0) != checker.values(2, 0));
  CHECK(checker.values(0, 0) == checker.values(1, 0));
  CHECK(checker.values(0, 0) != checker.values(2 * 16, 0));
  const Grid gradient = make_pattern("gradient", 8, 12, 0);
  CHECK(gradient.values(0, 0) == 0.0f);
  CHECK(gradient.values(95, 0) == 1.0f);
  const Grid a = make_pattern("noise", 8, 8, 1), b = make_pattern("noise", 8, 8, 2);
  CHECK((a.values - b.values).cwiseAbs().maxCoeff() > 0.1f);
  CHECK(contains(a.description, "seed 1"));
}

TEST_CASE("grid patterns: unknown names and sizes outside 1..64 raise InputError saying what is valid") {
  const std::string unknown = error_of([] { make_pattern("zebra", 8, 8, 0); });
  CHECK(contains(unknown, "zebra"));
  CHECK(contains(unknown, "checkerboard, gradient, rings, glyph, noise"));
  CHECK(contains(error_of([] { make_pattern("rings", 65, 65, 0); }), "too large"));
  CHECK(contains(error_of([] { make_pattern("rings", 65, 65, 0); }), "64x64"));
  CHECK(contains(error_of([] { make_pattern("rings", 0, 8, 0); }), "empty"));
  CHECK(contains(error_of([] { make_pattern("rings", 8, -3, 0); }), "empty"));
}

TEST_CASE("grid images: fit_inside keeps the aspect ratio and never enlarges") {
  CHECK(fit_inside(480, 640, 64, 64) == std::array<int, 2>{48, 64});
  CHECK(fit_inside(640, 480, 64, 64) == std::array<int, 2>{64, 48});
  CHECK(fit_inside(20, 30, 64, 64) == std::array<int, 2>{20, 30});
  CHECK(fit_inside(1000, 3, 64, 64) == std::array<int, 2>{64, 1});
  CHECK(fit_inside(100, 100, 16, 32) == std::array<int, 2>{16, 16});
}

TEST_CASE("grid images: area averaging takes exact block means and preserves the mean for any factor") {
  Rng rng(3);
  Mat plane(10, 12);
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 12; ++j) plane(i, j) = rng.uniform01();
  const Mat half = area_resize(plane, 5, 6);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 6; ++j)
      CHECK(half(i, j) == doctest::Approx(plane.block(2 * i, 2 * j, 2, 2).mean()).epsilon(1e-6));
  const Mat odd = area_resize(plane, 3, 7);  // 10/3 and 12/7: fractional overlaps
  CHECK(odd.mean() == doctest::Approx(plane.mean()).epsilon(1e-6));
  check_close(area_resize(plane, 10, 12), plane, 1e-6, "same size is the identity");
  CHECK(contains(error_of([&] { area_resize(plane, 11, 12); }), "only shrinks"));
}

TEST_CASE("grid images: a colour PNG is decoded, shrunk by area averaging, kept RGB or made luma, and described") {
  // 128×96 RGB: R = x/127, G = y/95, B = 0.5 (as bytes).
  const int w = 128, h = 96;
  std::vector<unsigned char> px(size_t(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      unsigned char* p = &px[(size_t(y) * w + x) * 3];
      p[0] = (unsigned char)(x * 2), p[1] = (unsigned char)(y * 2), p[2] = 128;
    }
  const std::string png = encode_png(px, w, h, 3);
  const Grid rgb = decode_image_grid(png, "photo.png", 64, 64, true);
  CHECK(rgb.rows == 48);
  CHECK(rgb.cols == 64);
  CHECK(rgb.channels == 3);
  CHECK(rgb.description == "photo.png 128\u00d796 \u2192 64\u00d748 (area average, RGB)");
  // Cell (r, c) averages pixels x = 2c, 2c+1 and y = 2r, 2r+1.
  for (int r : {0, 17, 47})
    for (int c : {0, 30, 63}) {
      CHECK(rgb.values(r * 64 + c, 0) == doctest::Approx((4 * c + 1) / 255.0).epsilon(1e-5));
      CHECK(rgb.values(r * 64 + c, 1) == doctest::Approx((4 * r + 1) / 255.0).epsilon(1e-5));
      CHECK(rgb.values(r * 64 + c, 2) == doctest::Approx(128 / 255.0).epsilon(1e-5));
    }
  const Grid gray = decode_image_grid(png, "photo.png", 64, 64, false);
  CHECK(gray.channels == 1);
  CHECK(contains(gray.description, "grayscale"));
  check_close(gray.values, grid_luma(rgb), 1e-5, "luma of the RGB grid");
  // A smaller box: fitted inside 16×32 → 16 rows, 21 cols (96:128 = 16:21.3).
  const Grid small = decode_image_grid(png, "photo.png", 16, 32, false);
  CHECK(small.rows == 16);
  CHECK(small.cols == 21);
}

TEST_CASE("grid images: small images are not enlarged; gray+alpha is composited over black") {
  std::vector<unsigned char> px{200, 255, 200, 0, 100, 128, 50, 255};  // 2×2 gray + alpha
  const Grid g = decode_image_grid(encode_png(px, 2, 2, 2), "tiny.png", 64, 64, true);
  CHECK(g.rows == 2);
  CHECK(g.cols == 2);
  CHECK(g.channels == 1);
  CHECK(contains(g.description, "not resized"));
  CHECK(g.values(0, 0) == doctest::Approx(200 / 255.0));
  CHECK(g.values(1, 0) == 0.0f);
  CHECK(g.values(2, 0) == doctest::Approx(100 / 255.0 * 128 / 255.0));
}

TEST_CASE("grid images: corrupt, truncated, empty, missing and oversized-box inputs raise InputError naming the file") {
  const fs::path dir = attnscope::test::fresh_dir("grids_images");
  std::vector<unsigned char> px(32 * 32 * 3, 90);
  const std::string png = encode_png(px, 32, 32, 3);
  write_file_atomic(dir / "good.png", png);
  write_file_atomic(dir / "truncated.png", png.substr(0, png.size() / 2));
  write_file_atomic(dir / "text.png", "this is not an image");
  write_file_atomic(dir / "empty.png", "");
  const Grid good = load_image_grid(dir / "good.png", 64, 64, false);
  CHECK(good.rows == 32);
  CHECK(good.description == "good.png 32\u00d732 (not resized, grayscale from colour)");
  for (const char* name : {"truncated.png", "text.png", "empty.png"}) {
    const std::string e = error_of([&] { load_image_grid(dir / name, 64, 64, false); });
    CAPTURE(e);
    CHECK(contains(e, (dir / name).string()));
    CHECK(contains(e, "cannot read image"));
  }
  CHECK(contains(error_of([&] { load_image_grid(dir / "missing.png", 64, 64, false); }), "missing.png"));
  CHECK(contains(error_of([&] { load_image_grid(dir / "good.png", 65, 64, false); }), "too large"));
  GridSettings s;
  s.image_path = (dir / "good.png").string();
  s.rows = s.cols = 8;
  const Grid fitted = grid_from_settings(s, true);
  CHECK(fitted.rows == 8);
  CHECK(fitted.channels == 3);
}
