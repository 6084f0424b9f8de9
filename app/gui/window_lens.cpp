// window_lens.cpp — Windows → Logit lens: what the open checkpoint "thinks" after each layer, and which heads
// push its prediction up or down (issue 38 item 2; pipeline steps logit_lens and logit_attribution, model/lens.h).
//
//   Logit lens   the familiar grid: rows are layers (0 = after the first layer), columns positions (the input
//                token over each); a cell is the most probable next token of the residual stream after that
//                layer, put through the model's own final norm and unembedding, coloured by its probability.
//                Hover a cell for its top-k; click it to choose its position. Beside it, for the chosen
//                position, the KL divergence of each layer's distribution to the final one and the rank of the
//                model's own top-1 token in it (1 = that layer already predicts it).
//   Attribution  the direct logit attribution at the chosen position: layers × heads, each head's output
//                through W_O dotted with the target token's unembedding (the final norm's scale frozen), on a
//                diverging scale (which heads push the token up, which down); the other parts (embedding,
//                positions, attention biases, MLPs, the final norm's bias) listed beside it. A layer without
//                softmax heads (Gated DeltaNet, Mamba-2, a trained linear layer) is one part and says so. The
//                target is the model's top-1 (default) or a token chosen from the final top-5 or by id.
// Save PNG / SVG / CSV write the figure on screen (core/lens_export.h: the bytes `export --what lens|attribution`
// writes) to exports/. The window takes the view's place as the Model view does (the one opened last shows).
// Without a checkpoint (the synthetic seeded layer has no unembedding) it says so, with two ways to open one.
//
// Sections: opening · lens grid · lens plots · attribution · saving · window
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/io/file_io.h"
#include "core/lens_export.h"
#include "core/user_path.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/line_plot.h"
#include "gui/token_sets.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// ---- opening -----------------------------------------------------------------------------------------

void DrawNoCheckpoint(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (CheckpointLoadingBar(state)) return;
  if (c.current() && !c.is_open()) {  // it failed to open: its error
    ErrorText(std::string(tr("Error: ")) + c.error);
    return;
  }
  WrappedText(tr("The logit lens reads a real model: the residual stream after each layer, put through the model's "
                 "own final norm and unembedding. The synthetic seeded layer has no unembedding, so the lens needs a "
                 "checkpoint (a Hugging Face folder, or a model trained in the Training window)."));
  if (ImGui::Button(tr("Open the shipped induction model"))) {
    const bool checkpoint_shown = state.show_checkpoint;
    OpenShippedInductionModel(state);
    state.show_checkpoint = checkpoint_shown;
  }
  RecordLastItem(state, "lens.open_induction");
  SameLineIfFits(ImGui::CalcTextSize(tr("Open the Checkpoint window")).x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::Button(tr("Open the Checkpoint window"))) {
    state.show_checkpoint = true;
    ImGui::SetWindowFocus("###checkpoint");
  }
}

std::string Displayed(const AppState& state, const std::string& text) {
  return state.fonts ? state.fonts->display_label(text) : text;
}

