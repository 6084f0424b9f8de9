// grids.h — the 2D inputs of relative-position attention: procedural patterns and loaded images.
//
// A grid is R×C cells (1 ≤ R, C ≤ limits::max_grid_side), indexed row-major i = r·C + c, each cell
// holding `channels` values in [0, 1]:
//   values  [N, ch]  N = R·C; ch = 1 for patterns and grayscale images, 3 (RGB) for colour images
// Patterns: checkerboard, gradient, rings, glyph (a digit "4" drawn with anti-aliased strokes),
// noise (uniform, seeded). Images (PNG, JPEG, … anything stb_image reads) are decoded from memory,
// alpha composited over black, and shrunk by exact area averaging to fit inside the requested
// R×C box keeping the aspect ratio (never enlarged); `description` states what happened, e.g.
// "photo.png 640×480 → 64×48 (area average)".
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/scene/scene.h"
#include "attnscope/core/types.h"

namespace attnscope {

struct Grid {
  int rows = 0;             // R
  int cols = 0;             // C
  int channels = 1;         // 1 (gray) or 3 (RGB)
  Mat values;               // [R·C, channels], row-major cells, values in [0, 1]
  std::string description;  // one sentence for the UI: "rings 16×16", "cat.png 640×480 → 64×48 (area average)"
};

// "checkerboard", "gradient", "rings", "glyph", "noise".
const std::vector<std::string>& grid_pattern_names();

// Throws InputError unless 1 ≤ rows, cols ≤ limits::max_grid_side (says what is valid).
void validate_grid_size(int rows, int cols);

// A procedural pattern [R·C, 1]. `seed` only matters for noise. Throws InputError for an unknown name
// (listing the valid ones) or a bad size.
Grid make_pattern(const std::string& name, int rows, int cols, uint64_t seed);

// Decodes an image held in memory and fits it inside max_rows × max_cols (each ≤ max_grid_side).
// keep_color: RGB images stay 3 channels; otherwise (and for gray images) 1 channel of Rec. 601 luma
// 0.299R + 0.587G + 0.114B. `name` is used in messages and the description. Corrupt, truncated or
// unsupported data raises InputError naming `name` and stb_image's reason.
Grid decode_image_grid(std::string_view bytes, const std::string& name, int max_rows, int max_cols, bool keep_color);

// read_file (at most limits::max_image_bytes) + decode_image_grid. Unreadable files raise InputError
// naming the path.
Grid load_image_grid(const std::filesystem::path& path, int max_rows, int max_cols, bool keep_color);

// The grid a scene's settings describe: the image when image_path is set (fitted inside rows × cols),
// else the pattern at rows × cols.
Grid grid_from_settings(const GridSettings& settings, bool keep_color);

// [R·C, ch] → [R·C, 1] Rec. 601 luma (a 1-channel grid is returned unchanged).
Mat grid_luma(const Grid& grid);

// Shrinks one channel plane [h, w] to [out_h, out_w] (out ≤ in) by exact area averaging: each output
// cell is the mean of the input area it covers, fractional edge pixels weighted by their overlap.
Mat area_resize(const Mat& plane, int out_h, int out_w);

// The largest (rows, cols) with rows ≤ max_rows, cols ≤ max_cols, ratio ≈ height:width, never larger
// than the image itself, each at least 1.
std::array<int, 2> fit_inside(int height, int width, int max_rows, int max_cols);

}  // namespace attnscope
