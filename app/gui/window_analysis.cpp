// window_analysis.cpp — head analysis (head_stats.h) of the current attention: per head the entropy
// (and normalised to [0, 1]), the mean attention distance and the attention sink (attention_sink(): rows
// i ≥ 1, the Model view's and lesson 6's number; "—" for one token) as a table with bars; the Jensen–Shannon similarity of every pair of heads as a small heatmap (a GL texture through
// the engine's colormap, like the Heads window); and, after a conversion to GQA/MQA (the Model window's
// seeded MHA layer, or a checkpoint's layer pooled in the Checkpoint window), how far each head drifted
// from the original model, with a sentence saying what that means.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attnscope/attention/designed_heads.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

constexpr float ln2 = 0.69314718f;

std::string HeadName(const AppState& state, int h) {
  std::string name = std::to_string(h);
  const ModelSettings& m = state.scene.model;
  // The synthetic model's designed patterns name its heads, never a checkpoint's.
  if (!state.checkpoint.current() && m.weights == WeightSource::designed && h < int(m.designed.size())) {
    try {
      name += " · " + designed_pattern_label(parse_designed_pattern(m.designed[size_t(h)])).text(UiLanguage());
    } catch (const std::exception&) {
      // A name the engine accepted always parses; nothing to add otherwise.
    }
  }
  return name;
}

// Bars are as wide as their column's header (at least a number's width): the table sizes its columns
// to fit their contents, and scrolls sideways when the right column is narrower than that.
void Bar(double fraction, const char* text, const char* header) {
  const float w = std::max(ImGui::CalcTextSize(header).x, ImGui::CalcTextSize("0.000").x + ImGui::GetFontSize() * 2.0f);
  ImGui::ProgressBar(float(std::clamp(fraction, 0.0, 1.0)), ImVec2(w, 0.0f), text);
}

void StatsTable(AppState& state, const HeadStats& s) {
  const int heads = int(s.entropy.size());
  const bool drift = !s.drift_from_mha.empty();
  const int columns = drift ? 6 : 5;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY;
  const float rows_h = ImGui::GetFrameHeightWithSpacing() * float(std::min(heads, 8) + 1) + ImGui::GetStyle().CellPadding.y * 2 +
                       ImGui::GetStyle().ScrollbarSize;  // room for the sideways scrollbar
  if (!ImGui::BeginTable("##stats", columns, flags, ImVec2(0, rows_h))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn(tr("head"));
  ImGui::TableSetupColumn(tr("entropy"));
  ImGui::TableSetupColumn(tr("normalised"));
  ImGui::TableSetupColumn(tr("distance"));
  ImGui::TableSetupColumn(tr("attention sink"));
  if (drift) ImGui::TableSetupColumn(tr("drift"));
  ImGui::TableHeadersRow();
  char text[64];
  for (int h = 0; h < heads; ++h) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    const std::string name = HeadName(state, h);
    ImGui::TextUnformatted(name.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", name.c_str());  // the cell may cut a long name
    ImGui::TableNextColumn();
    std::snprintf(text, sizeof text, "%.2f", s.entropy[size_t(h)]);
    ImGui::TextUnformatted(text);
    ImGui::TableNextColumn();
    std::snprintf(text, sizeof text, "%.2f", s.normalised_entropy[size_t(h)]);
    Bar(s.normalised_entropy[size_t(h)], text, tr("normalised"));
    ImGui::TableNextColumn();
    std::snprintf(text, sizeof text, "%.2f", s.mean_distance[size_t(h)]);
    ImGui::TextUnformatted(text);
    ImGui::TableNextColumn();
    // As the Model view's tooltip and lesson 6 write it; one token has no row after the first.
    const double sink = s.attention_sink[size_t(h)];
    if (std::isfinite(sink)) std::snprintf(text, sizeof text, "%.2f", sink);
    else std::snprintf(text, sizeof text, "—");
    Bar(std::isfinite(sink) ? sink : 0.0, text, tr("attention sink"));
    if (drift) {
      ImGui::TableNextColumn();
      std::snprintf(text, sizeof text, "%.3f", s.drift_from_mha[size_t(h)]);
      Bar(s.drift_from_mha[size_t(h)] / ln2, text, tr("drift"));
    }
  }
  ImGui::EndTable();
}

void SimilarityMap(AppState& state, const AttentionAnalysis& att, const HeadStats& stats) {
  const MatD& js = stats.js_divergence;
  const int heads = int(js.rows());
  if (heads < 2) {
    ImGui::TextDisabled("%s", tr("One head: nothing to compare."));
    return;
  }
  const ValueRange range{0.0f, ln2};
  std::vector<Rgba> pixels(size_t(heads) * size_t(heads));
  for (int a = 0; a < heads; ++a)
    for (int b = 0; b < heads; ++b) pixels[size_t(a * heads + b)] = value_to_color(float(js(a, b)), range, Colormap::viridis);
  GlTexture& texture = state.analysis_window.similarity;
  texture.update(heads, heads, pixels);

  const float bar_w = ImGui::GetFontSize() * 0.9f;
  const float labels_w = ColorBarLabelWidth(range, 3) + bar_w + ImGui::GetFontSize();
  const float head_label_w = ImGui::CalcTextSize("00 ").x;
  const float avail = ImGui::GetContentRegionAvail().x - labels_w - head_label_w;
  const float cell = std::floor(std::clamp(avail / float(heads), 4.0f, ImGui::GetFontSize() * 3.0f));
  const float side = cell * float(heads);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 img_min(origin.x + head_label_w, origin.y + ImGui::GetTextLineHeight());
  ImGui::SetCursorScreenPos(img_min);
  ImGui::Image(texture.id(), ImVec2(side, side));
  RecordLastItem(state, "analysis.similarity");
  const bool hovered = ImGui::IsItemHovered();
  // Head numbers along both edges (every one when they fit, else every k-th).
  const int every = std::max(1, int(std::ceil(ImGui::CalcTextSize("00").x * 1.3f / cell)));
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  for (int h = 0; h < heads; h += every) {
    const std::string n = std::to_string(h);
    const ImVec2 size = ImGui::CalcTextSize(n.c_str());
    draw->AddText(ImVec2(img_min.x + (float(h) + 0.5f) * cell - size.x * 0.5f, origin.y), ink, n.c_str());
    draw->AddText(ImVec2(img_min.x - size.x - 4, img_min.y + (float(h) + 0.5f) * cell - size.y * 0.5f), ink, n.c_str());
  }
  // The numbers in the cells when they fit.
  if (cell >= ImGui::CalcTextSize("0.00").x + 4) {
    char text[16];
    for (int a = 0; a < heads; ++a)
      for (int b = 0; b < heads; ++b) {
        std::snprintf(text, sizeof text, "%.2f", js(a, b));
        const ImVec2 size = ImGui::CalcTextSize(text);
        const ImVec2 at(img_min.x + (float(b) + 0.5f) * cell - size.x * 0.5f, img_min.y + (float(a) + 0.5f) * cell - size.y * 0.5f);
        draw->AddText(at, ContrastText(ToImU32(pixels[size_t(a * heads + b)])), text);
      }
  }
  DrawColorBar(draw, state.analysis_window.bar, Colormap::viridis, ImVec2(img_min.x + side + ImGui::GetFontSize() * 0.6f, img_min.y),
               ImVec2(img_min.x + side + ImGui::GetFontSize() * 0.6f + bar_w, img_min.y + side), range, 3);
  if (hovered) {
    const ImVec2 m = ImGui::GetMousePos();
    const int b = std::clamp(int((m.x - img_min.x) / cell), 0, heads - 1);
    const int a = std::clamp(int((m.y - img_min.y) / cell), 0, heads - 1);
    ImGui::SetTooltip("%s", trf("heads %d and %d: JS = %.3f nats", a, b, js(a, b)).c_str());
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, img_min.y + side + ImGui::GetStyle().ItemSpacing.y));
  ImGui::Dummy(ImVec2(head_label_w + side + labels_w, 0));
  if (stats.js_rows < int(att.labels.size()))
    ImGui::TextDisabled("%s", trf("(averaged over %d evenly spaced query rows)", stats.js_rows).c_str());
}

}  // namespace