std::string Number(double v, const char* format) {
  char text[48];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

// Every token the lens and the attribution name, asked of the fonts once per result (CJK, any script).
void RequestFonts(AppState& state, const pipeline::Result& r) {
  if (!state.fonts || state.lens.fonts_of == &r) return;
  state.lens.fonts_of = &r;
  for (const std::string& l : r.tokens->labels) state.fonts->request_text(l);
  if (r.lens)
    for (const auto& layer : r.lens->top)
      for (const auto& cell : layer)
        for (const model::NextToken& n : cell) state.fonts->request_text(lens_token_label(r, n.id));
  if (r.attribution)
    for (int32_t id : r.attribution->target) state.fonts->request_text(lens_token_label(r, id));
}

// ---- lens grid ---------------------------------------------------------------------------------------

ImU32 CellColor(Colormap map, float t) { return ToImU32(colormap_lookup(map, std::clamp(t, 0.0f, 1.0f))); }

// Text centred in a cell, cut with "…" to its width, black or white on its colour.
void CellText(ImDrawList* draw, const std::string& text, ImVec2 min, ImVec2 max, ImU32 background) {
  const float pad = ImGui::GetFontSize() * 0.2f;
  const std::string shown = Ellipsize(text, max.x - min.x - 2 * pad);
  const ImVec2 size = ImGui::CalcTextSize(shown.c_str());
  draw->PushClipRect(min, max, true);
  draw->AddText(ImVec2((min.x + max.x - size.x) * 0.5f, (min.y + max.y - size.y) * 0.5f), ContrastText(background),
                shown.c_str());
  draw->PopClipRect();
}

void LensTooltip(const AppState& state, const pipeline::Result& r, int l, int t) {
  const model::LogitLens& lens = *r.lens;
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(trf("layer %d · position %d: %s", l, t, Displayed(state, r.tokens->labels[size_t(t)]).c_str()).c_str());
  ImGui::Separator();
  ImGui::TextUnformatted(tr("most probable next tokens after this layer:"));
  int k = 1;
  for (const model::NextToken& n : lens.top[size_t(l)][size_t(t)])
    ImGui::TextUnformatted(trf("%d. %s  %.3f", k++, Displayed(state, lens_token_label(r, n.id)).c_str(), double(n.probability)).c_str());
  ImGui::Separator();
  ImGui::TextUnformatted(trf("KL to the final distribution: %.3f nats", double(lens.kl(l, t))).c_str());
  ImGui::TextUnformatted(trf("rank of the model's top-1 (%s): %d", Displayed(state, lens_token_label(r, lens.final_top[size_t(t)])).c_str(),
                             lens.final_rank(l, t)).c_str());
  ImGui::TextDisabled("%s", tr("click: choose this position"));
  ImGui::EndTooltip();
}

void DrawLensGrid(AppState& state, const pipeline::Result& r, int position, ImVec2 region) {
  const model::LogitLens& lens = *r.lens;
  const int L = lens.layers, T = lens.tokens;
  const float font = ImGui::GetFontSize();
  float left = font * 1.4f + ImGui::CalcTextSize(std::to_string(L - 1).c_str()).x + font * 0.4f;
  const float top = font * 1.6f;
  const float cw = std::clamp((region.x - left - ImGui::GetStyle().ScrollbarSize) / float(T), font * 3.4f, font * 6.0f);
  const float ch = std::clamp((region.y - top - ImGui::GetStyle().ScrollbarSize) / float(L), font * 1.4f, font * 2.4f);
  // Columns wider than the region: the scrollbar from the grid's first frame on (ImGui shows it only once it has
  // measured a frame's content, and the labels past the edge would be cut, not scrollable, in that first frame).
  const bool wide = left + cw * float(T) > region.x;
  const ImGuiWindowFlags flags = ImGuiWindowFlags_HorizontalScrollbar | (wide ? ImGuiWindowFlags_AlwaysHorizontalScrollbar : 0);
  if (ImGui::BeginChild("##lens_grid", region, false, flags)) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const ImVec2 size(left + cw * float(T), top + ch * float(L));
    ImGui::InvisibleButton("##lens_cells", size);
    const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    int hl = -1, ht = -1;
    if (ImGui::IsItemHovered()) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      const int t = int(std::floor((m.x - o.x - left) / cw)), l = int(std::floor((m.y - o.y - top) / ch));
      const bool over_labels = m.x < std::max(o.x, ImGui::GetWindowPos().x) + left;
      if (t >= 0 && t < T && l >= 0 && l < L && !over_labels) hl = l, ht = t;
    }
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    for (int t = 0; t < T; ++t) {  // the input tokens over their columns
      const ImVec2 a(o.x + left + cw * float(t), o.y), b(a.x + cw, o.y + top - font * 0.3f);
      const std::string label = Ellipsize(Displayed(state, r.tokens->labels[size_t(t)]), cw - font * 0.3f);
      const float w = ImGui::CalcTextSize(label.c_str()).x;
      if (t == position) draw->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_HeaderActive), font * 0.2f);
      draw->AddText(ImVec2(a.x + (cw - w) * 0.5f, a.y + font * 0.15f),
                    t == position ? ContrastText(ImGui::GetColorU32(ImGuiCol_HeaderActive)) : text, label.c_str());
    }
    const bool record = int64_t(L) * T <= 4096;
    for (int l = 0; l < L; ++l) {
      for (int t = 0; t < T; ++t) {
        const auto& cell = lens.top[size_t(l)][size_t(t)];
        const ImVec2 a(o.x + left + cw * float(t), o.y + top + ch * float(l)), b(a.x + cw - 1, a.y + ch - 1);
        const float p = cell.empty() ? 0.0f : cell[0].probability;
        const ImU32 fill = CellColor(Colormap::viridis, p);
        draw->AddRectFilled(a, b, fill);
        const std::string shown = cell.empty() ? std::string() : Displayed(state, lens_token_label(r, cell[0].id));
        if (!cell.empty()) CellText(draw, shown, a, b, fill);
        const float vx = ImGui::GetWindowPos().x;  // only cells in sight (not scrolled away or under the layer numbers)
        if (record && a.x >= std::max(o.x, vx) + left - 1 && b.x <= vx + ImGui::GetWindowWidth() + 0.5f) {
          LayoutRecord::Widget wgt;
          wgt.name = "lens.cell." + std::to_string(l) + "." + std::to_string(t);
          const ImVec2 s = state.framebuffer_scale;
          wgt.min = ImVec2(a.x * s.x, a.y * s.y);
          wgt.max = ImVec2(b.x * s.x, b.y * s.y);
          wgt.text = shown;  // the glyphs drawn: a code point the fonts lack would read "U+XXXX" here
          state.layout.widgets.push_back(wgt);
        }
      }
    }
    // The layer numbers stay at the left edge while the columns scroll under them.
    const float lx = std::max(o.x, ImGui::GetWindowPos().x);
    draw->AddRectFilled(ImVec2(lx, o.y), ImVec2(lx + left, o.y + size.y), ImGui::GetColorU32(ImGuiCol_WindowBg));
    AddTextRotated(draw, ImVec2(lx, o.y + top + ImGui::CalcTextSize(tr("layer")).x), dim, tr("layer"));
    for (int l = 0; l < L; ++l) {
      const std::string n = std::to_string(l);
      draw->AddText(ImVec2(lx + left - font * 0.4f - ImGui::CalcTextSize(n.c_str()).x, o.y + top + ch * float(l) + (ch - font) * 0.5f),
                    l == state.lens.layer ? ImGui::GetColorU32(ImGuiCol_ButtonActive) : text, n.c_str());
    }
    // A newly chosen position (the slider, a click, the first frame, a lesson step) or new column widths (presenting's
    // larger type, a resize): the column scrolled into sight. The grid's first frame has no scroll range yet (ImGui
    // clamps to the last frame's content), so a column out of sight is scrolled to again, frame after frame, until it
    // is in sight.
    static int scrolled_to = -1;
    static float scrolled_cw = 0;
    if (scrolled_to != position || scrolled_cw != cw) {
      scrolled_cw = cw;
      const float x = left + cw * float(position), shown = ImGui::GetWindowWidth();
      const bool out_of_sight = x < ImGui::GetScrollX() + left || x + cw > ImGui::GetScrollX() + shown;
      if (out_of_sight) ImGui::SetScrollX(std::max(0.0f, x - (shown - cw) * 0.5f));
      if (!out_of_sight) scrolled_to = position;
    }
    // The chosen position's column, outlined.
    const ImVec2 a(o.x + left + cw * float(position), o.y + top), b(a.x + cw - 1, a.y + ch * float(L) - 1);
    draw->AddRect(a, b, IM_COL32(0, 0, 0, 255), 0, 0, 4.0f);
    draw->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
    if (hl >= 0) {
      const ImVec2 ha(o.x + left + cw * float(ht), o.y + top + ch * float(hl));
      draw->AddRect(ha, ImVec2(ha.x + cw - 1, ha.y + ch - 1), IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
      LensTooltip(state, r, hl, ht);
      if (clicked) {
        state.lens.position = ht;
        state.lens.layer = hl;
      }
    }
  }
  ImGui::EndChild();
  RecordLastItem(state, "lens.grid");
}

