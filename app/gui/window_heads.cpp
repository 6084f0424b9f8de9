// window_heads.cpp — the Heads window: one heatmap per head in a grid (heatmap_grid.h).
//
// Each heatmap is a GL texture drawn as one image (T = 512 with 16 heads stays smooth), framed in
// its kv group's colour (heads that share K/V share a colour) and captioned
// "head h · kv group g". Query tokens run down the left, key tokens along the top. Hover a cell for
// its tokens, score and probability; click to select that query row everywhere; double-click a head
// to open it large. With a checkpoint current, only its heads are drawn: while it opens, when it failed to
// open or its pass failed, its progress or its error stands in their place (never another model's heads).
//
// Sections: toolbar · tooltip · large head · window
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "attnscope/attention/designed_heads.h"
#include "attnscope/attention/weights.h"
#include "attnscope/figure/heatmap_layout.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/scale_control.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// ---- toolbar ---------------------------------------------------------------------------------------

// With a checkpoint or an attentions file open: which of its layers the heads are (window_checkpoint.cpp),
// and what is drawn.
void DrawLayerSlider(AppState& state, const AttentionAnalysis* att) {
  CheckpointWindowState& c = state.checkpoint;
  if (!c.is_open()) return;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (SliderIntTyped("##layer", &c.layer, 0, c.layers() - 1))
    NoteEdit(state, Panel::heads);  // a running forward pass of the old layer is cancelled
  RecordLastItem(state, "heads.layer");  // the slider's frame alone (tests click it)
  ImGui::SameLine();
  ImGui::TextUnformatted(tr("layer"));
  // The layer on screen (the slider may be ahead of it), in the UI's language (exports caption it in English).
  if (const ModelLayerRun* run = c.run.get(); run && att) {
    std::string note = c.name() + " · " + trf("layer %d of %d", run->layer, run->layers);
    if (c.model && att->shape.groups != c.model->original_kv_heads)
      note += trf(" · K/V pooled from %d heads", c.model->original_kv_heads);
    SameLineIfFits(ImGui::CalcTextSize(note.c_str()).x);
    ImGui::TextUnformatted(note.c_str());
  }
}

void DrawToolbar(AppState& state, const std::vector<std::string>* labels) {
  ViewSettings& view = state.scene.view;
  bool edited = false;
  // A locked range and the fixed 0–1 scale belong to the values they were chosen for: switching between
  // probabilities and scores returns to the shared scale.
  const bool lock_of_other_values = view.scale == ScaleMode::locked || view.scale == ScaleMode::fixed;
  if (ImGui::RadioButton(tr("probabilities"), !view.show_scores) && view.show_scores) {
    view.show_scores = false;
    if (view.colormap == "diverging") view.colormap = "viridis";
    if (lock_of_other_values) view.scale = ScaleMode::shared;
    edited = true;
  }
  SameLineIfFits(RadioWidth(tr("scores")));
  if (ImGui::RadioButton(tr("scores"), view.show_scores) && !view.show_scores) {
    view.show_scores = true;
    if (view.colormap == "viridis") view.colormap = "diverging";  // scores have a sign: white = 0
    if (lock_of_other_values) view.scale = ScaleMode::shared;
    edited = true;
  }
  // Scale and colormap go together on one line when they fit.
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float combo_w = ImGui::CalcTextSize("grayscale").x + ImGui::GetFrameHeight() * 1.6f;
  const float scale_w = ScaleComboWidth();
  SameLineIfFits(scale_w + combo_w + ImGui::CalcTextSize(tr("colormap")).x + spacing * 3);
  ScaleCombo(state, scale_w);  // notes its own edit
  // The colormap on the next line when it does not fit this one (a large UI scale), and never wider
  // than the line.
  SameLineIfFits(combo_w + spacing + ImGui::CalcTextSize(tr("colormap")).x);
  ImGui::SetNextItemWidth(FitItemWidth(combo_w, tr("colormap")));
  if (ImGui::BeginCombo(tr("colormap"), view.colormap.c_str())) {
    for (const std::string& name : colormap_names())
      if (ImGui::Selectable(name.c_str(), name == view.colormap)) {
        view.colormap = name;
        edited = true;
      }
    ImGui::EndCombo();
  }
  if (edited) NoteEdit(state, Panel::heads);

  const int q = view.selected_query;
  if (labels && q >= 0 && q < int(labels->size())) {
    const std::string text = trf("query %d · %s", q, (*labels)[size_t(q)].c_str());
    SameLineIfFits(ImGui::CalcTextSize(text.c_str()).x + ImGui::GetFrameHeight() * 1.5f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("×##clear_query")) SelectQuery(state, -1);
  }
  if (state.worker && state.worker->seconds_busy() >= 0.1) {
    SameLineIfFits(ImGui::GetFontSize() * 9);
    BusyIndicator(state);
  }
}

