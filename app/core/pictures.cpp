#include "core/pictures.h"

#include <algorithm>
#include <cmath>

namespace attnscope::gui {
namespace {

// A [rows, cols] matrix through the colormap.
Picture colour_matrix(const float* values, int rows, int cols, ValueRange range, Colormap map) {
  Picture p;
  p.width = cols;
  p.height = rows;
  p.range = range;
  p.pixels.resize(size_t(rows) * size_t(cols));
  values_to_colors(values, p.pixels.size(), range, map, p.pixels.data());
  return p;
}

// An overlay: colormap colour with opacity growing with the value, so the grid shows through where
// the head does not look.
Picture overlay(const float* values, int rows, int cols, ValueRange range, Colormap map) {
  Picture p = colour_matrix(values, rows, cols, range, map);
  for (size_t i = 0; i < p.pixels.size(); ++i) {
    const float t = normalise(values[i], range);
    p.pixels[i].a = uint8_t(std::lround(255.0f * std::sqrt(std::clamp(t, 0.0f, 1.0f))));
  }
  return p;
}

float finite_max(const float* values, size_t count) {
  float m = 0.0f;
  for (size_t i = 0; i < count; ++i)
    if (std::isfinite(values[i])) m = std::max(m, values[i]);
  return m;
}

void make_attention(Pictures& out, const AttentionAnalysis& attention) {
  const Tensor3& values = out.scores ? attention.result.scores : attention.result.probs;
  const int heads = int(values.size());
  if (heads == 0) return;
  out.heads_range = heads_value_range(values, 0, true, out.colormap);
  out.heads.resize(size_t(heads));
  // Threads only pay off for large pictures (T = 512 × 16 heads is 4 M cells, about 8 ms on one core);
  // for small ones, waking a thread that competes with the renderer for a core costs more.
  const bool big = int64_t(heads) * values[0].size() >= (int64_t(1) << 20);
#pragma omp parallel for schedule(static) if (big)
  for (int h = 0; h < heads; ++h) {
    const Mat& m = values[size_t(h)];
    const ValueRange range = out.shared_scale ? out.heads_range : heads_value_range(values, h, false, out.colormap);
    out.heads[size_t(h)] = colour_matrix(m.data(), int(m.rows()), int(m.cols()), range, out.colormap);
  }
}

void make_relpos(Pictures& out, const RelposAnalysis& r) {
  const int heads = int(r.heads.size());
  if (heads == 0) return;
  const bool full = r.dims == 1 && !r.probs.empty();
  // [0, max probability]: shared over heads, or each head's own.
  float shared_max = 0.0f;
  std::vector<float> head_max(size_t(heads), 0.0f);
  for (int h = 0; h < heads; ++h) {
    head_max[size_t(h)] = full ? finite_max(r.probs[size_t(h)].data(), size_t(r.probs[size_t(h)].size()))
                               : finite_max(r.probs_query.row(h).data(), size_t(r.probs_query.cols()));
    shared_max = std::max(shared_max, head_max[size_t(h)]);
  }
  out.relpos_range = {0.0f, shared_max};
  out.relpos_heads.resize(size_t(heads));
  const bool big = full && int64_t(heads) * r.probs[0].size() >= (int64_t(1) << 20);
#pragma omp parallel for schedule(static) if (big)
  for (int h = 0; h < heads; ++h) {
    const ValueRange range{0.0f, out.shared_scale ? shared_max : head_max[size_t(h)]};
    Picture& p = out.relpos_heads[size_t(h)];
    if (full) {
      const Mat& m = r.probs[size_t(h)];
      p = colour_matrix(m.data(), int(m.rows()), int(m.cols()), range, out.colormap);
    } else if (r.dims == 1) {
      const Vec row = r.probs_query.row(h).transpose();  // the query's row only
      p = colour_matrix(row.data(), 1, int(row.size()), range, out.colormap);
    } else {
      const Vec row = r.probs_query.row(h).transpose();  // N = R·C cells, row-major
      p = overlay(row.data(), r.rows, r.cols, range, out.colormap);
    }
  }
  if (r.dims == 2) {
    const Mat& c = r.combined;  // [R, C]
    out.relpos_combined = overlay(c.data(), int(c.rows()), int(c.cols()), {0.0f, finite_max(c.data(), size_t(c.size()))},
                                  out.colormap);
    // The grid in its own colours: gray (1 channel) or RGB (3), values in [0, 1].
    Picture& g = out.grid;
    g.width = r.cols;
    g.height = r.rows;
    g.range = {0.0f, 1.0f};
    g.pixels.resize(size_t(r.rows) * size_t(r.cols));
    for (int i = 0; i < r.rows * r.cols; ++i) {
      auto byte = [&](int ch) {
        return uint8_t(std::lround(255.0f * std::clamp(r.x(i, std::min<int>(ch, int(r.x.cols()) - 1)), 0.0f, 1.0f)));
      };
      g.pixels[size_t(i)] = Rgba{byte(0), byte(1), byte(2), 255};
    }
  }
}

void make_conv(Pictures& out, const ConvAnalysis& c) {
  const Mat &input = c.input, &mhsa = c.mhsa, &conv = c.conv, &diff = c.difference;
  // The input on its own scale (a kernel such as sobel_x has outputs far outside [0, 1]); MHSA and
  // the convolution on one shared scale so that they compare directly — as the exporter draws them.
  const ValueRange a = auto_range(mhsa.data(), size_t(mhsa.size())), b = auto_range(conv.data(), size_t(conv.size()));
  const ValueRange range{std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  out.conv_input = colour_matrix(input.data(), c.rows, c.cols, auto_range(input.data(), size_t(input.size())),
                                 Colormap::grayscale);
  out.conv_mhsa = colour_matrix(mhsa.data(), c.rows, c.cols, range, Colormap::grayscale);
  out.conv_true = colour_matrix(conv.data(), c.rows, c.cols, range, Colormap::grayscale);
  out.conv_difference = colour_matrix(diff.data(), c.rows, c.cols, symmetric_range(diff.data(), size_t(diff.size())),
                                      Colormap::diverging);
}

}  // namespace

ValueRange heads_value_range(const Tensor3& values, int head, bool shared, Colormap map) {
  const bool symmetric = map == Colormap::diverging;
  auto range_of = [&](const Mat& m) {
    return symmetric ? symmetric_range(m.data(), size_t(m.size())) : auto_range(m.data(), size_t(m.size()));
  };
  if (!shared) return range_of(values[size_t(head)]);
  // Shared: the union of the per-head ranges (a symmetric range stays symmetric).
  bool any = false;
  ValueRange all{0.0f, 1.0f};
  for (const Mat& m : values) {
    if (m.size() == 0) continue;
    const ValueRange r = range_of(m);
    all = any ? ValueRange{std::min(all.lo, r.lo), std::max(all.hi, r.hi)} : r;
    any = true;
  }
  return all;
}

Pictures make_pictures(const Analysis& analysis, const ViewSettings& view) {
  Pictures out;
  out.colormap = parse_colormap(view.colormap);
  out.scores = view.show_scores;
  out.shared_scale = view.shared_scale;
  if (analysis.attention) make_attention(out, *analysis.attention);
  if (analysis.relpos) make_relpos(out, *analysis.relpos);
  if (analysis.conv) make_conv(out, *analysis.conv);
  return out;
}

}  // namespace attnscope::gui
