// window_rollout.cpp — Windows → Rollout: which input tokens feed a position through all the layers
// (Abnar & Zuidema 2020; analysis/rollout.h), for the open checkpoint's forward pass (or attentions file).
// For the chosen query position, one row per layer (0 at the top) of each input token's share, in panels
// side by side on one colour bar: the layer's raw attention (head mean), the rollout, and — after "Compute
// flow" — the attention flow (each row divided by its sum). The figure is the engine's (figure/
// rollout_figure.h), the same as `export --what rollout`; Save PNG/SVG/CSV write it. Hover a cell for the
// exact values of all panels.
//
// "every query" draws one layer's whole matrices instead (a layer slider): Ā_l and Ã_l, [T, T], queries down,
// input tokens across, masked cells as masked. A token set (the scene's, token_sets.h; Ctrl+click or a drag
// over the Input window's tokens) changes the rows: a set of queries makes each layer's row their sum or mean
// (named in the panel titles; with every query, one more row under the matrix), a set of keys adds a column,
// their share together. The flow is into one position: it is drawn with one query only.
//
// The rollout and the flow are pipeline steps run by the view's RolloutWorker (core/rollout_worker.h), off
// the UI thread: the flow with a progress bar and Cancel, refused above pipeline::flow_max_tokens tokens.
// A layer without a softmax (Qwen3-Next's Gated DeltaNet, Granite 4.0-H's Mamba-2) is read as the engine
// reads it — |M| rows normalised — and the view says so. The seeded scene has one layer: the view says why
// rollout needs a model's layers and offers to open one.
//
// Sections: state · figure · window
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>

#include "attnscope/analysis/token_set.h"
#include "attnscope/figure/rollout_figure.h"
#include "attnscope/io/file_io.h"
#include "core/rollout_worker.h"
#include "gui/figure_copy.h"
#include "gui/fonts.h"
#include "gui/heatmap_grid.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"
#include "gui/zoom.h"

