// window_checkpoint.cpp — Windows → Checkpoint: open a Hugging Face checkpoint folder (typed, chosen
// from the recent ones, dropped onto the window or given as --checkpoint) and see what it is; with one
// open, the Heads view draws its layer for the Input window's text and this window lists the top-5
// next tokens at the selected query position.
//
// Opening runs on the CheckpointLoader's thread (a progress bar meanwhile), the forward pass on the
// compute worker (ModelSource): the frame never waits for either.
//
// Sections: opening · what the model is · next tokens · window
#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <filesystem>
#include <string>

#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// ---- opening -----------------------------------------------------------------------------------------

void DrawOpenControls(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  const float buttons = ImGui::CalcTextSize(tr("Open")).x + ImGui::CalcTextSize(tr("Close")).x +
                        ImGui::GetStyle().FramePadding.x * 4 + ImGui::GetStyle().ItemSpacing.x * 2;
  ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 6, ImGui::GetContentRegionAvail().x - buttons));
  const bool enter = ImGui::InputTextWithHint("##checkpoint_path", tr("checkpoint folder"), &c.path,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button(tr("Open")) || enter) OpenCheckpoint(state, c.path);
  RecordLastItem(state, "checkpoint.open");
  ImGui::SameLine();
  ImGui::BeginDisabled(!c.model && c.loading.empty());
  if (ImGui::Button(tr("Close"))) {
    if (c.loader) c.loader->cancel();
    c.loading.clear();
    c.model.reset();
    c.run.reset();
    c.tokenizer_error.clear();
    NoteEdit(state, Panel::checkpoint);  // the seeded layer again
  }
  ImGui::EndDisabled();
  HintText(tr("Type a folder with config.json and model.safetensors, or drop the folder onto the window."));

  if (!c.recent.empty() && ImGui::TreeNodeEx(tr("Recent checkpoints"), ImGuiTreeNodeFlags_DefaultOpen)) {
    for (const std::string& dir : c.recent) {
      const std::string name = std::filesystem::path(dir).filename().string();
      if (ImGui::Selectable((Ellipsize(name.empty() ? dir : name, ImGui::GetContentRegionAvail().x) + "##" + dir).c_str(),
                            c.model && c.model->dir.string() == dir)) {
        OpenCheckpoint(state, dir);
        break;  // the list changes when it opens
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", dir.c_str());
    }
    ImGui::TreePop();
  }

  if (!c.loading.empty()) {
    const std::string name = std::filesystem::path(c.loading).filename().string();
    ImGui::ProgressBar(float(c.loader ? c.loader->progress() : 0), ImVec2(-FLT_MIN, 0),
                       trf("opening %s…", name.c_str()).c_str());
  }
  ErrorText(c.error.empty() ? "" : std::string(tr("Error: ")) + c.error);
}

// ---- what the model is -------------------------------------------------------------------------------

void InfoRow(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(key);
  ImGui::TableNextColumn();
  ImGui::TextWrapped("%s", value.c_str());
}

