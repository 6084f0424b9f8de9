// window_model_view.cpp — Windows → Model view: every head of the open checkpoint for the Input
// window's text, as an L × H grid of thumbnails (BertViz's model view, with the K/V groups): rows are
// layers, columns heads, thumbnail l.h is layer l's head h (GPT-2's 5.1), framed in its kv group's
// colour as the Heads view frames heads. Hover a thumbnail for its numbers (attention sink,
// previous-token score, mean distance, entropy); click it to open that layer in the Heads view with
// that head large (the view then closes to show it). The Heads view's layer is highlighted down the
// side, and its large head outlined.
//
// Layers of a checkpoint with sliding-window or NoPE layers carry a tag beside their number: "local"
// (a sliding-window layer: each token sees only the last W tokens) or "NoPE" (no rotary positions), with
// a legend line above the grid and a line in the tooltip.
//
// The pictures and numbers come from the compute worker (core/model_view.h: one atlas image, the same
// colours as `export --what model`), one GL texture drawn in L·H pieces; the frame only lays them out.
//
// Heads can be switched off here (model_view_ablation.h): a right-click, or a click with "Click switches heads
// off", toggles a head; the panel above the grid says what changed.
//
// A token set (token_sets.h) adds to every thumbnail its reduced row under it (queries) or column right of it
// (keys), in the colours `export --what model` gives the panel's last row or column (the ranges include it);
// the set's line (sum | mean, ×) is above the grid, and the tooltips name the set.
//
// A long input (core/long_heads.h) draws its grid apart: each head pooled to its thumbnail from the worker's cache
// (max or mean as the Heads view chose, each on its own colour range, as `export --long --what head:N` colours it);
// hover for a block's token ranges and value, click to open that layer in the Heads view.
//
// Sections: opening · grid · tooltip · a long input · window
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "attnscope/analysis/token_set.h"
#include "attnscope/attention/weights.h"
#include "gui/i18n.h"
#include "gui/model_view_ablation.h"
#include "gui/scale_control.h"
#include "gui/token_sets.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// ---- opening -----------------------------------------------------------------------------------------

// Without a checkpoint: what the view is for, and two ways to open one.
void DrawNoCheckpoint(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (CheckpointLoadingBar(state)) return;
  if (c.current()) {  // it failed to open: its error, not "no checkpoint", and the way back
    ErrorText(std::string(tr("Error: ")) + c.error);
    if (ImGui::Button((std::string(tr("Close")) + "##model_view_close").c_str())) CloseCheckpoint(state);
    return;
  }
  WrappedText(tr("No checkpoint open. The model view shows every head of every layer of a real model "
                 "(a Hugging Face checkpoint folder) for the Input window's text, or of attentions computed "
                 "elsewhere."));
  if (ImGui::Button(tr("Open the shipped induction model"))) {
    // This view shows the progress and any error itself: the Checkpoint window stays as it was
    // rather than opening over the grid.
    const bool checkpoint_shown = state.show_checkpoint;
    OpenShippedInductionModel(state);
    state.show_checkpoint = checkpoint_shown;
  }
  RecordLastItem(state, "model_view.open_induction");
  SameLineIfFits(ImGui::CalcTextSize(tr("Open the Checkpoint window")).x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::Button(tr("Open the Checkpoint window"))) {
    state.show_checkpoint = true;
    ImGui::SetWindowFocus("###checkpoint");  // in front of this view, which covers its place
  }
  ErrorText(c.error.empty() ? "" : std::string(tr("Error: ")) + c.error);
}

// ---- layer tags ----------------------------------------------------------------------------------------

// The open model's config when the grid is its forward pass (not attentions computed elsewhere).
const model::ModelConfig* GridConfig(const AppState& state, const ModelViewPictures& mv) {
  const CheckpointWindowState& c = state.checkpoint;
  if (!c.model || c.attentions || int(c.model->config.layer_window.size()) != mv.layers) return nullptr;
  return &c.model->config;
}

bool LocalLayer(const model::ModelConfig* c, int l) { return c && c->layer_window[size_t(l)] > 0; }
bool NopeLayer(const model::ModelConfig* c, int l) { return c && c->nope_layer(l); }

// A model with layers without a softmax (Qwen3-Next) names every layer's type: "Gated DeltaNet" or
// "attention"; "" for a model of softmax layers only.
std::string LayerType(const ModelViewPictures& mv, int l) {
  if (mv.layer_kind.empty()) return "";
  return mv.linear_layer(l) ? mv.layer_kind[size_t(l)] : std::string(tr("attention"));
}

// The type, "local", "NoPE", both, or "" for a global layer with positions of a softmax-only model.
std::string LayerTag(const ModelViewPictures& mv, const model::ModelConfig* c, int l) {
  std::string tag = LayerType(mv, l);
  if (LocalLayer(c, l)) tag += (tag.empty() ? "" : " ") + std::string(tr("local"));
  // NoPE is of attention layers (Granite 4.0-H's Mamba-2 layers have no positions by nature, not as an exception)
  if (NopeLayer(c, l) && !mv.linear_layer(l)) tag += (tag.empty() ? "" : " ") + std::string(tr("NoPE"));
  return tag;
}

float TagWidth(const ModelViewPictures& mv, const model::ModelConfig* c) {
  float w = 0;
  for (int l = 0; l < mv.layers; ++l) w = std::max(w, ImGui::CalcTextSize(LayerTag(mv, c, l).c_str()).x);
  return w;
}

