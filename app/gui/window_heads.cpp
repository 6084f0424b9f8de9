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
#include "gui/classroom_windows.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/scale_control.h"
#include "gui/token_sets.h"
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
    if (c.model && !att->linear && att->shape.groups != c.model->original_kv_heads)  // a linear layer has no K/V
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
  // Heads without a softmax draw their matrices M, which are not probabilities (the same button, renamed): the
  // seeded kinds, and a checkpoint's layer without a softmax (Qwen3-Next's Gated DeltaNet).
  const bool checkpoint_linear = state.checkpoint.current() && state.analysis && state.analysis->attention &&
                                 state.analysis->attention->linear;
  const bool matrices = (is_linear_kind(state.scene.model.kind) && !state.checkpoint.current()) || checkpoint_linear;
  const std::string values_label = std::string(matrices ? tr("matrix M") : tr("probabilities")) + "###values";
  if (ImGui::RadioButton(values_label.c_str(), !view.show_scores) && view.show_scores) {
    view.show_scores = false;
    if (view.colormap == "diverging") view.colormap = "viridis";
    if (lock_of_other_values) view.scale = ScaleMode::shared;
    edited = true;
  }
  SameLineIfFits(RadioWidth(tr("scores")));
  // Differential attention has two score maps per head and draws their softmaxes' difference: no one score
  // map to show (the tooltip gives both softmaxes).
  const bool differential = state.scene.model.differential && !state.checkpoint.current();
  // Heads without a softmax have no scores at all: each is drawn as its matrix M.
  const bool linear = matrices;
  const bool signed_heads = differential || linear;
  ImGui::BeginDisabled(signed_heads && !view.show_scores);
  if (ImGui::RadioButton(tr("scores"), view.show_scores) && !view.show_scores) {
    view.show_scores = true;
    if (view.colormap == "viridis") view.colormap = "diverging";  // scores have a sign: white = 0
    if (lock_of_other_values) view.scale = ScaleMode::shared;
    edited = true;
  }
  ImGui::EndDisabled();
  if (differential && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", tr("Differential attention has two score maps per head; the heads show the difference of "
                               "their softmaxes, and the tooltip both softmaxes."));
  else if (linear && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", tr("Heads without a softmax have no scores: each head is drawn as its matrix M, the weights "
                               "its output gives each earlier token's value."));
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
  // Differential weights have a sign, so the heads are drawn on the diverging colormap whatever the view
  // chose (pictures.cpp): the combo names the one on screen and waits until differential attention is off.
  ImGui::BeginDisabled(signed_heads);
  if (ImGui::BeginCombo(tr("colormap"), signed_heads ? "diverging" : view.colormap.c_str())) {
    for (const std::string& name : colormap_names())
      if (ImGui::Selectable(name.c_str(), name == view.colormap)) {
        view.colormap = name;
        edited = true;
      }
    ImGui::EndCombo();
  }
  ImGui::EndDisabled();
  if (signed_heads && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", differential ? tr("Differential weights have a sign: they are drawn on the diverging "
                                              "colormap, white at 0.")
                                         : tr("The matrices of heads without a softmax have a sign: they are drawn on "
                                              "the diverging colormap, white at 0."));
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
  DrawTokenSetBar(state);  // token_sets.h: while a set is chosen
}

// ---- token range and zoom ------------------------------------------------------------------------

