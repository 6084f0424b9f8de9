// window_checkpoint.cpp — Windows → Checkpoint: open a Hugging Face checkpoint folder (typed, chosen
// from the recent ones, dropped onto the window or given as --checkpoint) and see what it is; with one
// open, the Heads view draws its layer for the Input window's text and this window lists the top-5
// next tokens at the selected query position.
//
// The same path field opens attentions computed elsewhere (a model too big for this machine: docs/real-models.md's
// transformers snippet writes attentions.npy or .safetensors [L, H, T, T], tokens.json and config.json;
// model::find_attention_files says which path is which). The Heads view and the model view then draw the
// file's layers with its own tokens; there are no weights, so no next tokens and no conversion.
//
// Opening runs on the CheckpointLoader's thread (a progress bar meanwhile), the forward pass on the
// compute worker (ModelSource): the frame never waits for either.
//
// One model at a time: while a checkpoint is open (or opening, or failed to open) the Model window is its
// card (DrawCheckpointCard: family, L, H, G, d_head, the layer, the conversion below) and the synthetic
// settings are out of sight; a model whose tokenizer cannot read the text on screen opens on a repeated
// random sequence of its own ids (app_state.cpp).
//
// Convert to GQA/MQA (in the card): a K/V-heads slider over the divisors of the checkpoint's own G pools each layer's
// K/V heads by their mean (SPEC's conversion, Ainslie et al. 2023) on the worker; the Heads view, the
// info table and the next tokens then show the converted model, the Head analysis window each head's
// drift from the original, and one line here what pooling cost (mean drift, the top-1 next token).
//
// In the browser the path field is a folder picker (DrawPickControls, platform_open.h).
//
// Sections: opening · what the model is · next tokens · convert to GQA/MQA · the Model window's card · window
#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/platform_open.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// ---- opening -----------------------------------------------------------------------------------------

// The browser (platform_open.h): the page cannot read a typed path, so the student picks the folder (or
// drops it onto the page), whose files the page copies into its memory, within the limit said here.
std::string FolderRefusalText(const FolderRefusal& r) {
  if (r.kind == FolderRefusal::Kind::too_big)
    return trf("%s was not opened: the files attnscope reads are %s, more than the %s this page can hold. Nothing "
               "was copied. Open it in the desktop attnscope instead.",
               r.name.c_str(), byte_size_text(r.total).c_str(), byte_size_text(r.limit).c_str());
  return trf("%s was not opened: the browser could not read or copy %s (%s).", r.name.c_str(), r.file.c_str(),
             r.reason.c_str());
}

void DrawPickControls(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  const FolderCopy& copy = folder_copy();
  if (!copy.name.empty()) c.picker_refusal.reset();  // a new folder is on its way
  ImGui::BeginDisabled(!copy.name.empty());
  if (ImGui::Button(tr("Choose a model folder…"))) pick_checkpoint_folder();
  ImGui::EndDisabled();
  RecordLastItem(state, "checkpoint.pick");
  SameLineIfFits(ImGui::CalcTextSize(tr("Close")).x + ImGui::GetStyle().FramePadding.x * 2);
  ImGui::BeginDisabled(!c.current());
  if (ImGui::Button(tr("Close"))) CloseCheckpoint(state);
  RecordLastItem(state, "checkpoint.close");
  ImGui::EndDisabled();
  HintText(tr("Or drop the folder, or its files, onto the window. Its files are copied into this page's memory "
              "and go nowhere else."));
  HintText(trf("The page's memory is 4 GiB at most (32-bit WebAssembly) and holds both the files and their weights "
               "as float32, so a folder of up to %s opens. GPT-2 small (0.5 GB in float32) fits; a model of 1 "
               "billion parameters in float16 or bfloat16 (2 GB of files, 4 GB as float32) does not.",
               byte_size_text(double(picked_folder_limit())).c_str()));
  RecordLastItem(state, "checkpoint.pick_limit");
  if (!copy.name.empty())
    ImGui::ProgressBar(copy.total > 0 ? float(copy.done / copy.total) : 0.0f, ImVec2(-FLT_MIN, 0),
                       trf("copying %s into the page's memory…", copy.name.c_str()).c_str());
  if (c.picker_refusal) ErrorText(std::string(tr("Error: ")) + FolderRefusalText(*c.picker_refusal));
  CheckpointLoadingBar(state);
  ErrorText(c.error.empty() ? "" : std::string(tr("Error: ")) + c.error);
}

