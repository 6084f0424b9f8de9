// pooled_figure.cpp — one long input's head, pooled (pooled_figure.h).
#include "attnscope/figure/pooled_figure.h"

#include <cmath>
#include <limits>

#include "attnscope/attention/weights.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/figure/heatmap_layout.h"

namespace attnscope {

namespace {
void check(const PooledFigureInput& in) { require(in.map != nullptr && in.map->rows > 0, "no pooled map to draw"); }

// The block's token range "0–3" (one token: "5").
std::string block_label(const model::PooledMap& m, int b) {
  const int first = b * m.block, last = std::min(m.tokens, first + m.block) - 1;
  return first == last ? std::to_string(first) : std::to_string(first) + "\u2013" + std::to_string(last);
}

// Every block's token range, in order: the rows' labels and the columns'.
std::vector<std::string> block_labels(const model::PooledMap& m) {
  std::vector<std::string> labels;
  for (int b = 0; b < m.rows; ++b) labels.push_back(block_label(m, b));
  return labels;
}

// The pooled values with masked blocks NaN, row-major.
std::vector<float> pooled_values(const model::PooledMap& m) {
  std::vector<float> v(size_t(m.rows) * size_t(m.cols));
  for (int i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.cols; ++j)
      v[size_t(i) * size_t(m.cols) + size_t(j)] =
          m.is_masked(i, j) ? std::numeric_limits<float>::quiet_NaN() : m.values(i, j);
  return v;
}

// What a figure of pooled heads asks of the request, before anything is drawn.
void check_request(const ExportRequest& r) {
  require(r.scale >= 1 && r.scale <= 4, "the figure's scale must be between 1 and 4");
  validate_color_scale(r.color_scale, true);
}
}  // namespace

std::string pooled_scale_title(const model::PooledMap& m, const FigureWords& words) {
  const std::string pooling = m.block == 1 ? words.word("exact cells")
                              : m.pooling == model::Pooling::max ? words.format("max-pooled %d×%d", m.block, m.block)
                                                                 : words.format("mean-pooled %d×%d", m.block, m.block);
  return words.word("probability") + " \u00b7 " + pooling;
}

std::string pooled_caption(const PooledFigureInput& in, const FigureWords& words) {
  check(in);
  return in.source + " \u00b7 " + words.format("%d tokens, computed per head on demand", in.map->tokens) + " \u00b7 " +
         words.word("rows: queries, columns: keys");
}

FigureSpec pooled_figure(const PooledFigureInput& in, const ExportRequest& r) {
  check(in);
  const model::PooledMap& m = *in.map;
  PanelSpec panel;
  panel.title = r.words.format("layer %d · head %d", in.layer, in.head);
  panel.rows = m.rows, panel.cols = m.cols;
  panel.values = pooled_values(m);
  FigureSpec spec;
  ColorBarSpec bar;
  bar.range = auto_range(panel.values.data(), panel.values.size());
  const std::vector<ValueRange> ranges = scale_ranges(r.color_scale, {bar.range});
  bar.range = ranges[0];
  bar.colormap = r.colormap;
  bar.title = pooled_scale_title(m, r.words);
  bar.show_masked = true;
  bar.masked_label = r.words.word("masked");
  spec.colorbars.push_back(bar);
  spec.panels.push_back(std::move(panel));
  spec.grid_columns = 1;
  spec.matrix_side = std::max(384, std::min(m.rows, 1024));  // about a pixel per block at 1×
  if (r.caption) spec.caption = pooled_caption(in, r.words);
  return spec;
}

ExportArray pooled_array(const PooledFigureInput& in) {
  check(in);
  const model::PooledMap& m = *in.map;
  ExportArray a;
  a.shape = {m.rows, m.cols};
  a.values = pooled_values(m);
  a.row_labels = a.col_labels = block_labels(m);
  return a;
}

ExportedFile render_pooled(const PooledFigureInput& in, const ExportRequest& r, const TextRasterizer& text) {
  check_request(r);
  return encode_export(r, [&] { return pooled_array(in); }, [&] { return pooled_figure(in, r); }, text);
}

ExportedFile export_pooled(const PooledFigureInput& in, const ExportRequest& r, const std::filesystem::path& path,
                           const TextRasterizer& text) {
  return write_export(path, r.format, [&] { return render_pooled(in, r, text); });
}

// ---- many heads ---------------------------------------------------------------------------------
namespace {

const model::PooledMap& first_map(const PooledHeadsInput& in) {
  for (const PooledLayer& l : in.layers)
    if (!l.heads.empty()) return l.heads.front();
  throw InputError("no pooled heads to draw");
}

bool model_figure(const ExportRequest& r) {
  require(r.what == ExportWhat::heads || r.what == ExportWhat::model,
          "a long input's heads are exported one head, one layer's heads or every layer's");
  return r.what == ExportWhat::model;
}

// model_figure(r), and `in` one layer unless it is the model figure (the heads figure is one layer's heads).
bool model_figure(const PooledHeadsInput& in, const ExportRequest& r) {
  const bool model = model_figure(r);
  require(model || in.layers.size() == 1, "the heads figure is one layer's heads");
  return model;
}

int most_heads(const PooledHeadsInput& in) {
  size_t most = 0;
  for (const PooledLayer& l : in.layers) most = std::max(most, l.heads.size());
  return int(most);
}

}  // namespace

void check_pooled_heads_size(int heads, int tokens, int pixels) {
  require(pixels >= 1 && pixels <= max_pooled_pixels,
          "the blocks a side must be between 1 and " + std::to_string(max_pooled_pixels) + ", got " +
              std::to_string(pixels));
  const int64_t side = (tokens + model::pool_block(tokens, pixels) - 1) / model::pool_block(tokens, pixels);
  const int64_t values = int64_t(heads) * side * side;
  if (values <= limits::max_attention_cells) return;
  // The most blocks a side that fit: the largest P whose ⌈T / ⌈T / P⌉⌉² · heads stays within the limit.
  int fit = 1;
  for (int p = std::min(pixels, tokens); p >= 1; --p) {
    const int64_t s = (tokens + model::pool_block(tokens, p) - 1) / model::pool_block(tokens, p);
    if (int64_t(heads) * s * s <= limits::max_attention_cells) {
      fit = p;
      break;
    }
  }
  throw InputError(std::to_string(heads) + " heads pooled to " + std::to_string(side) + "×" + std::to_string(side) +
                   " blocks would hold " + std::to_string(values) + " values, more than the " +
                   std::to_string(limits::max_attention_cells) + " an export holds: ask for at most " +
                   std::to_string(fit) + " blocks a side");
}

PooledHeadsInput pool_heads(const model::HeadMaps& maps, int layer, model::Pooling pooling, int pixels,
                            const std::string& source, const std::atomic<bool>* cancel) {
  const int L = maps.layer_count();
  require(layer >= -1 && layer < L, "layer " + std::to_string(layer) + " does not exist: the model has " +
                                        std::to_string(L) + " layers (0–" + std::to_string(L - 1) + ")");
  const int first = layer < 0 ? 0 : layer, last = layer < 0 ? L - 1 : layer;
  int heads = 0;
  for (int l = first; l <= last; ++l) heads += maps.heads(l);
  check_pooled_heads_size(heads, maps.tokens, pixels);
  PooledHeadsInput out;
  out.source = source;
  for (int l = first; l <= last; ++l) {
    PooledLayer pl;
    pl.layer = l;
    pl.kv_heads = std::max(maps.layers[size_t(l)].kv_heads, 1);
    for (int h = 0; h < maps.heads(l); ++h) {
      if (cancel && cancel->load()) throw Cancelled();
      pl.heads.push_back(model::pool_head(maps, l, h, pooling, pixels));
    }
    out.layers.push_back(std::move(pl));
  }
  return out;
}

std::string pooled_heads_caption(const PooledHeadsInput& in, const ExportRequest& r) {
  const model::PooledMap& m = first_map(in);
  const FigureWords& w = r.words;
  const std::string sep = " \u00b7 ";
  const std::string on_demand = w.format("%d tokens, computed per head on demand", m.tokens);
  if (!model_figure(r))
    return in.source + sep + w.format("layer %d", in.layers.front().layer) + sep +
           w.format("%d heads", int(in.layers.front().heads.size())) + sep + on_demand + sep +
           w.word("rows: queries, columns: keys");
  return in.source + sep + w.format("%d layers × %d heads", int(in.layers.size()), most_heads(in)) + sep + on_demand +
         sep + w.word("panel l.h = layer l, head h");
}

FigureSpec pooled_heads_figure(const PooledHeadsInput& in, const ExportRequest& r) {
  const model::PooledMap& first = first_map(in);
  const bool model = model_figure(in, r);
  FigureSpec f;
  const int columns = most_heads(in);
  if (model) {
    require(r.color_scale.mode != ScaleMode::per_head,
            "the model figure has one colour bar for all its thumbnails (valid scale modes here: shared, fixed, locked)");
    f.grid_columns = columns;
    f.matrix_side = model_view_matrix_side(columns);
  }
  std::vector<int> blanks;  // places of the model grid with no head (a layer with fewer heads than the widest)
  for (const PooledLayer& l : in.layers) {
    const int H = int(l.heads.size());
    for (int h = 0; h < (model ? columns : H); ++h) {
      if (h >= H) {
        blanks.push_back(int(f.panels.size()) + int(blanks.size()));
        continue;
      }
      const model::PooledMap& m = l.heads[size_t(h)];
      const int g = kv_group_of_head(h, H, l.kv_heads);
      PanelSpec p;
      p.title = model ? model_view_panel_title(l.layer, h, H, l.kv_heads) : r.words.format("head %d · kv group %d", h, g);
      p.rows = m.rows, p.cols = m.cols;
      p.values = pooled_values(m);
      p.frame = kv_group_color(g);
      f.panels.push_back(std::move(p));
    }
  }
  assign_colorbars(f, r.color_scale, r.colormap, pooled_scale_title(first, r.words), true, r.words);
  for (const int place : blanks) {
    PanelSpec blank;
    blank.blank = true;
    blank.rows = first.rows, blank.cols = first.cols;
    f.panels.insert(f.panels.begin() + place, std::move(blank));
  }
  if (r.caption) f.caption = pooled_heads_caption(in, r);
  return f;
}

ExportArray pooled_heads_array(const PooledHeadsInput& in, const ExportRequest& r) {
  const model::PooledMap& first = first_map(in);
  const bool model = model_figure(in, r);
  ExportArray a;
  const int columns = most_heads(in);
  a.shape = model ? std::vector<int64_t>{int64_t(in.layers.size()), columns, first.rows, first.cols}
                  : std::vector<int64_t>{columns, first.rows, first.cols};
  a.values.reserve(size_t(in.layers.size()) * size_t(columns) * size_t(first.rows) * size_t(first.cols));
  for (const PooledLayer& l : in.layers)
    for (int h = 0; h < columns; ++h) {
      if (h < int(l.heads.size())) {
        const std::vector<float> v = pooled_values(l.heads[size_t(h)]);
        a.values.insert(a.values.end(), v.begin(), v.end());
      } else {
        a.values.insert(a.values.end(), size_t(first.rows) * size_t(first.cols), std::numeric_limits<float>::quiet_NaN());
      }
      if (!model)
        a.block_names.push_back("head " + std::to_string(h) + " (kv group " +
                                std::to_string(kv_group_of_head(h, int(l.heads.size()), l.kv_heads)) + ")");
    }
  a.row_labels = a.col_labels = block_labels(first);
  return a;
}

ExportedFile render_pooled_heads(const PooledHeadsInput& in, const ExportRequest& r, const TextRasterizer& text) {
  check_request(r);
  require(!(model_figure(r) && r.format == ExportFormat::csv),
          "the model figure has no CSV (every layer's heads in one table): export NPY, or one layer's heads as CSV");
  return encode_export(r, [&] { return pooled_heads_array(in, r); }, [&] { return pooled_heads_figure(in, r); }, text);
}

ExportedFile export_pooled_heads(const PooledHeadsInput& in, const ExportRequest& r, const std::filesystem::path& path,
                                 const TextRasterizer& text) {
  return write_export(path, r.format, [&] { return render_pooled_heads(in, r, text); });
}

}  // namespace attnscope