// Head h of layer l exists (a layer of fewer heads than the widest leaves its last places empty).
bool HasHead(const ModelViewPictures& mv, int l, int h) {
  return mv.layer_heads.empty() ? h < mv.heads : h < mv.layer_heads[size_t(l)];
}

// ---- grid --------------------------------------------------------------------------------------------

struct GridGeometry {
  float font = 16, frame = 2, gap = 4, thumb = 32;
  float left = 0, top = 0;  // the layer numbers' column and the head numbers' rows
  float tag = 0;            // the layer tags' width (0: no layer has one)
  // A token set's strip: a row under each thumbnail (queries) or a column right of it (keys), `strip` thick,
  // `strip_gap` from the frame; 0 without a set.
  bool row_strip = false, column_strip = false;
  float strip = 0, strip_gap = 0;
  float pitch() const { return thumb + 2 * frame + gap; }
  float pitch_x() const { return pitch() + (column_strip ? strip + strip_gap : 0.0f); }
  float pitch_y() const { return pitch() + (row_strip ? strip + strip_gap : 0.0f); }
  // The strip of the thumbnail whose image starts at `min`.
  ImVec2 strip_min(ImVec2 min) const {
    return row_strip ? ImVec2(min.x, min.y + thumb + frame + strip_gap) : ImVec2(min.x + thumb + frame + strip_gap, min.y);
  }
  ImVec2 strip_max(ImVec2 min) const {
    const ImVec2 a = strip_min(min);
    return row_strip ? ImVec2(a.x + thumb, a.y + strip) : ImVec2(a.x + strip, a.y + thumb);
  }
};

// Thumbnails as large as the region allows, at least `min_thumb` (then the region scrolls).
GridGeometry FitGrid(const ModelViewPictures& mv, ImVec2 region, float ui_scale, const model::ModelConfig* config) {
  GridGeometry g;
  g.font = ImGui::GetFontSize();
  g.frame = std::max(2.0f, std::round(2.0f * ui_scale));
  g.gap = std::round(g.font * 0.3f);
  g.tag = TagWidth(mv, config);
  g.left = g.font * 1.4f + ImGui::CalcTextSize(std::to_string(mv.layers - 1).c_str()).x + g.font * 0.5f +
           (g.tag > 0 ? g.tag + g.font * 0.4f : 0.0f);
  g.top = g.font * 2.6f;
  g.row_strip = mv.token_set.active() && mv.token_set.axis == TokenSetAxis::queries && mv.strips.width > 0;
  g.column_strip = mv.token_set.active() && mv.token_set.axis == TokenSetAxis::keys && mv.strips.width > 0;
  if (g.row_strip || g.column_strip) {
    g.strip = std::max(3.0f, std::round(g.font * 0.6f));
    g.strip_gap = std::max(2.0f, std::round(g.font * 0.2f));
  }
  const float min_thumb = std::round(g.font * 1.5f);  // two-digit head numbers still fit
  auto fit = [&](float scrollbar) {
    const float w = (region.x - g.left - scrollbar) / float(mv.heads) - (g.pitch_x() - g.thumb);
    const float h = (region.y - g.top - scrollbar) / float(mv.layers) - (g.pitch_y() - g.thumb);
    return std::floor(std::min(w, h));
  };
  g.thumb = fit(0);
  if (g.thumb < min_thumb) g.thumb = std::max(min_thumb, fit(ImGui::GetStyle().ScrollbarSize));
  return g;
}

// Axis numbers and titles: "head" and 0 … H−1 across the top, "layer" and 0 … L−1 down the side.
void DrawAxes(ImDrawList* draw, const ModelViewPictures& mv, const GridGeometry& g, ImVec2 origin, int current_layer,
              const model::ModelConfig* config) {
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float x0 = origin.x + g.left, y0 = origin.y + g.top;
  draw->AddText(ImVec2(x0, origin.y), dim, tr("head"));
  for (int h = 0; h < mv.heads; ++h) {
    const std::string n = std::to_string(h);
    const float w = ImGui::CalcTextSize(n.c_str()).x;
    draw->AddText(ImVec2(x0 + float(h) * g.pitch_x() + g.frame + (g.thumb - w) * 0.5f, origin.y + g.font * 1.3f), text,
                  n.c_str());
  }
  const std::string layer = tr("layer");
  AddTextRotated(draw, ImVec2(origin.x, y0 + ImGui::CalcTextSize(layer.c_str()).x), dim, layer);
  for (int l = 0; l < mv.layers; ++l) {
    const std::string n = std::to_string(l);
    const float w = ImGui::CalcTextSize(n.c_str()).x;
    const ImVec2 at(x0 - g.font * 0.4f - w, y0 + float(l) * g.pitch_y() + g.frame + (g.thumb - g.font) * 0.5f);
    if (l == current_layer) {  // the Heads view's layer, as a highlighted label
      const ImU32 band = ImGui::GetColorU32(ImGuiCol_HeaderActive);
      draw->AddRectFilled(ImVec2(at.x - g.font * 0.2f, at.y - g.font * 0.1f), ImVec2(at.x + w + g.font * 0.2f, at.y + g.font * 1.1f),
                          band, g.font * 0.2f);
      draw->AddText(at, ContrastText(band), n.c_str());
    } else {
      draw->AddText(at, text, n.c_str());
    }
    const std::string tag = LayerTag(mv, config, l);  // right-aligned against the number
    if (!tag.empty())
      draw->AddText(ImVec2(at.x - g.font * 0.4f - ImGui::CalcTextSize(tag.c_str()).x, at.y),
                    text, tag.c_str());
  }
}