void DrawOpenControls(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (folders_are_picked()) {
    DrawPickControls(state);
    return;
  }
  const float buttons = ImGui::CalcTextSize(tr("Open")).x + ImGui::CalcTextSize(tr("Close")).x +
                        ImGui::GetStyle().FramePadding.x * 4 + ImGui::GetStyle().ItemSpacing.x * 2;
  // The field beside its buttons; in a narrow column (a large UI scale) the whole line, the buttons under it.
  const bool beside = ImGui::GetContentRegionAvail().x - buttons >= ImGui::GetFontSize() * 6;
  ImGui::SetNextItemWidth(beside ? ImGui::GetContentRegionAvail().x - buttons : -FLT_MIN);
  const bool enter = ImGui::InputTextWithHint("##checkpoint_path", tr("checkpoint folder"), &c.path,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  if (beside) ImGui::SameLine();
  if (ImGui::Button(tr("Open")) || enter) OpenCheckpoint(state, c.path = user_path_text(c.path));  // ~, absolute
  RecordLastItem(state, "checkpoint.open");
  SameLineIfFits(ImGui::CalcTextSize(tr("Close")).x + ImGui::GetStyle().FramePadding.x * 2);
  ImGui::BeginDisabled(!c.current());  // also a checkpoint that failed to open: back to the synthetic model
  if (ImGui::Button(tr("Close"))) CloseCheckpoint(state);
  RecordLastItem(state, "checkpoint.close");
  ImGui::EndDisabled();
  HintText(tr("Type or drop a checkpoint folder, or attentions computed elsewhere."));
  ImGui::SameLine();
  HelpMarker(tr("A checkpoint folder holds config.json and model.safetensors (or its shards). Attentions computed "
                "elsewhere are attentions.npy or .safetensors [L, H, T, T] with tokens.json beside it, and "
                "config.json for the K/V groups."));

  if (!c.recent.empty() && ImGui::TreeNodeEx(tr("Recent checkpoints"), ImGuiTreeNodeFlags_DefaultOpen)) {
    for (const std::string& dir : c.recent) {
      const std::string name = CheckpointPathName(dir);  // e.g. "gpt2", "llama70b/attentions.npy"
      if (ImGui::Selectable((Ellipsize(name.empty() ? dir : name, ImGui::GetContentRegionAvail().x) + "##" + dir).c_str(),
                            c.is_open() && c.opened == dir)) {
        OpenCheckpoint(state, dir);
        break;  // the list changes when it opens
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", dir.c_str());
    }
    ImGui::TreePop();
  }

  CheckpointLoadingBar(state);
  ErrorText(c.error.empty() ? "" : std::string(tr("Error: ")) + c.error);
}

// ---- what the model is -------------------------------------------------------------------------------

// A key/value table (what the model is); rows by InfoRow, closed by ImGui::EndTable.
bool BeginInfoTable(const char* id) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) return false;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 1.6f);
  return true;
}

void InfoRow(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  WrappedText(key);  // a narrow column (a large UI scale): over two lines rather than cut
  ImGui::TableNextColumn();
  ImGui::TextWrapped("%s", value.c_str());
}

// The G of the run on screen: after a conversion, the pooled one next to the checkpoint's.
// MLA caches no K/V heads: the row says what it caches instead, the latent and the rotary key.
void KvHeadsRow(const CheckpointWindowState& c, const model::ModelConfig& cfg) {
  if (cfg.is_mla()) {
    InfoRow(tr("cached per token"), trf("latent c_KV %d + rotary key %d values (MLA: no K/V heads are cached)",
                                        cfg.mla.kv_lora_rank, cfg.mla.rope_dim));
    return;
  }
  const ModelLayerRun* run = c.run.get();
  const int shown_g = run && run->stack ? run->stack->kv_heads : cfg.kv_heads;
  if (shown_g == cfg.kv_heads)
    InfoRow(tr("kv heads G"), std::to_string(cfg.kv_heads) + "  (" + grouping_name(cfg.heads, cfg.kv_heads) + ")");
  else
    InfoRow(tr("kv heads G"), trf("%d  (%s, converted from %d)", shown_g, grouping_name(cfg.heads, shown_g), cfg.kv_heads));
}

std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}


