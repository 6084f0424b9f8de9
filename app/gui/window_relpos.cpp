// window_relpos.cpp — the relative-position windows (Cordonnier, Loukas & Jaggi 2020).
//
//   Rel. position 1D (sentence): α and Δ per head (and a global α), mixed mode with λ, one T × T
//     heatmap per head, the expansion score = v_h·r_δ for the hovered cell.
//   Rel. position 2D (grid): the grid (click a cell to make it the query), all heads combined, one
//     overlay per head on the grid, α (global and per head), Δ per head with sliders and a 2D pad to
//     drag, and r_δ, v_h and the expansion for the hovered cell.
// The engine computes everything (analysis.h RelposAnalysis, relative_position.h); these windows
// edit scene.relpos and draw the pictures the worker coloured.
//
// Sections: per-head settings · controls · the expansion · 2D pad · 1D window · 2D window
#include <algorithm>
#include <optional>
#include <cmath>
#include <cstdio>
#include <string>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/relpos/relative_position.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/scale_control.h"
#include "gui/token_sets.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

constexpr ImU32 edited_head_color = IM_COL32(213, 94, 0, 255);  // the head the sliders edit
constexpr ImU32 other_head_color = IM_COL32(150, 150, 150, 255);

std::string Num(double v) { return FormatValue(float(v)); }

// ---- per-head settings -------------------------------------------------------------------------------

// Before one head's α or Δ is edited, every head gets its own explicit value (what it shows now), so
// the others keep theirs.
void MakePerHeadExplicit(RelposSettings& s, const RelposAnalysis* shown, int dims) {
  const int h = s.heads;
  if (int(s.deltas.size()) != h) {
    s.deltas.assign(size_t(h), {0.0, 0.0});
    if (shown && int(shown->heads.size()) == h) {
      for (int i = 0; i < h; ++i) s.deltas[size_t(i)] = shown->heads[size_t(i)].delta;
    } else {
      try {
        s.deltas = delta_preset(s.delta_preset, h, dims, s.delta_seed);
      } catch (const InputError&) {
        // keep zeros: a preset that does not fit H; the user is setting Δ by hand now
      }
    }
  }
  if (int(s.alphas.size()) != h) s.alphas.assign(size_t(h), s.alpha);
}

double HeadAlpha(const RelposSettings& s, int h) { return int(s.alphas.size()) == s.heads ? s.alphas[size_t(h)] : s.alpha; }

// ---- controls ----------------------------------------------------------------------------------------