// A softmax head's frame is its K/V group's colour; a linear layer's heads have no K/V groups: the border's.
ImU32 ThumbFrame(const ModelViewPictures& mv, int l, int h) {
  return mv.linear_layer(l) ? ImGui::GetColorU32(ImGuiCol_Border) : KvGroupColor(mv.kv_group(h));
}

// One thumbnail of the atlas, framed: the tokens shown (zoom.h) of head (l, h).
void DrawThumb(ImDrawList* draw, const ModelViewPictures& mv, ImTextureID atlas, int l, int h, ImVec2 min,
               const GridGeometry& g, const Shown& shown) {
  const ImVec2 max(min.x + g.thumb, min.y + g.thumb);
  draw->AddRectFilled(ImVec2(min.x - g.frame, min.y - g.frame), ImVec2(max.x + g.frame, max.y + g.frame), ThumbFrame(mv, l, h));
  const float u = 1.0f / float(mv.heads), v = 1.0f / float(mv.layers), t = float(mv.tokens);
  draw->AddImage(atlas, min, max, ImVec2((float(h) + float(shown.col) / t) * u, (float(l) + float(shown.row) / t) * v),
                 ImVec2((float(h) + float(shown.col + shown.cols) / t) * u, (float(l) + float(shown.row + shown.rows) / t) * v));
}

// Thumbnail (l, h)'s token set strip (the strips atlas, model_view.h), the tokens shown (zoom.h) of it.
void DrawStrip(ImDrawList* draw, const ModelViewPictures& mv, ImTextureID strips, int l, int h, ImVec2 min,
               const GridGeometry& g, const Shown& shown) {
  const ImVec2 a = g.strip_min(min), b = g.strip_max(min);
  const ImU32 border = ImGui::GetColorU32(ImGuiCol_Border);
  draw->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), border);
  const float t = float(mv.tokens), u = 1.0f / float(mv.heads), v = 1.0f / float(mv.layers);
  if (g.row_strip)
    draw->AddImage(strips, a, b, ImVec2((float(h) + float(shown.col) / t) * u, float(l) * v),
                   ImVec2((float(h) + float(shown.col + shown.cols) / t) * u, float(l + 1) * v));
  else
    draw->AddImage(strips, a, b, ImVec2(float(h) * u, (float(l) + float(shown.row) / t) * v),
                   ImVec2(float(h + 1) * u, (float(l) + float(shown.row + shown.rows) / t) * v));
}

// Numbers in cells of every thumbnail, when each fits its cell; only from an atlas of one pixel per token
// (a long input's thumbnails are scaled down, their colours no longer the cells').
bool NumbersFit(const ModelViewPictures& mv, float cell) {
  if (!mv.stack || mv.tile != mv.tokens || cell < 28.0f) return false;
  return ImGui::CalcTextSize("0.00").x + ImGui::GetFontSize() * 0.2f <= cell;
}

void DrawThumbNumbers(ImDrawList* draw, const ModelViewPictures& mv, int l, int h, ImVec2 min, float cell,
                      const Shown& shown) {
  const Eigen::Map<const Mat> p = mv.stack->map(l, h);  // a linear layer's signed matrix M
  draw->PushClipRect(min, ImVec2(min.x + cell * float(shown.cols), min.y + cell * float(shown.rows)), true);
  std::string text;
  ImU32 color = 0;
  for (int r = 0; r < shown.rows; ++r)
    for (int c = 0; c < shown.cols; ++c) {
      const int q = shown.row + r, k = shown.col + c;
      if (mv.causal && k > q) continue;  // masked: no value to read
      const Rgba* under = mv.atlas.cell(int64_t(l) * mv.tile + q, int64_t(h) * mv.tile + k);
      if (!under || !CellNumber(p(q, k), *under, text, color)) continue;
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      draw->AddText(ImVec2(min.x + (float(c) + 0.5f) * cell - size.x * 0.5f, min.y + (float(r) + 0.5f) * cell - size.y * 0.5f),
                    color, text.c_str());
    }
  draw->PopClipRect();
}

// A black-and-white outline around a thumbnail's frame (the current head, the hovered one).
void Outline(ImDrawList* draw, ImVec2 min, const GridGeometry& g, float thickness) {
  const ImVec2 a(min.x - g.frame - 2, min.y - g.frame - 2), b(min.x + g.thumb + g.frame + 2, min.y + g.thumb + g.frame + 2);
  draw->AddRect(a, b, IM_COL32(0, 0, 0, 255), 0, 0, thickness + 2);
  draw->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, thickness);
}