namespace attnscope::gui {

// ---- state -------------------------------------------------------------------------------------------

struct RolloutViewState {
  RolloutWorker worker;
  // What is on screen: the rollout of `stack`, and the flow into `flow_position` (null until asked).
  std::shared_ptr<const model::AttentionStack> stack;
  std::shared_ptr<const Rollout> rollout;
  std::shared_ptr<const AttentionFlow> flow;
  int flow_position = -1;
  std::string error;       // the engine's reason for no rollout, or for no flow
  std::string flow_note;   // "flow cancelled"
  int position = -1;       // the query drawn (−1: the last token)
  bool every_query = false;  // the whole [T, T] of `layer` in place of one query's row per layer
  int layer = -1;            // with every_query: the layer drawn (−1: the last)
  std::shared_ptr<const model::AttentionStack> submitted;  // the stack whose rollout was asked for
  // The figure as drawn, its panels' colours as textures.
  FigureSpec figure;
  const void* figure_of = nullptr;
  int figure_position = -1;
  bool figure_every_query = false;
  int figure_layer = -1;
  TokenSet figure_set;
  const AttentionFlow* figure_flow = nullptr;
  int figure_colormap = -1;
  std::vector<GlTexture> textures;
  ColorBarCache bar;
};

namespace {

RolloutViewState& ViewState(AppState& state) {
  if (!state.rollout) state.rollout = std::make_shared<RolloutViewState>();
  return *state.rollout;
}

std::shared_ptr<const model::AttentionStack> OpenStack(const AppState& state) {
  const ModelLayerRun* run = state.checkpoint.run.get();
  return state.checkpoint.is_open() && run ? run->stack : nullptr;
}

// The worker's newest outcome into the view; a new stack asks for its rollout.
void Update(AppState& state, RolloutViewState& v) {
  if (std::optional<RolloutOutcome> done = v.worker.take()) {
    if (done->job.stack == v.submitted) {
      v.stack = done->job.stack;
      v.rollout = done->rollout;
      v.error = done->error;
      v.flow_note = done->cancelled ? tr("Flow cancelled.") : "";
      v.flow = done->job.flow ? done->flow : nullptr;
      v.flow_position = done->job.flow ? done->job.position : -1;
    }
  }
  const std::shared_ptr<const model::AttentionStack> stack = OpenStack(state);
  if (stack && stack != v.submitted) {
    v.submitted = stack;
    v.flow = nullptr;
    v.flow_note.clear();
    if (v.position >= stack->tokens) v.position = -1;
    v.worker.submit({stack, false, 0});
    for (const std::string& label : stack->labels) state.fonts->request_text(label);
  }
}

int Position(const RolloutViewState& v, int tokens) { return v.position >= 0 && v.position < tokens ? v.position : tokens - 1; }

int Layer(const RolloutViewState& v, int layers) { return v.layer >= 0 && v.layer < layers ? v.layer : layers - 1; }

// The scene's token set when it fits this input (the Input window's tokens are the model's), else none.
TokenSet SetOf(const AppState& state, const model::AttentionStack& s) {
  const TokenSet& set = state.scene.view.token_set;
  if (!set.active()) return {};
  for (const int t : set.tokens)
    if (t < 0 || t >= s.tokens) return {};
  return set;
}

// The flow is into one position: drawn with one query only (not every query, not a set of queries).
bool FlowDrawn(const RolloutViewState& v, const TokenSet& set) { return !v.every_query && set.axis != TokenSetAxis::queries; }

RolloutFigureInput FigureInput(const AppState& state, const RolloutViewState& v) {
  const int position = Position(v, v.stack->tokens);
  const TokenSet set = SetOf(state, *v.stack);
  const AttentionFlow* flow = v.flow && v.flow_position == position && FlowDrawn(v, set) ? v.flow.get() : nullptr;
  RolloutFigureInput in{v.stack.get(), v.rollout.get(), flow, position};
  in.every_query = v.every_query;
  in.layer = Layer(v, v.stack->layers);
  in.set = set;
  return in;
}

ExportRequest RequestFor(const AppState& state, ExportFormat format) {
  ExportRequest r;
  r.format = format;
  r.colormap = parse_colormap(state.scene.view.colormap);
  r.scale = state.exporter.scale;
  r.caption = state.exporter.caption;
  r.words = UiFigureWords();
  return r;
}

// ---- figure ------------------------------------------------------------------------------------------

// The figure of what is on screen, remade when the rollout, flow, query or colormap changes.
void MakeFigure(AppState& state, RolloutViewState& v) {
  const RolloutFigureInput in = FigureInput(state, v);
  const int colormap = int(parse_colormap(state.scene.view.colormap));
  if (v.figure_of == v.rollout.get() && v.figure_position == in.position && v.figure_flow == in.flow &&
      v.figure_colormap == colormap && v.figure_every_query == in.every_query && v.figure_layer == in.layer &&
      v.figure_set == in.set &&
      !v.figure.panels.empty())
    return;
  ExportRequest r = RequestFor(state, ExportFormat::png);
  r.caption = false;
  v.figure = rollout_figure(in, r);
  v.figure_of = v.rollout.get();
  v.figure_position = in.position;
  v.figure_flow = in.flow;
  v.figure_colormap = colormap;
  v.figure_every_query = in.every_query;
  v.figure_layer = in.layer;
  v.figure_set = in.set;
  v.textures.resize(v.figure.panels.size());
  for (size_t p = 0; p < v.figure.panels.size(); ++p)
    v.textures[p].update(v.figure.panels[p].cols, v.figure.panels[p].rows, panel_colors(v.figure, p));
}

void SaveFigure(AppState& state, RolloutViewState& v, ExportFormat format) {
  SaveToExports(
      state, [&](const std::string& stamp) { return "attnscope-rollout-" + stamp + "." + to_string(format); },
      [&](const std::filesystem::path& path) { return export_rollout(FigureInput(state, v), RequestFor(state, format), path).bytes.size(); });
}

void Tooltip(const RolloutViewState& v, const RolloutFigureInput& in, int layer, int key) {
  const model::AttentionStack& s = *v.stack;
  const std::string label = key < int(s.labels.size()) ? s.labels[size_t(key)] : std::to_string(key);
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(trf("layer %d · input token %d «%s»", layer, key, label.c_str()).c_str());
  if (s.linear_layer(layer))
    ImGui::TextUnformatted(trf("%s: no softmax; its head mean is of |M|, rows normalised", s.layer_kind[size_t(layer)].c_str()).c_str());
  ImGui::Separator();
  const bool masked = rollout_key_masked(s, layer, in.position, key);
  ImGui::TextUnformatted(trf("attention (head mean): %s%s", FormatValue(v.rollout->mean(layer)(in.position, key)).c_str(),
                             masked ? tr(" (masked)") : "").c_str());
  const float rolled = v.rollout->rollout(layer)(in.position, key);
  ImGui::TextUnformatted(trf("rollout: %s%s", FormatValue(rolled).c_str(), rolled == 0.0f ? tr(" (no path: masked)") : "").c_str());
  if (in.flow) {
    const int f = flow_position_index(*in.flow, in.position);
    ImGui::TextUnformatted(trf("flow: %s · share %s", FormatValue(in.flow->flows(layer, f)(key)).c_str(),
                               FormatValue(in.flow->shares(layer, f)(key)).c_str()).c_str());
  }
  ImGui::EndTooltip();
}

// A cell of every query, or of a token set's rows or column: its row and column, and each panel's value as drawn.
void FigureTooltip(const FigureSpec& f, int row, int col) {
  const PanelSpec& first = f.panels[0];
  ImGui::BeginTooltip();
  const std::string& row_label = first.row_labels[size_t(row)];
  const std::string& col_label = first.col_labels[size_t(col)];
  ImGui::TextUnformatted((row_label + " · " + col_label).c_str());
  ImGui::Separator();
  for (const PanelSpec& p : f.panels) {
    const float value = p.values[size_t(row) * size_t(p.cols) + size_t(col)];
    ImGui::TextUnformatted((p.title + ": " + (std::isfinite(value) ? FormatValue(value) : std::string(tr("masked")))).c_str());
  }
  ImGui::EndTooltip();
}

// The figure's panels as the export lays them out (one under the other, or side by side), with cells as wide
// as the width allows and as tall as the height allows (a layer's row is a bar of T cells, not a square
// matrix): layer numbers down the left, the tokens along the top, each panel's title under it, the colour
// bar on the right; a cell under the pointer gets its exact values in a tooltip.
void DrawFigure(AppState& state, RolloutViewState& v) {
  MakeFigure(state, v);
  const RolloutFigureInput in = FigureInput(state, v);
  const FigureSpec& f = v.figure;
  const int P = int(f.panels.size()), C = std::max(1, f.grid_columns), R = (P + C - 1) / C;
  const int L = f.panels[0].rows, T = f.panels[0].cols;
  const float font = ImGui::GetFontSize(), gap = std::round(font * 0.6f), title_h = std::round(font * 1.5f);
  // The rows' labels: the layer numbers (a query set's rows are its layers too), or every query's tokens.
  std::vector<std::string> layers;
  for (int l = 0; l < L; ++l) layers.push_back(in.every_query ? f.panels[0].row_labels[size_t(l)] : std::to_string(l));
  const float label_w = LabelExtent(layers, FLT_MAX) + font * 0.6f;
  const ColorBarSpec& bar = f.colorbars[0];
  const std::string bar_title = tr("share of the input token");
  const float bar_w = std::max(ImGui::CalcTextSize(bar_title.c_str()).x,
                               font * 1.3f + std::max(ColorBarLabelWidth(bar.range, 5), ImGui::CalcTextSize(tr("masked")).x)) +
                      font * 0.8f;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const std::vector<std::string>& tokens = f.panels[0].col_labels;
  const float cw = std::max(2.0f, std::floor((avail.x - label_w - bar_w - float(C - 1) * gap) / float(C * T)));
  const bool turned = LabelExtent(tokens, FLT_MAX) + 2.0f > cw;
  const float key_h = (turned ? TurnedExtent(tokens, font * 6.0f) : font) + font * 0.5f;
  const float ch = std::clamp(std::floor((avail.y - key_h - float(R) * title_h - float(R - 1) * gap) / float(R * L)), 2.0f,
                              std::round(font * 2.5f));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size(label_w + float(C * T) * cw + float(C - 1) * gap, key_h + float(R) * (float(L) * ch + title_h) + float(R - 1) * gap);
  ImGui::InvisibleButton("##rollout_figure", ImVec2(std::max(size.x, 1.0f), std::max(size.y, 1.0f)));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), border = ImGui::GetColorU32(ImGuiCol_Border);
  auto panel_min = [&](int p) {
    const int r = p / C, c = p % C;
    return ImVec2(origin.x + label_w + float(c) * (float(T) * cw + gap), origin.y + key_h + float(r) * (float(L) * ch + title_h + gap));
  };
  // The tokens over each panel of the first row; the layer numbers left of each row's first panel.
  for (int c = 0; c < std::min(C, P); ++c) DrawKeyLabels(draw, tokens, panel_min(c), cw, key_h - font * 0.4f, turned, &state.layout);
  const int step = std::max(1, int(std::ceil(font * 0.95f / ch)));
  HeatmapGridResult record;
  record.cell = cw;
  record.image_size = ImVec2(float(T) * cw, float(L) * ch);
  int hover_l = -1, hover_j = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  for (int p = 0; p < P; ++p) {
    const ImVec2 min = panel_min(p);
    const std::vector<Rgba> colors = panel_colors(f, size_t(p));
    for (int l = 0; l < L; ++l)
      for (int j = 0; j < T; ++j) {
        const Rgba c = colors[size_t(l) * size_t(T) + size_t(j)];
        draw->AddRectFilled(ImVec2(min.x + float(j) * cw, min.y + float(l) * ch), ImVec2(min.x + float(j + 1) * cw, min.y + float(l + 1) * ch),
                            IM_COL32(c.r, c.g, c.b, 255));
      }
    const ImVec2 max(min.x + float(T) * cw, min.y + float(L) * ch);
    draw->AddRect(ImVec2(min.x - 1, min.y - 1), ImVec2(max.x + 1, max.y + 1), border);
    if (p % C == 0)
      for (int l = 0; l < L; l += step) {
        const ImVec2 sz = ImGui::CalcTextSize(layers[size_t(l)].c_str());
        draw->AddText(ImVec2(min.x - font * 0.3f - sz.x, min.y + (float(l) + 0.5f) * ch - sz.y * 0.5f), text, layers[size_t(l)].c_str());
      }
    const std::string title = Ellipsize(f.panels[size_t(p)].title, float(T) * cw);
    const ImVec2 at(min.x, max.y + font * 0.25f), title_size = ImGui::CalcTextSize(title.c_str());
    draw->AddText(at, text, title.c_str());
    // Each panel's title as the caption of a grid of its own (the layout record's captions: one format per grid).
    state.layout.captions.push_back({state.layout.grids++, 0, 0, title, at, ImVec2(at.x + title_size.x, at.y + title_size.y)});
    record.image_min.push_back(min);
    if (hovered && m.x >= min.x && m.x < max.x && m.y >= min.y && m.y < max.y) {
      hover_j = std::clamp(int((m.x - min.x) / cw), 0, T - 1);
      hover_l = std::clamp(int((m.y - min.y) / ch), 0, L - 1);
      draw->AddRect(ImVec2(min.x + float(hover_j) * cw, min.y + float(hover_l) * ch),
                    ImVec2(min.x + float(hover_j + 1) * cw, min.y + float(hover_l + 1) * ch), IM_COL32(255, 255, 255, 255), 0, 0, 2);
    }
  }
  RecordMaps(state, record, L, T);
  // The colour bar right of the panels, with the masked swatch when cells are masked.
  const ImVec2 bar_min(origin.x + size.x + font * 0.8f, origin.y + key_h);
  draw->AddText(ImVec2(bar_min.x, bar_min.y - font * 1.3f), ImGui::GetColorU32(ImGuiCol_TextDisabled), bar_title.c_str());
  const float bar_h = std::max(font * 3.0f, size.y - key_h - (bar.show_masked ? font * 2.2f : 0.0f) - font * 0.5f);
  DrawColorBar(draw, v.bar, bar.colormap, bar_min, ImVec2(bar_min.x + font * 0.9f, bar_min.y + bar_h), bar.range, 5);
  if (bar.show_masked) {
    const ImVec2 sw(bar_min.x, bar_min.y + bar_h + font * 0.8f);
    const Rgba c = masked_color(bar.colormap);
    draw->AddRectFilled(sw, ImVec2(sw.x + font * 0.9f, sw.y + font * 0.9f), IM_COL32(c.r, c.g, c.b, 255));
    draw->AddRect(sw, ImVec2(sw.x + font * 0.9f, sw.y + font * 0.9f), border);
    draw->AddText(ImVec2(sw.x + font * 1.2f, sw.y - font * 0.05f), text, tr("masked"));
  }
  if (hover_l >= 0 && !in.every_query && !in.set.active()) Tooltip(v, in, hover_l, hover_j);
  else if (hover_l >= 0) FigureTooltip(f, hover_l, hover_j);
}

}  // namespace