// ---- lens plots --------------------------------------------------------------------------------------

void DrawLensPlots(AppState& state, const pipeline::Result& r, int position, ImVec2 region) {
  const model::LogitLens& lens = *r.lens;
  if (ImGui::BeginChild("##lens_plots", region, false)) {
    const float font = ImGui::GetFontSize();
    // The probability colour bar of the grid, as a legend line.
    const float bar_h = font * 1.2f;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float bar_w = ImGui::GetContentRegionAvail().x;
    for (int i = 0; i < 64; ++i)
      draw->AddRectFilled(ImVec2(at.x + bar_w * float(i) / 64.0f, at.y), ImVec2(at.x + bar_w * float(i + 1) / 64.0f + 1, at.y + bar_h),
                          CellColor(Colormap::viridis, float(i) / 63.0f));
    ImGui::Dummy(ImVec2(bar_w, bar_h));
    ImGui::TextUnformatted("0");
    const float one = ImGui::CalcTextSize("1").x;
    ImGui::SameLine(std::max(0.0f, bar_w - one));
    ImGui::TextUnformatted("1");
    WrappedText(tr("cell colour: probability of the top token"));
    const std::string target = Displayed(state, lens_token_label(r, lens.final_top[size_t(position)]));
    WrappedText(trf("position %d: %s → the model predicts %s", position, Displayed(state, r.tokens->labels[size_t(position)]).c_str(),
                    target.c_str()));
    Series kl{tr("KL to the final"), SeriesColor(0), {}, {}}, rank{tr("rank of the final top-1"), SeriesColor(1), {}, {}};
    for (int l = 0; l < lens.layers; ++l) {
      kl.x.push_back(float(l));
      kl.y.push_back(lens.kl(l, position));
      rank.x.push_back(float(l));
      rank.y.push_back(float(lens.final_rank(l, position)));
    }
    const float each = std::max(font * 7.0f, (ImGui::GetContentRegionAvail().y - font * 0.5f) * 0.5f);
    LinePlotOptions o;
    o.points = lens.layers <= 48;
    o.hover_format = tr("%s: layer %g → %g");
    DrawLinePlot("##lens_kl", {kl}, tr("layer"), tr("KL (nats)"), each, o);
    RecordLastItem(state, "lens.kl_plot");
    LinePlotOptions ro = o;
    ro.log_y = true;
    ro.y_from_zero = false;
    DrawLinePlot("##lens_rank", {rank}, tr("layer"), tr("rank (1 = top)"), each, ro);
    RecordLastItem(state, "lens.rank_plot");
  }
  ImGui::EndChild();
}