// Puts the shown tokens into the spec (zoom.h) and, when asked, the numbers in cells.
void ApplyHeadsShown(HeatmapGridSpec& spec, const Shown& shown, const ZoomState& z, const Pictures& pictures,
                     const AttentionAnalysis& att, std::vector<std::string>& row_labels,
                     std::vector<std::string>& col_labels, std::function<int(int)> head_of) {
  ApplyShown(spec, shown, z, row_labels, col_labels);
  if (!z.numbers) return;
  const bool scores = pictures.scores, causal = pictures.masked;
  spec.cell_number = [&pictures, &att, shown, scores, causal, head_of](int i, int r, int c, std::string& text,
                                                                               ImU32& color) {
    const int head = head_of(i), row = shown.row + r, col = shown.col + c;
    // masked (after the query, or outside a sliding window): no value to read
    if (causal && (col > row || (att.window > 0 && col <= row - att.window && col >= att.sinks))) return false;
    const Mat& m = (scores ? att.result.scores : att.result.probs)[size_t(head)];
    const Rgba* under = pictures.heads[size_t(head)].cell(row, col);
    return under && row < m.rows() && col < m.cols() && CellNumber(m(row, col), *under, text, color);
  };
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
  // Heads without a softmax (and attentions computed elsewhere) keep no scores.
  const bool has_scores = size_t(head) < att.result.scores.size();
  const float score = has_scores ? att.result.scores[size_t(head)](row, col) : 0.0f;
  const float prob = att.result.probs[size_t(head)](row, col);
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(trf("head %d · kv group %d", head, group).c_str());
  ImGui::Separator();
  ImGui::TextUnformatted(trf("query %d: %s", row, labels[size_t(row)].c_str()).c_str());
  // With a real model's tokenizer, what each token is in its vocabulary (a "·" label's bytes, too).
  if (const std::string detail = TokenDetail(att, row); !detail.empty()) ImGui::TextDisabled("  %s", detail.c_str());
  ImGui::TextUnformatted(trf("key %d: %s", col, labels[size_t(col)].c_str()).c_str());
  if (const std::string detail = TokenDetail(att, col); !detail.empty()) ImGui::TextDisabled("  %s", detail.c_str());
  if (!att.result.probs_1.empty()) {
    // Differential attention: the two softmax maps and their signed difference (scores come in pairs).
    const float p1 = att.result.probs_1[size_t(head)](row, col), p2 = att.result.probs_2[size_t(head)](row, col);
    ImGui::TextUnformatted(trf("P₁ = %s, P₂ = %s, λ = %s", FormatValue(p1).c_str(), FormatValue(p2).c_str(),
                               FormatValue(float(att.result.lambda)).c_str()).c_str());
    ImGui::TextUnformatted(trf("weight A = P₁ − λ·P₂: %s", FormatValue(prob).c_str()).c_str());
  } else if (att.linear) {
    // Heads without a softmax: the matrix's weight, the row's sum (not 1) and the gates at these tokens.
    const LinearLayerResult& l = att.linear_layer;
    ImGui::TextUnformatted(trf("weight M[%d, %d]: %s", row, col, FormatValue(prob).c_str()).c_str());
    ImGui::TextUnformatted(trf("this row sums to %s", FormatValue(att.result.probs[size_t(head)].row(row).sum()).c_str()).c_str());
    if (l.beta.size() > 0)
      ImGui::TextUnformatted(trf("write strength β at the key: %s", FormatValue(l.beta(head, col)).c_str()).c_str());
    if (l.step.size() > 0)
      ImGui::TextUnformatted(trf("step Δ at the key: %s", FormatValue(l.step(head, col)).c_str()).c_str());
    if (l.decay.size() > 0)
      ImGui::TextUnformatted(trf("decay at the query: %s", FormatValue(l.decay(head, row)).c_str()).c_str());
  } else {
    if (has_scores)
      ImGui::TextUnformatted(trf("score: %s%s", FormatValue(score).c_str(), std::isinf(score) ? tr(" (masked)") : "").c_str());
    ImGui::TextUnformatted(trf("probability: %s", FormatValue(prob).c_str()).c_str());
    if (att.result.sink_share.size() > 0)
      ImGui::TextUnformatted(trf("the sink takes %s of this row", FormatValue(att.result.sink_share(head, row)).c_str()).c_str());
  }
  ImGui::TextDisabled("%s", large ? tr("click: select this query · double-click: reset zoom")
                                  : tr("click: select this query · double-click: open large"));
  if (!att.linear && size_t(head) < att.result.scores.size() && !std::isinf(score))
    ImGui::TextDisabled("%s", tr("right-click: why does this head attend here?"));
  ImGui::TextDisabled("%s", tr("wheel: zoom · drag: move a zoomed view"));
  ImGui::EndTooltip();
}

// Clicks select a query row (again: deselect); a double-click opens the head large.
void HandleHit(AppState& state, const AttentionAnalysis& att, const std::vector<std::string>& labels,
               const HeatmapGridResult& hit, int head_of_hit, bool large = false) {
  if (hit.hovered < 0) return;
  HeadTooltip(att, labels, head_of_hit, hit.row, hit.col, large);
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Right)) {  // "Why does this head attend here?" (window_qk.cpp)
    QkCellMenu(state, head_of_hit, hit.row, hit.col, ImGui::GetIO().MousePos);
  } else if (hit.double_clicked) {
    state.heads.large_head = head_of_hit;
    SelectQuery(state, hit.row);
  } else if (hit.clicked) {
    SelectQuery(state, state.scene.view.selected_query == hit.row ? -1 : hit.row);
  }
}

