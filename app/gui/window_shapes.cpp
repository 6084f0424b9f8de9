// window_shapes.cpp — the Shapes window: the engine's shape trace as a table (step, formula, symbolic
// and live shape), the parameter counts, the KV-cache bytes per token, and what changed since the
// previous setting ("groups: 8 → 2", "split kv heads: [8, 6, 8] → [2, 6, 8]").
// One current model: with a checkpoint current the trace is its layer's (its C, H, G, d_k, T, RoPE and
// biases); while it opens or runs, or when it failed, that stands in place of the trace, never the
// synthetic model's. An attentions file holds only probabilities: the steps before them are said to be
// unknown rather than traced.
#include <cstdio>
#include <string>

#include "attnscope/attention/trace.h"
#include "gui/i18n.h"
#include "gui/token_sets.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

std::string Symbolic(const TraceStep& step) {
  std::string s = "[";
  for (size_t i = 0; i < step.dims.size(); ++i) s += (i ? ", " : "") + step.dims[i];
  return s + "]";
}

std::string WithThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "−" + out : out;
}

std::string Bytes(int64_t n) {
  char buf[48];
  if (n < 1024) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(n));
  else if (n < 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", double(n) / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.1f MiB", double(n) / (1024.0 * 1024.0));
  return buf;
}

void AddSettingChange(std::vector<std::string>& out, const char* name, const std::string& before, const std::string& after) {
  if (before != after) out.push_back(std::string(name) + ": " + before + " → " + after);
}

}  // namespace

void NoteAnalysisChange(ShapesWindowState& shapes, const Analysis* before, const Analysis& after) {
  if (!before || !before->attention || !after.attention) return;  // keep the last comparison
  std::vector<std::string> settings, changed_shapes;
  const ModelSettings &a = before->scene.model, &b = after.scene.model;
  const TraceShape &sa = before->attention->trace.shape, &sb = after.attention->trace.shape;
  AddSettingChange(settings, tr("kind"), to_string(a.kind), to_string(b.kind));
  AddSettingChange(settings, tr("d_model C"), std::to_string(sa.d_model), std::to_string(sb.d_model));
  AddSettingChange(settings, tr("heads H"), std::to_string(a.heads), std::to_string(b.heads));
  AddSettingChange(settings, tr("groups G"), std::to_string(a.groups), std::to_string(b.groups));
  AddSettingChange(settings, tr("tokens T"), std::to_string(sa.tokens), std::to_string(sb.tokens));
  AddSettingChange(settings, tr("causal"), a.causal ? tr("on") : tr("off"), b.causal ? tr("on") : tr("off"));
  AddSettingChange(settings, tr("seed"), std::to_string(a.seed), std::to_string(b.seed));
  AddSettingChange(settings, tr("K/V weights"), to_string(a.weights), to_string(b.weights));

  const Trace &ta = before->attention->trace, &tb = after.attention->trace;
  for (const TraceStep& sb : tb.steps) {
    const TraceStep* sa = nullptr;
    for (const TraceStep& s : ta.steps)
      if (s.key == sb.key) sa = &s;
    if (!sa) changed_shapes.push_back(trf("%s: new step %s", TraceStepName(sb), format_shape(sb.shape).c_str()));
    else if (sa->shape != sb.shape)
      changed_shapes.push_back(std::string(TraceStepName(sb)) + ": " + format_shape(sa->shape) + " → " + format_shape(sb.shape));
  }
  for (const TraceStep& sa : ta.steps) {
    bool still = false;
    for (const TraceStep& s : tb.steps) still = still || s.key == sa.key;
    if (!still) changed_shapes.push_back(trf("%s: step gone", TraceStepName(sa)));
  }
  if (ta.params.total() != tb.params.total())
    changed_shapes.push_back(std::string(tr("parameters: ")) + WithThousands(ta.params.total()) + " → " + WithThousands(tb.params.total()));
  if (ta.kv_bytes_per_token_fp32 != tb.kv_bytes_per_token_fp32)
    changed_shapes.push_back(std::string(tr("KV cache per token (fp32): ")) + Bytes(ta.kv_bytes_per_token_fp32) + " → " +
                             Bytes(tb.kv_bytes_per_token_fp32));
  if (settings.empty() && changed_shapes.empty()) return;  // e.g. only the view changed
  shapes.setting_changes = std::move(settings);
  shapes.shape_changes = std::move(changed_shapes);
}

