// model_view_ablation.cpp — switching heads off in the Model view (model_view_ablation.h).
#include "gui/model_view_ablation.h"

#include <algorithm>
#include <cstdio>

#include "gui/fonts.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// The comparison on screen is of the heads switched off now (else the worker is still making it).
const pipeline::AblationComparison* CurrentComparison(const AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  const pipeline::AblationComparison* a = c.ablation_result.get();
  return a && a->ablation == c.ablation ? a : nullptr;
}

std::string HeadList(const model::HeadAblation& a) {
  std::string out;
  for (const model::HeadRef& h : a.heads)
    out += (out.empty() ? "" : ", ") + std::to_string(h.layer) + "." + std::to_string(h.head);
  return out;
}

std::string TokenText(const AppState& state, const std::string& label, int32_t id) {
  return label.empty() ? "#" + std::to_string(id) : state.fonts->display_label(label);
}

// Before → after of the next token at the selected query (else the last position): the top three of each.
void DrawNextTokenChange(const AppState& state, const pipeline::AblationComparison& a, const ModelLayerRun& after) {
  const ModelLayerRun& before = *a.before;
  const int tokens = int(after.next.size());
  if (tokens == 0 || int(before.next.size()) != tokens) return;
  const int selected = state.scene.view.selected_query;
  const int q = selected >= 0 && selected < tokens ? selected : tokens - 1;
  const AttentionAnalysis* att = after.analysis.attention.get();
  const std::string label = att && q < int(att->labels.size()) ? state.fonts->display_label(att->labels[size_t(q)]) : "";
  WrappedText(trf("Next token after query %d · %s, before → after:", q, label.c_str()));
  if (!ImGui::BeginTable("##ablation_next", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchSame)) return;
  ImGui::TableSetupColumn(tr("before"));
  ImGui::TableSetupColumn(tr("after"));
  ImGui::TableHeadersRow();
  const size_t rows = std::min<size_t>(3, std::max(before.next[size_t(q)].size(), after.next[size_t(q)].size()));
  for (size_t i = 0; i < rows; ++i) {
    ImGui::TableNextRow();
    for (const ModelLayerRun* run : {&before, &after}) {
      ImGui::TableNextColumn();
      const auto& top = run->next[size_t(q)];
      if (i >= top.size()) continue;
      const std::string text = TokenText(state, run->next_labels[size_t(q)][i], top[i].id);
      ImGui::Text("%s  %.3f", text.c_str(), double(top[i].probability));
    }
  }
  ImGui::EndTable();
}

}  // namespace

std::string AblationRefusal(const AppState& state, const ModelViewPictures& mv, int layer) {
  const CheckpointWindowState& c = state.checkpoint;
  if (!c.model) return tr("Attentions from a file have no model to run again: switching heads off needs a checkpoint.");
  if (mv.linear_layer(layer))
    return trf("A %s layer has no softmax heads: it cannot be switched off.", mv.layer_kind[size_t(layer)].c_str());
  if (c.model->config.trained.active || c.model->config.is_linear_layer(layer))
    return tr("This layer has no softmax heads: it cannot be switched off.");
  return "";
}

void ToggleAblatedHead(AppState& state, int layer, int head) {
  const ModelViewPictures* mv = state.model_view.pictures.get();
  if (!mv || !AblationRefusal(state, *mv, layer).empty()) return;
  std::vector<model::HeadRef>& heads = state.checkpoint.ablation.heads;
  const model::HeadRef ref{layer, head};
  if (const auto at = std::find(heads.begin(), heads.end(), ref); at != heads.end()) {
    heads.erase(at);
  } else {
    heads.push_back(ref);
    std::sort(heads.begin(), heads.end(),
              [](const model::HeadRef& a, const model::HeadRef& b) { return a.layer != b.layer ? a.layer < b.layer : a.head < b.head; });
  }
  NoteEdit(state, Panel::heads);  // the forward pass again, with these heads off
}

