// window_model.cpp — the Model window: kind, d_model, heads (divisors of d_model only), groups
// (divisors of heads only; fixed for single/MHA/MQA), causal mask, score scaling, seed and the K/V
// weight source. Every change goes to the engine at once; its complaints show here. While a checkpoint is the
// current model this window is its card instead (window_checkpoint.cpp: DrawCheckpointCard). A d_model that
// the chosen H does not divide lowers H only while it must, and says so in one line; a typed d_model that
// is not offered takes the nearest offered one, with SliderChoice's one-line note.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "attnscope/attention/designed_heads.h"
#include "attnscope/scene/scene_rules.h"
#include "attnscope/core/limits.h"
#include "attnscope/attention/trace.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// A designed layer of `count` heads: the patterns kept, then the others in turn.
void ResizeDesigned(ModelSettings& m, int count) {
  const auto& all = all_designed_patterns();
  for (size_t i = m.designed.size(); i < size_t(count); ++i) m.designed.push_back(to_string(all[i % all.size()]));
  m.designed.resize(size_t(count));
}

// Keeps H | C and G | H after an edit (scene_rules.h); a designed single head keeps one pattern.
void KeepShapeValid(ModelSettings& m, int d_model) {
  if (m.weights == WeightSource::designed) {
    if (m.kind == AttentionKind::single) ResizeDesigned(m, 1);
    if (m.designed.empty()) ResizeDesigned(m, m.heads);
  }
  keep_shape_valid(m, d_model);
}