// Heads, preset, global α, the edited head's α and Δ (sliders; the 2D pad is drawn by the caller),
// padding keys. Returns true when the scene changed.
bool DrawHeadControls(AppState& state, const RelposAnalysis* shown, int dims, int extent) {
  RelposSettings& s = state.scene.relpos;
  RelposWindowState& w = state.relpos;
  bool edited = false;
  // Controls beside their labels; in a narrow column (a large UI scale) the Δ preset's label goes above
  // its combo, which then takes the whole line.
  const float label_w = ImGui::CalcTextSize((std::string(tr("Δ preset")) + " (?)").c_str()).x + ImGui::GetStyle().ItemInnerSpacing.x * 2;
  const bool narrow = ImGui::GetContentRegionAvail().x - label_w < ImGui::GetFontSize() * 6;
  ImGui::PushItemWidth(-label_w);

  int heads = s.heads;
  if (SliderIntTyped(tr("heads H"), &heads, 1, 25) && heads != s.heads) {
    s.heads = std::clamp(heads, 1, limits::max_heads);
    s.deltas.clear();
    s.alphas.clear();
    // conv presets fix H; another H falls back to a line of offsets.
    if ((s.delta_preset == "conv3x3" && s.heads != 9) || (s.delta_preset == "conv5x5" && s.heads != 25))
      s.delta_preset = "line";
    edited = true;
  }
  // These heads are a model of their own (SPEC: position-only, W_Q = W_K = 0), not the Model window's.
  HintText(tr("Position-only heads: a model of their own, apart from the Model window's (no content, only offsets)."));
  const char* preset_shown = s.deltas.empty() ? s.delta_preset.c_str() : tr("(per head)");
  if (narrow) {
    ImGui::TextUnformatted(tr("Δ preset"));
    ImGui::SetNextItemWidth(-FLT_MIN);
  }
  if (ImGui::BeginCombo(narrow ? "##delta_preset" : tr("Δ preset"), preset_shown)) {
    for (const std::string& name : delta_preset_names()) {
      const bool two_d = name == "conv3x3" || name == "conv5x5";
      if (two_d && dims == 1) continue;
      if (ImGui::Selectable(name.c_str(), s.deltas.empty() && s.delta_preset == name)) {
        s.delta_preset = name;
        s.deltas.clear();
        if (name == "conv3x3") s.heads = 9;
        if (name == "conv5x5") s.heads = 25;
        if (int(s.alphas.size()) != s.heads) s.alphas.clear();
        edited = true;
      }
    }
    ImGui::EndCombo();
  }
  if (s.delta_preset == "random" && s.deltas.empty()) {
    const uint64_t one = 1;
    edited |= ImGui::InputScalar((std::string(tr("Δ seed")) + "###delta_seed").c_str(), ImGuiDataType_U64, &s.delta_seed, &one, &one, "%llu");
  }

  double alpha = s.alpha;
  if (SliderDoubleFinite(tr("α (all)"), &alpha, 0.0, 1000.0, "%.3g", w.input_error, true)) {
    s.alpha = alpha;
    s.alphas.clear();  // the global α sets every head
    edited = true;
  }
  HelpMarker(tr("α is each head's sharpness: 0 spreads attention evenly, large α puts it all on the one key at "
                "query + Δ. The global α sets every head; the α below sets one head."));

  ImGui::PopItemWidth();
  SectionHeader(tr("One head"));
  ImGui::PushItemWidth(-ImGui::CalcTextSize((std::string(tr("Δ preset")) + " (?)").c_str()).x - ImGui::GetStyle().ItemInnerSpacing.x * 2);
  w.edit_head = std::clamp(w.edit_head, 0, std::max(0, s.heads - 1));
  if (s.heads > 1) SliderIntTyped(tr("head"), &w.edit_head, 0, s.heads - 1);
  w.edit_head = std::clamp(w.edit_head, 0, std::max(0, s.heads - 1));
  const int h = w.edit_head;
  double head_alpha = HeadAlpha(s, h);
  if (SliderDoubleFinite("α", &head_alpha, 0.0, 1000.0, "%.3g", w.input_error, true)) {
    MakePerHeadExplicit(s, shown, dims);
    s.alphas[size_t(h)] = head_alpha;
    edited = true;
  }
  std::array<double, 2> delta = shown && h < int(shown->heads.size()) ? shown->heads[size_t(h)].delta
                                                                        : std::array<double, 2>{0, 0};
  if (int(s.deltas.size()) == s.heads) delta = s.deltas[size_t(h)];
  const double range = double(std::max(extent, 4));
  bool delta_edited = false;
  if (dims == 2) delta_edited |= SliderDoubleFinite(tr("Δ row"), &delta[0], -range, range, "%.2f", w.input_error);
  delta_edited |= SliderDoubleFinite(dims == 2 ? tr("Δ col") : "Δ", &delta[1], -range, range, "%.2f", w.input_error);
  if (delta_edited) {
    MakePerHeadExplicit(s, shown, dims);
    s.deltas[size_t(h)] = delta;
    edited = true;
  }
  ImGui::PopItemWidth();

  edited |= ImGui::Checkbox(tr("padding keys"), &s.pad_keys);
  HelpMarker(tr("Adds zero-valued cells beyond the edges as keys, so a head whose window falls off the input puts "
                "its mass there (like a zero-padded convolution) instead of on the nearest real keys."));
  ErrorText(w.input_error);
  return edited;
}

