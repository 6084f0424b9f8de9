// image.h — a plain RGBA image buffer: what the engine draws exports into, with no GL involved.
//
// Pixels are row-major, 4 bytes each (R, G, B, A, straight alpha), top-left origin:
//   pixel (x, y) starts at byte 4·(y·width + x).
// The GUI uploads the same buffer as a texture; render_png.h encodes it as PNG.
#pragma once
#include <cstdint>
#include <vector>

#include "attnscope/figure/colormap.h"

namespace attnscope {

// An axis-aligned pixel rectangle: columns x … x+w−1, rows y … y+h−1.
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  int right() const { return x + w; }   // one past the last column
  int bottom() const { return y + h; }  // one past the last row
  bool empty() const { return w <= 0 || h <= 0; }
  int centre_x() const { return x + w / 2; }
  int centre_y() const { return y + h / 2; }
  bool contains(int px, int py) const { return px >= x && px < right() && py >= y && py < bottom(); }
  bool overlaps(const Rect& o) const {
    return !empty() && !o.empty() && x < o.right() && o.x < right() && y < o.bottom() && o.y < bottom();
  }
  bool inside(const Rect& outer) const {
    return x >= outer.x && y >= outer.y && right() <= outer.right() && bottom() <= outer.bottom();
  }
  bool operator==(const Rect&) const = default;
};

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;  // [height, width, 4]

  Image() = default;
  // A width × height image filled with `fill`. Throws InputError when a side is negative or the image
  // would exceed the export limits (image_max_side per side, image_max_pixels in all).
  Image(int width, int height, Rgba fill);

  Rgba pixel(int x, int y) const {
    const uint8_t* p = &rgba[(size_t(y) * size_t(width) + size_t(x)) * 4];
    return {p[0], p[1], p[2], p[3]};
  }
  void set_pixel(int x, int y, Rgba c) {
    uint8_t* p = &rgba[(size_t(y) * size_t(width) + size_t(x)) * 4];
    p[0] = c.r, p[1] = c.g, p[2] = c.b, p[3] = c.a;
  }
};

// The largest image an export may make: 16384 pixels per side, 2^27 pixels (512 MiB of RGBA).
inline constexpr int image_max_side = 16384;
inline constexpr int64_t image_max_pixels = int64_t(1) << 27;

// Fills `r` (clipped to the image) with an opaque colour.
void fill_rect(Image& image, const Rect& r, Rgba color);
// Draws the outline of `r` `thickness` pixels wide, inside `r` (clipped to the image).
void stroke_rect(Image& image, const Rect& r, int thickness, Rgba color);
// Blends `color` over pixel (x, y) with coverage ∈ [0, 255]; outside the image does nothing.
void blend_pixel(Image& image, int x, int y, Rgba color, uint8_t coverage);
// Number of pixels in `r` (clipped) that differ from `background` — "is anything drawn here".
int64_t count_pixels_unlike(const Image& image, const Rect& r, Rgba background);

}  // namespace attnscope