// One colour bar with its title at `min`: `height` tall in all; the masked swatch when `masked`.
float DrawOneBar(ColorBarCache& texture, const std::string& title, Colormap map, ValueRange range,
                 bool masked, ImVec2 min, float height) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  draw->AddText(min, ImGui::GetColorU32(ImGuiCol_TextDisabled), title.c_str());
  const ImVec2 top(min.x, min.y + font * 1.4f);
  // at least one line tall: two bars (a hybrid) beside an ablation panel in a presentation share little height
  const float bar_h = std::clamp(height - font * (masked ? 3.6f : 1.8f), font * 1.0f, font * 22.0f);
  DrawColorBar(draw, texture, map, top, ImVec2(top.x + font * 0.9f, top.y + bar_h), range, 5);
  float bottom = top.y + bar_h;
  if (masked) {
    const ImVec2 swatch(top.x, top.y + bar_h + font * 0.5f);
    const Rgba c = masked_color(map);
    draw->AddRectFilled(swatch, ImVec2(swatch.x + font * 0.9f, swatch.y + font * 0.9f), IM_COL32(c.r, c.g, c.b, 255));
    draw->AddRect(swatch, ImVec2(swatch.x + font * 0.9f, swatch.y + font * 0.9f), ImGui::GetColorU32(ImGuiCol_Border));
    draw->AddText(ImVec2(swatch.x + font * 1.2f, swatch.y - font * 0.05f), ImGui::GetColorU32(ImGuiCol_Text), tr("masked"));
    bottom = swatch.y + font * 0.9f;
  }
  return bottom;
}

// The probability colour bar right of the grid, with the masked swatch of a causal model; with layers
// without a softmax, their signed matrices' bar (diverging, symmetric about 0) under it.
void DrawBar(AppState& state, const ModelViewPictures& mv, ImVec2 min, float height) {
  const float font = ImGui::GetFontSize();
  const bool soft = mv.has_softmax_layers(), linear = !mv.signed_word.empty();
  const float each = soft && linear ? height * 0.5f - font * 0.4f : height;
  if (soft) {
    const float bottom = DrawOneBar(state.model_view.bar, tr("probability") + ScaleNote(mv.scale), mv.colormap,
                                    mv.range, mv.causal, min, each);
    min.y = bottom + font * 0.8f;
  }
  if (linear)
    DrawOneBar(state.model_view.signed_bar, tr(mv.signed_word.c_str()), Colormap::diverging, mv.signed_range,
               true, min, each);
}

float BarWidth(const ModelViewPictures& mv) {
  const float font = ImGui::GetFontSize();
  float w = std::max({ImGui::CalcTextSize((tr("probability") + ScaleNote(mv.scale)).c_str()).x, font * 1.3f + ColorBarLabelWidth(mv.range, 5),
                      font * 1.2f + ImGui::CalcTextSize(tr("masked")).x});
  if (!mv.signed_word.empty())
    w = std::max({w, ImGui::CalcTextSize(tr(mv.signed_word.c_str())).x, font * 1.3f + ColorBarLabelWidth(mv.signed_range, 5)});
  return w + font * 0.8f;
}

// ---- tooltip -----------------------------------------------------------------------------------------