// ---- attribution -------------------------------------------------------------------------------------

// The target token: the model's top-1 (default), one of the final top-5 at the chosen position, or an id.
void DrawTargetChooser(AppState& state, const pipeline::Result& r, int position) {
  LensWindowState& s = state.lens;
  const int V = r.ran_model->config.vocab;
  const std::string top1 = lens_token_label(r, r.lens ? r.lens->final_top[size_t(position)] : 0);
  const std::string current = s.target < 0 ? trf("the model's top-1 (%s)", Displayed(state, top1).c_str())
                                           : Displayed(state, lens_token_label(r, s.target)) + " · id " + std::to_string(s.target);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr("target token"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 16, ImGui::GetContentRegionAvail().x));
  int chosen = s.target;
  if (ImGui::BeginCombo("##lens_target", current.c_str())) {
    if (ImGui::Selectable(trf("the model's top-1 (%s)", Displayed(state, top1).c_str()).c_str(), s.target < 0)) chosen = -1;
    if (r.run && position < int(r.run->next.size()))
      for (const model::NextToken& n : r.run->next[size_t(position)]) {
        const std::string item = Displayed(state, lens_token_label(r, n.id)) + " · id " + std::to_string(n.id) + " · " +
                                 Number(n.probability, "%.3f");
        if (ImGui::Selectable(item.c_str(), s.target == n.id)) chosen = n.id;
      }
    ImGui::EndCombo();
  }
  RecordLastItem(state, "lens.target");
  SameLineIfFits(ImGui::GetFontSize() * 9);
  int id = s.target < 0 ? (r.lens ? r.lens->final_top[size_t(position)] : 0) : s.target;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (InputIntTyped("id##lens_target_id", &id, 0, V - 1)) chosen = id;
  RecordLastItem(state, "lens.target_id");
  if (chosen != s.target) {
    s.target = chosen;
    NoteEdit(state, Panel::checkpoint);  // the attribution of the new target (the same request, another token)
  }
}