// One pattern per head, as combos two to a row, each with its description as a tooltip.
bool DrawDesignedPatterns(ModelSettings& m) {
  bool edited = false;
  const int count = m.kind == AttentionKind::single ? 1 : int(m.designed.size());
  const float width = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  for (int h = 0; h < count; ++h) {
    if (h % 2 == 1) ImGui::SameLine();
    ImGui::PushID(h);
    ImGui::SetNextItemWidth(width - ImGui::CalcTextSize("h00 ").x);
    std::string current = m.designed[size_t(h)];
    if (ImGui::BeginCombo(("h" + std::to_string(h)).c_str(), current.c_str())) {
      for (DesignedPattern p : all_designed_patterns()) {
        if (ImGui::Selectable(to_string(p), current == to_string(p)) && current != to_string(p)) {
          m.designed[size_t(h)] = to_string(p);
          edited = true;
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", designed_pattern_description(p).text(UiLanguage()).c_str());
      }
      ImGui::EndCombo();
    }
    ImGui::PopID();
  }
  return edited;
}

// MLA's ranks: the latent r_kv, the query's r_q (0: no query compression) and the rotary part d_rope.
bool DrawLatentRanks(AppState& state, ModelSettings& m, int c, int heads) {
  bool edited = false;
  // Room for the longest label and its (?) on each slider's line.
  const float label_w = std::max({ImGui::CalcTextSize(tr("latent r_kv")).x, ImGui::CalcTextSize(tr("query r_q")).x,
                                  ImGui::CalcTextSize(tr("rotary d_rope")).x}) +
                        ImGui::CalcTextSize("(?)").x + ImGui::GetFontSize() * 1.5f;
  ImGui::PushItemWidth(std::max(ImGui::GetContentRegionAvail().x - label_w, 80.0f));
  std::vector<int> ranks;
  for (int r : {2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024})
    if (r <= c) ranks.push_back(r);
  if (std::find(ranks.begin(), ranks.end(), m.kv_rank) == ranks.end() && m.kv_rank >= 1 && m.kv_rank <= c) {
    ranks.push_back(m.kv_rank);
    std::sort(ranks.begin(), ranks.end());
  }
  edited |= SliderChoice(tr("latent r_kv"), &m.kv_rank, ranks);
  RecordLastItem(state, "model.kv_rank");
  HelpMarker(tr("The width of c_KV, the latent every head's keys and values are made from: what MLA caches."));
  std::vector<int> q_ranks = {0};
  q_ranks.insert(q_ranks.end(), ranks.begin(), ranks.end());
  if (std::find(q_ranks.begin(), q_ranks.end(), m.q_rank) == q_ranks.end() && m.q_rank >= 0 && m.q_rank <= c) {
    q_ranks.push_back(m.q_rank);
    std::sort(q_ranks.begin(), q_ranks.end());
  }
  edited |= SliderChoice(tr("query r_q"), &m.q_rank, q_ranks, [](int v) { return v == 0 ? std::string(tr("none")) : std::to_string(v); });
  RecordLastItem(state, "model.q_rank");
  HelpMarker(tr("The width of c_Q, the query's own latent (DeepSeek-V2 uses one); none: q = W_Q·h."));
  std::vector<int> rope_dims;
  const int d_k = heads >= 1 ? c / heads : c;
  for (int d = 0; d <= std::min(d_k, 128); d += 2) rope_dims.push_back(d);
  edited |= SliderChoice(tr("rotary d_rope"), &m.rope_dim, rope_dims);
  RecordLastItem(state, "model.rope_dim");
  HelpMarker(tr("The decoupled rotary part of every query and of the one key all heads share: positions enter "
                "only there, since RoPE cannot be folded into the latent."));
  ImGui::PopItemWidth();
  return edited;
}

// Sliding window, StreamingLLM's sink tokens and gpt-oss's learned sink logits.
bool DrawWindowAndSinks(AppState& state, ModelSettings& m) {
  bool edited = false;
  // Room for the longer label and its (?) on the slider's line.
  const float label_w = std::max(ImGui::CalcTextSize(tr("sink tokens")).x, ImGui::CalcTextSize(tr("window W")).x) +
                        ImGui::CalcTextSize("(?)").x + ImGui::GetFontSize() * 1.5f;
  ImGui::PushItemWidth(std::max(ImGui::GetContentRegionAvail().x - label_w, 80.0f));
  std::vector<int> windows = {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  if (std::find(windows.begin(), windows.end(), m.window) == windows.end() && m.window > 0) {
    windows.push_back(m.window);
    std::sort(windows.begin(), windows.end());
  }
  if (SliderChoice(tr("window W"), &m.window, windows, [](int v) { return v == 0 ? std::string(tr("off")) : std::to_string(v); })) {
    if (m.window == 0) m.sinks = 0;
    edited = true;
  }
  RecordLastItem(state, "model.window");
  HelpMarker(tr("Sliding window: query i sees only keys i − W < j ≤ i (Mistral, Gemma, gpt-oss), so a layer caches at "
                "most W tokens. A window implies the causal mask."));
  const int tokens = state.analysis && state.analysis->attention ? int(state.analysis->attention->labels.size()) : 8;
  ImGui::BeginDisabled(m.window == 0);
  std::vector<int> sinks;
  for (int n = 0; n <= std::min(8, std::max(tokens, 1)); ++n) sinks.push_back(n);
  if (m.sinks > sinks.back()) sinks.push_back(m.sinks);
  edited |= SliderChoice(tr("sink tokens"), &m.sinks, sinks);
  RecordLastItem(state, "model.sinks");
  ImGui::EndDisabled();
  HelpMarker(tr("StreamingLLM: the first tokens stay visible to every query besides the window; they soak up the "
                "attention a query does not need elsewhere."));
  ImGui::PopItemWidth();
  return edited;
}

// Entering a kind without a softmax: what it has no use for is turned off, so that the click shows its heads
// rather than a refusal — differential attention, the window and sinks, sink logits, positions other than
// absolute and none, designed heads, the relative-position mixed mode, the scores view and the fixed 0–1 scale
// (its maps are signed).
void EnterLinearKind(Scene& scene) {
  ModelSettings& m = scene.model;
  m.differential = false;
  m.window = 0, m.sinks = 0;
  m.sink_logits = false;
  if (m.positions != PositionScheme::absolute && m.positions != PositionScheme::nope) m.positions = PositionScheme::absolute;
  if (m.weights == WeightSource::designed) m.weights = WeightSource::converted;
  scene.relpos.mixed = false;
  scene.view.show_scores = false;
  if (scene.view.scale == ScaleMode::fixed) scene.view.scale = ScaleMode::shared;
  if (scene.view.colormap == "diverging") scene.view.colormap = "viridis";
}

// The settings of a kind without a softmax: linear's normaliser, retention's decay γ; the others say where
// their gates come from.
bool DrawLinearSettings(AppState& state, ModelSettings& m) {
  bool edited = false;
  if (m.kind == AttentionKind::linear) {
    edited |= ImGui::Checkbox(tr("normaliser (rows sum to 1)"), &m.linear_normalize);
    RecordLastItem(state, "model.linear_normalize");
    HelpMarker(tr("Divide each row by Σ φ(q)·φ(k) over the keys so far, as Katharopoulos et al. do: the weights are "
                  "then positive and sum to 1, like probabilities. Without it the output grows with the length."));
  } else if (m.kind == AttentionKind::retention) {
    // γ in hundredths: 0 is the per-head schedule.
    std::vector<int> choices = {0, 50, 60, 70, 80, 85, 90, 95, 97, 99, 100};
    int hundredths = int(std::lround(m.decay * 100));
    if (std::find(choices.begin(), choices.end(), hundredths) == choices.end() || hundredths / 100.0 != m.decay) {
      hundredths = std::clamp(hundredths, 1, 100);
      choices.push_back(hundredths);
      std::sort(choices.begin(), choices.end());
    }
    const float label_w = ImGui::CalcTextSize(tr("decay γ")).x + ImGui::CalcTextSize("(?)").x + ImGui::GetFontSize() * 1.5f;
    ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - label_w, 80.0f));
    if (SliderChoice(tr("decay γ"), &hundredths, choices, [](int v) {
          char text[16];
          std::snprintf(text, sizeof text, "%.2f", v / 100.0);
          return v == 0 ? std::string(tr("per head")) : std::string(text);
        })) {
      m.decay = hundredths / 100.0;
      edited = true;
    }
    RecordLastItem(state, "model.decay");
    HelpMarker(tr("Each step back multiplies a key's weight by γ: M[t, s] = γ^(t−s)·q_t·k_s. per head: RetNet-style "
                  "decays from 0.5 (head 0, short memory) to 0.97 (the last head, long memory)."));
  }
  return edited;
}