std::string Number(double value, const char* format) {
  if (!std::isfinite(value)) return "—";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// The token set the strips show, named in a thumbnail's tooltip.
void SetTooltipLine(const ModelViewPictures& mv) {
  if (!mv.token_set.active() || mv.strips.width == 0) return;
  const std::string set = TokenSetName(mv.token_set) + " (" + token_set_list(mv.token_set) + ")";
  ImGui::TextUnformatted((mv.token_set.axis == TokenSetAxis::queries
                              ? trf("token set: %s, the row under each head", set.c_str())
                              : trf("token set: %s, the column right of each head", set.c_str()))
                             .c_str());
}

void ThumbTooltip(const AppState& state, const ModelViewPictures& mv, int l, int h, const model::ModelConfig* config) {
  const ModelHeadNumbers& n = mv.at(l, h);
  const char* click = state.model_view.ablate_clicks ? nullptr : tr("click: open this head in the Heads view");
  ImGui::BeginTooltip();
  if (mv.linear_layer(l)) {  // a signed matrix M: none of the numbers below is defined for it
    const std::string& kind = mv.layer_kind[size_t(l)];
    ImGui::TextUnformatted(trf("layer %d · %s · head %d", l, kind.c_str(), h).c_str());
    ImGui::Separator();
    ImGui::TextUnformatted(tr("No softmax: the head is its signed matrix M (output = M·V), drawn on the diverging "
                              "colours, white at 0."));
    ImGui::TextUnformatted(tr("Attention sink, previous-token score, distance and entropy are of probabilities: "
                              "none here."));
    SetTooltipLine(mv);
    if (click) ImGui::TextDisabled("%s", click);
    ImGui::TextDisabled("%s", ZoomHint(true));
    AblationTooltipLines(state, mv, l, h);
    ImGui::EndTooltip();
    return;
  }
  if (!mv.layer_kind.empty())
    ImGui::TextUnformatted(trf("layer %d · attention · head %d · kv group %d", l, h, mv.kv_group(h)).c_str());
  else
    ImGui::TextUnformatted(trf("layer %d · head %d · kv group %d", l, h, mv.kv_group(h)).c_str());
  if (LocalLayer(config, l))
    ImGui::TextUnformatted(trf("sliding window: each token sees the last %d tokens", config->layer_window[size_t(l)]).c_str());
  else if (config && config->sliding_window > 0)
    ImGui::TextUnformatted(tr("global: each token sees every earlier token"));
  if (NopeLayer(config, l)) ImGui::TextUnformatted(tr("NoPE: no rotary positions in this layer"));
  ImGui::Separator();
  ImGui::TextUnformatted(trf("attention sink: %s", Number(n.attention_sink, "%.3f").c_str()).c_str());
  ImGui::TextUnformatted(trf("previous-token score: %s", Number(n.previous_token, "%.3f").c_str()).c_str());
  ImGui::TextUnformatted(trf("mean distance: %s tokens", Number(n.mean_distance, "%.2f").c_str()).c_str());
  ImGui::TextUnformatted(trf("entropy: %s nats", Number(n.entropy, "%.2f").c_str()).c_str());
  SetTooltipLine(mv);
  if (click) ImGui::TextDisabled("%s", click);
  ImGui::TextDisabled("%s", ZoomHint(true));  // a click opens the head: "reset zoom" is on the toolbar
  AblationTooltipLines(state, mv, l, h);
  ImGui::EndTooltip();
}

// Over a thumbnail's strip: the set, the key (queries' row) or query (keys' column) under the pointer, its value.
void StripTooltip(const ModelViewPictures& mv, int l, int h, int k) {
  const size_t n = size_t(l) * size_t(mv.heads) + size_t(h);
  if (n >= mv.strip_values.size() || k < 0 || size_t(k) >= mv.strip_values[n].size()) return;
  const std::string label = mv.stack && size_t(k) < mv.stack->labels.size() ? mv.stack->labels[size_t(k)] : std::to_string(k);
  const bool queries = mv.token_set.axis == TokenSetAxis::queries;
  ImGui::SetTooltip("%s", (trf("layer %d · head %d", l, h) + " · " + TokenSetName(mv.token_set) + " (" +
                           token_set_list(mv.token_set) + ")\n" +
                           (queries ? trf("key %d: %s", k, label.c_str()) : trf("query %d: %s", k, label.c_str())) + "\n" +
                           FormatValue(mv.strip_values[n][size_t(k)]))
                              .c_str());
}

// Lands on head (l, h): the Heads view draws layer l with head h large.
void OpenHead(AppState& state, int l, int h) {
  state.checkpoint.layer = l;
  state.heads.large_head = h;
  SwitchView(state, View::heads);
  NoteEdit(state, Panel::heads);  // the new layer's forward pass (cancels an older one)
  state.show_model_view = false;  // it covers the Heads view; Windows → Model view brings it back
}

void DrawGrid(AppState& state, const ModelViewPictures& mv) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float bar_w = BarWidth(mv);
  const ImVec2 region(std::max(avail.x - bar_w, ImGui::GetFontSize() * 4), std::max(avail.y, ImGui::GetFontSize() * 4));
  const ImVec2 bar_at(ImGui::GetCursorScreenPos().x + region.x + ImGui::GetFontSize() * 0.4f, ImGui::GetCursorScreenPos().y);
  const model::ModelConfig* config = GridConfig(state, mv);
  const GridGeometry g = FitGrid(mv, region, state.ui_scale, config);
  const int current_layer = state.checkpoint.layer;
  const int current_head = state.scene.view.view == View::heads ? state.heads.large_head : -1;
  int hovered = -1, strip_cell = -1;
  // The Heads view's token range and zoom (zoom.h): the wheel over a thumbnail zooms them all.
  ZoomState& z = state.heads.zoom;
  const Shown shown = ShownTokens(z, mv.tokens);
  const float cell = g.thumb / float(shown.cols);
  const bool numbers = z.numbers && NumbersFit(mv, cell);
  HeatmapGridResult hit;  // the pointer, as a heatmap grid reports it (ZoomAndPan)
  hit.cell = cell;
  if (ImGui::BeginChild("##model_view_grid", region, false, ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 size(g.left + float(mv.heads) * g.pitch_x(), g.top + float(mv.layers) * g.pitch_y());
    // The pointer: one invisible button over the whole grid, never one per thumbnail.
    ImGui::InvisibleButton("##thumbs", size);
    // Zoomed, a drag pans: a click is a press and release without one.
    const bool clicked = shown.zoomed ? ImGui::IsItemDeactivated() && ImGui::GetIO().MouseDragMaxDistanceSqr[0] < 9.0f
                                      : ImGui::IsItemClicked(ImGuiMouseButton_Left);
    hit.pressed = ImGui::IsItemActivated();
    hit.held = ImGui::IsItemActive();
    if (ImGui::IsItemHovered()) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      const int h = int(std::floor((m.x - origin.x - g.left) / g.pitch_x()));
      const int l = int(std::floor((m.y - origin.y - g.top) / g.pitch_y()));
      if (h >= 0 && h < mv.heads && l >= 0 && l < mv.layers && HasHead(mv, l, h)) {
        hovered = l * mv.heads + h;
        const ImVec2 thumb(origin.x + g.left + float(h) * g.pitch_x() + g.frame, origin.y + g.top + float(l) * g.pitch_y() + g.frame);
        if (g.row_strip || g.column_strip) {  // over its token set strip: that strip's cell
          const ImVec2 a = g.strip_min(thumb), b = g.strip_max(thumb);
          if (m.x >= a.x && m.x < b.x && m.y >= a.y && m.y < b.y)
            strip_cell = (g.row_strip ? shown.col : shown.row) + int(std::floor((g.row_strip ? m.x - a.x : m.y - a.y) / cell));
        }
        hit.hovered = hovered;
        hit.wheel = ImGui::GetIO().MouseWheel;
        hit.pointer_cells = ImVec2((m.x - thumb.x) / cell, (m.y - thumb.y) / cell);
        hit.double_clicked = ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left);
      }
    }
    DrawAxes(draw, mv, g, origin, current_layer, config);
    const ImTextureID atlas = state.model_view.atlas.id(), strips = state.model_view.strips.id();
    const ImVec2 s = state.framebuffer_scale;
    for (int l = 0; l < mv.layers; ++l)
      for (int h = 0; h < mv.heads && HasHead(mv, l, h); ++h) {
        const ImVec2 min(std::round(origin.x + g.left + float(h) * g.pitch_x() + g.frame),
                         std::round(origin.y + g.top + float(l) * g.pitch_y() + g.frame));
        DrawThumb(draw, mv, atlas, l, h, min, g, shown);
        if (g.row_strip || g.column_strip) DrawStrip(draw, mv, strips, l, h, min, g, shown);
        if (numbers) DrawThumbNumbers(draw, mv, l, h, min, cell, shown);
        DrawAblationMarks(draw, state, mv, l, h, min, g.thumb);
        const bool current = l == current_layer && h == current_head;
        if (current) Outline(draw, min, g, 3.0f);
        if (hovered == l * mv.heads + h) Outline(draw, min, g, 1.5f);
        LayoutRecord::Thumb rec;
        rec.layer = l;
        rec.head = h;
        rec.kv_group = mv.linear_layer(l) ? h : mv.kv_group(h);  // a linear layer's heads: each its own
        rec.min = ImVec2(min.x * s.x, min.y * s.y);
        rec.max = ImVec2((min.x + g.thumb) * s.x, (min.y + g.thumb) * s.y);
        rec.frame = g.frame * s.x;
        rec.frame_color = ThumbFrame(mv, l, h);
        if (mv.linear_layer(l)) rec.kind = mv.layer_kind[size_t(l)];
        rec.current = current;
        rec.first_query = shown.row;
        rec.first_key = shown.col;
        rec.shown = shown.cols;
        if (g.row_strip || g.column_strip) {
          const ImVec2 a = g.strip_min(min), b = g.strip_max(min);
          rec.strip_min = ImVec2(a.x * s.x, a.y * s.y);
          rec.strip_max = ImVec2(b.x * s.x, b.y * s.y);
        }
        state.layout.thumbs.push_back(rec);
      }
    if (hovered >= 0) {
      if (strip_cell >= 0) StripTooltip(mv, hovered / mv.heads, hovered % mv.heads, strip_cell);
      else ThumbTooltip(state, mv, hovered / mv.heads, hovered % mv.heads, config);
      // A right-click, or a click in the ablation mode, switches the head off or on (model_view_ablation.h).
      const bool toggle = (clicked && state.model_view.ablate_clicks) ||
                          (ImGui::IsWindowHovered() && ImGui::IsMouseClicked(ImGuiMouseButton_Right));
      if (toggle && !hit.double_clicked) ToggleAblatedHead(state, hovered / mv.heads, hovered % mv.heads);
      else if (clicked && !hit.double_clicked) OpenHead(state, hovered / mv.heads, hovered % mv.heads);
    }
  }
  ImGui::EndChild();
  ZoomAndPan(z, shown, hit, true);
  RecordLastItem(state, "model_view.grid");
  DrawBar(state, mv, ImVec2(bar_at.x, bar_at.y + g.top), region.y - g.top);
}

