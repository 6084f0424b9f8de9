// grids.cpp — procedural patterns and images as 2D grids for relative-position attention.
//
// Sections: helpers · patterns · resizing · images · settings
#include "attnscope/relpos/grids.h"

#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/core/limits.h"
#include "attnscope/core/rng.h"

namespace attnscope {

// ---- helpers ------------------------------------------------------------------------------------
namespace {

// stb_image decodes the whole image before we shrink it to at most 64×64, and an uncompressed
// format's header can claim any size in a few bytes (fuzz_image: a 62-byte TGA claiming 8224×8224
// took seconds and gigabytes). 2^24 pixels (a 4096×4096 or 12-megapixel photo) is plenty.
constexpr int64_t max_image_pixels = int64_t(1) << 24;

std::string size_text(int a, int b) { return std::to_string(a) + "\u00d7" + std::to_string(b); }

// Distance from point p to segment a–b.
double segment_distance(double px, double py, double ax, double ay, double bx, double by) {
  const double vx = bx - ax, vy = by - ay;
  const double len_sq = vx * vx + vy * vy;
  const double t = len_sq > 0 ? std::clamp(((px - ax) * vx + (py - ay) * vy) / len_sq, 0.0, 1.0) : 0.0;
  const double dx = px - (ax + t * vx), dy = py - (ay + t * vy);
  return std::sqrt(dx * dx + dy * dy);
}

// One weight row per output coordinate: weight of input coordinate y = overlap of [y, y + 1) with
// the output's span [i·in/out, (i + 1)·in/out), divided by the span's length.
MatD area_weights(int in, int out) {
  MatD w = MatD::Zero(out, in);
  const double span = double(in) / out;
  for (int i = 0; i < out; ++i) {
    const double lo = i * span, hi = (i + 1) * span;
    for (int y = int(std::floor(lo)); y < in && y < hi; ++y) {
      const double overlap = std::min(hi, double(y + 1)) - std::max(lo, double(y));
      if (overlap > 0) w(i, y) = overlap / span;
    }
  }
  return w;
}

struct StbiFree {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

}  // namespace

void validate_grid_size(int rows, int cols) {
  const std::string max = std::to_string(limits::max_grid_side);
  require(rows >= 1 && cols >= 1, "the grid " + std::to_string(rows) + "x" + std::to_string(cols) +
                                      " is empty: rows and cols must be 1 to " + max);
  require(rows <= limits::max_grid_side && cols <= limits::max_grid_side,
          "the grid " + std::to_string(rows) + "x" + std::to_string(cols) + " is too large: rows and cols must be 1 to " +
              max + " (at most " + max + "x" + max + ")");
}

// ---- patterns -----------------------------------------------------------------------------------

const std::vector<std::string>& grid_pattern_names() {
  static const std::vector<std::string> names{"checkerboard", "gradient", "rings", "glyph", "noise"};
  return names;
}

Grid make_pattern(const std::string& name, int rows, int cols, uint64_t seed) {
  const auto& names = grid_pattern_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string valid;
    for (size_t i = 0; i < names.size(); ++i) valid += (i ? ", " : "") + names[i];
    throw InputError("unknown grid pattern '" + name + "': valid patterns are " + valid);
  }
  validate_grid_size(rows, cols);
  Grid g;
  g.rows = rows;
  g.cols = cols;
  g.channels = 1;
  g.values.resize(Eigen::Index(rows) * cols, 1);
  g.description = name + " pattern, " + size_text(rows, cols) + " cells";
  auto at = [&](int r, int c) -> float& { return g.values(Eigen::Index(r) * cols + c, 0); };