// ---- the expansion -----------------------------------------------------------------------------------

// score_h(q,k) = v_h·r_δ = −α‖δ − Δ‖² + α‖Δ‖², every number printed.
void DrawExpansion(const RelposAnalysis& r, int head, int query, int key) {
  if (head < 0 || head >= int(r.heads.size()) || query < 0 || key < 0 || query >= r.rows * r.cols ||
      key >= r.rows * r.cols)
    return;
  const RelposHead& hd = r.heads[size_t(head)];
  const RelposPairTerms t = relpos_pair_terms(hd, r.geometry, query, key);
  auto vec = [](const std::vector<double>& v) {
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + Num(v[i]);
    return s + ")";
  };
  const float p = r.probs.empty() ? (query == r.query ? r.probs_query(head, key) : NAN) : r.probs[size_t(head)](query, key);
  // Each line wraps: in a narrow column (1280×720, a larger UI scale) the numbers go on the next line
  // instead of past the edge.
  if (r.dims == 2) {
    WrappedText(trf("head %d: α = %s, Δ = (%s, %s)", head, Num(hd.alpha).c_str(), Num(hd.delta[0]).c_str(),
                    Num(hd.delta[1]).c_str()));
    WrappedText(trf("query (%d, %d) → key (%d, %d)", query / r.cols, query % r.cols, key / r.cols, key % r.cols));
    WrappedText("δ = p_k − p_q = (" + Num(t.delta[0]) + ", " + Num(t.delta[1]) + ")");
    WrappedText("r_δ = (‖δ‖², δ_row, δ_col) = " + vec(t.r));
    WrappedText("v_h = −α(1, −2Δ_row, −2Δ_col) = " + vec(t.v));
  } else {
    WrappedText(trf("head %d: α = %s, Δ = %s", head, Num(hd.alpha).c_str(), Num(hd.delta[1]).c_str()));
    if (!r.labels.empty())
      WrappedText(trf("query %d %s → key %d %s", query, r.labels[size_t(query)].c_str(), key, r.labels[size_t(key)].c_str()));
    WrappedText("δ = k − q = " + Num(t.delta[1]));
    WrappedText("r_δ = (δ², δ) = " + vec(t.r));
    WrappedText("v_h = −α(1, −2Δ) = " + vec(t.v));
  }
  WrappedText(trf("score = v_h·r_δ = %s", Num(t.score).c_str()));
  WrappedText("      = −α‖δ − Δ‖² + α‖Δ‖² = " + Num(t.distance_term) + " + " + Num(t.constant_term));
  if (r.mixed) HintText(trf("(mixed mode adds the content score; λ = %s)", Num(r.lambda).c_str()));
  if (std::isfinite(p)) WrappedText(trf("probability = %s", FormatValue(p).c_str()));
}

// The key the edited head looks at most from the query: q + Δ rounded into the input.
int PeakKey(const RelposAnalysis& r, int head, int query) {
  const RelposHead& hd = r.heads[size_t(head)];
  const int row = std::clamp(int(std::lround(query / r.cols + hd.delta[0])), 0, r.rows - 1);
  const int col = std::clamp(int(std::lround(query % r.cols + hd.delta[1])), 0, r.cols - 1);
  return row * r.cols + col;
}

// ---- 2D pad ------------------------------------------------------------------------------------------

