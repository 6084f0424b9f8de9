// colormap.cpp — the four 256-entry tables and value → colour.
//
// Each table is built once from a handful of anchor colours (equally spaced in t) by linear
// interpolation in sRGB. The anchors are the published 9-step samples of each map: viridis and
// magma (matplotlib, van der Walt & Smith), grayscale (black → white), and a blue–white–red
// diverging map (ColorBrewer RdBu, reversed so that low = blue). Nine anchors keep viridis and
// grayscale monotone in luminance, which the tests check.
#include "attnscope/figure/colormap.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>

#include "attnscope/core/error.h"

namespace attnscope {
namespace {

using Table = std::array<Rgba, 256>;

struct Anchor {
  uint8_t r, g, b;
};

constexpr Anchor viridis_anchors[] = {{68, 1, 84},    {72, 40, 120},  {62, 73, 137},
                                      {49, 104, 142}, {38, 130, 142}, {31, 158, 137},
                                      {53, 183, 121}, {110, 206, 88}, {253, 231, 37}};
constexpr Anchor magma_anchors[] = {{0, 0, 4},      {28, 16, 68},   {79, 18, 123},
                                    {129, 37, 129}, {181, 54, 122}, {229, 80, 100},
                                    {251, 135, 97}, {254, 194, 135}, {252, 253, 191}};
constexpr Anchor grayscale_anchors[] = {{0, 0, 0}, {255, 255, 255}};
constexpr Anchor diverging_anchors[] = {{33, 102, 172},  {67, 147, 195},  {146, 197, 222},
                                        {209, 229, 240}, {247, 247, 247}, {253, 219, 199},
                                        {244, 165, 130}, {214, 96, 77},   {178, 24, 43}};

template <size_t N>
Table build_table(const Anchor (&anchors)[N]) {
  Table table;
  for (int i = 0; i < 256; ++i) {
    const double pos = double(i) / 255.0 * double(N - 1);  // position along the anchors
    const size_t k = std::min(size_t(pos), N - 2);
    const double f = pos - double(k);
    auto mix = [f](uint8_t a, uint8_t b) { return uint8_t(std::lround(a + (double(b) - double(a)) * f)); };
    table[size_t(i)] = Rgba{mix(anchors[k].r, anchors[k + 1].r), mix(anchors[k].g, anchors[k + 1].g),
                            mix(anchors[k].b, anchors[k + 1].b), 255};
  }
  return table;
}

const Table& table_of(Colormap map) {
  static const Table viridis = build_table(viridis_anchors);
  static const Table magma = build_table(magma_anchors);
  static const Table grayscale = build_table(grayscale_anchors);
  static const Table diverging = build_table(diverging_anchors);
  switch (map) {
    case Colormap::viridis: return viridis;
    case Colormap::magma: return magma;
    case Colormap::grayscale: return grayscale;
    case Colormap::diverging: return diverging;
  }
  return viridis;
}

}  // namespace

// Finite min and max of `values` (lo > hi when none is finite). Blocks of `lanes` independent
// minima and maxima without branches vectorise (a single running min/max does not), which makes the
// 4 M values of T = 512 with 16 heads a memory-speed pass.
static ValueRange finite_min_max(const float* values, size_t count) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  constexpr int lanes = 16;
  float lo[lanes], hi[lanes];
  std::fill(lo, lo + lanes, inf);
  std::fill(hi, hi + lanes, -inf);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes)
    for (int l = 0; l < lanes; ++l) {
      const float v = values[i + size_t(l)];
      const bool finite = std::fabs(v) < inf;  // false for ±inf and NaN
      const float a = finite ? v : inf, b = finite ? v : -inf;
      lo[l] = a < lo[l] ? a : lo[l];
      hi[l] = b > hi[l] ? b : hi[l];
    }
  ValueRange r{*std::min_element(lo, lo + lanes), *std::max_element(hi, hi + lanes)};
  for (; i < count; ++i)
    if (std::fabs(values[i]) < inf) r = {std::min(r.lo, values[i]), std::max(r.hi, values[i])};
  return r;
}

ValueRange auto_range(const float* values, size_t count) {
  const ValueRange r = finite_min_max(values, count);
  if (r.lo > r.hi) return {0.0f, 1.0f};
  return r;
}

ValueRange symmetric_range(const float* values, size_t count) {
  const ValueRange r = finite_min_max(values, count);
  const float m = r.lo > r.hi ? 0.0f : std::max(std::abs(r.lo), std::abs(r.hi));
  if (m == 0.0f) return {-1.0f, 1.0f};
  return {-m, m};
}

