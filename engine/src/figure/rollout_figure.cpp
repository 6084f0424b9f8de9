// rollout_figure.cpp — the Rollout view's figure and numbers (rollout_figure.h).
#include "attnscope/figure/rollout_figure.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"

namespace attnscope {

int flow_position_index(const AttentionFlow& flow, int position) {
  const auto it = std::find(flow.positions.begin(), flow.positions.end(), position);
  return it == flow.positions.end() ? -1 : int(it - flow.positions.begin());
}

bool flow_has_every_layer(const AttentionFlow& flow, int layers) {
  if (int(flow.layers.size()) != layers) return false;
  for (int l = 0; l < layers; ++l)
    if (flow.layers[size_t(l)] != l) return false;
  return true;
}

bool rollout_key_masked(const model::AttentionStack& stack, int layer, int query, int key) {
  const bool linear = stack.linear_layer(layer);  // causal by nature
  if ((stack.causal || linear) && key > query) return true;
  const int window = stack.layer_window.empty() || linear ? 0 : stack.layer_window[size_t(layer)];
  return window > 0 && key <= query - window;
}

void validate_rollout_figure(const RolloutFigureInput& in, const ExportRequest& r) {
  require(in.stack && in.rollout, "the rollout figure needs a model's attentions and their rollout");
  const model::AttentionStack& s = *in.stack;
  require(in.rollout->layers == s.layers && in.rollout->tokens == s.tokens,
          "the rollout is of " + std::to_string(in.rollout->layers) + " layers and " + std::to_string(in.rollout->tokens) +
              " tokens, the attentions of " + std::to_string(s.layers) + " and " + std::to_string(s.tokens));
  require(in.position >= 0 && in.position < s.tokens,
          "position " + std::to_string(in.position) + " does not exist: the input has " + std::to_string(s.tokens) +
              " tokens (0–" + std::to_string(s.tokens - 1) + ")");
  if (in.flow) {
    require(flow_position_index(*in.flow, in.position) >= 0 && flow_has_every_layer(*in.flow, s.layers),
            "the attention flow was computed for other positions or layers than position " + std::to_string(in.position) +
                " after every layer");
  }
  require(std::isfinite(r.scale) && r.scale >= min_export_scale && r.scale <= max_export_scale,
          "scale must be between 1 and 4, got " + std::to_string(r.scale));
  require(r.color_scale.mode != ScaleMode::per_head,
          "the rollout figure has one colour bar for its panels (valid scale modes here: shared, fixed, locked)");
  validate_color_scale(r.color_scale, true);
  require(!r.scores, "the rollout figure shows shares of the input tokens, not scores: leave out --scores");
}

namespace {

struct Panel {
  std::string name;                 // the panel's title and CSV block name
  std::vector<float> values;        // [L, T] as drawn
  std::vector<bool> masked;         // [L, T]
};

std::vector<Panel> panels_of(const RolloutFigureInput& in, const FigureWords& w) {
  const model::AttentionStack& s = *in.stack;
  const Rollout& r = *in.rollout;
  const int L = s.layers, T = s.tokens, i = in.position;
  std::vector<Panel> out(in.flow ? 3 : 2);
  out[0].name = w.word("attention (head mean)");
  out[1].name = w.word("rollout");
  if (in.flow) out[2].name = w.word("flow (share)");
  for (Panel& p : out) {
    p.values.assign(size_t(L) * size_t(T), 0.0f);
    p.masked.assign(size_t(L) * size_t(T), false);
  }
  const int f = in.flow ? flow_position_index(*in.flow, i) : -1;
  for (int l = 0; l < L; ++l)
    for (int j = 0; j < T; ++j) {
      const size_t at = size_t(l) * size_t(T) + size_t(j);
      out[0].values[at] = r.mean(l)(i, j);
      out[0].masked[at] = rollout_key_masked(s, l, i, j);
      out[1].values[at] = r.rollout(l)(i, j);
      out[1].masked[at] = r.rollout(l)(i, j) == 0.0f;  // no path of unmasked entries (rollout.h)
      if (in.flow) {
        out[2].values[at] = in.flow->shares(l, f)(j);
        out[2].masked[at] = out[1].masked[at];
      }
    }
  return out;
}

std::vector<std::string> layer_labels(int layers, const FigureWords& w) {
  std::vector<std::string> out;
  for (int l = 0; l < layers; ++l) out.push_back(w.format("layer %d", l));
  return out;
}

}  // namespace

std::string rollout_caption(const RolloutFigureInput& in, const FigureWords& w) {
  const model::AttentionStack& s = *in.stack;
  const std::string sep = " · ";
  std::string label = in.position < int(s.labels.size()) ? s.labels[size_t(in.position)] : std::to_string(in.position);
  std::string c = (s.source.empty() ? std::string() : s.source + sep) + w.format("query %d «%s»", in.position, label.c_str()) +
                  sep + w.word("rows: layers from 0, columns: input tokens") + sep +
                  w.word("rollout Ã_l = Â_l···Â_0, Â = 0.5·Ā + 0.5·I, rows renormalised");
  if (in.flow) c += sep + w.word("flow: maximum flow, each row divided by its sum");
  for (int l = 0; l < s.layers; ++l)
    if (s.linear_layer(l)) {
      c += sep + w.format("%s layers: |M| rows normalised (no softmax)", s.layer_kind[size_t(l)].c_str());
      break;
    }
  return c;
}

FigureSpec rollout_figure(const RolloutFigureInput& in, const ExportRequest& r) {
  validate_rollout_figure(in, r);
  const model::AttentionStack& s = *in.stack;
  const std::vector<Panel> panels = panels_of(in, r.words);
  FigureSpec f;
  // Panels of L rows × T columns: one under the other when they are wider than tall (most inputs), side by
  // side when they are taller (a deep model on a short input).
  f.grid_columns = s.tokens >= s.layers ? 1 : int(panels.size());
  f.matrix_side = std::clamp(18 * s.tokens, 240, 520);
  float hi = 0;
  for (const Panel& p : panels)
    for (size_t k = 0; k < p.values.size(); ++k)
      if (!p.masked[k] && std::isfinite(p.values[k])) hi = std::max(hi, p.values[k]);
  const ValueRange data{0.0f, hi > 0 ? hi : 1.0f};
  const ValueRange range = scale_ranges(r.color_scale, {data}).front();
  bool any_masked = false;
  const std::vector<std::string> rows = layer_labels(s.layers, r.words);
  for (const Panel& p : panels) {
    PanelSpec spec;
    spec.title = p.name;
    spec.rows = s.layers;
    spec.cols = s.tokens;
    spec.values = p.values;
    for (size_t k = 0; k < p.values.size(); ++k)
      if (p.masked[k]) spec.values[k] = -INFINITY, any_masked = true;
    spec.row_labels = rows;
    spec.col_labels = s.labels;
    if (int(spec.col_labels.size()) != s.tokens) {
      spec.col_labels.clear();
      for (int j = 0; j < s.tokens; ++j) spec.col_labels.push_back(std::to_string(j));
    }
    f.panels.push_back(std::move(spec));
  }
  f.colorbars.push_back({range, r.colormap, scale_bar_title(r.words.word("share of the input token"), r.color_scale, r.words),
                         any_masked, r.words.word("masked")});
  if (r.caption) f.caption = rollout_caption(in, r.words);
  return f;
}

ExportArray rollout_array(const RolloutFigureInput& in, const FigureWords& w) {
  ExportRequest r;
  r.format = ExportFormat::csv;
  r.words = w;
  validate_rollout_figure(in, r);
  const model::AttentionStack& s = *in.stack;
  const std::vector<Panel> panels = panels_of(in, w);
  ExportArray a;
  a.shape = {int64_t(panels.size()), s.layers, s.tokens};
  for (const Panel& p : panels) {
    a.block_names.push_back(p.name);
    a.values.insert(a.values.end(), p.values.begin(), p.values.end());
  }
  a.row_labels = layer_labels(s.layers, w);
  for (int j = 0; j < s.tokens; ++j)
    a.col_labels.push_back(j < int(s.labels.size()) ? s.labels[size_t(j)] : std::to_string(j));
  return a;
}

ExportedFile render_rollout(const RolloutFigureInput& in, const ExportRequest& r, const TextRasterizer& text) {
  validate_rollout_figure(in, r);
  ExportedFile out;
  if (r.format == ExportFormat::csv || r.format == ExportFormat::npy) {
    const ExportArray array = rollout_array(in, r.words);
    out.shape = array.shape;
    out.bytes = r.format == ExportFormat::csv ? export_csv(array) : serialize_npy(array.values.data(), array.shape);
    return out;
  }
  encode_figure(out, rollout_figure(in, r), r.format, r.scale, text);
  return out;
}

ExportedFile export_rollout(const RolloutFigureInput& in, const ExportRequest& r, const std::filesystem::path& path,
                            const TextRasterizer& text) {
  check_export_path(path, r.format);
  ExportedFile out = render_rollout(in, r, text);
  write_file_atomic(path, out.bytes);
  return out;
}

}  // namespace attnscope