// The family row: model_type and the family of its forward pass.
std::string FamilyText(const model::ModelConfig& cfg) {
  if (cfg.is_mla()) return cfg.model_type + " (MLA" + (cfg.moe.experts > 0 ? " + MoE)" : ")");
  // a multimodal container: its own model_type, then its text tower's
  const std::string type = cfg.container.empty() || cfg.container == cfg.model_type
                               ? cfg.model_type
                               : cfg.container + " → " + cfg.model_type;
  if (cfg.mamba.active()) return type + (cfg.moe.experts > 0 ? " (Mamba-2 + attention, MoE)" : " (Mamba-2 + attention)");
  if (cfg.moe.experts > 0) return type + " (Llama + MoE)";  // Qwen3-MoE, OLMoE, GraniteMoE
  if (cfg.model_type == "gpt_neox") return type + " (GPT-NeoX)";
  if (cfg.model_type == "olmo2") return type + " (OLMo 2)";
  return type + (cfg.family == model::Family::gpt2 ? " (GPT-2)" : cfg.norm_plus_one ? " (Gemma)" : " (Llama)");
}

// Multi-head latent attention (DeepSeek): what all heads share, and the cache it gives per token.
void DrawMlaNote(const model::ModelConfig& cfg) {
  const model::MlaConfig& m = cfg.mla;
  NoticeText(trf("Multi-head latent attention: each of the %d heads has its own keys and values, so the Heads view "
                 "shows %d K/V groups of one head; all of them are made from one shared latent c_KV of %d values "
                 "and one shared rotary key of %d values per token.",
                 cfg.heads, cfg.heads, m.kv_lora_rank, m.rope_dim));
  HintText(trf("KV cache per token, per layer: %d + %d = %d values (the latent and the rotary key); the same %d "
               "heads cached as plain MHA would need %d.",
               m.kv_lora_rank, m.rope_dim, m.kv_lora_rank + m.rope_dim, cfg.heads,
               cfg.heads * (m.nope_dim + m.rope_dim + m.v_dim)));
}