float normalise(float value, ValueRange range) {
  if (std::isnan(value)) return 0.0f;
  // A degenerate or non-finite range has no spread to show: everything sits in the middle.
  if (!(range.hi != range.lo) || !std::isfinite(range.lo) || !std::isfinite(range.hi)) return 0.5f;
  // In double, multiplying by the reciprocal of the span (as values_to_colors does, where a division
  // per value would cost more than everything else): finite for any float range and value.
  const double t = (double(value) - double(range.lo)) * (1.0 / (double(range.hi) - double(range.lo)));
  return float(std::clamp(t, 0.0, 1.0));
}

Rgba colormap_lookup(Colormap map, float t) {
  if (std::isnan(t)) t = 0.0f;
  const float clamped = std::clamp(t, 0.0f, 1.0f);
  return table_of(map)[size_t(std::lround(clamped * 255.0f))];
}

Rgba value_to_color(float value, ValueRange range, Colormap map) {
  if (!std::isfinite(value)) return masked_color(map);
  return colormap_lookup(map, normalise(value, range));
}

void values_to_colors(const float* values, size_t count, ValueRange range, Colormap map, Rgba* out) {
  const Rgba masked = masked_color(map);
  const Table& table = table_of(map);
  if (!(range.hi != range.lo) || !std::isfinite(range.lo) || !std::isfinite(range.hi)) {
    const Rgba middle = colormap_lookup(map, 0.5f);
    for (size_t i = 0; i < count; ++i) out[i] = std::isfinite(values[i]) ? middle : masked;
    return;
  }
  // The arithmetic of normalise() and colormap_lookup(), hoisted out of the loop: t in double, then
  // float; the index lround(t·255) in float. For x ≥ 0, lround(x) = ⌊x + 0.5⌋ when the sum is taken in
  // double (exact for any float x), which avoids a libm call per value. Blocks of `lanes` values
  // without branches let the compiler vectorise the index computation; index 256 is "masked".
  const double lo = double(range.lo), inverse_span = 1.0 / (double(range.hi) - double(range.lo));
  constexpr int lanes = 16;
  int index[lanes];
  const auto index_of = [&](float v) {
    const bool finite = std::fabs(v) < std::numeric_limits<float>::infinity();
    double d = ((finite ? double(v) : lo) - lo) * inverse_span;
    d = d < 0.0 ? 0.0 : d;
    d = d > 1.0 ? 1.0 : d;
    const int k = int(double(float(d) * 255.0f) + 0.5);
    return finite ? k : 256;
  };
  const auto colour = [&](int k) { return k == 256 ? masked : table[size_t(k)]; };
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    for (int l = 0; l < lanes; ++l) index[l] = index_of(values[i + size_t(l)]);
    for (int l = 0; l < lanes; ++l) out[i + size_t(l)] = colour(index[l]);
  }
  for (; i < count; ++i) out[i] = colour(index_of(values[i]));
}

Rgba masked_color(Colormap map) {
  // A colour no entry of the map can take, so masked cells never read as a value.
  switch (map) {
    case Colormap::viridis: return {214, 214, 214, 255};    // light grey (viridis has no greys)
    case Colormap::magma: return {176, 196, 222, 255};      // pale steel blue (magma is red/purple/yellow)
    case Colormap::grayscale: return {222, 196, 150, 255};  // pale tan (the map itself is grey)
    case Colormap::diverging: return {150, 150, 150, 255};  // mid grey (the map's centre is near-white)
  }
  return {214, 214, 214, 255};
}

const char* to_string(Colormap map) {
  switch (map) {
    case Colormap::viridis: return "viridis";
    case Colormap::magma: return "magma";
    case Colormap::grayscale: return "grayscale";
    case Colormap::diverging: return "diverging";
  }
  return "viridis";
}

std::vector<std::string> colormap_names() { return {"viridis", "magma", "grayscale", "diverging"}; }

Colormap parse_colormap(const std::string& name) {
  std::string lower;
  for (char c : name) lower += char(std::tolower(static_cast<unsigned char>(c)));
  for (Colormap map : {Colormap::viridis, Colormap::magma, Colormap::grayscale, Colormap::diverging})
    if (lower == to_string(map)) return map;
  std::string valid;
  for (const auto& n : colormap_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw InputError("unknown colormap '" + name + "' (valid: " + valid + ")");
}

}  // namespace attnscope