ImU32 DivergingColor(float v, float extent) { return CellColor(Colormap::diverging, 0.5f + 0.5f * v / extent); }

void DrawAttribution(AppState& state, const pipeline::Result& r, int position) {
  const model::LogitAttribution& a = *r.attribution;
  const float font = ImGui::GetFontSize();
  const int L = r.ran_model->config.layers;
  int H = 1;
  float extent = 1e-6f;
  for (size_t i = 0; i < a.parts.size(); ++i) {
    if (a.parts[i].kind == model::PartKind::head) H = std::max(H, a.parts[i].head + 1);
    extent = std::max(extent, std::abs(a.values(int(i), position)));
  }
  const std::string target = Displayed(state, lens_token_label(r, a.target[size_t(position)]));
  WrappedText(trf("logit of %s at position %d: %.4g = the sum of every part below", target.c_str(), position,
                  double(a.logit[size_t(position)])) +
              (a.before_softcap ? std::string(" ") + tr("(before the soft-cap)") : std::string()));
  // The colour scale, as a legend line: blue pushes the token down, red up.
  {
    const float w = std::min(ImGui::GetContentRegionAvail().x * 0.5f, font * 16);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const std::string lo = Number(-extent, "%+.3g"), hi = Number(extent, "%+.3g");
    const float lo_w = ImGui::CalcTextSize(lo.c_str()).x;
    draw->AddText(at, ImGui::GetColorU32(ImGuiCol_Text), lo.c_str());
    for (int i = 0; i < 64; ++i)
      draw->AddRectFilled(ImVec2(at.x + lo_w + font * 0.3f + w * float(i) / 64.0f, at.y),
                          ImVec2(at.x + lo_w + font * 0.3f + w * float(i + 1) / 64.0f + 1, at.y + font),
                          CellColor(Colormap::diverging, float(i) / 63.0f));
    draw->AddText(ImVec2(at.x + lo_w + font * 0.6f + w, at.y), ImGui::GetColorU32(ImGuiCol_Text), hi.c_str());
    ImGui::Dummy(ImVec2(lo_w + w + font * 0.9f + ImGui::CalcTextSize(hi.c_str()).x, font));
    SameLineIfFits(ImGui::CalcTextSize(tr("red: pushes the token up · blue: pushes it down")).x);
    ImGui::TextDisabled("%s", tr("red: pushes the token up · blue: pushes it down"));
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float list_w = std::clamp(avail.x * 0.32f, font * 12.0f, font * 20.0f);
  const ImVec2 grid_region(std::max(font * 8, avail.x - list_w - ImGui::GetStyle().ItemSpacing.x), avail.y);
  // Heads: layers × heads.
  if (ImGui::BeginChild("##lens_heads", grid_region, false, ImGuiWindowFlags_HorizontalScrollbar)) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    float left = font * 1.4f + ImGui::CalcTextSize(std::to_string(L - 1).c_str()).x + font * 0.4f;
    const float top = font * 2.6f;
    const float cw = std::clamp((grid_region.x - left - ImGui::GetStyle().ScrollbarSize) / float(H), font * 2.0f, font * 5.0f);
    const float ch = std::clamp((grid_region.y - top - ImGui::GetStyle().ScrollbarSize) / float(L), font * 1.3f, font * 2.4f);
    ImGui::InvisibleButton("##lens_head_cells", ImVec2(left + cw * float(H), top + ch * float(L)));
    int hl = -1, hh = -1;
    if (ImGui::IsItemHovered()) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      const int h = int(std::floor((m.x - o.x - left) / cw)), l = int(std::floor((m.y - o.y - top) / ch));
      if (h >= 0 && h < H && l >= 0 && l < L) hl = l, hh = h;
    }
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    draw->AddText(ImVec2(o.x + left, o.y), dim, tr("head"));
    for (int h = 0; h < H; ++h) {
      const std::string n = std::to_string(h);
      draw->AddText(ImVec2(o.x + left + cw * float(h) + (cw - ImGui::CalcTextSize(n.c_str()).x) * 0.5f, o.y + font * 1.3f), text,
                    n.c_str());
    }
    AddTextRotated(draw, ImVec2(o.x, o.y + top + ImGui::CalcTextSize(tr("layer")).x), dim, tr("layer"));
    const bool numbers = cw >= ImGui::CalcTextSize("+0.00").x + font * 0.3f;
    for (int l = 0; l < L; ++l) {
      const std::string n = std::to_string(l);
      const float y = o.y + top + ch * float(l);
      draw->AddText(ImVec2(o.x + left - font * 0.4f - ImGui::CalcTextSize(n.c_str()).x, y + (ch - font) * 0.5f), text, n.c_str());
      int mixer = -1;
      for (size_t i = 0; i < a.parts.size(); ++i)
        if (a.parts[i].kind == model::PartKind::mixer && a.parts[i].layer == l) mixer = int(i);
      if (mixer >= 0) {  // no softmax heads: one part for the whole layer
        const ImVec2 ma(o.x + left, y), mb(o.x + left + cw * float(H) - 1, y + ch - 1);
        const Rgba gray = masked_color(Colormap::diverging);
        const ImU32 fill = IM_COL32(gray.r, gray.g, gray.b, 255);
        draw->AddRectFilled(ma, mb, fill);
        const std::string kind = r.traced ? r.traced->layer_maps[size_t(l)].kind : std::string();
        CellText(draw, trf("%s: %+.3g (no heads)", kind.c_str(), double(a.values(mixer, position))), ma, mb, fill);
        if (hl == l) {
          ImGui::BeginTooltip();
          ImGui::TextUnformatted(trf("layer %d is a %s layer: it has no softmax heads, so no per-head attribution; the "
                                     "whole layer adds %+.4f to the logit of %s",
                                     l, kind.c_str(), double(a.values(mixer, position)), target.c_str())
                                     .c_str());
          ImGui::EndTooltip();
          hl = -1;
        }
        continue;
      }
      for (int h = 0; h < H; ++h) {
        const int part = a.head_part(l, h);
        if (part < 0) continue;
        const float v = a.values(part, position);
        const ImVec2 ca(o.x + left + cw * float(h), y), cb(ca.x + cw - 1, y + ch - 1);
        const ImU32 fill = DivergingColor(v, extent);
        draw->AddRectFilled(ca, cb, fill);
        if (numbers) CellText(draw, Number(v, std::abs(v) < 0.01f ? "%+.2g" : "%+.2f"), ca, cb, fill);
        if (int64_t(L) * H <= 4096) {
          LayoutRecord::Widget wgt;
          wgt.name = "lens.head." + std::to_string(l) + "." + std::to_string(h);
          const ImVec2 s = state.framebuffer_scale;
          wgt.min = ImVec2(ca.x * s.x, ca.y * s.y);
          wgt.max = ImVec2(cb.x * s.x, cb.y * s.y);
          state.layout.widgets.push_back(wgt);
        }
      }
    }
    if (hl >= 0) {
      const int part = a.head_part(hl, hh);
      if (part >= 0) {
        const float v = a.values(part, position);
        ImGui::BeginTooltip();
        ImGui::TextUnformatted(trf("layer %d · head %d", hl, hh).c_str());
        ImGui::TextUnformatted(trf("%+.4f to the logit of %s", double(v), target.c_str()).c_str());
        ImGui::TextUnformatted(v >= 0 ? tr("pushes the token up") : tr("pushes the token down"));
        ImGui::EndTooltip();
      }
    }
  }
  ImGui::EndChild();
  RecordLastItem(state, "lens.heads");
  ImGui::SameLine();
  // The other parts, largest first.
  if (ImGui::BeginChild("##lens_parts", ImVec2(list_w, avail.y), true)) {
    ImGui::TextUnformatted(tr("other parts"));
    std::vector<std::pair<float, size_t>> rows;
    for (size_t i = 0; i < a.parts.size(); ++i)
      if (a.parts[i].kind != model::PartKind::head) rows.push_back({a.values(int(i), position), i});
    std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return std::abs(x.first) > std::abs(y.first); });
    if (ImGui::BeginTable("##lens_parts_table", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
      for (const auto& [v, i] : rows) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(model::part_label(a.parts[i]).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(Number(v, "%+.4g").c_str());
      }
      ImGui::EndTable();
    }
  }
  ImGui::EndChild();
  RecordLastItem(state, "lens.parts");
}