void DrawAblationPanel(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (!c.model) return;  // attentions from a file: nothing to run again
  ModelViewWindowState& v = state.model_view;
  ImGui::Checkbox(tr("Click switches heads off"), &v.ablate_clicks);
  RecordLastItem(state, "model_view.ablate");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("On: a click on a head switches it off or on again (a right-click always does). "
                               "Off: a click opens the head in the Heads view."));
  const bool mean = c.ablation.mode == model::AblationMode::mean;
  SameLineIfFits(ImGui::CalcTextSize(tr("set to 0")).x + ImGui::CalcTextSize(tr("set to its mean")).x +
                 ImGui::GetFontSize() * 4);
  if (ImGui::RadioButton(tr("set to 0"), !mean) && mean) {
    c.ablation.mode = model::AblationMode::zero;
    if (!c.ablation.heads.empty()) NoteEdit(state, Panel::heads);
  }
  RecordLastItem(state, "model_view.ablate_zero");
  ImGui::SameLine();
  if (ImGui::RadioButton(tr("set to its mean"), mean) && !mean) {
    c.ablation.mode = model::AblationMode::mean;
    if (!c.ablation.heads.empty()) NoteEdit(state, Panel::heads);
  }
  RecordLastItem(state, "model_view.ablate_mean");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("A switched-off head's output is replaced by its mean over the input's positions."));
  if (c.ablation.heads.empty()) return;
  SameLineIfFits(ImGui::CalcTextSize(tr("Restore all heads")).x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::Button(tr("Restore all heads"))) {
    c.ablation.heads.clear();
    NoteEdit(state, Panel::heads);
  }
  RecordLastItem(state, "model_view.restore_heads");
  const std::string heads = HeadList(c.ablation);
  const pipeline::AblationComparison* a = CurrentComparison(state);
  if (!a || !c.run) {
    WrappedText(trf("Switched off: %s", heads.c_str()));
    SpinnerText(tr("computing…"));
    return;
  }
  char loss[160];
  std::snprintf(loss, sizeof loss, "%.4f → %.4f", a->loss_before.mean, a->loss_after.mean);
  WrappedText(trf("Switched off: %s · loss on the input %s nats", heads.c_str(), loss));
  RecordLastItem(state, "model_view.ablation_loss");
  DrawNextTokenChange(state, *a, *c.run);
  WrappedText(trf("Magenta: heads whose attention moved by %.2f or more (Δ = the largest change of a cell).",
                  double(ablation_marked_change)));
}

void DrawAblationMarks(ImDrawList* draw, const AppState& state, const ModelViewPictures& mv, int layer, int head,
                       ImVec2 min, float thumb) {
  const CheckpointWindowState& c = state.checkpoint;
  const ImVec2 max(min.x + thumb, min.y + thumb);
  if (c.ablation.contains(layer, head)) {  // greyed and crossed out
    draw->AddRectFilled(min, max, IM_COL32(90, 90, 90, 200));
    const float w = std::max(3.0f, thumb * 0.08f), in = thumb * 0.12f;
    for (const ImU32 color : {IM_COL32(0, 0, 0, 255), IM_COL32(230, 40, 40, 255)}) {
      const float t = color == IM_COL32(0, 0, 0, 255) ? w + 2 : w;
      draw->AddLine(ImVec2(min.x + in, min.y + in), ImVec2(max.x - in, max.y - in), color, t);
      draw->AddLine(ImVec2(max.x - in, min.y + in), ImVec2(min.x + in, max.y - in), color, t);
    }
    return;
  }
  const pipeline::AblationComparison* a = CurrentComparison(state);
  if (!a || layer >= a->layers || head >= a->heads || mv.layers != a->layers) return;
  const float change = a->change(layer, head);
  if (change < ablation_marked_change) return;
  // Magenta (no K/V group's colour) just inside the group's frame, edged in black to show on light and dark themes;
  // inside, so that it never reaches the neighbours or the layer numbers.
  const float frame = std::max(3.0f, thumb * 0.05f), in = frame * 0.5f + 1;
  const ImVec2 lo(min.x + in, min.y + in), hi(max.x - in, max.y - in);
  draw->AddRect(lo, hi, IM_COL32(0, 0, 0, 255), 0, 0, frame + 2);
  draw->AddRect(lo, hi, IM_COL32(255, 0, 255, 255), 0, 0, frame);
  char text[16];
  std::snprintf(text, sizeof text, "Δ%.2f", double(change));
  const ImVec2 size = ImGui::CalcTextSize(text);
  if (size.x > thumb - 4 * frame) return;  // too small a thumbnail: the frame alone says it
  const ImVec2 at(min.x + 2 * frame, max.y - 2 * frame - size.y);
  draw->AddRectFilled(ImVec2(at.x - 1, at.y), ImVec2(at.x + size.x + 1, at.y + size.y), IM_COL32(0, 0, 0, 210));
  draw->AddText(at, IM_COL32(255, 170, 255, 255), text);
}

void AblationTooltipLines(const AppState& state, const ModelViewPictures& mv, int layer, int head) {
  const CheckpointWindowState& c = state.checkpoint;
  const std::string refusal = AblationRefusal(state, mv, layer);
  if (!c.model) return;
  ImGui::Separator();
  if (!refusal.empty()) {
    ImGui::TextUnformatted(refusal.c_str());
    return;
  }
  if (c.ablation.contains(layer, head)) {
    ImGui::TextUnformatted(c.ablation.mode == model::AblationMode::mean ? tr("switched off: its output is its mean")
                                                                         : tr("switched off: its output is 0"));
  } else if (const pipeline::AblationComparison* a = CurrentComparison(state);
             a && layer < a->layers && head < a->heads) {
    ImGui::TextUnformatted(trf("largest change of a cell since heads were switched off: %.3f",
                               double(a->change(layer, head))).c_str());
  }
  ImGui::TextDisabled("%s", state.model_view.ablate_clicks ? tr("click or right-click: switch this head off or on")
                                                           : tr("right-click: switch this head off or on"));
}

}  // namespace attnscope::gui
