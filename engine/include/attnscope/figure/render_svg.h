// render_svg.h — a laid-out figure as SVG: one <rect class="cell"> per cell, <text> labels.
//
// Vector output for papers: opens in browsers and Inkscape, scales without blur. The geometry is the
// layout's (so the SVG and the PNG agree); text uses the same fonts by family name, sized so that
// the Latin font matches the layout's measurements. Colour bars are linear gradients of 33 stops.
#pragma once
#include <string>
#include <string_view>

#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/text_raster.h"

namespace attnscope {

// The most cells an SVG export may hold (each is one element); larger figures are refused with a
// message suggesting PNG or a single head.
inline constexpr int64_t svg_max_cells = int64_t(1) << 22;

// A complete, well-formed SVG 1.1 document (UTF-8). Throws InputError above svg_max_cells.
std::string render_svg(const FigureSpec& spec, const FigureLayout& layout, const TextRasterizer& text);

// Text safe inside an XML element or a double-quoted attribute: & < > " ' escaped, invalid UTF-8
// bytes replaced by U+FFFD, and control characters XML forbids replaced by spaces.
std::string escape_xml(std::string_view text);

}  // namespace attnscope