  if (name == "checkerboard") {
    const int square = std::max(1, std::min(rows, cols) / 8);  // about eight squares across
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) at(r, c) = float(((r / square) + (c / square)) % 2);
  } else if (name == "gradient") {
    // Diagonal ramp from 0 (top left) to 1 (bottom right).
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        at(r, c) = float(0.5 * (rows > 1 ? double(r) / (rows - 1) : 0.0) + 0.5 * (cols > 1 ? double(c) / (cols - 1) : 0.0));
  } else if (name == "rings") {
    const double cr = (rows - 1) / 2.0, cc = (cols - 1) / 2.0;
    const double period = std::max(2.0, std::min(rows, cols) / 4.0);  // about two rings from centre to edge
    const double pi = 3.14159265358979323846;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        at(r, c) = float(0.5 + 0.5 * std::cos(2 * pi * std::hypot(r - cr, c - cc) / period));
  } else if (name == "glyph") {
    // A digit "4" from three strokes in unit coordinates (x right, y down), scaled to the grid and
    // drawn with a one-cell anti-aliased edge, so it has vertical, horizontal and diagonal edges.
    struct Stroke { double ax, ay, bx, by; };
    const Stroke strokes[] = {{0.64, 0.12, 0.64, 0.88}, {0.64, 0.12, 0.20, 0.64}, {0.20, 0.64, 0.82, 0.64}};
    const double half_width = std::max(0.6, 0.07 * std::min(rows, cols));
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const double x = c + 0.5, y = r + 0.5;
        double d = 1e30;
        for (const Stroke& s : strokes)
          d = std::min(d, segment_distance(x, y, s.ax * cols, s.ay * rows, s.bx * cols, s.by * rows));
        at(r, c) = float(std::clamp(half_width + 0.5 - d, 0.0, 1.0));
      }
  } else {  // noise
    Rng rng(seed);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) at(r, c) = rng.uniform01();
    g.description = "noise pattern (seed " + std::to_string(seed) + "), " + size_text(rows, cols) + " cells";
  }
  return g;
}

// ---- resizing -----------------------------------------------------------------------------------

Mat area_resize(const Mat& plane, int out_h, int out_w) {
  require(out_h >= 1 && out_w >= 1 && out_h <= plane.rows() && out_w <= plane.cols(),
          "area_resize only shrinks: [" + std::to_string(plane.rows()) + ", " + std::to_string(plane.cols()) +
              "] cannot become [" + std::to_string(out_h) + ", " + std::to_string(out_w) + "]");
  const MatD wr = area_weights(int(plane.rows()), out_h);
  const MatD wc = area_weights(int(plane.cols()), out_w);
  return (wr * plane.cast<double>() * wc.transpose()).cast<float>();
}

std::array<int, 2> fit_inside(int height, int width, int max_rows, int max_cols) {
  if (height <= max_rows && width <= max_cols) return {height, width};
  const double scale = std::min(double(max_rows) / height, double(max_cols) / width);
  const int rows = std::clamp(int(std::lround(height * scale)), 1, max_rows);
  const int cols = std::clamp(int(std::lround(width * scale)), 1, max_cols);
  return {rows, cols};
}

// ---- images -------------------------------------------------------------------------------------

namespace {

// stb_image sizes its PNG buffers from the chunk lengths before it reads the chunks, so a few bytes
// claiming a 2 GB chunk make it allocate 2 GB (found by fuzz_image). Walk the chunks first: every
// declared length must fit in the bytes that follow.
void check_png_chunks(std::string_view bytes, const std::string& name) {
  static constexpr char signature[] = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 8 || bytes.substr(0, 8) != std::string_view(signature, 8)) return;  // not a PNG
  size_t at = 8;
  while (at < bytes.size()) {
    require(bytes.size() - at >= 12, "cannot read image '" + name + "': a PNG chunk is cut off at byte " +
                                         std::to_string(at) + " (corrupt or truncated?)");
    uint64_t length = 0;
    for (int k = 0; k < 4; ++k) length = (length << 8) | static_cast<unsigned char>(bytes[at + size_t(k)]);
    require(length <= bytes.size() - at - 12, "cannot read image '" + name + "': the PNG chunk at byte " +
                                                  std::to_string(at) + " claims " + std::to_string(length) +
                                                  " bytes but the file ends sooner (corrupt or truncated?)");
    if (bytes.substr(at + 4, 4) == "IEND") return;
    at += 12 + size_t(length);
  }
}

