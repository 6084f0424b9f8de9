// pictures.cpp — the window's pictures, coloured by the engine's figure layer (export.h's
// export_figure + heatmap_layout.h's panel_colors): the same values, masks, ranges and colours as an
// exported figure of the same view settings.
#include "core/pictures.h"

#include <algorithm>
#include <cmath>

#include "attnscope/figure/export.h"

namespace attnscope::gui {
namespace {

// The figure of `what` for these view settings, as the exporter would draw it (without a caption).
FigureSpec figure_of(const Analysis& analysis, const ViewSettings& view, ExportWhat what) {
  ExportRequest request = export_request_for_view(view);
  request.what = what;
  request.caption = false;
  request.sink_column = false;  // the pictures' cells are the tokens' (row, key) cells
  // A token set of other tokens (the input changed under it, the pictures not yet remade) draws nothing.
  const int tokens = analysis.attention ? int(analysis.attention->labels.size()) : 0;
  if (std::any_of(request.token_set.tokens.begin(), request.token_set.tokens.end(), [tokens](int t) { return t >= tokens; }))
    request.token_set = TokenSet{};
  return export_figure(analysis, request);
}

Picture picture_of(const FigureSpec& f, size_t panel) {
  const PanelSpec& p = f.panels[panel];
  Picture out;
  out.width = p.cols;
  out.height = p.rows;
  out.range = f.colorbars[size_t(p.colorbar)].range;
  out.pixels = panel_colors(f, panel);
  return out;
}

// An overlay on the grid: the figure's colour, with opacity growing with the probability's share of
// the largest one (whatever the colour range, which is symmetric for the diverging map), so the grid
// shows through where the head does not look.
Picture overlay_of(const FigureSpec& f, size_t panel) {
  Picture out = picture_of(f, panel);
  const std::vector<float>& values = f.panels[panel].values;
  const float top = out.range.hi > 0 ? out.range.hi : 1.0f;
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    const float t = std::isfinite(values[i]) ? values[i] / top : 0.0f;
    out.pixels[i].a = uint8_t(std::lround(255.0f * std::sqrt(std::clamp(t, 0.0f, 1.0f))));
  }
  return out;
}

void make_attention(Pictures& out, const Analysis& analysis, const ViewSettings& view) {
  const FigureSpec f = figure_of(analysis, view, ExportWhat::heads);
  out.heads.resize(f.panels.size());
  out.heads_range = f.colorbars.front().range;  // the shared bar (or head 0's)
  out.masked = f.colorbars.front().show_masked;
  // The figure's own colormap: a signed map (differential attention) is drawn on the diverging one
  // whatever the view chose, and the colour bar must say so.
  out.colormap = f.colorbars.front().colormap;
  // Threads only pay off for large pictures (T = 512 × 16 heads is 4 M cells, about 8 ms on one core);
  // for small ones, waking a thread that competes with the renderer for a core costs more.
  const int heads = int(f.panels.size());
  const bool big = int64_t(heads) * int64_t(f.panels[0].values.size()) >= (int64_t(1) << 20);
#pragma omp parallel for schedule(static) if (big)
  for (int h = 0; h < heads; ++h) out.heads[size_t(h)] = picture_of(f, size_t(h));
  // A token set: the figure's last row (queries) or column (keys) of each panel is its strip; the pictures
  // keep the T × T cells of the tokens.
  const TokenSet& set = view.token_set;
  const int T = analysis.attention ? int(analysis.attention->labels.size()) : 0;
  const bool rows = set.active() && set.axis == TokenSetAxis::queries && heads > 0 && f.panels[0].rows == T + 1;
  const bool cols = set.active() && set.axis == TokenSetAxis::keys && heads > 0 && f.panels[0].cols == T + 1;
  if (!rows && !cols) return;
  out.strip_axis = set.axis;
  out.strips.resize(size_t(heads));
  out.strip_values.resize(size_t(heads));
  for (int h = 0; h < heads; ++h) {
    Picture& p = out.heads[size_t(h)];
    const std::vector<float>& values = f.panels[size_t(h)].values;
    std::vector<Rgba> cells;
    cells.reserve(size_t(T) * size_t(T));
    std::vector<Rgba>& strip = out.strips[size_t(h)];
    std::vector<float>& strip_values = out.strip_values[size_t(h)];
    for (int i = 0; i < p.height; ++i)
      for (int j = 0; j < p.width; ++j) {
        const size_t k = size_t(i) * size_t(p.width) + size_t(j);
        if ((rows && i == T) || (cols && j == T)) {
          strip.push_back(p.pixels[k]);
          strip_values.push_back(values[k]);
        } else {
          cells.push_back(p.pixels[k]);
        }
      }
    p.pixels = std::move(cells);
    p.width = p.height = T;
  }
}

void make_relpos(Pictures& out, const Analysis& analysis, const ViewSettings& view) {
  const RelposAnalysis& r = *analysis.relpos;
  const FigureSpec f = figure_of(analysis, view, ExportWhat::relpos);
  const size_t heads = r.heads.size();  // then the combined map
  out.relpos_range = f.colorbars.front().range;
  out.relpos_heads.resize(heads);
  for (size_t h = 0; h < heads; ++h) out.relpos_heads[h] = r.dims == 2 ? overlay_of(f, h) : picture_of(f, h);
  if (r.dims != 2) return;
  out.relpos_combined = overlay_of(f, heads);
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

void make_conv(Pictures& out, const Analysis& analysis, const ViewSettings& view) {
  const FigureSpec f = figure_of(analysis, view, ExportWhat::conv);  // input | MHSA | convolution | difference
  out.conv_input = picture_of(f, 0);
  out.conv_mhsa = picture_of(f, 1);
  out.conv_true = picture_of(f, 2);
  out.conv_difference = picture_of(f, 3);
}

}  // namespace

Pictures make_pictures(const Analysis& analysis, const ViewSettings& given_view) {
  // Heads without a softmax have no scores: their matrices are drawn whatever the view asked for.
  ViewSettings view = given_view;
  if (analysis.attention && analysis.attention->linear) view.show_scores = false;
  Pictures out;
  out.colormap = parse_colormap(view.colormap);
  out.scores = view.show_scores;
  out.scale = export_request_for_view(view).color_scale;
  out.shared_scale = out.scale.mode != ScaleMode::per_head;
  if (analysis.attention) make_attention(out, analysis, view);
  if (analysis.relpos && !analysis.relpos->heads.empty()) make_relpos(out, analysis, view);
  if (analysis.conv) make_conv(out, analysis, view);
  return out;
}

}  // namespace attnscope::gui