// ---- a long input ------------------------------------------------------------------------------------------
// A checkpoint's input beyond its whole stack (core/long_heads.h): every head pooled to the thumbnail's pixels by
// the Heads view's max or mean, each on its own colour range as the Heads view draws it, from the worker's cache as
// its prefetch fills it (a head not made yet is an empty tile). Hover: the block's token ranges and its max or mean;
// click: that layer in the Heads view. Switching heads off, token sets and the zoom need the whole stack.

void UploadLongThumbs(AppState& state, const LongOverview& o) {
  ModelViewWindowState& v = state.model_view;
  const size_t n = o.pictures.size();
  v.long_thumbs.resize(n);
  v.long_uploaded.resize(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const std::shared_ptr<const Picture>& p = o.pictures[i];
    if (!p || v.long_uploaded[i] == p.get()) continue;  // a tile not made keeps its last picture: no flicker
    if (v.long_thumbs[i].update(p->width, p->height, std::shared_ptr<const std::vector<Rgba>>(p, &p->pixels)))
      ++state.textures.uploads;
    v.long_uploaded[i] = p.get();
  }
}

void DrawLongModelView(AppState& state, const LongHeads& l) {
  const LongOverview* o = state.long_overview.get();
  const CheckpointWindowState& c = state.checkpoint;
  if (!o || o->layers == 0 || o->heads == 0) {
    SpinnerText(tr("computing…"));
    return;
  }
  const int L = o->layers, H = o->heads, groups = std::max(1, l.kv_heads);
  const model::PooledMap* any = nullptr;
  for (const auto& p : o->pooled) any = any ? any : p.get();
  std::string header = c.name() + " · " + trcount(L, TrKey("1 layer"), TrKey("%d layers")) + " × " +
                       trcount(H, TrKey("1 head"), TrKey("%d heads")) + " · " +
                       trcount(o->tokens, TrKey("1 token"), TrKey("%d tokens"));
  if (any) header += " · " + trf("each head %s", LongPoolingName(*any).c_str());
  WrappedText(header);
  RecordLastItem(state, "model_view.long_header");
  HintText(tr("A long input: each head pooled to its thumbnail, on its own colour range as in the Heads view (max | mean "
              "there). Hover a head for a block's tokens and value; click it to open its layer in the Heads view."));
  HintText(tr("Switching heads off, token sets and the zoom need every layer's attention at once: not on a long input."));
  WrappedText(LongCacheLine(*o));
  RecordLastItem(state, "model_view.long_cache");
  UploadLongThumbs(state, *o);

  // The grid: layers down, heads across, labels left and above; each thumbnail square.
  const float font = ImGui::GetFontSize();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float left = ImGui::CalcTextSize(("L" + std::to_string(L - 1)).c_str()).x + font * 0.6f, top = font * 1.3f;
  const float pitch = std::max(font * 0.8f, std::min((avail.x - left) / float(H), (avail.y - top) / float(L)));
  const float frame = std::max(1.0f, std::round(pitch * 0.03f)), gap = std::max(2.0f, std::round(pitch * 0.06f));
  const float thumb = std::floor(pitch - gap - 2 * frame);
  // Blocks a side: the thumbnail's framebuffer pixels in steps of 32, as the Heads view asks its tiles.
  const int pixels = LongPixels(thumb * state.framebuffer_scale.x, state.model_view.long_pixels, 256);
  if (pixels != state.model_view.long_pixels) {
    state.model_view.long_pixels = pixels;
    NoteEdit(state, Panel::heads);
  }
  if (ImGui::BeginChild("##model_view_long", avail, false, ImGuiWindowFlags_NoScrollWithMouse)) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("##long_thumbs", ImVec2(left + float(H) * pitch, top + float(L) * pitch));
    const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    const bool hovering = ImGui::IsItemHovered();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), empty = ImGui::GetColorU32(ImGuiCol_FrameBg);
    // Labels: every head and layer when they fit, else every k-th.
    const int every_h = std::max(1, int(std::ceil(ImGui::CalcTextSize(std::to_string(H - 1).c_str()).x * 1.6f / pitch)));
    const int every_l = std::max(1, int(std::ceil(font * 1.1f / pitch)));
    for (int h = 0; h < H; h += every_h)
      draw->AddText(ImVec2(origin.x + left + float(h) * pitch + frame, origin.y), text, std::to_string(h).c_str());
    for (int ly = 0; ly < L; ++ly)  // the Heads view's layer always, in the accent colour
      if (ly % every_l == 0 || ly == c.layer)
        draw->AddText(ImVec2(origin.x, origin.y + top + float(ly) * pitch + frame),
                      ly == c.layer ? ImGui::GetColorU32(ImGuiCol_CheckMark) : text, ("L" + std::to_string(ly)).c_str());
    const ImVec2 s = state.framebuffer_scale;
    int hovered_l = -1, hovered_h = -1;
    ImVec2 pointer_in(0, 0);
    for (int ly = 0; ly < L; ++ly)
      for (int h = 0; h < H; ++h) {
        const ImVec2 min(std::round(origin.x + left + float(h) * pitch + frame),
                         std::round(origin.y + top + float(ly) * pitch + frame));
        const ImVec2 max(min.x + thumb, min.y + thumb);
        const ImU32 frame_color = KvGroupColor(kv_group_of_head(h, H, groups));
        draw->AddRectFilled(ImVec2(min.x - frame, min.y - frame), ImVec2(max.x + frame, max.y + frame), frame_color);
        const size_t i = size_t(ly) * size_t(H) + size_t(h);
        const model::PooledMap* m = o->pooled[i].get();
        if (m && i < state.model_view.long_thumbs.size() && state.model_view.long_uploaded[i])
          draw->AddImage(state.model_view.long_thumbs[i].id(), min, max);
        else draw->AddRectFilled(min, max, empty);  // not computed yet: the prefetch fills it
        const ImVec2 m_at = ImGui::GetIO().MousePos;
        if (hovering && m_at.x >= min.x && m_at.x < max.x && m_at.y >= min.y && m_at.y < max.y) {
          hovered_l = ly, hovered_h = h;
          pointer_in = ImVec2((m_at.x - min.x) / thumb, (m_at.y - min.y) / thumb);
        }
        LayoutRecord::Thumb rec;
        rec.layer = ly;
        rec.head = h;
        rec.kv_group = kv_group_of_head(h, H, groups);
        rec.min = ImVec2(min.x * s.x, min.y * s.y);
        rec.max = ImVec2(max.x * s.x, max.y * s.y);
        rec.frame = frame * s.x;
        rec.frame_color = frame_color;
        rec.current = ly == c.layer;
        rec.shown = o->tokens;
        state.layout.thumbs.push_back(rec);
        state.layout.widgets.push_back({"model_view.long_thumb." + std::to_string(ly) + "." + std::to_string(h), rec.min,
                                        rec.max,
                                        m ? "pixels=" + std::to_string(o->pixels) + " block=" + std::to_string(m->block) +
                                                " rows=" + std::to_string(m->rows)
                                          : std::string("pixels=") + std::to_string(o->pixels) + " computing"});
      }
    if (hovered_l >= 0) {
      const model::PooledMap* m = o->at(hovered_l, hovered_h);
      ImGui::BeginTooltip();
      ImGui::TextUnformatted(
          trf("layer %d · head %d · kv group %d", hovered_l, hovered_h, kv_group_of_head(hovered_h, H, groups)).c_str());
      ImGui::Separator();
      if (m) {
        const int r = std::clamp(int(pointer_in.y * float(m->rows)), 0, m->rows - 1);
        const int k = std::clamp(int(pointer_in.x * float(m->cols)), 0, m->cols - 1);
        LongBlockTooltipLines(*m, r, k, l.labels);
      } else {
        ImGui::TextUnformatted(tr("computing…"));
      }
      ImGui::TextDisabled("%s", tr("click: open this head in the Heads view"));
      ImGui::EndTooltip();
      if (clicked) OpenHead(state, hovered_l, hovered_h);
    }
  }
  ImGui::EndChild();
  RecordLastItem(state, "model_view.grid");
}

}  // namespace