// ---- token range and zoom ------------------------------------------------------------------------

// The tokens the heads show: the typed range (every token when none, or when it no longer fits the
// input), and within it the zoomed window, first query and key and how many across.
struct Shown {
  int lo = 0, hi = 0;             // the range
  int count = 0, row = 0, col = 0;  // the window
  bool zoomed = false;
};

Shown ShownTokens(HeadsWindowState& h, int tokens) {
  if (h.token_last >= tokens || h.token_first < 0 || (h.token_last >= 0 && h.token_first > h.token_last)) {
    h.token_first = 0;  // the input changed length: back to every token
    h.token_last = -1;
    h.zoom_count = 0;
  }
  Shown s;
  s.lo = h.token_last < 0 ? 0 : h.token_first;
  s.hi = h.token_last < 0 ? tokens - 1 : h.token_last;
  const int n = s.hi - s.lo + 1;
  s.zoomed = h.zoom_count > 0 && h.zoom_count < n;
  s.count = s.zoomed ? h.zoom_count : n;
  s.row = std::clamp(s.zoomed ? h.zoom_row : s.lo, s.lo, s.hi - s.count + 1);
  s.col = std::clamp(s.zoomed ? h.zoom_col : s.lo, s.lo, s.hi - s.count + 1);
  return s;
}