// The cells the open lesson step's caption names ("cells", lessons.h), while the heads are that step's
// sentence: none once the text is edited or a checkpoint's heads are drawn.
std::vector<std::array<int, 2>> LessonStepCells(const AppState& state) {
  const LessonsWindowState& l = state.lessons;
  if (l.lesson < 0 || size_t(l.lesson) >= l.lessons.size() || state.checkpoint.is_open()) return {};
  const Lesson& lesson = l.lessons[size_t(l.lesson)];
  if (l.step < 0 || size_t(l.step) >= lesson.steps.size()) return {};
  const LessonStep& step = lesson.steps[size_t(l.step)];
  if (step.cells.empty() || !(state.scene.input == step.scene.input)) return {};
  return step.cells;
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
  // Caption forms, longest first. Designed heads keep their pattern's name in every form (the lesson
  // captions talk about them by name): "head h · kv group g · <name>" with the Chinese label in full,
  // the same with the short name, then "h3 · g1 · <name>"; cut with "…" only when even that does not fit.
  // Other heads: "head h · kv group g", "h3 · g1", "h3·g1", and the head alone while each group has a
  // frame colour of its own (kv_group_color).
  const bool own_colors = kv_groups_have_own_colors(groups);
  spec.caption_forms = patterns ? 3 : (own_colors ? 4 : 3);
  spec.captions = [heads, groups, patterns](int h, int form) {
    const int g = kv_group_of_head(h, heads, groups);
    if (patterns) {
      const std::string& name = (*patterns)[size_t(h)];
      std::string pattern = name;
      try {
        const DesignedPattern p = parse_designed_pattern(name);
        pattern = form == 0 && UiLanguage() == Language::zh ? designed_pattern_label(p).zh
                                                             : designed_pattern_caption(p).text(UiLanguage());
      } catch (const std::exception&) {
        // a name the engine accepted always parses; keep the name otherwise
      }
      if (form <= 1) return trf("head %d · kv group %d", h, g) + " · " + pattern;
      char brief[32];
      std::snprintf(brief, sizeof brief, "h%d · g%d", h, g);
      return std::string(brief) + " · " + pattern;
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
  // Differential attention draws A = P₁ − λ·P₂, a signed weight rather than a probability.
  // Heads without a softmax draw their matrices M, each kind's weight named (analysis.h map_value_word).
  spec.value_name = pictures.scores ? TrKey("score") : map_value_word(att);
  spec.selected_row = state.scene.view.selected_query;
  spec.outlined_cells = LessonStepCells(state);
  return spec;
}

// The outlined cells in the layout record, as widgets "heads.outline.<head>.<query>.<key>".
void RecordOutlines(AppState& state, const HeatmapGridResult& grid) {
  const ImVec2 s = state.framebuffer_scale;
  for (const HeatmapGridResult::Outline& o : grid.outlines)
    state.layout.widgets.push_back({"heads.outline." + std::to_string(o.tile) + "." + std::to_string(o.row) + "." +
                                        std::to_string(o.col),
                                    ImVec2(o.min.x * s.x, o.min.y * s.y), ImVec2(o.max.x * s.x, o.max.y * s.y)});
}

// ---- what every head shares (MLA) -------------------------------------------------------------------

// A multi-head latent attention layer: the latent c_KV and the rotary key that every head's keys and
// values are made from, drawn as two strips above the heads — tokens left to right (as the key axis),
// channels top to bottom, block-averaged to at most 256 × 24 cells, on a diverging scale of each one's
// largest |value|. Nothing for other layers.
void DrawSharedLatent(AppState& state, const AttentionAnalysis& att) {
  const Mat& latent = att.shared_latent;
  const Mat& rope = att.shared_rope_key;
  if (latent.size() == 0) return;
  const float font = ImGui::GetFontSize();
  HintText(trf("Shared by all %d heads (multi-head latent attention): the latent c_KV (%d values a token) and the "
               "rotary key (%d values a token). Every head's keys and values are made from them, and they are "
               "all this layer caches.",
               att.shape.heads, int(latent.cols()), int(rope.cols())));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float gap = font, strip_h = std::round(font * 2.2f);
  const float latent_w = std::floor((avail - gap) * float(latent.cols()) / float(latent.cols() + rope.cols()));
  const float widths[2] = {std::max(latent_w, font * 4), std::max(avail - gap - latent_w, font * 4)};
  const Mat* parts[2] = {&latent, &rope};
  const std::string names[2] = {trf("c_KV [%d × %d]", int(latent.rows()), int(latent.cols())),
                                trf("rotary key [%d × %d]", int(rope.rows()), int(rope.cols()))};
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  float x = origin.x;
  for (int p = 0; p < 2; ++p) {
    const Mat& m = *parts[p];
    const int T = int(m.rows()), Ch = int(m.cols());
    const int cols = std::min(T, 256), rows = std::min(Ch, 24);
    const float largest = std::max(m.cwiseAbs().maxCoeff(), 1e-30f);
    const ValueRange range{-largest, largest};
    const float cw = widths[p] / float(cols), ch = strip_h / float(rows);
    for (int c = 0; c < cols; ++c)
      for (int r = 0; r < rows; ++r) {
        // The mean of the block of tokens × channels this cell stands for.
        const int t0 = c * T / cols, t1 = std::max(t0 + 1, (c + 1) * T / cols);
        const int k0 = r * Ch / rows, k1 = std::max(k0 + 1, (r + 1) * Ch / rows);
        const float v = m.block(t0, k0, t1 - t0, k1 - k0).mean();
        const Rgba col = colormap_lookup(Colormap::diverging, normalise(v, range));
        draw->AddRectFilled(ImVec2(x + float(c) * cw, origin.y + float(r) * ch),
                            ImVec2(x + float(c + 1) * cw, origin.y + float(r + 1) * ch), IM_COL32(col.r, col.g, col.b, 255));
      }
    draw->AddRect(ImVec2(x - 1, origin.y - 1), ImVec2(x + widths[p] + 1, origin.y + strip_h + 1),
                  ImGui::GetColorU32(ImGuiCol_Border));
    draw->AddText(ImVec2(x, origin.y + strip_h + font * 0.15f), ImGui::GetColorU32(ImGuiCol_TextDisabled), names[p].c_str());
    if (ImGui::IsMouseHoveringRect(ImVec2(x, origin.y), ImVec2(x + widths[p], origin.y + strip_h))) {
      const int t = std::clamp(int((ImGui::GetIO().MousePos.x - x) / widths[p] * float(T)), 0, T - 1);
      ImGui::SetTooltip("%s", trf("token %d: %s · mean |value| %.3f (largest %.3f)", t,
                                  t < int(att.labels.size()) ? att.labels[size_t(t)].c_str() : "",
                                  double(m.row(t).cwiseAbs().mean()), double(largest)).c_str());
    }
    x += widths[p] + gap;
  }
  ImGui::Dummy(ImVec2(avail, strip_h + font * 1.4f));
  RecordLastItem(state, "heads.shared_latent");
}

// Learned sink logits (gpt-oss): the share of each query's mass the sink takes, 1 − Σ_j P_h[i, j], as a strip
// above the heads — queries left to right (as the maps' rows, in token order), one row per head, on the
// fixed 0–1 scale of the colormap in use. Nothing without sink logits.
void DrawSinkShare(AppState& state, const AttentionAnalysis& att, const Pictures& pictures) {
  const Mat& share = att.result.sink_share;  // [H, T]
  if (share.size() == 0) return;
  const float font = ImGui::GetFontSize();
  const int H = int(share.rows()), T = int(share.cols());
  HintText(trf("The sink's share of each query's attention (learned sink logits): one row per head, queries left to "
               "right; the largest share is %.2f. The maps below sum to 1 minus this share.",
               double(share.maxCoeff())));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float label_w = ImGui::CalcTextSize("h00").x + font * 0.3f;
  const float row_h = std::clamp(std::round(font * 4.0f / float(H)), 3.0f, std::round(font * 1.1f));
  const float strip_w = std::max(avail - label_w, font * 4), strip_h = row_h * float(H);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float x0 = origin.x + label_w;
  const int cols = std::min(T, 512);
  const float cw = strip_w / float(cols);
  for (int h = 0; h < H; ++h) {
    for (int c = 0; c < cols; ++c) {
      const int t0 = c * T / cols, t1 = std::max(t0 + 1, (c + 1) * T / cols);
      const float v = share.row(h).segment(t0, t1 - t0).mean();
      const Rgba col = colormap_lookup(pictures.colormap, std::clamp(v, 0.0f, 1.0f));
      draw->AddRectFilled(ImVec2(x0 + float(c) * cw, origin.y + float(h) * row_h),
                          ImVec2(x0 + float(c + 1) * cw, origin.y + float(h + 1) * row_h), IM_COL32(col.r, col.g, col.b, 255));
    }
    if (row_h >= font)
      draw->AddText(ImVec2(origin.x, origin.y + float(h) * row_h + (row_h - font) * 0.5f),
                    ImGui::GetColorU32(ImGuiCol_TextDisabled), ("h" + std::to_string(h)).c_str());
  }
  draw->AddRect(ImVec2(x0 - 1, origin.y - 1), ImVec2(x0 + strip_w + 1, origin.y + strip_h + 1), ImGui::GetColorU32(ImGuiCol_Border));
  draw->AddText(ImVec2(x0, origin.y + strip_h + font * 0.15f), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                trf("sink share [%d heads × %d queries], 0 to 1", H, T).c_str());
  if (ImGui::IsMouseHoveringRect(ImVec2(x0, origin.y), ImVec2(x0 + strip_w, origin.y + strip_h))) {
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const int t = std::clamp(int((mouse.x - x0) / strip_w * float(T)), 0, T - 1);
    const int h = std::clamp(int((mouse.y - origin.y) / row_h), 0, H - 1);
    ImGui::SetTooltip("%s", trf("head %d, query %d (%s): the sink takes %.3f of the attention", h, t,
                                t < int(att.labels.size()) ? att.labels[size_t(t)].c_str() : "", double(share(h, t))).c_str());
  }
  ImGui::Dummy(ImVec2(avail, strip_h + font * 1.4f));
  RecordLastItem(state, "heads.sink_share");
}

// Where each head went, for --layout-json.
void RecordHeads(AppState& state, const AttentionAnalysis& att, const Pictures& pictures, const HeatmapGridResult& grid,
                 int count, const Shown& shown) {
  state.layout.colormap = to_string(pictures.colormap);
  state.layout.scores = pictures.scores;
  const ImVec2 s = state.framebuffer_scale;
  for (int h = 0; h < count && h < int(grid.image_min.size()); ++h) {
    LayoutRecord::Head rec;
    rec.head = h;
    rec.kv_group = kv_group_of_head(h, att.shape.heads, att.shape.groups);
    rec.tokens = int(att.labels.size());  // the input's (the shapes stay the whole input's)
    rec.first_query = shown.row;
    rec.first_key = shown.col;
    rec.shown = shown.cols;
    const ImVec2 min = grid.image_min[size_t(h)];
    rec.min = ImVec2(min.x * s.x, min.y * s.y);
    rec.max = ImVec2((min.x + grid.image_size.x) * s.x, (min.y + grid.image_size.y) * s.y);
    rec.cell = grid.cell * s.x;
    rec.frame = grid.frame * s.x;
    rec.frame_color = KvGroupColor(rec.kv_group);
    rec.range = pictures.heads[size_t(h)].range;
    state.layout.heads.push_back(rec);
  }
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
    ZoomState& z = state.heads.zoom;
    const Shown shown = ShownTokens(z, int(att.labels.size()));
    // Always there (greyed out until the wheel zooms), so that zooming does not move the head.
    ImGui::BeginDisabled(!shown.zoomed);
    if (ImGui::SmallButton(tr("reset zoom"))) z.zoom_cols = 0;
    ImGui::EndDisabled();
    RecordLastItem(state, "large_head.reset_zoom");
    TokenSetNotDrawnNote(state, "large_head");  // the set's strips are the grid's (token_sets.h)
    std::vector<std::string> rows, cols;
    ApplyHeadsShown(spec, shown, z, pictures, att, rows, cols, [head](int) { return head; });
    // Presenting lesson 6: the head and its colour bar at the left, the lesson's table of the model's
    // top heads (which the captions point at) in the room a square map leaves at the right.
    const bool table = PresentedHeadsTable(state);
    if (table) {
      const ImVec2 avail = ImGui::GetContentRegionAvail();
      const float table_w = std::min(avail.x * 0.42f, std::max(0.0f, avail.x - avail.y - 12.0f * ImGui::GetFontSize()));
      ImGui::BeginChild("##large_map", ImVec2(avail.x - table_w, avail.y), false,
                        ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    }
    HeatmapGridResult hit = DrawHeatmapGrid(spec, state.heads.bar, state.ui_scale, nullptr);
    if (table) {
      ImGui::EndChild();
      ImGui::SameLine();
      ImGui::BeginChild("##presented_table");
      DrawPresentedHeadsTable(state);
      ImGui::EndChild();
    }
    // Here a double-click resets the zoom (the head is open large already).
    ZoomAndPan(z, shown, hit, true);
    hit.double_clicked = false;
    ToWholePicture(hit, shown);
    HandleHit(state, att, labels.labels, hit, head, true);
    DrawQkMenu(state);
  }
  ImGui::End();
  if (!open) state.heads.large_head = -1;
}

}  // namespace

// ---- window ------------------------------------------------------------------------------------------

// The Heads view's grid, whole (no zoom or token range), in the region left: the Positions view draws the
// heads its scheme produces beside its curves. Hover names the cell; a click selects the query.
void DrawHeadsBeside(AppState& state) {
  const AttentionAnalysis* att = state.analysis ? state.analysis->attention.get() : nullptr;
  if (!att || !state.pictures || state.pictures->heads.empty()) {
    if (!state.error.empty()) ErrorText(std::string(tr("Nothing to show: ")) + state.error);
    else ImGui::TextDisabled("%s", tr("computing…"));
    return;
  }
  const LabelCache& labels = CachedLabels(state, state.heads.labels, att->labels);
  const Pictures& pictures = *state.pictures;
  HeatmapGridSpec spec = HeadsSpec(state, *att, pictures, labels);
  const HeatmapGridResult grid = DrawHeatmapGrid(spec, state.heads.bar, state.ui_scale, &state.layout);
  RecordOutlines(state, grid);
  const int tokens = int(att->labels.size());
  ZoomState whole;
  RecordHeads(state, *att, pictures, grid, spec.count, ShownTokens(whole, tokens));
  if (grid.hovered >= 0) {
    HeadTooltip(*att, labels.labels, grid.hovered, grid.row, grid.col, false);
    if (grid.clicked) SelectQuery(state, state.scene.view.selected_query == grid.row ? -1 : grid.row);
  }
}

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
  // A long input: its heads pooled (window_heads_long.cpp), once the checkpoint is open and its pass has no error.
  if (CurrentLongHeads(state) && state.checkpoint.loading.empty() && CurrentCheckpointError(state).empty()) {
    CopyFigureButton(state);  // the layer's heads pooled, as `export --long --what heads` draws them (figure_copy.cpp)
    DrawLongHeads(state);
    ImGui::End();
    DrawLongZoom(state);
    return;
  }
  DrawToolbar(state, labels ? &labels->labels : nullptr);
  CopyFigureButton(state);
  if (att) DrawZoomBar(state, state.heads.zoom, ShownTokens(state.heads.zoom, int(att->labels.size())), "heads");
  CompareToolbar(state);  // Keep as A, Compare with A (window_compare.cpp)
  {
    // The axes, as Relative position 1D and the exports name them: a row of a map is a query, a column a
    // key. On a line of its own, so that the heads stay where they are whatever the toolbar's buttons
    // say (a zoom changes "tokens 0–10…"), unless the heads need that room (a large UI scale in a small
    // window, where the toolbar already takes several lines).
    const char* axes = tr("rows: queries ↓ · columns: keys →");
    if (ImGui::GetContentRegionAvail().y > ImGui::GetFontSize() * 20) {
      HintText(axes);  // wrapped on a view narrower than the line
      RecordLastItem(state, "heads.axes");
    }
  }
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
  DrawSharedLatent(state, *att);
  const Pictures& pictures = *state.pictures;
  DrawSinkShare(state, *att, pictures);
  const int tokens = int(att->labels.size());
  const Shown shown = ShownTokens(state.heads.zoom, tokens);
  HeatmapGridSpec spec = HeadsSpec(state, *att, pictures, *labels);
  std::vector<std::string> row_labels, col_labels;
  ApplyHeadsShown(spec, shown, state.heads.zoom, pictures, *att, row_labels, col_labels, [](int i) { return i; });
  ApplyTokenSet(spec, state, pictures, shown);
  HeatmapGridResult grid = DrawHeatmapGrid(spec, state.heads.bar, state.ui_scale, &state.layout);
  HandleTokenSetHit(state, grid, labels->labels, shown);
  RecordOutlines(state, grid);
  RecordKeyAxis(state, grid, "heads");
  ZoomAndPan(state.heads.zoom, shown, grid, false);  // a double-click opens the head large
  ToWholePicture(grid, shown);
  HandleHit(state, *att, labels->labels, grid, grid.hovered);

  RecordHeads(state, *att, pictures, grid, spec.count, shown);
  DrawQkMenu(state);
  ImGui::End();
  DrawLargeHead(state, *att, pictures, *labels);
}

}  // namespace attnscope::gui