// ---- window ------------------------------------------------------------------------------------------

void OpenShippedInductionModel(AppState& state) {
  if (!LocateAssets(state)) {
    state.checkpoint.error = state.about.assets_error;
    return;
  }
  OpenCheckpoint(state, (std::filesystem::path(state.about.assets_folder) / "models" / "induction").string());
}

void DrawModelViewWindow(AppState& state) {
  if (!state.show_model_view) return;
  PlaceNextWindow(state, Slot::model_view);  // the view's place, while open
  if (!ImGui::Begin(WindowTitle("Model view", "model_view").c_str(), &state.show_model_view,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return;
  }
  if (const LongHeads* l = CurrentLongHeads(state)) {  // a long input keeps no stack: its heads pooled instead
    DrawLongModelView(state, *l);
    ImGui::End();
    return;
  }
  const CheckpointWindowState& c = state.checkpoint;
  if (!c.is_open()) {
    DrawNoCheckpoint(state);
    ImGui::End();
    return;
  }
  const ModelViewPictures* mv = state.model_view.pictures.get();
  const std::string name = c.name();
  if (mv) {
    // One line and a "(?)" with how to read it, so the grid keeps the height (projectors, deep models).
    const bool groups_known = !c.attentions || c.attentions->groups_from_config;
    const std::string header = name + " · " + trcount(mv->layers, TrKey("1 layer"), TrKey("%d layers")) + " × " +
                               trcount(mv->heads, TrKey("1 head"), TrKey("%d heads")) + " · " +
                               (groups_known ? trcount(mv->kv_heads, TrKey("1 K/V head"), TrKey("%d K/V heads"))
                                             : std::string(tr("K/V groups unknown"))) +
                               " · " + trcount(mv->tokens, TrKey("1 token"), TrKey("%d tokens"));
    if (ImGui::CalcTextSize(header.c_str()).x + ImGui::CalcTextSize("(?)").x + ImGui::GetStyle().ItemSpacing.x * 2 <=
        ImGui::GetContentRegionAvail().x) {
      ImGui::TextUnformatted(header.c_str());
    } else {
      WrappedText(header);
      ImGui::Dummy(ImVec2(0, 0));  // the "(?)" starts the next line
    }
    HelpMarker(tr("Rows are layers, columns heads: l.h is layer l, head h. Frames show the K/V groups. "
                  "Hover a head for its numbers; click it to open it in the Heads view."));
    DrawZoomBar(state, state.heads.zoom, ShownTokens(state.heads.zoom, mv->tokens), "model_view");
    DrawTokenSetBar(state, "model_view");  // token_sets.h: while a set is chosen
    // What the layer tags mean, for a model that has them.
    if (const model::ModelConfig* config = GridConfig(state, *mv)) {
      std::string legend;
      for (int l = 0; l < mv->layers && legend.empty(); ++l)
        if (LocalLayer(config, l)) legend = trf("local: a sliding-window layer, each token sees only the last %d tokens", config->sliding_window);
      for (int l = 0; l < mv->layers; ++l)
        if (NopeLayer(config, l) && !mv->linear_layer(l)) {
          legend += (legend.empty() ? "" : " · ") + std::string(tr("NoPE: no rotary positions"));
          break;
        }
      if (!legend.empty()) WrappedText(legend);
    }
    // Layers without a softmax (Qwen3-Next): what their thumbnails are, and the softmax layers' when there are any.
    bool softmax_layers = false;
    for (int l = 0; l < mv->layers; ++l) softmax_layers |= !mv->linear_layer(l);
    for (int l = 0; l < mv->layers; ++l)
      if (mv->linear_layer(l)) {
        if (softmax_layers)
          WrappedText(trf("%s: no softmax, each head is its signed matrix M (diverging colours, white at 0); "
                          "attention: softmax probabilities", mv->layer_kind[size_t(l)].c_str()));
        else
          WrappedText(trf("%s: no softmax, each head is its signed matrix M (diverging colours, white at 0)",
                          mv->layer_kind[size_t(l)].c_str()));
        break;
      }
  }
  // A grid of an older pass stays on screen while the worker makes the new one.
  const ModelLayerRun* run = c.run.get();
  const bool stale = mv && run && run->stack && mv->stack != run->stack && state.model_view.error.empty();
  if (stale) SpinnerText(tr("computing…"));
  else BusyIndicator(state);
  ErrorText(ErrorFor(state, Panel::checkpoint));
  ErrorText(ErrorFor(state, Panel::heads));
  ErrorText(state.model_view.error.empty() ? "" : std::string(tr("Error: ")) + state.model_view.error);
  if (!mv) {
    if (state.scene.view.view != View::heads) {
      WrappedText(tr("The model view draws the forward pass of the Heads view."));
      if (ImGui::Button(tr("Show in the Heads view"))) SwitchView(state, View::heads);
    } else if (state.error.empty() && state.model_view.error.empty()) {
      SpinnerText(tr("computing…"));
    }
    ImGui::End();
    return;
  }
  if (!state.error.empty())
    NoticeText(tr("These are the last valid input's heads: the model refused the new one."));
  DrawAblationPanel(state);
  DrawGrid(state, *mv);
  ImGui::End();
}

}  // namespace attnscope::gui
