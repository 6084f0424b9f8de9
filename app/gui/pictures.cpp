#include "gui/heatmap_colors.h"

#include <algorithm>

namespace attnscope::gui {

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

HeadsPixels make_heads_pixels(const AttentionAnalysis& attention, const ViewSettings& view) {
  HeadsPixels out;
  out.colormap = parse_colormap(view.colormap);
  out.scores = view.show_scores;
  out.shared_scale = view.shared_scale;
  const Tensor3& values = view.show_scores ? attention.result.scores : attention.result.probs;
  const int heads = int(values.size());
  if (heads == 0) return out;
  out.shared_range = heads_value_range(values, 0, true, out.colormap);
  out.heads.resize(size_t(heads));
#pragma omp parallel for schedule(static)
  for (int h = 0; h < heads; ++h) {
    const Mat& m = values[size_t(h)];
    HeadPixels& hp = out.heads[size_t(h)];
    hp.size = int(m.rows());
    hp.range = view.shared_scale ? out.shared_range : heads_value_range(values, h, false, out.colormap);
    hp.pixels.resize(size_t(m.size()));
    const float* v = m.data();
    for (Eigen::Index i = 0; i < m.size(); ++i) hp.pixels[size_t(i)] = value_to_color(v[i], hp.range, out.colormap);
  }
  return out;
}

}  // namespace attnscope::gui