// Where the open model is drawn (the Heads view at a layer, the model view), and its run's errors.
void DrawViewButtons(AppState& state) {
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

void DrawModelInfo(AppState& state) {
  const model::Model& m = *state.checkpoint.model;
  const model::ModelConfig& cfg = m.config;
  SectionHeader(tr("Open checkpoint"));
  if (BeginInfoTable("##checkpoint_info")) {
    InfoRow(tr("name"), m.name);
    InfoRow(tr("family"), FamilyText(cfg));
    InfoRow(tr("layers L"), std::to_string(cfg.layers));
    InfoRow(tr("query heads H"), std::to_string(cfg.heads));
    KvHeadsRow(state.checkpoint, cfg);
    InfoRow(tr("d_head"), std::to_string(cfg.head_dim));
    InfoRow(tr("parameters"), Thousands(m.parameter_count()));
    InfoRow(tr("weights"), m.source_dtypes);
    if (!cfg.container.empty())  // the text tower is drawn; the vision tower's tensors stay unread
      InfoRow(tr("vision tower"), trf("not drawn: %d tensors skipped", m.skipped_tensors));
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
  if (cfg.is_mla()) DrawMlaNote(cfg);
  else if (cfg.kv_heads > 1 && !cfg.qk_norm_whole) HintText(tr("The Model window's K/V heads slider converts it to GQA / MQA."));
  DrawViewButtons(state);
}

// An attentions file's L, H, G (or that no config gave them) and T: rows of the Checkpoint window's table
// and of the Model window's card.
void AttentionsRows(const model::AttentionStack& s) {
  InfoRow(tr("layers L"), std::to_string(s.layers));
  InfoRow(tr("query heads H"), std::to_string(s.heads));
  if (s.groups_from_config)
    InfoRow(tr("kv heads G"), std::to_string(s.kv_heads) + "  (" + grouping_name(s.heads, s.kv_heads) + ")");
  else
    InfoRow(tr("kv heads G"), tr("not given (no config.json): each head is drawn as its own group"));
  InfoRow(tr("tokens T"), std::to_string(s.tokens));
}

// What an attentions file is: where it came from, L, H, G (or that no config gave them), T, causal.
void DrawAttentionsInfo(AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  const model::AttentionStack& s = *c.attentions;
  SectionHeader(tr("Open attentions"));
  if (BeginInfoTable("##attentions_info")) {
    InfoRow(tr("name"), c.name());
    InfoRow(tr("file"), s.source);
    AttentionsRows(s);
    InfoRow(tr("mask"), s.causal ? tr("causal (every upper triangle is 0)") : tr("none (some head looks ahead)"));
    ImGui::EndTable();
  }
  RecordLastItem(state, "checkpoint.info");
  HintText(tr("Computed elsewhere: the file's own tokens are drawn, and the Input window's text is not used. "
              "Without the weights there are no next tokens and no conversion to GQA / MQA."));
  DrawViewButtons(state);
}

// ---- next tokens -------------------------------------------------------------------------------------

// The query position the next tokens are shown for: the selected row, else the last one.
int NextTokenPosition(const AppState& state, int tokens) {
  const int q = state.scene.view.selected_query;
  return q >= 0 && q < tokens ? q : tokens - 1;
}

void DrawNextTokens(AppState& state) {
  const ModelLayerRun* run = state.checkpoint.run.get();
  if (!run || run->next.empty() || !ViewDrawsModel(state)) return;
  const int tokens = int(run->next.size());
  const int q = NextTokenPosition(state, tokens);
  const bool chosen = q == state.scene.view.selected_query;
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
      // Without a tokenizer the id is all there is to show.
      ImGui::TextUnformatted(text.empty() ? ("#" + std::to_string(top[i].id)).c_str() : state.fonts->display_label(text).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%d", top[i].id);
      ImGui::TableNextColumn();
      ImGui::Text("%.4f", double(top[i].probability));
    }
    ImGui::EndTable();
  }
  RecordLastItem(state, "checkpoint.next_tokens");
}

// ---- convert to GQA/MQA ------------------------------------------------------------------------------

// The top-1 next token after query q as the summary quotes it: 'text', or #id without a label.
std::string TokenName(AppState& state, const ModelLayerRun& run, int q) {
  const std::string& label = run.next_labels[size_t(q)][0];
  std::string name = label.empty() ? "#" : "'";
  name += label.empty() ? std::to_string(run.next[size_t(q)][0].id) : state.fonts->display_label(label);
  if (!label.empty()) name += "'";
  return name;
}

// What pooling cost on the layer on screen: the heads' mean drift, and the top-1 next token before and after.
void DrawConversionSummary(AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  const ModelLayerRun* run = c.run.get();
  const ModelLayerRun* original = c.original.get();
  if (!run || !original || run->next.empty() || run->next.size() != original->next.size()) return;
  if (!state.head_stats || state.head_stats->drift_from_mha.empty()) {
    SpinnerText(tr("computing the drift from the original model…"));
    return;
  }
  const std::vector<double>& drift = state.head_stats->drift_from_mha;
  double mean = 0;
  for (double d : drift) mean += d;
  mean /= double(drift.size());
  WrappedText(trf("Mean drift over the %d heads of layer %d: %.3f nats.", int(drift.size()), run->layer, mean));
  const int q = NextTokenPosition(state, int(run->next.size()));
  if (run->next[size_t(q)].empty() || original->next[size_t(q)].empty()) return;
  const model::NextToken& before = original->next[size_t(q)][0];
  const model::NextToken& after = run->next[size_t(q)][0];
  if (before.id == after.id)
    WrappedText(trf("Top-1 next token after query %d stays %s: probability %.3f → %.3f.", q,
                    TokenName(state, *run, q).c_str(), double(before.probability), double(after.probability)));
  else
    WrappedText(trf("Top-1 next token after query %d changed: %s (%.3f) → %s (%.3f).", q,
                    TokenName(state, *original, q).c_str(), double(before.probability), TokenName(state, *run, q).c_str(),
                    double(after.probability)));
  RecordLastItem(state, "checkpoint.conversion_summary");
}

void DrawConversion(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  const model::ModelConfig& cfg = c.model->config;
  ImGui::TextUnformatted(tr("Convert to GQA / MQA"));
  if (cfg.is_mla()) {
    HintText(tr("Not for multi-head latent attention: there are no K/V heads to pool. Every head's keys and values "
                "are made from one shared latent, and that latent is what the model caches."));
    return;
  }
  if (cfg.trained.active) {  // attnscope_linear (model::convert_kv_heads refuses it)
    if (!cfg.trained.layer_kinds.empty())  // a trained hybrid: softmax layers beside layers with a state
      HintText(tr("Not for a trained hybrid: its layers without a softmax keep a state per head, not a cache that "
                  "heads could share, and its softmax layers open with their own K/V heads."));
    else
      HintText(tr("Not for a model without a softmax: each head keeps its own state of keys and values, not a cache "
                  "that heads could share."));
    return;
  }
  if (cfg.qk_norm_whole) {  // OLMoE (model::convert_kv_heads refuses it)
    HintText(tr("Not for this model: its k_norm normalises all K/V heads together (one RMSNorm over the whole "
                "key projection), so pooled heads would change what that norm divides by."));
    return;
  }
  // The divisors of the checkpoint's own G: a GQA model pools further, never back.
  const std::vector<int> options = divisors(cfg.kv_heads, cfg.kv_heads);
  if (options.size() < 2) {
    HintText(tr("This checkpoint already has one K/V head (MQA): there is nothing to pool."));
    return;
  }
  int g = c.kv_heads > 0 ? c.kv_heads : cfg.kv_heads;
  ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 14, ImGui::GetContentRegionAvail().x * 0.6f));
  if (SliderChoice(tr("K/V heads"), &g, options, [&cfg](int v) {
        return v == cfg.kv_heads ? trf("%d  (%s, as trained)", v, grouping_name(cfg.heads, v))
                                 : std::to_string(v) + "  (" + grouping_name(cfg.heads, v) + ")";
      })) {
    c.kv_heads = g == cfg.kv_heads ? 0 : g;  // G itself: the checkpoint as trained
    NoteEdit(state, Panel::checkpoint);      // the worker converts; a running pass of the old G is cancelled
  }
  RecordLastItem(state, "checkpoint.kv_heads");
  HelpMarker(tr("Pools each layer's K/V heads by their mean (Ainslie et al. 2023)."));
  if (c.kv_heads == 0) return;
  DrawConversionSummary(state);
  if (state.show_analysis) return;
  if (ImGui::Button(tr("Show each head's drift (Head analysis)"))) state.show_analysis = true;
  RecordLastItem(state, "model.show_drift");
}