// Where the gates of a kind without a softmax come from (a tooltip beside its state line: at 1280×720 the
// Model panel has no room for four more lines above its fold).
const char* LinearGatesNote(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::linear:
      return tr("φ(q)·φ(k) with φ = elu + 1: every weight is positive; the state adds φ(k)·vᵀ for every token.");
    case AttentionKind::retention:
      return tr("q·k with older keys decayed by γ per step; the state is multiplied by γ before each token adds its "
                "k·vᵀ.");
    case AttentionKind::mamba2:
      return tr("C = Q, B = K, x = V per head; the step Δ = softplus(x·w_Δ + b) comes from each token, and the "
                "state decays by exp(Δ·A) with A from 0.5 (head 0) to 0.97 (the last head) per unit step.");
    case AttentionKind::deltanet:
      return tr("q and k are L2-normalised; each token writes with strength β = sigmoid(x·w_β), replacing what the "
                "state recalled for its key.");
    case AttentionKind::gated_deltanet:
      return tr("The delta rule with a decay gate α = exp(g) from each token (Qwen3-Next's gate), around 0.5 for "
                "head 0 to 0.97 for the last head; β = sigmoid(x·w_β) as in DeltaNet.");
    default: return "";
  }
}

}  // namespace

void DrawModelWindow(AppState& state) {
  if (!state.show_model) return;
  PlaceNextWindow(state, Slot::model);
  if (!ImGui::Begin(WindowTitle("Model", "model").c_str(), &state.show_model)) {
    ImGui::End();
    return;
  }
  // One current model: an open (or opening, or failed) checkpoint's card replaces the synthetic settings.
  if (state.checkpoint.current()) {
    DrawCheckpointCard(state);
    ImGui::End();
    return;
  }
  ModelSettings& m = state.scene.model;
  bool edited = false, d_model_edited = false;
  ModelWindowState& ws = state.model;
  if (ws.chosen_heads == 0 || m.d_model != ws.seen_d_model || m.heads != ws.seen_heads || m.groups != ws.seen_groups ||
      m.kind != ws.seen_kind) {
    ws.chosen_heads = m.heads;
    ws.chosen_groups = m.groups;
  }
  if (state.scene.input.source == InputSource::grid)
    NoticeText(tr("These settings shape attention over a sentence (Heads, Shapes); the grid views use the relative-"
                  "position heads."));
  const bool tensor_input = state.scene.input.source == InputSource::tensor;
  // With a tensor input, C is the width of X.npy (known once the engine has read it).
  const int c = tensor_input && state.analysis && state.analysis->attention ? state.analysis->attention->shape.d_model
                                                                             : m.d_model;

  // Kind.
  ImGui::TextUnformatted(tr("Attention"));
  HelpMarker(tr("single-head: one head of width d_model.\nMHA: every head has its own K and V (G = H).\n"
                "MQA: all heads share one K and V (G = 1).\nGQA: heads in a group share K and V (1 < G < H).\n"
                "MLA: every head's K and V are made from one small latent per token (DeepSeek-V2), the only "
                "thing cached besides a shared rotary key."));
  const std::pair<AttentionKind, const char*> kinds[] = {{AttentionKind::single, tr("single")},
                                                         {AttentionKind::mha, "MHA"},
                                                         {AttentionKind::mqa, "MQA"},
                                                         {AttentionKind::gqa, "GQA"},
                                                         {AttentionKind::mla, "MLA"}};
  auto kind_radio = [&](AttentionKind kind, const char* name, bool first) {
    if (!first) SameLineIfFits(RadioWidth(name));  // a narrow column: the next line
    const bool clicked = ImGui::RadioButton(name, m.kind == kind);
    RecordLastItem(state, std::string("model.kind.") + to_string(kind));
    if (clicked && m.kind != kind) {
      const AttentionKind before = m.kind;
      m.kind = kind;
      // Entering GQA from MHA/MQA: start with two heads per group, the common choice.
      if (kind == AttentionKind::gqa && before != AttentionKind::gqa)
        m.groups = default_groups(AttentionKind::gqa, m.heads);
      if (is_linear_kind(kind)) EnterLinearKind(state.scene);
      edited = true;
    }
  };
  for (const auto& [kind, name] : kinds) kind_radio(kind, name, kind == AttentionKind::single);
  // Heads without a softmax: one combo beside MLA (their own line would push the Model panel's KV line
  // below the fold at 1280×720).
  const std::pair<AttentionKind, const char*> linear_kinds[] = {{AttentionKind::linear, tr("linear")},
                                                                {AttentionKind::retention, tr("retention")},
                                                                {AttentionKind::mamba2, "Mamba-2"},
                                                                {AttentionKind::deltanet, "DeltaNet"},
                                                                {AttentionKind::gated_deltanet, "Gated DeltaNet"}};
  const char* preview = tr("without a softmax…");
  float combo_w = ImGui::CalcTextSize(preview).x;
  for (const auto& [kind, name] : linear_kinds) {
    combo_w = std::max(combo_w, ImGui::CalcTextSize(name).x);
    if (m.kind == kind) preview = name;
  }
  combo_w += ImGui::GetFrameHeight() + ImGui::GetStyle().FramePadding.x * 2;
  SameLineIfFits(combo_w + ImGui::CalcTextSize("(?)").x + ImGui::GetFontSize());
  ImGui::SetNextItemWidth(combo_w);
  if (ImGui::BeginCombo("##without_softmax", preview)) {
    for (const auto& [kind, name] : linear_kinds) {
      const bool clicked = ImGui::Selectable(name, m.kind == kind);
      RecordLastItem(state, std::string("model.kind.") + to_string(kind));
      if (clicked && m.kind != kind) {
        m.kind = kind;
        EnterLinearKind(state.scene);
        edited = true;
      }
    }
    ImGui::EndCombo();
  }
  RecordLastItem(state, "model.kind.without_softmax");
  HelpMarker(tr("Without a softmax: each of these keeps a state of fixed size instead of a growing cache, and is "
                "still a T×T matrix applied to the values, drawn signed (its rows do not sum to 1):\n"
                "linear: φ(q)·φ(k) with φ = elu + 1 (Katharopoulos et al. 2020).\n"
                "retention: the same products, older keys decayed by γ per step (RetNet).\n"
                "Mamba-2: a decay and a step Δ that depend on the input (Dao & Gu 2024).\n"
                "DeltaNet: each token overwrites what the state recalls for its key (the delta rule).\n"
                "Gated DeltaNet: the delta rule with a decay gate (Qwen3-Next, Kimi Linear)."));
  const bool linear = is_linear_kind(m.kind);

  const float label_w = std::max(ImGui::CalcTextSize("d_model C ").x, ImGui::CalcTextSize(tr("heads H")).x + ImGui::GetFontSize() * 0.5f);
  ImGui::PushItemWidth(std::max(ImGui::GetContentRegionAvail().x - label_w - ImGui::GetFontSize(), 60.0f));

  // d_model: the common widths, plus whatever the scene holds.
  std::vector<int> widths = {8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096};
  if (std::find(widths.begin(), widths.end(), m.d_model) == widths.end() && m.d_model >= 1 &&
      m.d_model <= limits::max_d_model) {
    widths.push_back(m.d_model);
    std::sort(widths.begin(), widths.end());
  }
  const bool designed = m.weights == WeightSource::designed;
  if (designed) {
    ImGui::TextUnformatted(trf("d_model C = 64·H = %d", designed_d_model(effective_heads(m))).c_str());
    HelpMarker(tr("Designed heads have d_k = 64 each: they read positions and token features from a designed embedding."));
  } else if (tensor_input) {
    ImGui::TextUnformatted(trf("d_model C = %d (the width of X.npy)", c).c_str());
  } else {
    const int d_model_before = m.d_model;
    const bool dragged = SliderChoice(tr("d_model C"), &m.d_model, widths);
    RecordLastItem(state, "model.d_model");
    if (dragged || m.d_model != d_model_before) {
      // H and G as chosen by hand, lowered only as far as this C needs (KeepShapeValid below).
      if (ws.chosen_heads > 0) m.heads = ws.chosen_heads;
      if (ws.chosen_groups > 0) m.groups = ws.chosen_groups;
      d_model_edited = true;
      edited = true;
    }
  }

  // Heads: only divisors of C.
  const bool single = m.kind == AttentionKind::single;
  ImGui::BeginDisabled(single);
  int shown_heads = single ? 1 : effective_heads(m);
  if (designed) {
    // One pattern per head: any count from 1 to 16 (a typed value outside takes the nearer end, with a note).
    if (SliderIntTyped(tr("heads H"), &shown_heads, 1, 16) && !single) {
      ResizeDesigned(m, std::clamp(shown_heads, 1, 16));
      edited = true;
    }
  } else if (SliderChoice(tr("heads H"), &shown_heads, divisors(c, limits::max_heads)) && !single) {
    m.heads = shown_heads;
    edited = true;
  }
  ImGui::EndDisabled();

  // Groups: only divisors of H, and only GQA chooses them.
  if (edited) KeepShapeValid(m, tensor_input ? c : m.d_model);
  const int heads = effective_heads(m);
  const bool groups_free = m.kind == AttentionKind::gqa;
  ImGui::BeginDisabled(!groups_free);
  int shown_groups = effective_groups(m);
  const char* note = m.kind == AttentionKind::mha   ? "  (MHA: G = H)"
                     : m.kind == AttentionKind::mqa ? "  (MQA: G = 1)"
                     : m.kind == AttentionKind::mla ? "  (MLA: G = H)"
                     : m.kind == AttentionKind::gqa ? ""
                     : linear                       ? tr("  (each head its own state: G = H)")
                                                    : tr("  (single head)");
  if (SliderChoice(tr("groups G"), &shown_groups, divisors(heads, heads), note) && groups_free) {
    m.groups = shown_groups;
    edited = true;
  }
  ImGui::EndDisabled();
  ImGui::PopItemWidth();
  if (edited) KeepShapeValid(m, tensor_input ? c : m.d_model);
  // Only a d_model edit keeps the chosen H and G apart from the shown ones; any other edit chooses anew.
  if (edited && !d_model_edited) {
    ws.chosen_heads = m.heads;
    ws.chosen_groups = m.groups;
  }
  // What a width did to H and G, said for as long as it holds rather than done silently.
  if (!designed && !tensor_input && m.kind != AttentionKind::single && m.heads != ws.chosen_heads)
    NoticeText(trf("heads H = %d, not the %d chosen: H must divide d_model %d.", m.heads, ws.chosen_heads, m.d_model));
  else if (!designed && m.kind == AttentionKind::gqa && m.groups != ws.chosen_groups)
    NoticeText(trf("groups G = %d, not the %d chosen: G must divide H = %d.", m.groups, ws.chosen_groups, m.heads));

  if (m.kind == AttentionKind::mla) edited |= DrawLatentRanks(state, m, c, heads);
  if (linear) edited |= DrawLinearSettings(state, m);
  const int groups = effective_groups(m);
  if (linear && heads >= 1 && c % heads == 0) {
    const int d = c / heads;
    WrappedText(trf("d_k = d_v = C/H = %d · state %d×%d per head", d, d, d));
    HelpMarker(LinearGatesNote(m.kind));
    WrappedText(trf("State %lld B per layer at any length (MHA's KV cache: %lld B/token)",
                    static_cast<long long>(int64_t(heads) * d * d * 4),
                    static_cast<long long>(kv_cache_bytes_per_token(heads, d, 4))));
  } else if (m.kind == AttentionKind::mla && heads >= 1 && c % heads == 0) {
    WrappedText(trf("d_k = C/H = %d per head, plus %d rotary dimensions", c / heads, m.rope_dim));
    WrappedText(trf("KV cache %lld B/token (MHA %lld B)", static_cast<long long>(int64_t(m.kv_rank + m.rope_dim) * 4),
                    static_cast<long long>(kv_cache_bytes_per_token(heads, c / heads, 4))));
  } else if (heads >= 1 && c % heads == 0 && groups >= 1 && heads % groups == 0) {
    WrappedText(heads / groups == 1 ? trf("d_k = C/H = %d · 1 head per K/V group", c / heads)
                                    : trf("d_k = C/H = %d · %d heads per K/V group", c / heads, heads / groups));
    const int64_t kv = kv_cache_bytes_per_token(groups, c / heads, 4);
    const int64_t kv_mha = kv_cache_bytes_per_token(heads, c / heads, 4);
    if (groups != heads)
      WrappedText(trf("KV cache %lld B/token (MHA %lld B)", static_cast<long long>(kv), static_cast<long long>(kv_mha)));
    else
      WrappedText(trf("KV cache %lld B/token (fp32)", static_cast<long long>(kv)));
  }

  // Positions next, before the mask and the variants: at 1280×720 the Model panel's fold comes after them.
  ImGui::Separator();
  if (DrawPositionControls(state, m)) edited = true;
  ImGui::Separator();
  // A sliding window implies the causal mask: shown ticked and fixed while a window is on.
  const bool causal_implied = m.window > 0 || linear;
  bool causal_shown = m.causal || causal_implied;
  ImGui::BeginDisabled(causal_implied);
  if (ImGui::Checkbox(tr("causal mask"), &causal_shown) && !causal_implied) {
    m.causal = causal_shown;
    edited = true;
  }
  ImGui::EndDisabled();
  HelpMarker(linear ? tr("Heads without a softmax are causal by nature: their state holds only the tokens so far.")
                    : tr("A query may only look at itself and earlier tokens: key j > query i gets −∞ before the "
                         "softmax, so its probability is exactly 0."));
  edited |= ImGui::Checkbox(tr("divide scores by √d_k"), &m.scale_scores);
  HelpMarker(linear ? tr("Retention and the delta rules scale each query by 1/√d_k; linear attention and Mamba-2 do "
                         "not use it.")
                    : tr("Turn it off to see the softmax saturate: without the scaling, larger d_k gives sharper rows."));
  ImGui::BeginDisabled(linear);
  edited |= ImGui::Checkbox(tr("learned sink logits"), &m.sink_logits);
  ImGui::EndDisabled();
  RecordLastItem(state, "model.sink_logits");
  HelpMarker(tr("gpt-oss: every head has one learned logit that joins each row's softmax, so a row may give part of "
                "its mass to no token. The Heads view shows that share as a strip above the heads."));
  ImGui::BeginDisabled(m.kind == AttentionKind::mla || m.kind == AttentionKind::single || linear);
  if (ImGui::Checkbox(tr("differential attention"), &m.differential)) {
    // Its maps are signed: the fixed 0–1 scale is for probabilities, so the shared one takes over.
    if (m.differential && state.scene.view.scale == ScaleMode::fixed) state.scene.view.scale = ScaleMode::shared;
    edited = true;
  }
  RecordLastItem(state, "model.differential");
  ImGui::EndDisabled();
  HelpMarker(tr("Each head computes two softmax maps from two halves of its query and key and subtracts the second, "
                "times a learned λ, from the first (Ye et al. 2025): noise common to both cancels. The maps can be "
                "negative and are drawn on a diverging scale. Not with MLA or a single head."));
  ImGui::BeginDisabled(linear);
  edited |= DrawWindowAndSinks(state, m);
  ImGui::EndDisabled();
  ImGui::Separator();

  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  const uint64_t one = 1;
  if (ImGui::InputScalar((std::string(tr("seed")) + "###seed").c_str(), ImGuiDataType_U64, &m.seed, &one, &one, "%llu")) edited = true;
  ImGui::SameLine();
  if (ImGui::Button(tr("new seed"))) {
    m.seed = std::random_device{}() % 100000;
    edited = true;
  }

  ImGui::TextUnformatted(tr("K/V weights"));
  HelpMarker(tr("converted: one MHA weight set per seed, with the K and V heads of each group mean-pooled "
                "(Ainslie et al. 2023) — so MHA, GQA and MQA differ only in the sharing.\n"
                "independent: random weights drawn at the grouped shape.\n"
                "loaded: wq.npy wk.npy wv.npy wo.npy from a folder (PyTorch nn.Linear layout).\n"
                "designed: one textbook pattern per head, built from the sample embeddings."));
  const std::pair<WeightSource, const char*> sources[] = {{WeightSource::converted, TrKey("converted (MHA base)")},
                                                          {WeightSource::independent, TrKey("independent")},
                                                          {WeightSource::loaded, TrKey("loaded (folder)")},
                                                          {WeightSource::designed, TrKey("designed patterns")}};
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1.0f);
  const char* current = "";
  for (const auto& [source, name] : sources)
    if (m.weights == source) current = tr(name);
  if (ImGui::BeginCombo("##kv_source", current)) {
    for (const auto& [source, name] : sources)
      if (ImGui::Selectable(tr(name), m.weights == source) && m.weights != source) {
        if (source == WeightSource::loaded) {
          if (state.model.weights_dir.empty()) state.model.weights_dir = m.weights_dir;
          m.weights_dir = state.model.weights_dir;
        }
        if (source == WeightSource::designed && state.scene.input.source != InputSource::text) {
          state.scene.input.source = InputSource::text;  // designed heads read a sentence
        }
        m.weights = source;
        if (source == WeightSource::designed) KeepShapeValid(m, m.d_model);
        edited = true;
      }
    ImGui::EndCombo();
  }
  if (m.weights == WeightSource::loaded) {
    if (state.model.weights_dir.empty() && !m.weights_dir.empty()) state.model.weights_dir = m.weights_dir;
    ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 4, 60.0f));
    ImGui::InputTextWithHint("##weights_dir", "folder with wq.npy …", &state.model.weights_dir);
    ImGui::SameLine();
    if (ImGui::Button(tr("Load"))) {
      m.weights_dir = state.model.weights_dir;
      edited = true;
    }
  }

  if (m.weights == WeightSource::designed) edited |= DrawDesignedPatterns(m);

  if (edited) NoteEdit(state, Panel::model);
  ErrorText(ErrorFor(state, Panel::model));
  ws.seen_d_model = m.d_model, ws.seen_heads = m.heads, ws.seen_groups = m.groups, ws.seen_kind = m.kind;
  ImGui::End();
}

}  // namespace attnscope::gui
