// rollout_figure.cpp — the Rollout view's figure and numbers (rollout_figure.h).
#include "attnscope/figure/rollout_figure.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attnscope/core/error.h"

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
  if (in.every_query)
    require(in.layer >= 0 && in.layer < s.layers, "layer " + std::to_string(in.layer) + " does not exist: the model has " +
                                                      std::to_string(s.layers) + " layers (0–" + std::to_string(s.layers - 1) + ")");
  if (in.set.axis != TokenSetAxis::none) check_token_set(in.set, s.tokens, in.set.axis == TokenSetAxis::queries ? "--query-set" : "--key-set");
  if (in.flow) {
    require(!in.every_query && in.set.axis != TokenSetAxis::queries,
            "the attention flow is into one position: it goes with one query, not every query or a set of queries");
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
  std::vector<float> values;        // [rows, cols] as drawn
  std::vector<bool> masked;         // [rows, cols]
};

// The panels' values with their row and column labels (shared by every panel).
struct Panels {
  std::vector<Panel> panels;
  int rows = 0, cols = 0;
  std::vector<std::string> row_labels, col_labels;
};

std::vector<std::string> layer_labels(int layers, const FigureWords& w) {
  std::vector<std::string> out;
  for (int l = 0; l < layers; ++l) out.push_back(w.format("layer %d", l));
  return out;
}

std::vector<std::string> token_labels(const model::AttentionStack& s) {
  std::vector<std::string> out;
  for (int j = 0; j < s.tokens; ++j) out.push_back(j < int(s.labels.size()) ? s.labels[size_t(j)] : std::to_string(j));
  return out;
}

// The set's reduction of the values `at(k)` of its tokens k, and whether every one of them is masked.
template <class Value, class Masked>
std::pair<float, bool> reduce_over(const TokenSet& set, Value at, Masked masked) {
  double sum = 0;  // in double: a sum of a few floats, rounded once (as reduce_token_set)
  bool all_masked = true;
  for (const int t : set.tokens) {
    sum += double(at(t));
    all_masked = all_masked && masked(t);
  }
  if (set.reduce == SetReduce::mean) sum /= double(set.tokens.size());
  return {float(sum), all_masked};
}

Panels panels_of(const RolloutFigureInput& in, const FigureWords& w) {
  const model::AttentionStack& s = *in.stack;
  const Rollout& r = *in.rollout;
  const int L = s.layers, T = s.tokens;
  const bool query_set = in.set.axis == TokenSetAxis::queries, key_set = in.set.axis == TokenSetAxis::keys;
  const std::string set_name = in.set.active() ? w.format(token_set_label_key(in.set), int(in.set.tokens.size())) : "";
  Panels out;
  const bool flow = in.flow && !in.every_query && !query_set;
  out.panels.resize(flow ? 3 : 2);
  out.panels[0].name = w.word("attention (head mean)");
  out.panels[1].name = w.word("rollout");
  if (flow) out.panels[2].name = w.word("flow (share)");
  if (in.every_query)
    for (Panel& p : out.panels) p.name += " · " + w.format("layer %d", in.layer);
  if (query_set && !in.every_query)
    for (Panel& p : out.panels) p.name += " · " + set_name + " (" + token_set_list(in.set) + ")";
  // Cell (row, j) of each panel before any key set's column: its value and whether it is masked.
  // Per layer: row l is query i's (or the query set's) row of layer l; every query: row i of in.layer.
  const int f = flow ? flow_position_index(*in.flow, in.position) : -1;
  auto value = [&](size_t p, int l, int i, int j) -> float {
    return p == 0 ? r.mean(l)(i, j) : p == 1 ? r.rollout(l)(i, j) : in.flow->shares(l, f)(j);
  };
  auto masked = [&](size_t p, int l, int i, int j) {
    return p == 0 ? rollout_key_masked(s, l, i, j) : r.rollout(l)(i, j) == 0.0f;  // no path of unmasked entries
  };
  const int base_rows = in.every_query ? T : L;
  out.rows = base_rows + (in.every_query && query_set ? 1 : 0);
  out.cols = T + (key_set ? 1 : 0);
  out.row_labels = in.every_query ? token_labels(s) : layer_labels(L, w);
  if (in.every_query && query_set) out.row_labels.push_back(set_name);
  out.col_labels = token_labels(s);
  if (key_set) out.col_labels.push_back(set_name);
  for (size_t p = 0; p < out.panels.size(); ++p) {
    Panel& panel = out.panels[p];
    panel.values.assign(size_t(out.rows) * size_t(out.cols), 0.0f);
    panel.masked.assign(size_t(out.rows) * size_t(out.cols), false);
    auto put = [&](int row, int col, std::pair<float, bool> cell) {
      panel.values[size_t(row) * size_t(out.cols) + size_t(col)] = cell.first;
      panel.masked[size_t(row) * size_t(out.cols) + size_t(col)] = cell.second;
    };
    for (int row = 0; row < base_rows; ++row)
      for (int j = 0; j < T; ++j) {
        const int l = in.every_query ? in.layer : row, i = in.every_query ? row : in.position;
        if (query_set && !in.every_query)
          put(row, j, reduce_over(in.set, [&](int q) { return value(p, l, q, j); }, [&](int q) { return masked(p, l, q, j); }));
        else
          put(row, j, {value(p, l, i, j), masked(p, l, i, j)});
      }
    if (in.every_query && query_set)  // the set's row under the matrix
      for (int j = 0; j < T; ++j)
        put(base_rows, j, reduce_over(in.set, [&](int q) { return value(p, in.layer, q, j); },
                                      [&](int q) { return masked(p, in.layer, q, j); }));
    if (key_set)  // the set's column right of the panel, from the cells as drawn
      for (int row = 0; row < out.rows; ++row)
        put(row, T, reduce_over(in.set, [&](int k) { return panel.values[size_t(row) * size_t(out.cols) + size_t(k)]; },
                                [&](int k) { return bool(panel.masked[size_t(row) * size_t(out.cols) + size_t(k)]); }));
  }
  return out;
}

}  // namespace