namespace {

// What stands in place of the trace while the current checkpoint has none to show: its opening, its error,
// or a spinner until its first pass arrives. Returns false when its trace is there.
bool DrawInPlaceOfCheckpointTrace(AppState& state) {
  if (CheckpointLoadingBar(state)) return true;
  if (const std::string error = CurrentCheckpointError(state); !error.empty()) {
    ErrorText(std::string(tr("Error: ")) + error);
    return true;
  }
  if (!AnalysisOfCurrentModel(state) || !state.analysis->attention) {
    SpinnerText(tr("running the model…"));
    return true;
  }
  return false;
}

void DrawParameters(const Trace& trace, ImGuiTableFlags flags) {
  const TraceShape& s = trace.shape;
  SectionHeader(tr("Parameters"));
  if (!ImGui::BeginTable("params", 3, flags)) return;
  ImGui::TableSetupColumn(tr("weight"));
  ImGui::TableSetupColumn(tr("count"));
  ImGui::TableSetupColumn(tr("formula"));
  ImGui::TableHeadersRow();
  auto row = [](const char* name, int64_t count, const std::string& formula) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(name);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(WithThousands(count).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(formula.c_str());
  };
  const std::string c = std::to_string(s.d_model), h = std::to_string(s.heads), g = std::to_string(s.groups),
                    d = std::to_string(s.head_dim);
  if (s.kv_latent > 0) {  // MLA: the down- and up-projections (each latent's RMSNorm weight counted with it)
    const std::string r = std::to_string(s.kv_latent), rq = std::to_string(s.q_latent), R = std::to_string(s.rope_dim),
                      n = std::to_string(s.head_dim - s.rope_dim), v = std::to_string(s.v_dim);
    if (s.q_latent > 0) row("W_DQ, W_UQ", trace.params.wq, "C·r_q + r_q + r_q·H·d_k = " + c + "·" + rq + " + " + rq + " + " + rq + "·" + h + "·" + d);
    else row("W_Q", trace.params.wq, "C·H·d_k = " + c + "·" + h + "·" + d);
    row("W_DKV", trace.params.wk, "C·(r + d_R) + r = " + c + "·(" + r + " + " + R + ") + " + r);
    row("W_UKV", trace.params.wv, "r·H·(d_N + d_v) = " + r + "·" + h + "·(" + n + " + " + v + ")");
    row("W_O", trace.params.wo, "H·d_v·C = " + h + "·" + v + "·" + c);
    row(tr("total"), trace.params.total(), "");
    ImGui::EndTable();
    return;
  }
  if (s.conv_kernel > 0 && s.linear == "mamba2") {  // a checkpoint's Mamba-2: in_proj's parts, groups of B and C
    const std::string p = std::to_string(s.v_dim), K = std::to_string(s.conv_kernel);
    const int64_t I = s.heads * s.v_dim, channels = I + 2 * s.groups * s.head_dim;
    row("W_x", trace.params.wv, "C·H·P = " + c + "·" + h + "·" + p);
    row("W_B, W_C", trace.params.wq + trace.params.wk, "2·C·G·N = 2·" + c + "·" + g + "·" + d);
    row("W_z", s.d_model * I, "C·H·P = " + c + "·" + h + "·" + p);
    row(tr("gates"), s.d_model * s.heads + 3 * s.heads, "C·H + 3·H  (W_dt, dt_bias, A_log, D)");
    const int64_t conv = trace.params.other - s.d_model * I - s.d_model * s.heads - 3 * s.heads - I;
    const bool bias = conv > channels * s.conv_kernel;  // conv1d.bias: one more number per channel
    row(tr("convolution"), conv, bias ? "(H·P + 2·G·N)·(K + 1) = " + std::to_string(channels) + "·" + std::to_string(s.conv_kernel + 1)
                                      : "(H·P + 2·G·N)·K = " + std::to_string(channels) + "·" + K);
    row(tr("gated norm"), I, "H·P = " + std::to_string(I));
    row("W_O", trace.params.wo, "H·P·C = " + h + "·" + p + "·" + c);
    row(tr("total"), trace.params.total(), "");
    ImGui::EndTable();
    return;
  }
  if (s.conv_kernel > 0) {  // a checkpoint's Gated DeltaNet: Hk key heads, Hv value heads, d_v, the convolution
    const std::string v = std::to_string(s.v_dim), K = std::to_string(s.conv_kernel);
    row("W_Q", trace.params.wq, "C·Hk·d_k = " + c + "·" + g + "·" + d);
    row("W_K", trace.params.wk, "C·Hk·d_k = " + c + "·" + g + "·" + d);
    row("W_V", trace.params.wv, "C·Hv·d_v = " + c + "·" + h + "·" + v);
    row("W_O", trace.params.wo, "Hv·d_v·C = " + h + "·" + v + "·" + c);
    row("W_z", s.d_model * s.heads * s.v_dim, "C·Hv·d_v = " + c + "·" + h + "·" + v);
    row(tr("gates"), 2 * s.d_model * s.heads + 2 * s.heads, "2·C·Hv + 2·Hv  (W_b, W_a, A_log, dt_bias)");
    const int64_t channels = 2 * s.groups * s.head_dim + s.heads * s.v_dim;
    row(tr("convolution"), channels * s.conv_kernel, "(2·Hk·d_k + Hv·d_v)·K = " + std::to_string(channels) + "·" + K);
    row(tr("gated norm"), s.v_dim, "d_v = " + v);
    row(tr("total"), trace.params.total(), "");
    ImGui::EndTable();
    return;
  }
  row("W_Q", trace.params.wq, "C·H·d_k = " + c + "·" + h + "·" + d);
  row("W_K", trace.params.wk, "C·G·d_k = " + c + "·" + g + "·" + d);
  row("W_V", trace.params.wv, "C·G·d_k = " + c + "·" + g + "·" + d);
  row("W_O", trace.params.wo, "C·H·d_k = " + c + "·" + h + "·" + d);
  if (trace.params.biases > 0) {
    std::string formula = s.qkv_bias ? "H·d_k + 2·G·d_k" : "";
    if (s.o_bias) formula += formula.empty() ? "C" : " + C";
    row(tr("biases"), trace.params.biases, formula);
  }
  if (trace.params.other > 0) {
    // Heads without a softmax: their gates' weights (linear_layer.h); differential attention: its λ vectors and norm.
    const std::string& k = s.linear;
    // a trained layer's A_log [H] beside them (TraceShape::trained_a_log)
    const bool a_log = s.trained_a_log;
    const std::string formula =
        k == "deltanet"         ? "H·C = " + h + "·" + c + "  (w_β)"
        : k == "gated-deltanet" ? (a_log ? "2·H·C + 2·H = 2·" + h + "·" + c + " + 2·" + h + "  (w_β, w_a, b_a, A_log)"
                                         : "2·H·C + H = 2·" + h + "·" + c + " + " + h + "  (w_β, w_a, b_a)")
        : k == "mamba2"         ? (a_log ? "H·C + 3·H = " + h + "·" + c + " + 3·" + h + "  (w_Δ, b_Δ, A_log, D)"
                                         : "H·C + 2·H = " + h + "·" + c + " + 2·" + h + "  (w_Δ, b_Δ, D)")
                                : "";
    row(k.empty() ? tr("λ vectors and the norm") : tr("gates"), trace.params.other, formula);
  }
  row(tr("total"), trace.params.total(), "");
  ImGui::EndTable();
}

// `layers`: a checkpoint's layers of the kind on screen (0: the seeded layer); `hybrid`: the checkpoint also
// has layers of the other kind (softmax beside Gated DeltaNet).
void DrawKvCache(const Trace& trace, int layers, bool hybrid) {
  const TraceShape& s = trace.shape;
  if (s.conv_kernel > 0 && s.linear == "mamba2") {  // a checkpoint's Mamba-2: S per head and the conv's last inputs
    SectionHeader(tr("State per layer (fixed size)"));
    const int64_t channels = s.heads * s.v_dim + 2 * s.groups * s.head_dim;
    ImGui::TextUnformatted(trf("H·P·N + (K − 1)·(H·P + 2·G·N) = %d·%d·%d + %d·%lld = %lld numbers, whatever the length",
                               int(s.heads), int(s.v_dim), int(s.head_dim), int(s.conv_kernel - 1),
                               static_cast<long long>(channels), static_cast<long long>(trace.state_bytes_fp32 / 4))
                               .c_str());
    ImGui::Text("fp32: %s   fp16: %s", Bytes(trace.state_bytes_fp32).c_str(), Bytes(trace.state_bytes_fp16).c_str());
    if (layers > 0)
      WrappedText(trf("All %d Mamba-2 layers: %s (fp32) at any length; only the attention layers keep a KV cache that "
                      "grows with the input.",
                      layers, Bytes(trace.state_bytes_fp32 * layers).c_str()));
    return;
  }
  if (s.conv_kernel > 0) {  // a checkpoint's Gated DeltaNet: S per value head and the convolution's last inputs
    SectionHeader(tr("State per layer (fixed size)"));
    const int64_t channels = 2 * s.groups * s.head_dim + s.heads * s.v_dim;
    ImGui::TextUnformatted(trf("Hv·d_k·d_v + (K − 1)·(2·Hk·d_k + Hv·d_v) = %d·%d·%d + %d·%lld = %lld numbers, whatever the length",
                               int(s.heads), int(s.head_dim), int(s.v_dim), int(s.conv_kernel - 1),
                               static_cast<long long>(channels), static_cast<long long>(trace.state_bytes_fp32 / 4))
                               .c_str());
    ImGui::Text("fp32: %s   fp16: %s", Bytes(trace.state_bytes_fp32).c_str(), Bytes(trace.state_bytes_fp16).c_str());
    if (layers > 0)
      WrappedText(trf("All %d Gated DeltaNet layers: %s (fp32) at any length; only the softmax layers keep a KV cache "
                      "that grows with the input.",
                      layers, Bytes(trace.state_bytes_fp32 * layers).c_str()));
    return;
  }
  if (!s.linear.empty()) {  // heads without a softmax keep a state, not a cache
    SectionHeader(tr("State per layer (fixed size)"));
    ImGui::TextUnformatted(trf("H·d_k·d_v = %d·%d·%d = %lld numbers, whatever the length", int(s.heads), int(s.head_dim),
                               int(s.head_dim), static_cast<long long>(s.heads * s.head_dim * s.head_dim)).c_str());
    ImGui::Text("fp32: %s   fp16: %s", Bytes(trace.state_bytes_fp32).c_str(), Bytes(trace.state_bytes_fp16).c_str());
    const int64_t mha = kv_cache_bytes_per_token(int(s.heads), int(s.head_dim), 4);
    WrappedText(trf("MHA with the same H would cache %s per token (fp32): %s for these %d tokens.", Bytes(mha).c_str(),
                    Bytes(mha * s.tokens).c_str(), int(s.tokens)));
    return;
  }
  SectionHeader(tr("KV cache per token, per layer"));
  if (s.kv_latent > 0) {  // MLA caches the latent and the rotary key, shared by every head
    WrappedText(trf("r + d_R = %d + %d = %lld numbers: one latent and one rotary key, shared by the %d heads",
                    int(s.kv_latent), int(s.rope_dim), static_cast<long long>(s.kv_latent + s.rope_dim), int(s.heads)));
    ImGui::Text("fp32: %s   fp16: %s", Bytes(trace.kv_bytes_per_token_fp32).c_str(), Bytes(trace.kv_bytes_per_token_fp16).c_str());
    WrappedText(trf("MHA with the same H would need %s (fp32): H·(d_k + d_v) = %lld numbers.",
                    Bytes(s.heads * (s.head_dim + s.v_dim) * 4).c_str(), static_cast<long long>(s.heads * (s.head_dim + s.v_dim))));
  } else {
    ImGui::TextUnformatted(trf("2·G·d_k = 2·%d·%d = %lld numbers", int(s.groups), int(s.head_dim),
                               static_cast<long long>(2ll * s.groups * s.head_dim)).c_str());
    ImGui::Text("fp32: %s   fp16: %s", Bytes(trace.kv_bytes_per_token_fp32).c_str(), Bytes(trace.kv_bytes_per_token_fp16).c_str());
  }
  if (s.groups != s.heads && s.kv_latent == 0) {
    const int64_t mha = kv_cache_bytes_per_token(int(s.heads), int(s.head_dim), 4);
    ImGui::TextUnformatted(
        trf("MHA with the same H would need %s (fp32): G/H = %d/%d of it.", Bytes(mha).c_str(), int(s.groups), int(s.heads)).c_str());
  }
  ImGui::TextUnformatted(trf("For these %d tokens: %s (fp32)", int(s.tokens), Bytes(trace.kv_bytes_per_token_fp32 * s.tokens).c_str()).c_str());
  const std::string per_token = Bytes(trace.kv_bytes_per_token_fp32 * layers),
                    all_tokens = Bytes(trace.kv_bytes_per_token_fp32 * layers * s.tokens);
  if (layers > 0 && hybrid)  // a checkpoint: every softmax layer keeps its own cache (a hybrid's other layers none)
    ImGui::TextUnformatted(trf("All %d softmax layers: %s per token, %s for these %d tokens (fp32)", layers,
                               per_token.c_str(), all_tokens.c_str(), int(s.tokens)).c_str());
  else if (layers > 0)
    ImGui::TextUnformatted(trf("All %d layers: %s per token, %s for these %d tokens (fp32)", layers, per_token.c_str(),
                               all_tokens.c_str(), int(s.tokens)).c_str());
}

}  // namespace