void DrawAnalysisWindow(AppState& state) {
  if (!state.show_analysis) return;
  PlaceNextWindow(state, Slot::analysis);  // in the right column, beside the view
  if (!ImGui::Begin(WindowTitle("Head analysis", "analysis").c_str(), &state.show_analysis)) {
    ImGui::End();
    return;
  }
  if (LongInputNotice(state, TrKey("Head analysis"))) {  // a long input keeps no stack to draw
    ImGui::End();
    return;
  }
  // One current model: only statistics of its own heads. A checkpoint's stand in place of the synthetic
  // model's from the frame it is current; until its first pass arrives, its progress or error does.
  const bool checkpoint = state.checkpoint.current();
  if (checkpoint && !ViewDrawsModel(state)) {
    WrappedText(tr("Head analysis follows the checkpoint's heads: open the Heads or Shapes view."));
    ImGui::End();
    return;
  }
  if (!AnalysisOfCurrentModel(state)) {
    if (!CheckpointLoadingBar(state)) {
      const std::string error = checkpoint ? CurrentCheckpointError(state) : state.error;
      if (!error.empty()) ErrorText(std::string(tr("Error: ")) + error);
      else SpinnerText(tr("computing the head statistics…"));
    }
    ImGui::End();
    return;
  }
  const AttentionAnalysis* att = state.analysis->attention.get();
  if (!att) {
    WrappedText(tr("Head analysis needs attention over a sentence or a tensor: choose a text input."));
    ImGui::End();
    return;
  }
  // The statistics follow the heatmaps (compute_worker.h).
  if (!state.head_stats) {
    if (!state.head_stats_error.empty()) WrappedText(std::string(tr("Error: ")) + state.head_stats_error);
    else SpinnerText(tr("computing the head statistics…"));
    ImGui::End();
    return;
  }
  const HeadStats& stats = *state.head_stats;
  WrappedText(tr("Entropy: how spread a head's attention is (0 = on one token; normalised 1 = uniform). "
                              "Distance: how many tokens away it looks on average. Attention sink: the mean "
                              "attention of the queries after the first on token 0."));
  StatsTable(state, stats);

  SectionHeader(tr("How alike are the heads? (Jensen–Shannon divergence)"));
  WrappedText(tr("0 = the two heads attend identically; ln 2 ≈ 0.69 = they never look at the same tokens."));
  SimilarityMap(state, *att, stats);

  if (!stats.drift_from_mha.empty()) {
    SectionHeader(tr("Drift from the original model"));  // MHA for the seeded layer, maybe GQA for a checkpoint
    const HeadStats& s = stats;
    const auto most = std::max_element(s.drift_from_mha.begin(), s.drift_from_mha.end());
    WrappedText(tr("Each head's map now against the same query head before its keys and values were "
                                "pooled into shared groups. 0 means sharing K/V did not change where the head "
                                "looks; the larger the number, the more the head had to give up its own pattern."));
    WrappedText(trf("Head %d moved most (%.3f nats).", int(most - s.drift_from_mha.begin()), *most).c_str());
  }
  ImGui::End();
}

}  // namespace attnscope::gui