// A square to drag Δ = (row, col) of the edited head; the other heads' Δ show as grey dots.
bool DeltaPad(AppState& state, const RelposAnalysis* shown, float size) {
  RelposSettings& s = state.scene.relpos;
  const int h = state.relpos.edit_head;
  std::array<double, 2> delta{0, 0};
  if (int(s.deltas.size()) == s.heads) delta = s.deltas[size_t(h)];
  else if (shown && h < int(shown->heads.size())) delta = shown->heads[size_t(h)].delta;
  double range = 3.0;
  if (shown)
    for (const RelposHead& hd : shown->heads) range = std::max({range, std::fabs(hd.delta[0]) + 1, std::fabs(hd.delta[1]) + 1});
  range = std::ceil(range);

  const ImVec2 min = ImGui::GetCursorScreenPos();
  const ImVec2 max(min.x + size, min.y + size);
  ImGui::InvisibleButton("##delta_pad", ImVec2(size, size));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(min, max, ImGui::GetColorU32(ImGuiCol_FrameBg));
  auto to_screen = [&](double dr, double dc) {
    return ImVec2(min.x + float((dc + range) / (2 * range)) * size, min.y + float((dr + range) / (2 * range)) * size);
  };
  for (int i = int(-range); i <= int(range); ++i) {
    const ImU32 c = ImGui::GetColorU32(i == 0 ? ImGuiCol_Text : ImGuiCol_Border);
    draw->AddLine(to_screen(-range, i), to_screen(range, i), c);
    draw->AddLine(to_screen(i, -range), to_screen(i, range), c);
  }
  if (shown)
    for (const RelposHead& hd : shown->heads) draw->AddCircleFilled(to_screen(hd.delta[0], hd.delta[1]), size * 0.018f + 2, other_head_color);
  draw->AddCircleFilled(to_screen(delta[0], delta[1]), size * 0.03f + 3, edited_head_color);
  draw->AddText(ImVec2(min.x + 4, min.y + 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), tr("Δ col →"));
  AddTextRotated(draw, ImVec2(min.x + 2, max.y - 4), ImGui::GetColorU32(ImGuiCol_TextDisabled), tr("← Δ row"));
  bool edited = false;
  if (ImGui::IsItemActive() && ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    // Snap to tenths: tidy numbers, and whole offsets are easy to hit.
    const double dc = std::round(std::clamp((m.x - min.x) / size * 2 * range - range, -range, range) * 10) / 10;
    const double dr = std::round(std::clamp((m.y - min.y) / size * 2 * range - range, -range, range) * 10) / 10;
    if (dr != delta[0] || dc != delta[1]) {
      MakePerHeadExplicit(s, shown, 2);
      s.deltas[size_t(h)] = {dr, dc};
      edited = true;
    }
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", trf("drag: Δ of head %d (row down, column right)", h).c_str());
  return edited;
}

// Starts a relpos view's window with controls on the left (returns false when collapsed).
bool BeginRelposWindow(AppState& state, const char* title, View view) {
  PlaceNextWindow(state, Slot::view);
  if (!ImGui::Begin(title, nullptr, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return false;
  }
  state.layout.view = to_string(view);
  return true;
}

// Caption forms, longest first (heatmap_grid.h): "head h · Δ … · α …", "h: Δ …", "h".
constexpr int kHeadCaptionForms = 3;
std::string HeadCaption(const RelposAnalysis& r, int h, int form) {
  const RelposHead& hd = r.heads[size_t(h)];
  char brief[48];
  if (form >= 2) return std::to_string(h);
  if (r.dims == 2) {
    if (form == 0)
      return trf("head %d · Δ (%s, %s) · α %s", h, Num(hd.delta[0]).c_str(), Num(hd.delta[1]).c_str(), Num(hd.alpha).c_str());
    std::snprintf(brief, sizeof brief, "%d: (%s, %s)", h, Num(hd.delta[0]).c_str(), Num(hd.delta[1]).c_str());
  } else {
    if (form == 0) return trf("head %d · Δ %s · α %s", h, Num(hd.delta[1]).c_str(), Num(hd.alpha).c_str());
    std::snprintf(brief, sizeof brief, "%d: Δ %s", h, Num(hd.delta[1]).c_str());
  }
  return brief;
}

// The state banner shared by both windows: refused settings, nothing yet.
bool HaveRelpos(const AppState& state, int dims) {
  if (!state.error.empty())
    ErrorText(std::string(state.analysis && state.analysis->relpos ? tr("Showing the last valid settings: ")
                                                                  : tr("Nothing to show: ")) +
              state.error);
  const RelposAnalysis* r = state.analysis ? state.analysis->relpos.get() : nullptr;
  if (!r || r->dims != dims || !state.pictures || state.pictures->relpos_heads.size() != r->heads.size()) {
    if (state.error.empty()) ImGui::TextDisabled("%s", tr("computing…"));
    return false;
  }
  return true;
}

}  // namespace

// ---- 1D window ---------------------------------------------------------------------------------------

void DrawRelpos1dWindow(AppState& state) {
  if (!BeginRelposWindow(state, WindowTitle("Relative position 1D · sentence", "relpos1d").c_str(), View::relpos1d)) return;
  const float font = ImGui::GetFontSize();
  if (CheckpointHidesOwnHeads(state) ||
      WrongInputForView(state, false, tr("This view works on a sentence; the input is a 2D grid."), Panel::relpos)) {
    ImGui::End();
    return;
  }
  const RelposAnalysis* shown = state.analysis && state.analysis->relpos && state.analysis->relpos->dims == 1
                                    ? state.analysis->relpos.get()
                                    : nullptr;
  const int tokens = shown ? shown->cols : 8;
  RelposSettings& s = state.scene.relpos;

  // Left: the controls and the expansion.
  // Scrolls sideways when the view is narrow (side panels open): a checkbox's label cannot wrap.
  ImGui::BeginChild("controls", ImVec2(std::min(font * 21.0f, ImGui::GetContentRegionAvail().x * 0.4f), 0), false,
                    ImGuiWindowFlags_HorizontalScrollbar);
  BusyIndicator(state);
  TokenSetNotDrawnNote(state, "relpos1d");
  CopyFigureButton(state, false);
  ScaleComboLine(state);
  bool edited = DrawHeadControls(state, shown, 1, tokens);
  edited |= ImGui::Checkbox(tr("mixed mode: content + λ·position"), &s.mixed);
  HelpMarker(tr("Each head's scores become the model's content scores (Q·Kᵀ/√d_k of the same head) plus λ times "
                "the positional scores, so H here follows the Model window's heads."));
  if (s.mixed) {
    const int model_heads = effective_heads(state.scene.model);
    if (s.heads != model_heads) {
      s.heads = model_heads;
      s.deltas.clear();
      s.alphas.clear();
      edited = true;
    }
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("λ ").x);
    double lambda = s.lambda;
    if (SliderDoubleFinite("λ", &lambda, 0.0, 10.0, "%.3g", state.relpos.input_error)) {
      s.lambda = lambda;
      edited = true;
    }
  }
  if (edited) NoteEdit(state, Panel::relpos);
  ErrorText(ErrorFor(state, Panel::relpos));
  if (shown) {
    SectionHeader(tr("Expansion"));
    state.relpos.expansion_head = std::clamp(state.relpos.expansion_head, 0, int(shown->heads.size()) - 1);
    DrawExpansion(*shown, state.relpos.expansion_head, state.relpos.expansion_query, state.relpos.expansion_key);
  }
  // Room below the last line for the sideways scrollbar, which would otherwise cover it: with it the
  // column scrolls down to that line instead of hiding it.
  ImGui::Dummy(ImVec2(0, ImGui::GetStyle().ScrollbarSize));
  ImGui::EndChild();
  ImGui::SameLine();

  // Right: one heatmap per head.
  ImGui::BeginChild("maps", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (HaveRelpos(state, 1)) {
    const RelposAnalysis& r = *shown;
    const Pictures& pictures = *state.pictures;
    const LabelCache& labels = CachedLabels(state, state.relpos.labels, r.labels);
    const bool full = !r.probs.empty();
    if (!full) NoticeText(tr("More than 1024 tokens: only the query's row is kept; each head shows one row."));
    HintText(tr("rows: queries · columns: keys · click a row to make it the query"));
    ZoomState& z = state.relpos.zoom_1d;
    const Shown part = ShownTokens(z, r.cols, full ? r.cols : 1);
    DrawZoomBar(state, z, part, "relpos");
    HeatmapGridSpec spec;
    spec.count = int(r.heads.size());
    spec.rows = full ? r.cols : 1;
    spec.cols = r.cols;
    spec.texture = [&state](int h) { return state.textures.relpos_heads[size_t(h)].id(); };
    const int edit = state.relpos.edit_head;
    spec.frame_color = [edit](int h) { return h == edit ? edited_head_color : other_head_color; };
    spec.captions = [&r](int h, int form) { return HeadCaption(r, h, form); };
    spec.caption_forms = kHeadCaptionForms;
    spec.row_labels = full ? &labels.labels : nullptr;
    spec.col_labels = &labels.labels;
    spec.labels_extent = labels.extent;
    spec.shared_scale = pictures.shared_scale;
    spec.shared_range = pictures.relpos_range;
    spec.scale_note = ScaleNote(pictures.scale);
    spec.range = [&pictures](int h) { return pictures.relpos_heads[size_t(h)].range; };
    spec.colormap = pictures.colormap;
    spec.selected_row = full ? r.query_col : -1;
    std::vector<std::string> row_labels, col_labels;
    ApplyShown(spec, part, z, row_labels, col_labels);
    if (z.numbers)
      spec.cell_number = [&r, &pictures, part, full](int h, int row, int col, std::string& text, ImU32& color) {
        const int q = part.row + row, k = part.col + col;
        const Rgba* under = pictures.relpos_heads[size_t(h)].cell(full ? q : 0, k);
        if (!under || (full ? q >= r.probs[size_t(h)].rows() || k >= r.probs[size_t(h)].cols() : k >= r.probs_query.cols()))
          return false;
        const float p = full ? r.probs[size_t(h)](q, k) : float(r.probs_query(h, k));
        return CellNumber(p, *under, text, color);
      };
    HeatmapGridResult grid = DrawHeatmapGrid(spec, state.relpos.bar, state.ui_scale, &state.layout);
    RecordShownMaps(state, grid, part);
    RecordKeyAxis(state, grid, "relpos");
    ZoomAndPan(z, part, grid, true);
    ToWholePicture(grid, part);
    if (!full && grid.hovered >= 0) grid.row = 0;
    // The expansion follows the pointer; without one, the edited head at the query and its peak key.
    const int query = full && grid.hovered >= 0 ? grid.row : r.query_col;
    if (grid.hovered >= 0) {
      state.relpos.expansion_head = grid.hovered;
      state.relpos.expansion_query = query;
      state.relpos.expansion_key = grid.col;
      ImGui::BeginTooltip();
      DrawExpansion(r, grid.hovered, query, grid.col);
      ImGui::TextDisabled("%s", ZoomHint(true));
      ImGui::EndTooltip();
      if (grid.clicked) {
        state.relpos.edit_head = grid.hovered;
        if (full) SelectQuery(state, grid.row);
        NoteEdit(state, Panel::relpos);
      }
    } else {
      state.relpos.expansion_head = std::clamp(state.relpos.edit_head, 0, int(r.heads.size()) - 1);
      state.relpos.expansion_query = r.query_col;
      state.relpos.expansion_key = PeakKey(r, state.relpos.expansion_head, r.query_col);
    }
  }
  ImGui::EndChild();
  ImGui::End();
}

// ---- 2D window ---------------------------------------------------------------------------------------

void DrawRelpos2dWindow(AppState& state) {
  if (!BeginRelposWindow(state, WindowTitle("Relative position 2D · grid", "relpos2d").c_str(), View::relpos2d)) return;
  const float font = ImGui::GetFontSize();
  TokenSetNotDrawnNote(state, "relpos2d");  // also over "works on a 2D grid" (a set is of a sentence's tokens)
  if (CheckpointHidesOwnHeads(state) ||
      WrongInputForView(state, true, tr("This view works on a 2D grid; the input is a sentence or a tensor."), Panel::relpos)) {
    ImGui::End();
    return;
  }
  const RelposAnalysis* shown = state.analysis && state.analysis->relpos && state.analysis->relpos->dims == 2
                                    ? state.analysis->relpos.get()
                                    : nullptr;
  const int extent = shown ? std::max(shown->rows, shown->cols) / 2 : 4;

  // Left: the controls, the Δ pad and the expansion.
  const float left_w = std::min(font * 21.0f, ImGui::GetContentRegionAvail().x * 0.4f);
  ImGui::BeginChild("controls", ImVec2(left_w, 0), false);
  BusyIndicator(state);
  CopyFigureButton(state, false);
  ScaleComboLine(state);
  bool edited = DrawHeadControls(state, shown, 2, extent);
  edited |= DeltaPad(state, shown, std::min(left_w - font, font * 11.0f));
  if (edited) NoteEdit(state, Panel::relpos);
  ErrorText(ErrorFor(state, Panel::relpos));
  if (shown) {
    SectionHeader(tr("Expansion"));
    state.relpos.expansion_head = std::clamp(state.relpos.expansion_head, 0, int(shown->heads.size()) - 1);
    DrawExpansion(*shown, state.relpos.expansion_head, shown->query, state.relpos.expansion_key);
  }
  ImGui::EndChild();
  ImGui::SameLine();

  ImGui::BeginChild("maps", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (HaveRelpos(state, 2)) {
    const RelposAnalysis& r = *shown;
    const Pictures& pictures = *state.pictures;
    Textures& tex = state.textures;
    ImGui::TextWrapped("%s", trf("%s · query (%d, %d): click the grid to move it", GridNote(state, r.input_note).c_str(), r.query_row, r.query_col).c_str());
    ZoomState& z = state.relpos.zoom_2d;
    const Shown part = ShownCells(z, r.rows, r.cols);
    DrawZoomBar(state, z, part, "relpos2d");
    // Numbers in cells: the grid's gray values, the mean and each head's probabilities, each read against
    // the colour drawn under it (an overlay's colour over the grid's).
    auto under = [&pictures](const Picture& overlay, int row, int col) -> std::optional<Rgba> {
      const Rgba* o = overlay.cell(row, col);
      const Rgba* g = pictures.grid.cell(row, col);
      if (!o || !g) return std::nullopt;
      const float a = float(o->a) / 255.0f;
      auto mix = [a](uint8_t top, uint8_t below) { return uint8_t(std::lround(a * float(top) + (1 - a) * float(below))); };
      return Rgba{mix(o->r, g->r), mix(o->g, g->g), mix(o->b, g->b), 255};
    };
    const bool gray = r.x.cols() == 1;

    // Top: the grid and all heads combined, side by side.
    HeatmapGridSpec top;
    top.count = 2;
    top.rows = r.rows;
    top.cols = r.cols;
    top.texture = [&tex](int i) { return i == 0 ? tex.grid.id() : tex.relpos_combined.id(); };
    top.background = [&tex](int i) { return i == 0 ? ImTextureID{} : tex.grid.id(); };
    top.captions = [](int i, int) { return std::string(i == 0 ? tr("the grid") : tr("all heads (mean)")); };
    top.frame_color = [](int) { return other_head_color; };
    top.shared_scale = true;
    top.shared_range = pictures.relpos_combined.range;
    top.colormap = pictures.colormap;
    top.value_name = TrKey("mean probability");
    if (pictures.scale.mode != ScaleMode::per_head) top.scale_note = ScaleNote(pictures.scale);
    top.marked_cell = r.query;
    std::vector<std::string> no_rows, no_cols;
    ApplyShown(top, part, z, no_rows, no_cols);
    if (z.numbers)
      top.cell_number = [&r, &pictures, part, gray, under](int i, int row, int col, std::string& text, ImU32& color) {
        const int y = part.row + row, x = part.col + col;
        const Eigen::Index cell = Eigen::Index(y) * r.cols + x;
        if (i == 0) {
          const Rgba* g = pictures.grid.cell(y, x);
          return gray && g && cell < r.x.rows() && CellNumber(float(r.x(cell, 0)), *g, text, color);
        }
        const std::optional<Rgba> c = under(pictures.relpos_combined, y, x);
        return c && y < r.combined.rows() && x < r.combined.cols() && CellNumber(float(r.combined(y, x)), *c, text, color);
      };
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // The grid and the mean are context; many heads (a 3×3 kernel's nine) get the larger share of the height.
    const float top_share = r.heads.size() > 4 ? 0.26f : 0.36f;
    ImGui::BeginChild("top", ImVec2(avail.x, std::round(avail.y * top_share)), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    HeatmapGridResult top_grid = DrawHeatmapGrid(top, state.relpos.bar, state.ui_scale, nullptr);
    ImGui::EndChild();
    ZoomAndPan(z, part, top_grid, true);
    ToWholePicture(top_grid, part);
    if (top_grid.hovered >= 0) {
      ImGui::SetTooltip("%s", (trf("cell (%d, %d) — click: make it the query", top_grid.row, top_grid.col) + "\n" +
                               ZoomHint(false)).c_str());
      if (top_grid.clicked) {
        state.scene.relpos.query_row = top_grid.row;
        state.scene.relpos.query_col = top_grid.col;
        NoteEdit(state, Panel::relpos);
      }
    }

    // Below: one overlay per head.
    HeatmapGridSpec spec;
    spec.count = int(r.heads.size());
    spec.rows = r.rows;
    spec.cols = r.cols;
    spec.texture = [&tex](int h) { return tex.relpos_heads[size_t(h)].id(); };
    spec.background = [&tex](int) { return tex.grid.id(); };
    const int edit = state.relpos.edit_head;
    spec.frame_color = [edit](int h) { return h == edit ? edited_head_color : other_head_color; };
    spec.captions = [&r](int h, int form) { return HeadCaption(r, h, form); };
    spec.caption_forms = kHeadCaptionForms;
    spec.shared_scale = pictures.shared_scale;
    spec.shared_range = pictures.relpos_range;
    spec.scale_note = ScaleNote(pictures.scale);
    spec.range = [&pictures](int h) { return pictures.relpos_heads[size_t(h)].range; };
    spec.colormap = pictures.colormap;
    spec.marked_cell = r.query;
    ApplyShown(spec, part, z, no_rows, no_cols);
    if (z.numbers)
      spec.cell_number = [&r, &pictures, part, under](int h, int row, int col, std::string& text, ImU32& color) {
        const int y = part.row + row, x = part.col + col;
        const Eigen::Index cell = Eigen::Index(y) * r.cols + x;
        const std::optional<Rgba> c = under(pictures.relpos_heads[size_t(h)], y, x);
        return c && h < r.probs_query.rows() && cell < r.probs_query.cols() &&
               CellNumber(float(r.probs_query(h, cell)), *c, text, color);
      };
    HeatmapGridResult grid = DrawHeatmapGrid(spec, state.relpos.bar, state.ui_scale, &state.layout);
    RecordShownMaps(state, grid, part);
    ZoomAndPan(z, part, grid, true);
    ToWholePicture(grid, part);
    if (grid.hovered >= 0) {
      const int key = grid.row * r.cols + grid.col;
      state.relpos.expansion_head = grid.hovered;
      state.relpos.expansion_key = key;
      ImGui::BeginTooltip();
      DrawExpansion(r, grid.hovered, r.query, key);
      ImGui::TextDisabled("%s", tr("click: edit this head"));
      ImGui::TextDisabled("%s", ZoomHint(false));
      ImGui::EndTooltip();
      if (grid.clicked) state.relpos.edit_head = grid.hovered;
    } else {
      state.relpos.expansion_head = std::clamp(state.relpos.edit_head, 0, int(r.heads.size()) - 1);
      state.relpos.expansion_key = PeakKey(r, state.relpos.expansion_head, r.query);
    }
  }
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attnscope::gui