// ---- saving ------------------------------------------------------------------------------------------

void Save(AppState& state, const pipeline::Result& r, int position, ExportFormat format) {
  LensExportRequest q;
  q.attribution = state.lens.tab == 1;
  q.position = position;
  q.format = format;
  q.words = UiFigureWords();
  SaveToExports(
      state, [&](const std::string& stamp) { return default_lens_file_name(q, stamp); },
      [&](const std::filesystem::path& path) { return export_lens_to_file(r, q, path).bytes.size(); });
}

void DrawSaveButtons(AppState& state, const pipeline::Result& r, int position) {
  SaveFigureButtons(state, "lens", false, [&](ExportFormat format) { Save(state, r, position, format); });
}

}  // namespace

// ---- window ------------------------------------------------------------------------------------------

void DrawLensWindow(AppState& state) {
  LensWindowState& s = state.lens;
  // The Model view, the Rollout view and the lens take the same place: the one opened last shows.
  if (state.show_lens && !s.was_open) {
    state.show_model_view = state.show_rollout = false;
    NoteEdit(state, Panel::checkpoint);  // the request now asks for the lens steps
  } else if (state.show_lens && state.show_model_view && !s.model_view_was_open) {
    state.show_lens = false;
  }
  s.was_open = state.show_lens;
  s.model_view_was_open = state.show_model_view;
  if (!state.show_lens) return;
  PlaceNextWindow(state, Slot::model_view);
  if (!ImGui::Begin(WindowTitle("Logit lens", "lens").c_str(), &state.show_lens,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return;
  }
  const CheckpointWindowState& c = state.checkpoint;
  if (!c.is_open()) {
    DrawNoCheckpoint(state);
    ImGui::End();
    return;
  }
  if (c.attentions) {
    WrappedText(tr("An attentions file holds only the attention probabilities: the logit lens needs a checkpoint's "
                   "forward pass (its residual stream and unembedding)."));
    ImGui::End();
    return;
  }
  if (!ViewDrawsModel(state)) {
    WrappedText(tr("The logit lens reads the forward pass of the Heads view."));
    if (ImGui::Button(tr("Show in the Heads view"))) SwitchView(state, View::heads);
    ImGui::End();
    return;
  }
  TokenSetNotDrawnNote(state, "lens");
  ErrorText(ErrorFor(state, Panel::checkpoint));
  const std::shared_ptr<const pipeline::Result> held = s.result;
  const pipeline::Result* r = held.get();
  const bool ran = r && r->done(pipeline::Step::logit_lens) && r->ran_model && r->tokens;
  if (!ran) {
    if (state.error.empty()) SpinnerText(tr("computing…"));
    ImGui::End();
    return;
  }
  ErrorText(r->lens_error.empty() ? "" : std::string(tr("Error: ")) + r->lens_error);
  if (!r->lens) {
    ImGui::End();
    return;
  }
  RequestFonts(state, *r);
  const int T = r->lens->tokens;
  if (s.position >= T) s.position = -1;
  const int position = s.position < 0 ? T - 1 : s.position;
  // Header: the model, the position, what to show, saving.
  ImGui::TextUnformatted((c.name() + " · " + trcount(r->lens->layers, TrKey("1 layer"), TrKey("%d layers")) + " · " +
                          trcount(T, TrKey("1 token"), TrKey("%d tokens")))
                             .c_str());
  ImGui::SameLine();
  HelpMarker(tr("Rows are layers (0 = after the first layer), columns positions. Each cell is the most probable next "
                "token of the residual stream after that layer, read through the model's own final norm and "
                "unembedding, coloured by its probability. Hover a cell for its top tokens; click it to choose its "
                "position."));
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr("position"));
  ImGui::SameLine();
  int chosen = position;
  ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 10, ImGui::GetContentRegionAvail().x));
  if (SliderIntTyped("##lens_position", &chosen, 0, T - 1)) s.position = chosen;
  RecordLastItem(state, "lens.position");
  ImGui::SameLine();
  ImGui::TextUnformatted(Displayed(state, Ellipsize(r->tokens->labels[size_t(position)], ImGui::GetFontSize() * 8)).c_str());
  int tab = s.tab;
  SameLineIfFits(RadioWidth(tr("Logit lens")));
  if (ImGui::RadioButton(tr("Logit lens"), tab == 0)) tab = 0;
  RecordLastItem(state, "lens.tab.lens");
  SameLineIfFits(RadioWidth(tr("Direct logit attribution")));
  if (ImGui::RadioButton(tr("Direct logit attribution"), tab == 1)) tab = 1;
  RecordLastItem(state, "lens.tab.attribution");
  s.tab = tab;
  DrawSaveButtons(state, *r, position);
  if (s.tab == 0) {
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    const float plots_w = std::clamp(avail.x * 0.3f, font * 13.0f, font * 22.0f);
    DrawLensGrid(state, *r, position, ImVec2(std::max(font * 8, avail.x - plots_w - ImGui::GetStyle().ItemSpacing.x), avail.y));
    ImGui::SameLine();
    DrawLensPlots(state, *r, position, ImVec2(plots_w, avail.y));
  } else {
    DrawTargetChooser(state, *r, position);
    const bool stale = r->request.attribute_token != s.target;
    if (stale) SpinnerText(tr("computing…"));
    ErrorText(r->attribution_error.empty() ? "" : std::string(tr("Error: ")) + r->attribution_error);
    if (r->attribution && !stale) DrawAttribution(state, *r, position);
  }
  ImGui::End();
}

}  // namespace attnscope::gui
