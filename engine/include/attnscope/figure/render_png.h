// render_png.h — a laid-out figure drawn into an Image (no GL), and PNG bytes from an Image.
//
// The GUI shows the same Image as a texture (the Export panel's preview) and the CLI writes it:
//   Image image = render_figure(spec, layout, text);
//   write_png("heads.png", image);          // PNG through write_file_atomic (temp name + rename)
#pragma once
#include <filesystem>
#include <string>

#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/image.h"
#include "attnscope/figure/text_raster.h"

namespace attnscope {

// Text and line colours on the white background.
inline constexpr Rgba figure_background{255, 255, 255, 255};
inline constexpr Rgba figure_text{34, 34, 34, 255};
inline constexpr Rgba figure_lines{85, 85, 85, 255};

// Draws `spec` at `layout` (from layout_figure with the same spec and rasteriser): every cell is
// filled with value_to_color(value, its colour bar's range and map), exactly, over its whole
// rectangle except where the marked cell's outline is drawn (its centre pixel keeps the colour).
// Throws InputError when the image would exceed the size limits (image.h).
Image render_figure(const FigureSpec& spec, const FigureLayout& layout, const TextRasterizer& text);

// PNG bytes: 8-bit RGB when every pixel is opaque, else RGBA. Throws InputError for an empty image.
std::string encode_png(const Image& image);
// encode_png, then write_file_atomic: a failure leaves no file behind.
void write_png(const std::filesystem::path& path, const Image& image);

}  // namespace attnscope
