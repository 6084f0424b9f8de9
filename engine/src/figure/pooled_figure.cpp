// pooled_figure.cpp — one long input's head, pooled (pooled_figure.h).
#include "attnscope/figure/pooled_figure.h"

#include <cmath>
#include <limits>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"

namespace attnscope {

namespace {
void check(const PooledFigureInput& in) { require(in.map != nullptr && in.map->rows > 0, "no pooled map to draw"); }

// The block's token range "0–3" (one token: "5").
std::string block_label(const model::PooledMap& m, int b) {
  const int first = b * m.block, last = std::min(m.tokens, first + m.block) - 1;
  return first == last ? std::to_string(first) : std::to_string(first) + "\u2013" + std::to_string(last);
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
  panel.values.resize(size_t(m.rows) * size_t(m.cols));
  for (int i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.cols; ++j)
      panel.values[size_t(i) * size_t(m.cols) + size_t(j)] =
          m.is_masked(i, j) ? std::numeric_limits<float>::quiet_NaN() : m.values(i, j);
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
  a.values.resize(size_t(m.rows) * size_t(m.cols));
  for (int i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.cols; ++j)
      a.values[size_t(i) * size_t(m.cols) + size_t(j)] =
          m.is_masked(i, j) ? std::numeric_limits<float>::quiet_NaN() : m.values(i, j);
  for (int b = 0; b < m.rows; ++b) a.row_labels.push_back(block_label(m, b));
  a.col_labels = a.row_labels;
  return a;
}

ExportedFile render_pooled(const PooledFigureInput& in, const ExportRequest& r, const TextRasterizer& text) {
  require(r.scale >= 1 && r.scale <= 4, "the figure's scale must be between 1 and 4");
  validate_color_scale(r.color_scale, true);
  ExportedFile out;
  if (r.format == ExportFormat::csv || r.format == ExportFormat::npy) {
    const ExportArray array = pooled_array(in);
    out.shape = array.shape;
    out.bytes = r.format == ExportFormat::csv ? export_csv(array) : serialize_npy(array.values.data(), array.shape);
    return out;
  }
  encode_figure(out, pooled_figure(in, r), r.format, r.scale, text);
  return out;
}

ExportedFile export_pooled(const PooledFigureInput& in, const ExportRequest& r, const std::filesystem::path& path,
                           const TextRasterizer& text) {
  check_export_path(path, r.format);
  ExportedFile out = render_pooled(in, r, text);
  write_file_atomic(path, out.bytes);
  return out;
}

}  // namespace attnscope
