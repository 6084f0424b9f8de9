// image.cpp — the RGBA buffer and its few drawing primitives (rectangles and blended pixels).
#include "attnscope/figure/image.h"

#include <algorithm>
#include <string>

#include "attnscope/core/error.h"

namespace attnscope {

Image::Image(int w, int h, Rgba fill) {
  require(w >= 0 && h >= 0, "image size must not be negative, got " + std::to_string(w) + "x" + std::to_string(h));
  require(w <= image_max_side && h <= image_max_side && int64_t(w) * h <= image_max_pixels,
          "the image would be " + std::to_string(w) + "x" + std::to_string(h) + " pixels, more than the limit of " +
              std::to_string(image_max_side) + " per side and " + std::to_string(image_max_pixels / 1000000) +
              " million in all; lower the scale or export one head instead of all");
  width = w;
  height = h;
  rgba.resize(size_t(w) * size_t(h) * 4);
  for (size_t i = 0; i < rgba.size(); i += 4) {
    rgba[i] = fill.r;
    rgba[i + 1] = fill.g;
    rgba[i + 2] = fill.b;
    rgba[i + 3] = fill.a;
  }
}

namespace {
Rect clip(const Image& image, const Rect& r) {
  const int x0 = std::max(r.x, 0), y0 = std::max(r.y, 0);
  const int x1 = std::min(r.right(), image.width), y1 = std::min(r.bottom(), image.height);
  return {x0, y0, std::max(0, x1 - x0), std::max(0, y1 - y0)};
}
}  // namespace

void fill_rect(Image& image, const Rect& r, Rgba color) {
  const Rect c = clip(image, r);
  for (int y = c.y; y < c.bottom(); ++y) {
    uint8_t* p = &image.rgba[(size_t(y) * size_t(image.width) + size_t(c.x)) * 4];
    for (int x = 0; x < c.w; ++x, p += 4) {
      p[0] = color.r, p[1] = color.g, p[2] = color.b, p[3] = color.a;
    }
  }
}

void stroke_rect(Image& image, const Rect& r, int thickness, Rgba color) {
  const int t = std::min({thickness, r.w / 2 + 1, r.h / 2 + 1});
  if (t <= 0 || r.empty()) return;
  fill_rect(image, {r.x, r.y, r.w, t}, color);
  fill_rect(image, {r.x, r.bottom() - t, r.w, t}, color);
  fill_rect(image, {r.x, r.y, t, r.h}, color);
  fill_rect(image, {r.right() - t, r.y, t, r.h}, color);
}

void blend_pixel(Image& image, int x, int y, Rgba color, uint8_t coverage) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height || coverage == 0) return;
  uint8_t* p = &image.rgba[(size_t(y) * size_t(image.width) + size_t(x)) * 4];
  const int a = coverage * color.a / 255;
  p[0] = uint8_t((color.r * a + p[0] * (255 - a) + 127) / 255);
  p[1] = uint8_t((color.g * a + p[1] * (255 - a) + 127) / 255);
  p[2] = uint8_t((color.b * a + p[2] * (255 - a) + 127) / 255);
  p[3] = uint8_t(a + p[3] * (255 - a) / 255);
}

int64_t count_pixels_unlike(const Image& image, const Rect& r, Rgba background) {
  const Rect c = clip(image, r);
  int64_t n = 0;
  for (int y = c.y; y < c.bottom(); ++y)
    for (int x = c.x; x < c.right(); ++x) n += !(image.pixel(x, y) == background);
  return n;
}

}  // namespace attnscope