std::string rollout_caption(const RolloutFigureInput& in, const FigureWords& w) {
  const model::AttentionStack& s = *in.stack;
  const std::string sep = " · ";
  std::string label = in.position < int(s.labels.size()) ? s.labels[size_t(in.position)] : std::to_string(in.position);
  std::string what;  // the queries drawn, and how the rows read
  if (in.every_query) what = w.format("every query · layer %d", in.layer) + sep + w.word("rows: queries, columns: input tokens");
  else if (in.set.axis == TokenSetAxis::queries)
    what = w.format(token_set_label_key(in.set), int(in.set.tokens.size())) + " (" + token_set_list(in.set) + ")" + sep +
           w.word("rows: layers from 0, columns: input tokens");
  else what = w.format("query %d «%s»", in.position, label.c_str()) + sep + w.word("rows: layers from 0, columns: input tokens");
  if (in.set.axis == TokenSetAxis::keys)
    what += sep + w.format(token_set_label_key(in.set), int(in.set.tokens.size())) + " (" + token_set_list(in.set) + ")";
  std::string c = (s.source.empty() ? std::string() : s.source + sep) + what + sep +
                  w.word("rollout Ã_l = Â_l···Â_0, Â = 0.5·Ā + 0.5·I, rows renormalised");
  if (in.flow && !in.every_query && in.set.axis != TokenSetAxis::queries)
    c += sep + w.word("flow: maximum flow, each row divided by its sum");
  for (int l = 0; l < s.layers; ++l)
    if (s.linear_layer(l)) {
      c += sep + w.format("%s layers: |M| rows normalised (no softmax)", s.layer_kind[size_t(l)].c_str());
      break;
    }
  return c;
}

FigureSpec rollout_figure(const RolloutFigureInput& in, const ExportRequest& r) {
  validate_rollout_figure(in, r);
  const Panels panels = panels_of(in, r.words);
  FigureSpec f;
  // Panels of rows × columns: one under the other when they are wider than tall (most inputs, one row per
  // layer), side by side when they are taller (a deep model on a short input; every query's square matrices).
  f.grid_columns = !in.every_query && panels.cols >= panels.rows ? 1 : int(panels.panels.size());
  f.matrix_side = std::clamp(18 * panels.cols, 240, 520);
  float hi = 0;
  for (const Panel& p : panels.panels)
    for (size_t k = 0; k < p.values.size(); ++k)
      if (!p.masked[k] && std::isfinite(p.values[k])) hi = std::max(hi, p.values[k]);
  const ValueRange data{0.0f, hi > 0 ? hi : 1.0f};
  const ValueRange range = scale_ranges(r.color_scale, {data}).front();
  bool any_masked = false;
  for (const Panel& p : panels.panels) {
    PanelSpec spec;
    spec.title = p.name;
    spec.rows = panels.rows;
    spec.cols = panels.cols;
    spec.values = p.values;
    for (size_t k = 0; k < p.values.size(); ++k)
      if (p.masked[k]) spec.values[k] = -INFINITY, any_masked = true;
    spec.row_labels = panels.row_labels;
    spec.col_labels = panels.col_labels;
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
  const Panels panels = panels_of(in, w);
  ExportArray a;
  a.shape = {int64_t(panels.panels.size()), panels.rows, panels.cols};
  for (const Panel& p : panels.panels) {
    a.block_names.push_back(p.name);
    a.values.insert(a.values.end(), p.values.begin(), p.values.end());
  }
  a.row_labels = panels.row_labels;
  a.col_labels = panels.col_labels;
  return a;
}

ExportedFile render_rollout(const RolloutFigureInput& in, const ExportRequest& r, const TextRasterizer& text) {
  validate_rollout_figure(in, r);
  return encode_export(r, [&] { return rollout_array(in, r.words); }, [&] { return rollout_figure(in, r); }, text);
}

ExportedFile export_rollout(const RolloutFigureInput& in, const ExportRequest& r, const std::filesystem::path& path,
                            const TextRasterizer& text) {
  return write_export(path, r.format, [&] { return render_rollout(in, r, text); });
}

}  // namespace attnscope