std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void DrawModelInfo(AppState& state) {
  const model::Model& m = *state.checkpoint.model;
  const model::ModelConfig& cfg = m.config;
  SectionHeader(tr("Open checkpoint"));
  if (ImGui::BeginTable("##checkpoint_info", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 1.6f);
    InfoRow(tr("name"), m.name);
    InfoRow(tr("family"), cfg.model_type + (cfg.family == model::Family::gpt2 ? " (GPT-2)" : " (Llama)"));
    InfoRow(tr("layers L"), std::to_string(cfg.layers));
    InfoRow(tr("query heads H"), std::to_string(cfg.heads));
    InfoRow(tr("kv heads G"), std::to_string(cfg.kv_heads) + "  (" +
                                  (cfg.kv_heads == cfg.heads ? "MHA" : cfg.kv_heads == 1 ? "MQA" : "GQA") + ")");
    InfoRow(tr("d_head"), std::to_string(cfg.head_dim));
    InfoRow(tr("parameters"), Thousands(m.parameter_count()));
    InfoRow(tr("weights"), m.source_dtypes);
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f s", m.load_seconds);
    InfoRow(tr("load time"), seconds);
    ImGui::EndTable();
  }
  RecordLastItem(state, "checkpoint.info");
  if (!state.checkpoint.tokenizer_error.empty())
    NoticeText(tr("This checkpoint has no tokenizer: type token ids in the Input window, e.g. \"ids: 1 2 3\"."));
  else
    HintText(tr("The Input window's text goes through the checkpoint's own tokenizer (or type \"ids: 1 2 3\")."));
  if (state.scene.view.view != View::heads) {
    if (ImGui::Button(tr("Show in the Heads view"))) SwitchView(state, View::heads);
  } else {
    HintText(trf("The Heads view shows layer %d; its slider chooses another.", state.checkpoint.layer));
  }
  if (ImGui::Button(tr("Show the model view"))) {
    state.show_model_view = true;
    ImGui::SetWindowFocus("###model_view");  // in front, also when it was open behind this window
  }
  RecordLastItem(state, "checkpoint.show_model_view");
  ErrorText(ErrorFor(state, Panel::checkpoint));
}

// ---- next tokens -------------------------------------------------------------------------------------

void DrawNextTokens(AppState& state) {
  const ModelLayerRun* run = state.checkpoint.run.get();
  if (!run || run->next.empty() || state.scene.view.view != View::heads) return;
  const int tokens = int(run->next.size());
  int q = state.scene.view.selected_query;
  const bool chosen = q >= 0 && q < tokens;
  if (!chosen) q = tokens - 1;
  const AttentionAnalysis* att = run->analysis.attention.get();
  const std::string label =
      att && q < int(att->labels.size()) ? state.fonts->display_label(att->labels[size_t(q)]) : std::string();
  SectionHeader(tr("Next tokens"));
  WrappedText(trf("After query %d · %s:", q, label.c_str()));
  if (!chosen) HintText(tr("(the last position; click a query row in the Heads view to choose another)"));
  if (ImGui::BeginTable("##next_tokens", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn(tr("token"), ImGuiTableColumnFlags_WidthStretch, 1.6f);
    ImGui::TableSetupColumn(tr("id"), ImGuiTableColumnFlags_WidthStretch, 0.8f);
    ImGui::TableSetupColumn(tr("probability"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableHeadersRow();
    const auto& top = run->next[size_t(q)];
    for (size_t i = 0; i < top.size(); ++i) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string& text = run->next_labels[size_t(q)][i];
      ImGui::TextUnformatted(text.empty() ? "—" : state.fonts->display_label(text).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%d", top[i].id);
      ImGui::TableNextColumn();
      ImGui::Text("%.4f", double(top[i].probability));
    }
    ImGui::EndTable();
  }
  RecordLastItem(state, "checkpoint.next_tokens");
}

}  // namespace

// ---- window ------------------------------------------------------------------------------------------

void DrawCheckpointWindow(AppState& state) {
  if (!state.show_checkpoint) return;
  PlaceNextWindow(state, Slot::right_third);
  if (!ImGui::Begin(WindowTitle("Checkpoint", "checkpoint").c_str(), &state.show_checkpoint)) {
    ImGui::End();
    return;
  }
  DrawOpenControls(state);
  if (state.checkpoint.model) {
    DrawModelInfo(state);
    DrawNextTokens(state);
  } else if (state.checkpoint.loading.empty()) {
    HintText(tr("No checkpoint open: the views show attnscope's seeded layer."));
    if (ImGui::Button(tr("Open the shipped induction model"))) OpenShippedInductionModel(state);
    RecordLastItem(state, "checkpoint.open_induction");
  }
  ImGui::End();
}

}  // namespace attnscope::gui