// The card's "what it is" rows: the few numbers a class needs (the Checkpoint window has the rest).
void DrawCardInfo(const CheckpointWindowState& c) {
  if (!BeginInfoTable("##model_card")) return;
  if (c.model) {
    const model::ModelConfig& cfg = c.model->config;
    InfoRow(tr("family"), FamilyText(cfg));
    InfoRow(tr("layers L"), std::to_string(cfg.layers));
    InfoRow(tr("query heads H"), std::to_string(cfg.heads));
    KvHeadsRow(c, cfg);
    InfoRow(tr("d_head"), std::to_string(cfg.head_dim));
  } else {
    const model::AttentionStack& s = *c.attentions;
    AttentionsRows(s);
  }
  ImGui::EndTable();
}

}  // namespace

// ---- the Model window's card -------------------------------------------------------------------------

void DrawCheckpointCard(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (CheckpointLoadingBar(state)) return;
  const bool attentions = c.attentions != nullptr;
  SectionHeader(trf(attentions ? TrKey("Attentions file: %s") : TrKey("Checkpoint: %s"),
                    (c.name().empty() ? CheckpointPathName(c.opened) : c.name()).c_str())
                    .c_str());
  RecordLastItem(state, "model.card");
  // Back to the synthetic model: first, so that it is in sight however small the window.
  if (ImGui::SmallButton((std::string(tr("Close")) + "##card_close").c_str())) CloseCheckpoint(state);
  RecordLastItem(state, "model.close_checkpoint");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("One model at a time: close the checkpoint to see and edit the synthetic model again."));
  if (!c.is_open()) {  // it failed to open: its error, and the way back
    ErrorText(std::string(tr("Error: ")) + c.error);
  } else {
    DrawCardInfo(c);
    ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 10, ImGui::GetContentRegionAvail().x * 0.6f));
    if (ImGui::SliderInt((std::string(tr("layer")) + "##card_layer").c_str(), &c.layer, 0, c.layers() - 1, "%d",
                         ImGuiSliderFlags_AlwaysClamp))
      NoteEdit(state, Panel::heads);
    RecordLastItem(state, "model.layer");
    if (!c.input_note.empty())
      NoticeText(tr("It opened on a random sequence repeated once, in its own vocabulary: the text on screen is not in it."));
    if (c.model && ViewDrawsModel(state)) DrawConversion(state);
  }
}

// ---- window ------------------------------------------------------------------------------------------

void DrawCheckpointWindow(AppState& state) {
  if (!state.show_checkpoint) return;
  PlaceNextWindow(state, Slot::checkpoint);
  if (!ImGui::Begin(WindowTitle("Checkpoint", "checkpoint").c_str(), &state.show_checkpoint)) {
    ImGui::End();
    return;
  }
  DrawOpenControls(state);
  if (state.checkpoint.model) {
    DrawModelInfo(state);
    DrawNextTokens(state);
  } else if (state.checkpoint.attentions) {
    DrawAttentionsInfo(state);
  } else if (!state.checkpoint.current()) {
    HintText(tr("No checkpoint open: the views show attnscope's seeded layer."));
    if (ImGui::Button(tr("Open the shipped induction model"))) OpenShippedInductionModel(state);
    RecordLastItem(state, "checkpoint.open_induction");
  }
  ImGui::End();
}

}  // namespace attnscope::gui
