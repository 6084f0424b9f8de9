// test_colormap.cpp — value → [0, 1] → colour (colormap.h).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnscope/core/rng.h"

#include "attnscope/figure/colormap.h"
#include "attnscope/core/error.h"

using namespace attnscope;

namespace {

const Colormap all_maps[] = {Colormap::viridis, Colormap::magma, Colormap::grayscale, Colormap::diverging};

// Relative luminance (WCAG / sRGB), from linearised channels.
double luminance(Rgba c) {
  auto lin = [](uint8_t v) {
    const double s = v / 255.0;
    return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

}  // namespace

TEST_CASE("colormap: normalise maps the range onto [0, 1] and clamps outside it") {
  const ValueRange r{-2.0f, 6.0f};
  CHECK(normalise(-2.0f, r) == 0.0f);
  CHECK(normalise(6.0f, r) == 1.0f);
  CHECK(normalise(2.0f, r) == doctest::Approx(0.5));
  CHECK(normalise(0.0f, r) == doctest::Approx(0.25));
  CHECK(normalise(-100.0f, r) == 0.0f);
  CHECK(normalise(100.0f, r) == 1.0f);
  CHECK(normalise(INFINITY, r) == 1.0f);
  CHECK(normalise(-INFINITY, r) == 0.0f);
}

TEST_CASE("colormap: min == max maps every value to the middle") {
  const ValueRange flat{3.0f, 3.0f};
  CHECK(normalise(3.0f, flat) == 0.5f);
  CHECK(normalise(-7.0f, flat) == 0.5f);
  CHECK(value_to_color(3.0f, flat, Colormap::grayscale) == colormap_lookup(Colormap::grayscale, 0.5f));
}

TEST_CASE("colormap: automatic range is the finite min and max") {
  const float v[] = {0.5f, -INFINITY, 2.0f, std::numeric_limits<float>::quiet_NaN(), -1.5f, INFINITY};
  const ValueRange r = auto_range(v, 6);
  CHECK(r.lo == -1.5f);
  CHECK(r.hi == 2.0f);
  const float none[] = {-INFINITY, std::numeric_limits<float>::quiet_NaN()};
  CHECK(auto_range(none, 2).lo == 0.0f);
  CHECK(auto_range(none, 2).hi == 1.0f);
  CHECK(auto_range(nullptr, 0).hi == 1.0f);
  const float same[] = {4.0f, 4.0f};
  CHECK(auto_range(same, 2).lo == 4.0f);
  CHECK(auto_range(same, 2).hi == 4.0f);
}

TEST_CASE("colormap: symmetric range is centred on zero") {
  const float v[] = {0.5f, -3.0f, 2.0f, -INFINITY};
  const ValueRange r = symmetric_range(v, 4);
  CHECK(r.lo == -3.0f);
  CHECK(r.hi == 3.0f);
  const float zeros[] = {0.0f, 0.0f};
  CHECK(symmetric_range(zeros, 2).lo == -1.0f);
  CHECK(symmetric_range(zeros, 2).hi == 1.0f);
}

TEST_CASE("colormap: -inf and NaN get the masked colour, which no value can take") {
  for (Colormap map : all_maps) {
    INFO(std::string(to_string(map)));
    const ValueRange r{0.0f, 1.0f};
    CHECK(value_to_color(-INFINITY, r, map) == masked_color(map));
    CHECK(value_to_color(std::numeric_limits<float>::quiet_NaN(), r, map) == masked_color(map));
    CHECK(value_to_color(INFINITY, r, map) == masked_color(map));
    const Rgba m = masked_color(map);
    int closest = 1 << 30;
    for (int i = 0; i < 256; ++i) {
      const Rgba c = colormap_lookup(map, i / 255.0f);
      closest = std::min(closest, std::abs(c.r - m.r) + std::abs(c.g - m.g) + std::abs(c.b - m.b));
    }
    CHECK(closest >= 30);  // clearly distinguishable from every entry of the map
  }
}

TEST_CASE("colormap: endpoints are the published end colours") {
  CHECK(colormap_lookup(Colormap::viridis, 0.0f) == Rgba{68, 1, 84, 255});
  CHECK(colormap_lookup(Colormap::viridis, 1.0f) == Rgba{253, 231, 37, 255});
  CHECK(colormap_lookup(Colormap::magma, 0.0f) == Rgba{0, 0, 4, 255});
  CHECK(colormap_lookup(Colormap::magma, 1.0f) == Rgba{252, 253, 191, 255});
  CHECK(colormap_lookup(Colormap::grayscale, 0.0f) == Rgba{0, 0, 0, 255});
  CHECK(colormap_lookup(Colormap::grayscale, 1.0f) == Rgba{255, 255, 255, 255});
  // Diverging: blue at the low end, red at the high end, near-white in the middle.
  const Rgba lo = colormap_lookup(Colormap::diverging, 0.0f);
  const Rgba mid = colormap_lookup(Colormap::diverging, 0.5f);
  const Rgba hi = colormap_lookup(Colormap::diverging, 1.0f);
  CHECK(lo.b > lo.r);
  CHECK(hi.r > hi.b);
  CHECK(mid.r >= 240);
  CHECK(mid.g >= 240);
  CHECK(mid.b >= 240);
  // Out-of-range t clamps to the ends.
  CHECK(colormap_lookup(Colormap::viridis, -3.0f) == colormap_lookup(Colormap::viridis, 0.0f));
  CHECK(colormap_lookup(Colormap::viridis, 7.0f) == colormap_lookup(Colormap::viridis, 1.0f));
}

// One 8-bit step of one channel moves luminance by up to ~1e-3; neighbouring entries may dip by
// that much where one channel falls while another rises, but never more, and the map as a whole
// rises strictly (every 8th entry is lighter than the one 8 before).
constexpr double quantisation = 1e-3;

TEST_CASE("colormap: viridis, magma and grayscale rise monotonically in luminance") {
  for (Colormap map : {Colormap::viridis, Colormap::magma, Colormap::grayscale}) {
    INFO(std::string(to_string(map)));
    int first_dip = -1;
    for (int i = 1; i < 256; ++i) {
      const double y = luminance(colormap_lookup(map, i / 255.0f));
      const double y_prev = luminance(colormap_lookup(map, (i - 1) / 255.0f));
      if (y < y_prev - quantisation && first_dip < 0) first_dip = i;
    }
    INFO("first entry darker than its predecessor: " << first_dip);
    CHECK(first_dip == -1);
    for (int i = 8; i < 256; i += 8)
      CHECK(luminance(colormap_lookup(map, i / 255.0f)) > luminance(colormap_lookup(map, (i - 8) / 255.0f)));
  }
}

TEST_CASE("colormap: diverging is darkest at the ends and lightest in the middle") {
  double previous = -1.0;
  for (int i = 0; i <= 127; ++i) {
    const double y = luminance(colormap_lookup(Colormap::diverging, i / 255.0f));
    CHECK(y >= previous - quantisation);
    previous = y;
  }
  previous = -1.0;
  for (int i = 255; i >= 128; --i) {
    const double y = luminance(colormap_lookup(Colormap::diverging, i / 255.0f));
    CHECK(y >= previous - quantisation);
    previous = y;
  }
}

TEST_CASE("colormap: value_to_color is lookup of the normalised value") {
  const ValueRange r{-1.0f, 3.0f};
  for (Colormap map : all_maps)
    for (float v : {-5.0f, -1.0f, 0.0f, 0.37f, 1.0f, 2.9f, 3.0f, 10.0f})
      CHECK(value_to_color(v, r, map) == colormap_lookup(map, normalise(v, r)));
  // Neighbouring table entries differ: 256 distinct steps, not a coarse palette.
  int distinct = 1;
  for (int i = 1; i < 256; ++i)
    distinct += !(colormap_lookup(Colormap::viridis, i / 255.0f) == colormap_lookup(Colormap::viridis, (i - 1) / 255.0f));
  CHECK(distinct >= 200);
}

TEST_CASE("colormap: values_to_colors equals value_to_color bit for bit") {
  // Values on every table boundary (t = (k + ½)/255) and one float either side of it, random values
  // inside and outside the range, and the non-finite ones.
  const ValueRange ranges[] = {{0.0f, 1.0f}, {-1.0f, 3.0f}, {-2.5e-7f, 1.0e-7f}, {-3.0e30f, 3.0e30f},
                               {2.0f, 2.0f}, {0.0f, INFINITY}, {-INFINITY, 1.0f}, {5.0f, -5.0f}};
  Rng rng(7);
  for (const ValueRange& r : ranges) {
    std::vector<float> values = {-INFINITY, INFINITY, std::numeric_limits<float>::quiet_NaN(), r.lo, r.hi,
                                 -std::numeric_limits<float>::max(), std::numeric_limits<float>::max(), 0.0f, -0.0f};
    const double span = double(r.hi) - double(r.lo);
    for (int k = 0; k < 256; ++k) {
      const float edge = float(double(r.lo) + (k + 0.5) / 255.0 * span);
      values.insert(values.end(), {edge, std::nextafter(edge, INFINITY), std::nextafter(edge, -INFINITY)});
    }
    for (int i = 0; i < 20000; ++i) values.push_back(float(double(r.lo) + (rng.uniform01() * 1.4 - 0.2) * span));
    for (Colormap map : all_maps) {
      std::vector<Rgba> fast(values.size());
      values_to_colors(values.data(), values.size(), r, map, fast.data());
      int mismatches = 0;
      for (size_t i = 0; i < values.size(); ++i) mismatches += !(fast[i] == value_to_color(values[i], r, map));
      CHECK_MESSAGE(mismatches == 0, "range [", r.lo, ", ", r.hi, "] map ", to_string(map));
    }
  }
}

TEST_CASE("colormap: names round-trip and an unknown name lists the valid ones") {
  for (Colormap map : all_maps) CHECK(parse_colormap(to_string(map)) == map);
  CHECK(parse_colormap("Magma") == Colormap::magma);
  CHECK(colormap_names().size() == 4);
  try {
    parse_colormap("jet");
    FAIL("parse_colormap accepted 'jet'");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("'jet'") != std::string::npos);
    for (const auto& name : colormap_names()) CHECK(msg.find(name) != std::string::npos);
  }
  CHECK_THROWS_AS(parse_colormap(""), InputError);
}