// On the toolbar's line, when they fit: a button naming the tokens shown ("tokens 0–15") that opens the
// range popup — the first and last token typed, "every token", "numbers in cells" — and "reset zoom".
void DrawRangeBar(AppState& state, int tokens) {
  HeadsWindowState& h = state.heads;
  const Shown shown = ShownTokens(h, tokens);
  const ImGuiStyle& style = ImGui::GetStyle();
  const std::string button = trf("tokens %d–%d", shown.lo, shown.hi) + "…##token_range";
  SameLineIfFits(ImGui::CalcTextSize(button.c_str(), nullptr, true).x + style.FramePadding.x * 2);
  if (ImGui::SmallButton(button.c_str())) ImGui::OpenPopup("token_range");
  RecordLastItem(state, "heads.tokens");
  const ImVec2 below(ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y + 2);  // the popup hangs from here
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("Only these queries and keys, in every head (tokens are numbered from 0); the colours "
                               "keep the whole input's range"));
  // Always there (greyed out until the wheel zooms), so that zooming moves nothing on the toolbar.
  SameLineIfFits(ImGui::CalcTextSize(tr("reset zoom")).x + style.FramePadding.x * 2);
  ImGui::BeginDisabled(!shown.zoomed);
  if (ImGui::SmallButton(tr("reset zoom"))) h.zoom_count = 0;
  ImGui::EndDisabled();
  RecordLastItem(state, "heads.reset_zoom");

  // Under the button, reaching left from its right edge (the button sits at the toolbar's right end).
  ImGui::SetNextWindowPos(below, ImGuiCond_Always, ImVec2(1, 0));
  if (ImGui::BeginPopup("token_range")) {
    const float field_w = ImGui::CalcTextSize("00000").x + style.FramePadding.x * 2;
    if (!h.editing_first) h.edit_first = shown.lo;
    if (!h.editing_last) h.edit_last = shown.hi;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("token range"));
    ImGui::SameLine();
    bool apply = false;
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputInt("##token_first", &h.edit_first, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
    RecordLastItem(state, "heads.token_first");
    h.editing_first = ImGui::IsItemActive();
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    ImGui::SameLine(0, style.ItemInnerSpacing.x);
    ImGui::TextUnformatted("–");
    ImGui::SameLine(0, style.ItemInnerSpacing.x);
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputInt("##token_last", &h.edit_last, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
    RecordLastItem(state, "heads.token_last");
    h.editing_last = ImGui::IsItemActive();
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    if (apply) {
      if (h.edit_first < 0 || h.edit_last >= tokens || h.edit_first > h.edit_last) {
        h.range_error = trf("No such range: tokens run from 0 to %d, and the first may not come after the last.", tokens - 1);
      } else {
        h.range_error.clear();
        const bool all = h.edit_first == 0 && h.edit_last == tokens - 1;
        h.token_first = all ? 0 : h.edit_first;
        h.token_last = all ? -1 : h.edit_last;
        h.zoom_count = 0;
      }
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(h.token_last < 0);
    if (ImGui::SmallButton(tr("every token"))) {
      h.token_first = 0;
      h.token_last = -1;
      h.zoom_count = 0;
      h.range_error.clear();
    }
    ImGui::EndDisabled();
    RecordLastItem(state, "heads.every_token");
    ImGui::Dummy(ImVec2(ImGui::GetFontSize() * 20, 0));  // the width the notes below wrap at
    ErrorText(h.range_error);
    HintText(tr("Only these queries and keys, in every head (tokens are numbered from 0); the colours "
                "keep the whole input's range"));
    ImGui::Checkbox(tr("numbers in cells"), &h.numbers);
    RecordLastItem(state, "heads.numbers");
    HintText(tr("Each cell's value with two decimals, when cells are big enough (zoom in with the "
                "mouse wheel, or pick fewer tokens)"));
    ImGui::EndPopup();
  } else {
    h.editing_first = h.editing_last = false;
  }
}

// Puts the shown tokens into the spec: the part of each T × T picture, its labels, the selected row
// and the numbers in cells.
void ApplyShown(HeatmapGridSpec& spec, const Shown& shown, const Pictures& pictures, const AttentionAnalysis& att,
                bool numbers, std::vector<std::string>& row_labels, std::vector<std::string>& col_labels,
                std::function<int(int)> head_of) {
  const int tokens = spec.rows;
  spec.texture_size = tokens;
  spec.rows = spec.cols = shown.count;
  spec.first_row = shown.row;
  spec.first_col = shown.col;
  spec.drag_pans = shown.zoomed;
  if (spec.row_labels) {
    row_labels.assign(spec.row_labels->begin() + shown.row, spec.row_labels->begin() + shown.row + shown.count);
    col_labels.assign(spec.col_labels->begin() + shown.col, spec.col_labels->begin() + shown.col + shown.count);
    spec.row_labels = &row_labels;
    spec.col_labels = &col_labels;
    if (shown.count < tokens) {  // the widest of the labels shown (keys stand upright when they fit)
      spec.labels_extent = 0;
      for (const std::vector<std::string>* axis : {&row_labels, &col_labels})
        for (const std::string& l : *axis) spec.labels_extent = std::max(spec.labels_extent, ImGui::CalcTextSize(l.c_str()).x);
    }
  }
  const int q = spec.selected_row;
  spec.selected_row = q >= shown.row && q < shown.row + shown.count ? q - shown.row : -1;
  if (!numbers) return;
  const bool scores = pictures.scores, causal = pictures.masked;
  spec.cell_number = [&pictures, &att, shown, tokens, scores, causal, head_of](int i, int r, int c, std::string& text,
                                                                               ImU32& color) {
    const int head = head_of(i), row = shown.row + r, col = shown.col + c;
    // masked (after the query, or outside a sliding window): no value to read
    if (causal && (col > row || (att.window > 0 && col <= row - att.window))) return false;
    const float v = (scores ? att.result.scores : att.result.probs)[size_t(head)](row, col);
    if (!std::isfinite(v)) return false;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", double(v));
    text = std::strcmp(buf, "-0.00") == 0 ? "0.00" : buf;
    const Rgba p = pictures.heads[size_t(head)].pixels[size_t(row) * size_t(tokens) + size_t(col)];
    const float luminance = 0.2126f * float(p.r) + 0.7152f * float(p.g) + 0.0722f * float(p.b);
    color = luminance > 140.0f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
    return true;
  };
}

// The wheel zooms about the pointer (the token under it stays under it), a drag pans a zoomed view.
void ZoomAndPan(HeadsWindowState& h, const Shown& shown, const HeatmapGridResult& hit, float cell) {
  const int n = shown.hi - shown.lo + 1;
  if (hit.hovered >= 0 && hit.wheel != 0) {
    int next = int(std::lround(float(shown.count) * std::pow(0.8f, hit.wheel)));
    if (hit.wheel > 0 && next >= shown.count) next = shown.count - 1;
    if (hit.wheel < 0 && next <= shown.count) next = shown.count + 1;
    next = std::clamp(next, 1, n);
    const float fx = std::clamp(hit.pointer_cells.x, 0.0f, float(shown.count));
    const float fy = std::clamp(hit.pointer_cells.y, 0.0f, float(shown.count));
    h.zoom_col = int(std::lround(float(shown.col) + fx - fx / float(shown.count) * float(next)));
    h.zoom_row = int(std::lround(float(shown.row) + fy - fy / float(shown.count) * float(next)));
    h.zoom_count = next >= n ? 0 : next;
    h.zoom_col = std::clamp(h.zoom_col, shown.lo, shown.hi - next + 1);
    h.zoom_row = std::clamp(h.zoom_row, shown.lo, shown.hi - next + 1);
  }
  if (!shown.zoomed) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (hit.pressed) {
    h.drag_from = mouse;
    h.drag_row = shown.row;
    h.drag_col = shown.col;
  } else if (hit.held && cell > 0) {
    h.zoom_col = std::clamp(h.drag_col - int(std::lround((mouse.x - h.drag_from.x) / cell)), shown.lo, shown.hi - shown.count + 1);
    h.zoom_row = std::clamp(h.drag_row - int(std::lround((mouse.y - h.drag_from.y) / cell)), shown.lo, shown.hi - shown.count + 1);
  }
}

// What the Heads view shows instead of heads while the current checkpoint has none to show: the opening's
// progress, its error, or a spinner until its first pass arrives. Returns false when its heads are there.
bool DrawInPlaceOfCheckpointHeads(AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  if (CheckpointLoadingBar(state)) return true;
  if (const std::string error = CurrentCheckpointError(state); !error.empty()) {
    ErrorText(std::string(tr("Error: ")) + error);
    if (!c.is_open()) {
      HintText(tr("Open another checkpoint, or close this one to see the synthetic model again."));
      if (ImGui::Button(tr("Close"))) CloseCheckpoint(state);
      RecordLastItem(state, "heads.close_checkpoint");
    }
    return true;
  }
  if (!AnalysisOfCurrentModel(state) || !state.pictures || state.pictures->heads.empty()) {
    SpinnerText(tr("running the model…"));
    return true;
  }
  return false;
}

// ---- tooltip -----------------------------------------------------------------------------------------

void HeadTooltip(const AttentionAnalysis& att, const std::vector<std::string>& labels, int head, int row, int col,
                 bool large) {
  const int group = kv_group_of_head(head, att.shape.heads, att.shape.groups);
  const float score = att.result.scores[size_t(head)](row, col);
  const float prob = att.result.probs[size_t(head)](row, col);
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(trf("head %d · kv group %d", head, group).c_str());
  ImGui::Separator();
  ImGui::TextUnformatted(trf("query %d: %s", row, labels[size_t(row)].c_str()).c_str());
  // With a real model's tokenizer, what each token is in its vocabulary (a "·" label's bytes, too).
  if (const std::string detail = TokenDetail(att, row); !detail.empty()) ImGui::TextDisabled("  %s", detail.c_str());
  ImGui::TextUnformatted(trf("key %d: %s", col, labels[size_t(col)].c_str()).c_str());
  if (const std::string detail = TokenDetail(att, col); !detail.empty()) ImGui::TextDisabled("  %s", detail.c_str());
  ImGui::TextUnformatted(trf("score: %s%s", FormatValue(score).c_str(), std::isinf(score) ? tr(" (masked)") : "").c_str());
  ImGui::TextUnformatted(trf("probability: %s", FormatValue(prob).c_str()).c_str());
  ImGui::TextDisabled("%s", large ? tr("click: select this query · double-click: reset zoom")
                                  : tr("click: select this query · double-click: open large"));
  ImGui::TextDisabled("%s", tr("wheel: zoom · drag: move a zoomed view"));
  ImGui::EndTooltip();
}

// Clicks select a query row (again: deselect); a double-click opens the head large.
void HandleHit(AppState& state, const AttentionAnalysis& att, const std::vector<std::string>& labels,
               const HeatmapGridResult& hit, int head_of_hit, bool large = false) {
  if (hit.hovered < 0) return;
  HeadTooltip(att, labels, head_of_hit, hit.row, hit.col, large);
  if (hit.double_clicked) {
    state.heads.large_head = head_of_hit;
    SelectQuery(state, hit.row);
  } else if (hit.clicked) {
    SelectQuery(state, state.scene.view.selected_query == hit.row ? -1 : hit.row);
  }
}

HeatmapGridSpec HeadsSpec(const AppState& state, const AttentionAnalysis& att, const Pictures& pictures,
                          const LabelCache& labels) {
  HeatmapGridSpec spec;
  spec.count = int(pictures.heads.size());
  spec.rows = spec.cols = int(att.labels.size());
  spec.texture = [&state](int h) { return state.textures.heads[size_t(h)].id(); };
  const int heads = att.shape.heads, groups = att.shape.groups;
  spec.frame_color = [heads, groups](int h) { return KvGroupColor(kv_group_of_head(h, heads, groups)); };
  // Designed heads also name their pattern (when it fits).
  const std::vector<std::string>* patterns = nullptr;
  if (state.analysis && state.analysis->scene.model.weights == WeightSource::designed &&
      int(state.analysis->scene.model.designed.size()) == heads)
    patterns = &state.analysis->scene.model.designed;
  // Caption forms, longest first: with the designed pattern, "head h · kv group g", "h3 · g1",
  // "h3·g1", and the head alone while each group has a frame colour of its own (kv_group_color).
  const bool own_colors = kv_groups_have_own_colors(groups);
  spec.caption_forms = (patterns ? 1 : 0) + (own_colors ? 4 : 3);
  spec.captions = [heads, groups, patterns](int h, int form) {
    const int g = kv_group_of_head(h, heads, groups);
    if (patterns && form-- == 0) {
      // In Chinese the pattern's label; in English its name (the one `--designed` takes).
      std::string pattern = (*patterns)[size_t(h)];
      if (UiLanguage() == Language::zh) {
        try {
          pattern = designed_pattern_label(parse_designed_pattern(pattern)).zh;
        } catch (const std::exception&) {
          // a name the engine accepted always parses; keep the name otherwise
        }
      }
      return trf("head %d · kv group %d", h, g) + " · " + pattern;
    }
    if (form == 0) return trf("head %d · kv group %d", h, g);
    if (form == 1 || form == 2) {
      char brief[32];
      std::snprintf(brief, sizeof brief, form == 1 ? "h%d · g%d" : "h%d·g%d", h, g);
      return std::string(brief);
    }
    return std::to_string(h);  // the frame colour tells the group
  };
  spec.row_labels = spec.col_labels = &labels.labels;
  spec.labels_extent = labels.extent;
  spec.shared_scale = pictures.shared_scale;
  spec.shared_range = pictures.heads_range;
  spec.scale_note = ScaleNote(pictures.scale);
  spec.masked = pictures.masked;
  spec.range = [&pictures](int h) { return pictures.heads[size_t(h)].range; };
  spec.colormap = pictures.colormap;
  spec.value_name = pictures.scores ? TrKey("score") : TrKey("probability");
  spec.selected_row = state.scene.view.selected_query;
  return spec;
}

// ---- large head --------------------------------------------------------------------------------------

void DrawLargeHead(AppState& state, const AttentionAnalysis& att, const Pictures& pictures, const LabelCache& labels) {
  const int head = state.heads.large_head;
  if (head < 0 || head >= int(pictures.heads.size())) return;
  const int group = kv_group_of_head(head, att.shape.heads, att.shape.groups);
  PlaceNextWindow(state, Slot::view);  // the view's area, over the Heads window
  const std::string title = trf("Head %d · kv group %d", head, group) + "###large_head";
  bool open = true;
  if (ImGui::Begin(title.c_str(), &open, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    HeatmapGridSpec spec = HeadsSpec(state, att, pictures, labels);
    spec.count = 1;
    spec.texture = [&state, head](int) { return state.textures.heads[size_t(head)].id(); };
    const int heads = att.shape.heads, groups = att.shape.groups;
    spec.frame_color = [=](int) { return KvGroupColor(kv_group_of_head(head, heads, groups)); };
    spec.captions = nullptr;
    spec.shared_scale = true;
    spec.shared_range = pictures.heads[size_t(head)].range;
    if (pictures.scale.mode == ScaleMode::per_head) spec.scale_note.clear();  // one head: its range is the bar's
    spec.masked = pictures.masked;
    const Shown shown = ShownTokens(state.heads, int(att.labels.size()));
    // Always there (greyed out until the wheel zooms), so that zooming does not move the head.
    ImGui::BeginDisabled(!shown.zoomed);
    if (ImGui::SmallButton(tr("reset zoom"))) state.heads.zoom_count = 0;
    ImGui::EndDisabled();
    RecordLastItem(state, "large_head.reset_zoom");
    std::vector<std::string> rows, cols;
    ApplyShown(spec, shown, pictures, att, state.heads.numbers, rows, cols, [head](int) { return head; });
    HeatmapGridResult hit = DrawHeatmapGrid(spec, state.heads.bar, state.ui_scale, nullptr);
    ZoomAndPan(state.heads, shown, hit, hit.cell);
    if (hit.hovered >= 0) {
      hit.row += shown.row;
      hit.col += shown.col;
    }
    // Here a double-click resets the zoom (the head is open large already).
    if (hit.double_clicked) {
      if (hit.hovered >= 0) state.heads.zoom_count = 0;
      hit.double_clicked = false;
    }
    HandleHit(state, att, labels.labels, hit, head, true);
  }
  ImGui::End();
  if (!open) state.heads.large_head = -1;
}

}  // namespace

// ---- window ------------------------------------------------------------------------------------------

void DrawHeadsWindow(AppState& state) {
  PlaceNextWindow(state, Slot::view);
  if (!ImGui::Begin(WindowTitle("Heads", "heads").c_str(), nullptr, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return;
  }
  state.layout.view = to_string(View::heads);
  const AttentionAnalysis* att = state.analysis ? state.analysis->attention.get() : nullptr;
  const LabelCache* labels = att ? &CachedLabels(state, state.heads.labels, att->labels) : nullptr;
  DrawLayerSlider(state, att);
  DrawToolbar(state, labels ? &labels->labels : nullptr);
  CopyFigureButton(state);
  if (att) DrawRangeBar(state, int(att->labels.size()));
  CompareToolbar(state);  // Keep as A, Compare with A (window_compare.cpp)
  if (!state.checkpoint.current()) ErrorText(ErrorFor(state, Panel::heads));  // else in place of the heads

  if (WrongInputForView(state, false, tr("The Heads view shows attention over a sentence or a tensor; the input is a 2D grid."),
                        Panel::heads)) {
    ImGui::End();
    return;
  }
  // One current model: with a checkpoint current, only its own heads are drawn; while it opens, after it
  // failed to open or when its pass failed, its progress or error stands in their place.
  if (state.checkpoint.current() && DrawInPlaceOfCheckpointHeads(state)) {
    ImGui::End();
    return;
  }
  if (!state.error.empty() && att)
    ErrorText(trf("These are the last valid settings' heads: the engine refused the new ones (see the %s window).",
                  tr(panel_title(state.error_panel))));
  if (!att || !state.pictures || state.pictures->heads.empty()) {
    if (!state.error.empty()) ErrorText(std::string(tr("Nothing to show: ")) + state.error);
    else ImGui::TextDisabled("%s", tr("computing…"));
    ImGui::End();
    return;
  }
  // Designed heads that share K/V (MQA, GQA): each keeps its pattern's name, but its map is no longer
  // that pattern alone (under MQA every head draws the same map).
  if (const ModelSettings& m = state.analysis->scene.model;
      !state.checkpoint.is_open() && m.weights == WeightSource::designed && att->shape.groups < att->shape.heads)
    NoticeText(att->shape.groups == 1
                   ? tr("MQA: every head uses the one shared K/V, so the designed patterns blend into one map; the "
                        "names say what each head was designed for, not what it draws now.")
                   : tr("GQA: the heads of a K/V group share its keys and values, so their designed patterns blend "
                        "within the group; the names say what each head was designed for, not what it draws now."));
  const Pictures& pictures = *state.pictures;
  const int tokens = int(att->labels.size());
  const Shown shown = ShownTokens(state.heads, tokens);
  HeatmapGridSpec spec = HeadsSpec(state, *att, pictures, *labels);
  std::vector<std::string> row_labels, col_labels;
  ApplyShown(spec, shown, pictures, *att, state.heads.numbers, row_labels, col_labels, [](int i) { return i; });
  HeatmapGridResult grid = DrawHeatmapGrid(spec, state.heads.bar, state.ui_scale, &state.layout);
  ZoomAndPan(state.heads, shown, grid, grid.cell);
  if (grid.hovered >= 0) {
    grid.row += shown.row;
    grid.col += shown.col;
  }
  HandleHit(state, *att, labels->labels, grid, grid.hovered);

  // Where each head went, for --layout-json.
  state.layout.colormap = to_string(pictures.colormap);
  state.layout.scores = pictures.scores;
  const ImVec2 s = state.framebuffer_scale;
  for (int h = 0; h < spec.count; ++h) {
    LayoutRecord::Head rec;
    rec.head = h;
    rec.kv_group = kv_group_of_head(h, att->shape.heads, att->shape.groups);
    rec.tokens = tokens;  // the input's (the shapes stay the whole input's)
    rec.first_query = shown.row;
    rec.first_key = shown.col;
    rec.shown = shown.count;
    const ImVec2 min = grid.image_min[size_t(h)];
    rec.min = ImVec2(min.x * s.x, min.y * s.y);
    rec.max = ImVec2((min.x + grid.image_size.x) * s.x, (min.y + grid.image_size.y) * s.y);
    rec.cell = grid.cell * s.x;
    rec.frame = grid.frame * s.x;
    rec.frame_color = KvGroupColor(rec.kv_group);
    rec.range = pictures.heads[size_t(h)].range;
    state.layout.heads.push_back(rec);
  }
  ImGui::End();
  DrawLargeHead(state, *att, pictures, *labels);
}

}  // namespace attnscope::gui