// ---- window ------------------------------------------------------------------------------------------

void ShowRolloutAt(AppState& state, int position) {
  state.show_rollout = true;
  state.show_model_view = state.show_lens = false;
  ViewState(state).position = position;
}
void SetRolloutEveryQuery(AppState& state, bool every_query) { ViewState(state).every_query = every_query; }

bool RolloutBusy(const AppState& state) {
  return state.show_rollout && state.rollout && (state.rollout->worker.busy() || state.rollout->submitted != OpenStack(state));
}

void DrawRolloutWindow(AppState& state) {
  // the Model view or the Logit lens opened since (the menu closes them when it opens this): it has the place
  if (state.show_rollout && (state.show_model_view || state.show_lens)) state.show_rollout = false;
  if (!state.show_rollout) {
    if (state.rollout && state.rollout->worker.busy()) state.rollout->worker.cancel();
    return;
  }
  PlaceNextWindow(state, Slot::model_view);  // the Model view's place
  if (!ImGui::Begin(WindowTitle("Rollout", "rollout").c_str(), &state.show_rollout,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return;
  }
  RolloutViewState& v = ViewState(state);
  if (LongInputNotice(state, TrKey("Rollout"))) {  // a long input keeps no stack to draw
    ImGui::End();
    return;
  }
  const CheckpointWindowState& c = state.checkpoint;
  if (!c.is_open()) {
    if (!CheckpointLoadingBar(state)) {
      WrappedText(tr("Rollout needs a model's layers: it multiplies each layer's attention with the attention of the "
                     "layers below it, to show which input tokens feed a position. The seeded scene is one layer, with "
                     "nothing below it. Open a checkpoint (or the shipped induction model) to see its rollout."));
      if (ImGui::Button(tr("Open the shipped induction model"))) {
        const bool checkpoint_shown = state.show_checkpoint;
        OpenShippedInductionModel(state);
        state.show_checkpoint = checkpoint_shown;
      }
      RecordLastItem(state, "rollout.open_induction");
      ErrorText(c.error.empty() ? "" : std::string(tr("Error: ")) + c.error);
    }
    ImGui::End();
    return;
  }
  Update(state, v);
  const bool current = v.rollout && v.stack == OpenStack(state);
  if (!current) {
    ErrorText(v.error.empty() || v.submitted != v.stack ? "" : std::string(tr("Error: ")) + v.error);
    if (v.error.empty() || v.submitted != v.stack) SpinnerText(tr("computing…"));
    ImGui::End();
    return;
  }
  const model::AttentionStack& s = *v.stack;
  const int T = s.tokens, position = Position(v, T);
  // The header: what this is, and the query.
  const std::string header = c.name() + " · " + trcount(s.layers, TrKey("1 layer"), TrKey("%d layers")) + " · " +
                             trcount(T, TrKey("1 token"), TrKey("%d tokens"));
  ImGui::TextUnformatted(header.c_str());
  SameLineIfFits(ImGui::CalcTextSize("(?)").x + ImGui::GetFontSize());
  HelpMarker(tr("Rollout (Abnar & Zuidema 2020): each layer's attention, averaged over its heads, with half of each "
                "position kept for itself (the residual), multiplied through the layers: row l is the share of each "
                "input token in the query's position after layer l. Flow: the most that can flow from each input token "
                "to the query through the layers' attention, divided by the row's sum. Masked keys stay masked."));
  // Every query: one layer's whole matrices; else one query's (or a set of queries') row per layer.
  if (ImGui::Checkbox(tr("every query"), &v.every_query)) state.status.clear();
  RecordLastItem(state, "rollout.every_query");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("Every query position of one layer: its head-mean attention and its rollout as whole "
                               "matrices (rows: queries, columns: input tokens)"));
  const TokenSet set = SetOf(state, s);
  if (v.every_query) {
    int layer = Layer(v, s.layers);
    SameLineIfFits(ImGui::GetFontSize() * 12);
    ImGui::SetNextItemWidth(FitItemWidth(ImGui::GetFontSize() * 10, tr("layer")));
    if (SliderIntTyped(tr("layer"), &layer, 0, s.layers - 1)) v.layer = layer;
    RecordLastItem(state, "rollout.layer");
  } else if (set.axis == TokenSetAxis::queries) {
    SameLineIfFits(ImGui::GetFontSize() * 12);
    ImGui::TextUnformatted((trf(token_set_label_key(set), int(set.tokens.size())) + ": " + token_set_list(set)).c_str());
    RecordLastItem(state, "rollout.query_set");
  } else {
    int query = position;
    SameLineIfFits(ImGui::GetFontSize() * 16);
    ImGui::SetNextItemWidth(FitItemWidth(ImGui::GetFontSize() * 14, tr("query position")));
    if (SliderIntTyped(tr("query position"), &query, 0, T - 1)) v.position = query;
    RecordLastItem(state, "rollout.query");
    const std::string label = position < int(s.labels.size()) ? s.labels[size_t(position)] : "";
    SameLineIfFits(ImGui::CalcTextSize(label.c_str()).x + ImGui::GetFontSize() * 2);
    ImGui::TextUnformatted(("«" + label + "»").c_str());
  }
  if (set.axis == TokenSetAxis::keys) {
    const std::string keys = trf(token_set_label_key(set), int(set.tokens.size())) + ": " + token_set_list(set);
    SameLineIfFits(ImGui::CalcTextSize(keys.c_str()).x + ImGui::GetFontSize());
    ImGui::TextUnformatted(keys.c_str());
    RecordLastItem(state, "rollout.key_set");
  }
  // Flow: a button, then progress and Cancel while it runs.
  const RolloutFigureInput in = FigureInput(state, v);
  if (v.worker.flow_running()) {
    const float w = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(tr("Cancel")).x - ImGui::GetFontSize() * 2;
    ImGui::ProgressBar(float(v.worker.progress()), ImVec2(std::max(w, ImGui::GetFontSize() * 6), 0),
                       trf("flow %d%%", int(v.worker.progress() * 100)).c_str());
    RecordLastItem(state, "rollout.progress");
    ImGui::SameLine();
    if (ImGui::Button(tr("Cancel"))) v.worker.cancel();
    RecordLastItem(state, "rollout.cancel");
  } else {
    const bool one_query = FlowDrawn(v, set);
    ImGui::BeginDisabled(in.flow != nullptr || T > pipeline::flow_max_tokens || !one_query);
    if (ImGui::Button(tr("Compute flow"))) v.worker.submit({v.stack, true, position});
    ImGui::EndDisabled();
    RecordLastItem(state, "rollout.flow");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", !one_query ? tr("The flow is into one query position: leave every query and the set of queries to "
                                              "compute it")
                              : T > pipeline::flow_max_tokens
                                  ? trf("Attention flow is limited to %d tokens (its cost grows as T³); this input has %d.",
                                        pipeline::flow_max_tokens, T).c_str()
                                  : tr("The maximum flow from each input token into the query, after every layer "
                                       "(a few seconds for long inputs; Cancel stops it)"));
  }
  SaveFigureButtons(state, "rollout", false, [&](ExportFormat format) { SaveFigure(state, v, format); });
  // What is drawn, and what is not.
  if (T > pipeline::flow_max_tokens)
    HintText(trf("Attention flow is limited to %d tokens (its cost grows as T³); this input has %d.", pipeline::flow_max_tokens, T));
  if (!v.error.empty()) ErrorText(std::string(tr("Error: ")) + v.error);
  if (!v.flow_note.empty()) NoticeText(v.flow_note);
  std::string linear, kind;  // the layers without a softmax, "0, 2, 3", and their kind
  for (int l = 0; l < s.layers; ++l)
    if (s.linear_layer(l)) {
      linear += (linear.empty() ? "" : ", ") + std::to_string(l);
      kind = s.layer_kind[size_t(l)];
    }
  if (!linear.empty())
    HintText(trf("%s layers (%s) have no softmax: rollout reads each as the head mean of |M| with every row divided by its "
                 "sum (not probabilities).", kind.c_str(), linear.c_str()));
  HintText(tr(v.every_query ? "rows: queries, columns: input tokens" : "rows: layers from 0, columns: input tokens"));
  DrawFigure(state, v);
  ImGui::End();
}

}  // namespace attnscope::gui