// `name` appears in error messages, `display_name` in the description.
Grid decode_image(std::string_view bytes, const std::string& name, const std::string& display_name, int max_rows,
                  int max_cols, bool keep_color) {
  validate_grid_size(max_rows, max_cols);
  require(!bytes.empty(), "cannot read image '" + name + "': the file is empty");
  require(bytes.size() <= size_t(limits::max_image_bytes) && bytes.size() <= size_t(INT32_MAX),
          "cannot read image '" + name + "': larger than " + std::to_string(limits::max_image_bytes >> 20) + " MiB");
  check_png_chunks(bytes, name);
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = int(bytes.size());
  int width = 0, height = 0, stored = 0;
  if (!stbi_info_from_memory(data, len, &width, &height, &stored))
    throw InputError("cannot read image '" + name + "': " + stbi_failure_reason() +
                     " (expected a PNG, JPEG, BMP, GIF, TGA, PSD, HDR or PNM file)");
  require(width >= 1 && height >= 1, "cannot read image '" + name + "': it has no pixels");
  // No real image format packs more than a few thousand pixels into one byte (deflate's limit is
  // 1032:1), so a header claiming more is lying about a truncated or corrupt file (fuzz_image: 21
  // bytes of TGA claiming 160×32800 pixels).
  require(int64_t(width) * height <= int64_t(bytes.size()) * 4096 + 65536,
          "cannot read image '" + name + "': its header claims " + size_text(width, height) + " pixels but the file holds " +
              std::to_string(bytes.size()) + " bytes (corrupt or truncated?)");
  require(int64_t(width) * height <= max_image_pixels,
          "cannot read image '" + name + "': " + size_text(width, height) + " pixels is more than " +
              std::to_string(max_image_pixels) + " pixels");
  int channels = 0;
  std::unique_ptr<unsigned char, StbiFree> pixels(stbi_load_from_memory(data, len, &width, &height, &channels, 0));
  if (!pixels) throw InputError("cannot read image '" + name + "': " + stbi_failure_reason() + " (corrupt or truncated?)");

  // 1. Planes in [0, 1], alpha composited over black.
  const bool color = channels >= 3;
  const bool has_alpha = channels == 2 || channels == 4;
  const int planes_in = color ? 3 : 1;
  std::vector<Mat> planes(planes_in, Mat(height, width));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const unsigned char* px = pixels.get() + (size_t(y) * width + x) * channels;
      const float alpha = has_alpha ? px[channels - 1] / 255.0f : 1.0f;
      for (int p = 0; p < planes_in; ++p) planes[p](y, x) = px[p] / 255.0f * alpha;
    }
  // 2. Gray unless colour is kept: Rec. 601 luma.
  if (color && !keep_color) planes = {0.299f * planes[0] + 0.587f * planes[1] + 0.114f * planes[2]};

  // 3. Shrink into the box.
  const auto [rows, cols] = fit_inside(height, width, max_rows, max_cols);
  const bool resized = rows != height || cols != width;
  Grid g;
  g.rows = rows;
  g.cols = cols;
  g.channels = int(planes.size());
  g.values.resize(Eigen::Index(rows) * cols, g.channels);
  for (int p = 0; p < g.channels; ++p) {
    const Mat small = resized ? area_resize(planes[p], rows, cols) : planes[p];
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) g.values(Eigen::Index(r) * cols + c, p) = small(r, c);
  }
  const std::string tone = g.channels == 3 ? "RGB" : (color ? "grayscale from colour" : "grayscale");
  g.description = display_name + " " + size_text(width, height) +
                  (resized ? " \u2192 " + size_text(cols, rows) + " (area average, " + tone + ")"
                           : " (not resized, " + tone + ")");
  return g;
}

}  // namespace

Grid decode_image_grid(std::string_view bytes, const std::string& name, int max_rows, int max_cols, bool keep_color) {
  return decode_image(bytes, name, name, max_rows, max_cols, keep_color);
}

Grid load_image_grid(const std::filesystem::path& path, int max_rows, int max_cols, bool keep_color) {
  validate_grid_size(max_rows, max_cols);
  const std::string bytes = read_file(path, limits::max_image_bytes);
  return decode_image(bytes, path.string(), path.filename().string(), max_rows, max_cols, keep_color);
}

// ---- settings -----------------------------------------------------------------------------------

Grid grid_from_settings(const GridSettings& s, bool keep_color) {
  validate_grid_size(s.rows, s.cols);
  if (!s.image_path.empty()) return load_image_grid(s.image_path, s.rows, s.cols, keep_color);
  return make_pattern(s.pattern, s.rows, s.cols, s.seed);
}

Mat grid_luma(const Grid& g) {
  if (g.channels == 1) return g.values;
  require(g.channels == 3, "a grid has 1 or 3 channels, got " + std::to_string(g.channels));
  return 0.299f * g.values.col(0) + 0.587f * g.values.col(1) + 0.114f * g.values.col(2);
}

}  // namespace attnscope