void DrawShapesWindow(AppState& state, bool floating) {
  if (floating) {
    if (!state.show_shapes_floating) return;
    PlaceNextWindow(state, Slot::shapes_side);
  } else {
    PlaceNextWindow(state, Slot::view);
  }
  bool* open = floating ? &state.show_shapes_floating : nullptr;
  if (!ImGui::Begin(WindowTitle("Shapes", floating ? "shapes_floating" : "shapes").c_str(), open)) {
    ImGui::End();
    return;
  }
  if (!floating) state.layout.view = to_string(View::shapes);
  BusyIndicator(state);
  if (!floating) TokenSetNotDrawnNote(state, "shapes");
  const CheckpointWindowState& c = state.checkpoint;
  const bool checkpoint = c.current();
  if (checkpoint) {
    if (LongInputNotice(state, TrKey("Shapes")) || DrawInPlaceOfCheckpointTrace(state)) {
      ImGui::End();
      return;
    }
  } else if (state.scene.input.source == InputSource::grid) {
    ImGui::TextWrapped("%s", tr("The shape trace follows grouped attention over a sentence or a tensor; the input is a 2D grid."));
    ImGui::End();
    return;
  } else {
    if (!state.error.empty()) ErrorText(trf("The engine refused the newest settings (see the %s window): ",
                                            tr(panel_title(state.error_panel))) +
                                        state.error);
    if (!AnalysisOfCurrentModel(state) || !state.analysis->attention) {
      ImGui::End();
      return;
    }
  }
  const AttentionAnalysis& att = *state.analysis->attention;
  const Trace& trace = att.trace;
  const TraceShape& s = trace.shape;
  if (checkpoint) {
    // The checkpoint's layer on screen (the layer slider may be ahead of it), as the Heads view names it.
    std::string note = c.name();
    if (const ModelLayerRun* run = c.run.get()) note += " · " + trf("layer %d of %d", run->layer, run->layers);
    WrappedText(note);  // wrapped: Shapes beside the view is a narrow column
    if (s.conv_kernel > 0 && s.linear == "mamba2")  // Mamba-2: heads of width P, groups of B and C of the state's width N
      WrappedText(trf("L = %d · T = %d tokens · C = %d · H = %d Mamba heads · P = %d · G = %d groups of B, C · N = %d · K = %d",
                      c.layers(), int(s.tokens), int(s.d_model), int(s.heads), int(s.v_dim), int(s.groups),
                      int(s.head_dim), int(s.conv_kernel)));
    else if (s.conv_kernel > 0)  // Gated DeltaNet: key heads serve value heads, keys and values have their own widths
      WrappedText(trf("L = %d · T = %d tokens · C = %d · Hk = %d key heads · Hv = %d value heads · d_k = %d · d_v = %d · K = %d",
                      c.layers(), int(s.tokens), int(s.d_model), int(s.groups), int(s.heads), int(s.head_dim),
                      int(s.v_dim), int(s.conv_kernel)));
    else if (trace.projections_known)
      WrappedText(trf("L = %d · T = %d tokens · C = %d · H = %d · G = %d · d_k = %d", c.layers(), int(s.tokens), int(s.d_model),
                      int(s.heads), int(s.groups), int(s.head_dim)));
    else
      WrappedText(trf("L = %d · T = %d tokens · H = %d · G = %d", c.layers(), int(s.tokens), int(s.heads), int(s.groups)));
  } else {
    WrappedText(trf("T = %d tokens · C = %d · H = %d · G = %d · d_k = %d", int(s.tokens), int(s.d_model), int(s.heads),
                    int(s.groups), int(s.head_dim)));
  }

  // What changed since the previous setting, first: it is what the lesson is about.
  if (!state.shapes.setting_changes.empty() || !state.shapes.shape_changes.empty()) {
    SectionHeader(tr("What changed"));
    for (const std::string& line : state.shapes.setting_changes) ImGui::BulletText("%s", line.c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(213, 94, 0, 255));
    for (const std::string& line : state.shapes.shape_changes) ImGui::BulletText("%s", line.c_str());
    ImGui::PopStyleColor();
  }

  SectionHeader(tr("Shape trace"));
  if (!trace.projections_known)
    NoticeText(tr("An attentions file holds only the attention probabilities: the projections before them, d_k and C "
                  "cannot be traced, nor the parameters or the KV cache."));
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("trace", 4, flags)) {
    ImGui::TableSetupColumn(tr("step"), ImGuiTableColumnFlags_WidthStretch, 1.5f);
    ImGui::TableSetupColumn(tr("formula"), ImGuiTableColumnFlags_WidthStretch, 1.5f);
    // Shapes do not wrap: their columns fit them, and the step and formula columns (which wrap) share the rest.
    ImGui::TableSetupColumn(tr("shape"), ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn(tr("numbers"), ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    for (const TraceStep& step : trace.steps) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      WrappedText(TraceStepName(step));  // a narrow column (Shapes beside the view) wraps the name
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", TraceStepFormula(step));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(Symbolic(step).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_shape(step.shape).c_str());
    }
    ImGui::EndTable();
  }
  if (trace.projections_known) {
    DrawParameters(trace, flags);
    int same = 0;  // the checkpoint's layers of the kind on screen (a hybrid's softmax or Gated DeltaNet layers)
    bool hybrid = false;
    if (checkpoint && c.model) {
      const model::ModelConfig& m = c.model->config;
      for (int l = 0; l < m.layers; ++l) same += m.is_linear_layer(l) == att.linear;
      hybrid = same < m.layers;
    } else if (checkpoint) {
      same = c.layers();
    }
    DrawKvCache(trace, same, hybrid);
  }
  ImGui::End();
}

}  // namespace attnscope::gui
