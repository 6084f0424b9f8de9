// colormap.h — value → colour, shared by the GUI's textures and every exported image, so a cell has
// the same colour on screen and on paper.
//
//   value ──normalise(range)──► t ∈ [0, 1] ──256-entry table──► RGBA
// The range is explicit or automatic (finite min/max of the data); min == max maps to t = 0.5.
// −inf (a masked score) maps to the table's dedicated "masked" colour; NaN likewise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

enum class Colormap { viridis, magma, grayscale, diverging };

struct Rgba {
  uint8_t r = 0, g = 0, b = 0, a = 255;
  bool operator==(const Rgba&) const = default;
};

struct ValueRange {
  float lo = 0.0f;
  float hi = 1.0f;
};

// Finite min/max of `values`; {0, 1} when none is finite.
ValueRange auto_range(const float* values, size_t count);
// Symmetric range {−m, m}, m = max |finite value| (for the diverging map); {−1, 1} when m == 0.
ValueRange symmetric_range(const float* values, size_t count);

// t = (v − lo) / (hi − lo) clamped to [0, 1]; hi == lo → 0.5.
float normalise(float value, ValueRange range);
// t ∈ [0, 1] → the nearest of 256 table entries.
Rgba colormap_lookup(Colormap map, float t);
// value → colour; non-finite values get masked_color(map).
Rgba value_to_color(float value, ValueRange range, Colormap map);
Rgba masked_color(Colormap map);
// out[i] = value_to_color(values[i], range, map) for i < count, bit for bit, at about a nanosecond a
// value (T = 512 with 16 heads is 4 M cells per settings change). value_to_color is its reference.
void values_to_colors(const float* values, size_t count, ValueRange range, Colormap map, Rgba* out);

const char* to_string(Colormap map);
// Throws InputError: "unknown colormap 'x' (valid: viridis, magma, grayscale, diverging)".
Colormap parse_colormap(const std::string& name);
std::vector<std::string> colormap_names();

}  // namespace attnscope
