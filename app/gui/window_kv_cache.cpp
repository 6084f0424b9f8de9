// window_kv_cache.cpp — the KV-cache and attention-parameter calculator (kv_cache.h): a preset of a
// published model or a custom row (L, H, G, d_head), sliders for the sequence length, the batch, the
// element type and the memory to fit into, and MHA / GQA / MQA side by side as bars with their bytes
// and whether they fit; below them the model's own layer types (full, sliding window with sinks, MLA, and
// the fixed-size states of Gated DeltaNet and Mamba-2 layers) as a table with the bytes each holds at the
// current sequence length, and the total; for a model whose layers stop growing (states, windows) a plot of
// its bytes against the sequence length beside the same model with every layer full attention.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

#include "attnscope/core/error.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/line_plot.h"
#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

std::string Count(int64_t n) {  // 1234567 → "1.23 × 10⁶" (no "G" or "M" next to G = kv heads)
  char buf[48];
  const double v = double(n);
  if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2f × 10⁹", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2f × 10⁶", v / 1e6);
  else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%.2f × 10³", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  return buf;
}

void UsePreset(KvCacheWindowState& k, int index) {
  k.preset = index;
  if (index < int(k.presets.size())) {
    const ModelPreset& p = k.presets[size_t(index)];
    KvCacheInput in = kv_cache_input(p);
    in.seq = p.context;
    in.batch = k.input.batch;
    in.dtype = k.input.dtype;
    in.memory_gib = k.input.memory_gib;
    k.input = in;
  } else {  // custom: the last model's sizes, every layer full attention
    KvCacheInput& in = k.input;
    in.layer_types.clear();
    in.kv_lora_rank = in.rope_dim = in.v_head_dim = in.hidden = 0;
  }
}

// The open checkpoint's L, H, G and d_head (as trained), at the longest input it was built for.
void UseCheckpoint(KvCacheWindowState& k, const CheckpointWindowState& c) {
  const model::ModelConfig& cfg = c.model->config;
  k.preset = -1;
  k.input.layers = cfg.layers;
  k.input.heads = cfg.heads;
  k.input.kv_heads = c.model->original_kv_heads;
  k.input.head_dim = cfg.head_dim;
  // Its layer types: the global layers, and the sliding-window layers of each window (Mistral, Gemma),
  // in the order they first appear; none when every layer attends to every token.
  k.input.layer_types.clear();
  for (int w : cfg.layer_window) {
    auto same = std::find_if(k.input.layer_types.begin(), k.input.layer_types.end(), [w](const KvLayerGroup& g) {
      return w > 0 ? g.kind == LayerKind::sliding && g.window == w : g.kind == LayerKind::full;
    });
    if (same == k.input.layer_types.end())
      same = k.input.layer_types.insert(k.input.layer_types.end(),
                                        KvLayerGroup{w > 0 ? LayerKind::sliding : LayerKind::full, 0, w > 0 ? int64_t(w) : 0, 0, 0, 0, 0, 0, 0});
    ++same->layers;
  }
  if (k.input.layer_types.size() == 1 && k.input.layer_types[0].kind == LayerKind::full) k.input.layer_types.clear();
  k.input.kv_lora_rank = k.input.rope_dim = k.input.v_head_dim = k.input.hidden = 0;
  if (cfg.is_mla()) {  // DeepSeek: every layer caches the latent and the rotary key
    k.input.layer_types = {KvLayerGroup{LayerKind::mla, cfg.layers, 0, 0, 0, 0, 0, 0, 0}};
    k.input.kv_lora_rank = cfg.mla.kv_lora_rank;
    k.input.rope_dim = cfg.mla.rope_dim;
    k.input.v_head_dim = cfg.mla.v_dim;
    k.input.hidden = cfg.d_model;
  }
  k.input.seq = std::max(cfg.max_positions, 1);
  k.checkpoint = c.model;
}

// Multi-head latent attention caches one latent and one rotary key per token per layer, whatever H:
// the open checkpoint's own figure, beside the MHA/GQA/MQA bars of the same heads.
void DrawLatentCache(const KvCacheInput& in, const model::ModelConfig& cfg) {
  const int64_t values = cfg.mla.kv_lora_rank + cfg.mla.rope_dim;
  const int64_t per_token = in.layers * values * bytes_per_element(in.dtype);
  NoticeText(trf("This checkpoint uses multi-head latent attention: it caches %d + %d = %lld values per token per "
                 "layer (the shared latent and rotary key), %s per token for all %lld layers, %s for %lld tokens × "
                 "%lld sequences. The bars below are plain MHA, GQA and MQA with the same heads.",
                 cfg.mla.kv_lora_rank, cfg.mla.rope_dim, (long long)values, HumanBytes(per_token).c_str(),
                 (long long)in.layers, HumanBytes(per_token * in.seq * in.batch).c_str(), (long long)in.seq,
                 (long long)in.batch));
}

// A typed value out of range is clamped with a note under the slider (SliderInt64Typed).
bool SliderInt64(const char* label, int64_t* value, int64_t min, int64_t max, bool log) {
  return SliderInt64Typed(label, value, min, max, "%lld", log ? ImGuiSliderFlags_Logarithmic : 0);
}

std::string LayerTypeName(const KvLayerGroup& g) {
  switch (g.kind) {
    case LayerKind::full: return tr("full attention");
    case LayerKind::sliding:
      return g.sinks > 0 ? trf("window %lld + %lld sinks", (long long)g.window, (long long)g.sinks)
                         : trf("window %lld", (long long)g.window);
    case LayerKind::mla: return tr("MLA latent");
    case LayerKind::linear: return tr("Gated DeltaNet state");
    case LayerKind::mamba2: return tr("Mamba-2 state");
  }
  return "?";
}

// Where the elements of one token in one layer come from: "2 × 8 × 256", "128 × (192 + 128)", "512 + 64".
std::string ElementsText(const KvCacheInput& in, const KvLayerTypeRow& row) {
  char buf[160];
  if (is_state_kind(row.group.kind)) {  // heads × d_k × d_v (Mamba-2: heads × head_dim × d_state) + conv_dim × kernel
    const KvLayerGroup& g = row.group;
    const bool linear = g.kind == LayerKind::linear;
    std::snprintf(buf, sizeof buf, "%lld×%lld×%lld\n+ %lld×%lld", (long long)g.state_heads,
                  (long long)(linear ? g.key_dim : g.value_dim), (long long)(linear ? g.value_dim : g.key_dim),
                  (long long)(row.conv_elements / g.conv_kernel), (long long)g.conv_kernel);
  } else if (row.group.kind == LayerKind::mla)
    std::snprintf(buf, sizeof buf, "%lld + %lld", (long long)in.kv_lora_rank, (long long)in.rope_dim);
  else if (in.v_head_dim > 0 && in.v_head_dim != in.head_dim)
    std::snprintf(buf, sizeof buf, "%lld × (%lld + %lld)", (long long)in.kv_heads, (long long)in.head_dim,
                  (long long)in.v_head_dim);
  else
    std::snprintf(buf, sizeof buf, "2 × %lld × %lld", (long long)in.kv_heads, (long long)in.head_dim);
  return buf;
}

// The model's own layer types: one row each with the elements a token costs in one layer and the bytes
// all these layers hold at the current sequence length, then the total against full attention.
void DrawLayerTypes(AppState& state, const KvCacheReport& report) {
  const KvCacheInput& in = report.input;
  SectionHeader(tr("KV cache by layer type"));
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("##kv_layer_types", 4, flags)) {
    ImGui::TableSetupColumn("##type", 0, 1.2f);
    ImGui::TableSetupColumn("##layers", 0, 0.6f);
    ImGui::TableSetupColumn("##elements", 0, 1.3f);
    ImGui::TableSetupColumn("##bytes", 0, 1.0f);
    // Headers that wrap (a narrow side panel, Chinese): the table's own header row would cut them.
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (const char* header : {tr("layer type"), tr("layers"), tr("elements per token"), tr("bytes")}) {
      ImGui::TableNextColumn();
      WrappedText(header);
    }
    for (const KvLayerTypeRow& row : report.layer_types) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      WrappedText(LayerTypeName(row.group));
      ImGui::TableNextColumn();
      WrappedText(std::to_string(row.group.layers));
      ImGui::TableNextColumn();
      const bool fixed = is_state_kind(row.group.kind);
      // A state costs nothing per token: its column gives the elements of one layer's whole state.
      WrappedText(fixed ? trf("state: %lld per layer", (long long)row.state_elements) : std::to_string(row.elements_per_token));
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      WrappedText(ElementsText(in, row));
      ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      WrappedText(HumanBytes(row.bytes));
      if (fixed) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        WrappedText(tr("at any length"));
        ImGui::PopStyleColor();
      }
    }
    ImGui::EndTable();
  }
  RecordLastItem(state, "kv.layer_types");
  // One sentence per state row: what one layer keeps, whatever the length.
  for (const KvLayerTypeRow& row : report.layer_types)
    if (is_state_kind(row.group.kind)) {
      WrappedText(trf("%s: %s per layer at any length (%lld layers: %s per sequence).", LayerTypeName(row.group).c_str(),
                      HumanBytes(row.state_bytes_per_layer).c_str(), (long long)row.group.layers,
                      HumanBytes(row.state_bytes_per_layer * row.group.layers).c_str()));
      RecordLastItem(state, std::string("kv.state.") + to_string(row.group.kind));
    }
  std::string total = trf("This model holds %s at %lld tokens, batch %lld.", HumanBytes(report.bytes).c_str(),
                          (long long)in.seq, (long long)in.batch);
  if (in.memory_gib > 0) total += report.fits ? tr(" It fits.") : tr(" It does not fit.");  // zh: no space
  WrappedText(total);
  RecordLastItem(state, "kv.total");
  const bool mla = std::any_of(report.layer_types.begin(), report.layer_types.end(),
                               [](const KvLayerTypeRow& r) { return r.group.kind == LayerKind::mla; });
  const bool windowed = std::any_of(report.layer_types.begin(), report.layer_types.end(),
                                    [](const KvLayerTypeRow& r) { return r.group.kind == LayerKind::sliding; });
  const bool states = std::any_of(report.layer_types.begin(), report.layer_types.end(),
                                  [](const KvLayerTypeRow& r) { return is_state_kind(r.group.kind); });
  if (states) {
    WrappedText(trf("With every layer full attention it would hold %s: %.1f times as much. The state layers stay the "
                    "same size however long the sequence; only the full-attention layers grow.",
                    HumanBytes(report.gqa.bytes).c_str(), double(report.gqa.bytes) / double(std::max<int64_t>(report.bytes, 1))));
  } else if (mla) {
    WrappedText(trf("MHA with the same heads would cache %s: %.1f times as much.", HumanBytes(report.mha.bytes).c_str(),
                    double(report.mha.bytes) / double(std::max<int64_t>(report.bytes, 1))));
  } else if (windowed) {
    WrappedText(trf("Without windows (every layer full attention) it would hold %s; windowed layers stop growing once "
                    "the sequence is longer than their window.",
                    HumanBytes(report.gqa.bytes).c_str()));
  }
}

// Bytes against the sequence length, from 0 to the current one: the model as it is, its fixed-size states
// (flat: the same bytes at every length) and the same model with every layer full attention (its own G), so
// that a hybrid's flat part and the all-softmax line's growth are seen side by side.
void DrawGrowthPlot(AppState& state, const KvCacheReport& report) {
  const KvCacheInput& in = report.input;
  const bool states = std::any_of(report.layer_types.begin(), report.layer_types.end(),
                                  [](const KvLayerTypeRow& r) { return is_state_kind(r.group.kind); });
  SectionHeader(tr("Memory against sequence length"));
  // The unit of the largest value, the all-softmax model at the current length.
  const double largest = double(std::max(report.gqa.bytes, report.bytes));
  const char* unit = largest >= 1073741824.0 ? "GiB" : largest >= 1048576.0 ? "MiB" : "KiB";
  const double scale = largest >= 1073741824.0 ? 1073741824.0 : largest >= 1048576.0 ? 1048576.0 : 1024.0;
  Series full{tr("every layer full attention"), IM_COL32(200, 50, 40, 255), {}, {}};
  Series model{tr("this model"), IM_COL32(46, 139, 87, 255), {}, {}};
  // The states' line lies close to 0 beside gigabytes of cache: its label gives its size.
  int64_t state_total = 0;
  for (const KvLayerTypeRow& row : report.layer_types)
    if (is_state_kind(row.group.kind)) state_total += row.bytes;
  Series fixed{trf("its fixed-size states: %s", HumanBytes(state_total).c_str()), IM_COL32(60, 110, 210, 255), {}, {}};
  constexpr int points = 65;
  for (int i = 0; i < points; ++i) {
    KvCacheInput at = in;
    at.seq = std::max<int64_t>(1, in.seq * i / (points - 1));  // no larger than in.seq: validated already
    at.memory_gib = 0;
    const KvCacheReport r = kv_cache_report(at);
    int64_t state_bytes = 0;
    for (const KvLayerTypeRow& row : r.layer_types)
      if (is_state_kind(row.group.kind)) state_bytes += row.bytes;
    const float x = float(at.seq);
    full.x.push_back(x), full.y.push_back(float(double(r.gqa.bytes) / scale));
    model.x.push_back(x), model.y.push_back(float(double(r.bytes) / scale));
    fixed.x.push_back(x), fixed.y.push_back(float(double(state_bytes) / scale));
  }
  std::vector<Series> series = {full, model};
  if (states) series.push_back(fixed);
  LinePlotOptions o;
  o.hover_format = "%s: %.0f → %.3g";
  ImGui::BeginGroup();  // the plot, its ticks and its legend: one record
  DrawLinePlot("##kv_growth", series, tr("tokens"), unit, ImGui::GetTextLineHeightWithSpacing() * 9, o);
  ImGui::EndGroup();
  RecordLastItem(state, "kv.growth_plot");
}

// The custom model's layer types: every layer full, N of the L layers a sliding window (with sink
// tokens beside it) and the rest full, or every layer MLA with its latent and RoPE key widths.
template <class Labelled>
void CustomLayerTypes(AppState& state, KvCacheInput& in, Labelled& labelled) {
  enum Layout { all_full, windowed, latent, gated, mamba };
  Layout layout = all_full;
  for (const KvLayerGroup& g : in.layer_types)
    if (g.kind == LayerKind::sliding) layout = windowed;
    else if (g.kind == LayerKind::mla) layout = latent;
    else if (g.kind == LayerKind::linear) layout = gated;
    else if (g.kind == LayerKind::mamba2) layout = mamba;
  const char* names[] = {tr("every layer full"), tr("sliding window"), tr("MLA latent"), tr("Gated DeltaNet + full"),
                         tr("Mamba-2 + full")};
  if (ImGui::BeginCombo(labelled(tr("layer types")), names[layout])) {
    for (int i = 0; i < 5; ++i)
      if (ImGui::Selectable(names[i], i == layout) && i != layout) {
        in.layer_types.clear();
        in.kv_lora_rank = in.rope_dim = 0;
        if (i == windowed) in.layer_types = {KvLayerGroup{LayerKind::sliding, in.layers, 4096, 0, 0, 0, 0, 0, 0}};
        if (i == latent) {
          in.layer_types = {KvLayerGroup{LayerKind::mla, in.layers, 0, 0, 0, 0, 0, 0, 0}};
          in.kv_lora_rank = 512;
          in.rope_dim = 64;
        }
        // Start from Qwen3-Next's Gated DeltaNet widths (3 of 4 layers) and from Mamba-2 widths of the usual
        // sizes (9 of 10 layers); the sliders below change them.
        if (i == gated)
          in.layer_types = {KvLayerGroup{LayerKind::linear, std::max<int64_t>(1, in.layers * 3 / 4), 0, 0, 32, 16, 128, 128, 4}};
        if (i == mamba)
          in.layer_types = {KvLayerGroup{LayerKind::mamba2, std::max<int64_t>(1, in.layers * 9 / 10), 0, 0, 128, 1, 128, 64, 4}};
        layout = Layout(i);
      }
    ImGui::EndCombo();
  }
  RecordLastItem(state, "kv.layout");
  if (layout == gated || layout == mamba) {  // N state layers, the rest full attention
    KvLayerGroup g = in.layer_types[0];
    const bool linear = layout == gated;
    SliderInt64(labelled(tr("state layers")), &g.layers, 1, in.layers, false);
    SliderInt64(labelled(tr("state heads")), &g.state_heads, 1, 512, true);
    SliderInt64(labelled(linear ? tr("key heads") : tr("groups")), &g.key_heads, 1, 512, true);
    SliderInt64(labelled(linear ? tr("d_k") : tr("d_state")), &g.key_dim, 1, 1024, true);
    SliderInt64(labelled(linear ? tr("d_v") : tr("head width")), &g.value_dim, 1, 1024, true);
    SliderInt64(labelled(tr("conv width")), &g.conv_kernel, 1, 16, false);
    g.layers = std::clamp<int64_t>(g.layers, 1, in.layers);  // L may have moved under it
    in.layer_types = {g};
    if (g.layers < in.layers) in.layer_types.push_back(KvLayerGroup{LayerKind::full, in.layers - g.layers, 0, 0, 0, 0, 0, 0, 0});
  }
  if (layout == windowed) {
    KvLayerGroup g = in.layer_types[0];
    SliderInt64(labelled(tr("window W")), &g.window, 1, int64_t(1) << 20, true);
    SliderInt64(labelled(tr("window layers")), &g.layers, 1, in.layers, false);
    SliderInt64(labelled(tr("sink tokens")), &g.sinks, 0, 1024, false);
    g.layers = std::clamp<int64_t>(g.layers, 1, in.layers);  // L may have moved under it
    in.layer_types = {g};
    if (g.layers < in.layers) in.layer_types.push_back(KvLayerGroup{LayerKind::full, in.layers - g.layers, 0, 0, 0, 0, 0, 0, 0});
  } else if (layout == latent) {
    SliderInt64(labelled(tr("kv_lora_rank")), &in.kv_lora_rank, 1, 4096, true);
    SliderInt64(labelled(tr("RoPE key width")), &in.rope_dim, 0, 512, false);
    in.layer_types = {KvLayerGroup{LayerKind::mla, in.layers, 0, 0, 0, 0, 0, 0, 0}};
  }
}

}  // namespace

std::string HumanBytes(int64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, units[u]);
  return buf;
}

void EnsureModelPresets(AppState& state) {
  KvCacheWindowState& k = state.kv_cache;
  if (k.loaded) return;
  k.loaded = true;
  try {
    k.presets = load_model_presets();
  } catch (const InputError& e) {
    k.load_error = e.what();
  }
}

void DrawKvCacheBars(AppState& state, const KvCacheReport& report, bool show_params) {
  // A model with MLA, sliding-window or state layers gets a first bar for its memory as published, above the MHA,
  // GQA and MQA it is compared with.
  bool published = false;
  std::string kinds;
  for (const KvLayerTypeRow& row : report.layer_types)
    if (row.group.kind != LayerKind::full) {
      published = true;
      const char* k = row.group.kind == LayerKind::mla       ? "MLA"
                      : row.group.kind == LayerKind::linear  ? tr("Gated DeltaNet state")
                      : row.group.kind == LayerKind::mamba2 ? tr("Mamba-2 state")
                                                              : tr("sliding window");
      if (kinds.find(k) == std::string::npos) kinds += (kinds.empty() ? "" : " + ") + std::string(k);
    }
  KvCacheVariant as_published;
  as_published.kind = "published";
  as_published.bytes = report.bytes;
  as_published.fits = report.fits;
  const KvCacheVariant* variants[] = {&as_published, &report.mha, &report.gqa, &report.mqa};
  const char* names[] = {"", "MHA", "GQA", "MQA"};
  const double memory = report.input.memory_gib * 1073741824.0;
  double largest = memory;
  for (const KvCacheVariant* v : variants) largest = std::max(largest, double(v->bytes));
  if (largest <= 0) largest = 1;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 40.0f);
  const float bar_h = ImGui::GetTextLineHeight();
  const ImU32 fits_colour = IM_COL32(46, 139, 87, 255), over_colour = IM_COL32(200, 50, 40, 255);
  for (int i = published ? 0 : 1; i < 4; ++i) {
    const KvCacheVariant& v = *variants[i];
    std::string line = i == 0 ? trf("as published (%s): %s", kinds.c_str(), HumanBytes(v.bytes).c_str())
                              : trf("%s (G = %lld): %s", names[i], static_cast<long long>(v.kv_heads), HumanBytes(v.bytes).c_str());
    if (memory > 0) line += std::string(" · ") + (v.fits ? tr("fits") : tr("does not fit"));
    if (show_params && i > 0) line += trf(" · %s attention parameters", Count(v.attention_params).c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(v.fits ? ImGui::GetColorU32(ImGuiCol_Text) : over_colour));
    ImGui::BeginGroup();
    WrappedText(line);
    ImGui::EndGroup();
    ImGui::PopStyleColor();
    RecordLastItem(state, std::string("kv.") + v.kind);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = float(double(width) * double(v.bytes) / largest);
    draw->AddRectFilled(p, ImVec2(p.x + width, p.y + bar_h), ImGui::GetColorU32(ImGuiCol_FrameBg));
    draw->AddRectFilled(p, ImVec2(p.x + std::max(w, 2.0f), p.y + bar_h), v.fits ? fits_colour : over_colour);
    if (memory > 0) {  // the memory limit as a dark line across the bar
      const float x = p.x + float(double(width) * memory / largest);
      draw->AddLine(ImVec2(x, p.y - 2), ImVec2(x, p.y + bar_h + 2), ImGui::GetColorU32(ImGuiCol_Text), 2.0f);
    }
    ImGui::Dummy(ImVec2(width, bar_h));
  }
  if (memory > 0) ImGui::TextDisabled("%s", trf("| = the memory: %s", HumanBytes(int64_t(memory)).c_str()).c_str());
}

void DrawKvCacheWindow(AppState& state) {
  if (!state.show_kv_cache) return;
  PlaceNextWindow(state, Slot::kv_cache);
  if (!ImGui::Begin(WindowTitle("KV-cache calculator", "kv_cache").c_str(), &state.show_kv_cache)) {
    ImGui::End();
    return;
  }
  EnsureModelPresets(state);
  KvCacheWindowState& k = state.kv_cache;
  ErrorText(k.load_error);
  // A closed checkpoint's numbers go with it: back to where a first start begins.
  const CheckpointWindowState& c = state.checkpoint;
  if (!c.model && k.preset < 0) k.initialised = false;
  if (!c.model) k.checkpoint.reset();
  if (!k.initialised) {
    k.initialised = true;
    k.input = KvCacheInput{32, 32, 8, 128, 4096, 1, ElementType::fp16, 80.0, {}, 0, 0, 0, 0};
    // Start from the model of the open lesson, else the first GQA preset.
    int start = int(k.presets.size());
    for (int i = 0; i < int(k.presets.size()); ++i)
      if (k.presets[size_t(i)].kv_heads != k.presets[size_t(i)].heads && k.presets[size_t(i)].kv_heads != 1) {
        start = i;
        break;
      }
    if (state.lessons.lesson >= 0 && state.lessons.lessons[size_t(state.lessons.lesson)].kv_cache) {
      const LessonKvCache& lk = *state.lessons.lessons[size_t(state.lessons.lesson)].kv_cache;
      for (int i = 0; i < int(k.presets.size()); ++i)
        if (k.presets[size_t(i)].name == lk.model) start = i;
      UsePreset(k, start);
      k.input = lk.input;
    } else {
      UsePreset(k, start);
    }
  }
  // One current model: an open checkpoint's numbers come in when it opens (or the window does).
  if (c.model && k.checkpoint.lock() != c.model) UseCheckpoint(k, c);
  WrappedText(tr("While generating, a decoder keeps the keys and values of every past token in every layer: "
                              "2 × L × G × d_head × bytes × tokens × batch."));

  // Model: a preset or the custom row.
  // The custom row's labels only count when it is shown: a preset's long name keeps the width they would take.
  float widest_label = ImGui::CalcTextSize(tr("memory (GiB)")).x;
  if (k.preset >= int(k.presets.size()))
    for (const char* label : {"layer types", "window W", "window layers", "sink tokens", "kv_lora_rank", "RoPE key width",
                              "state layers", "state heads", "key heads", "groups", "head width", "conv width"})
      widest_label = std::max(widest_label, ImGui::CalcTextSize(tr(label)).x);
  const float label_w = widest_label + ImGui::GetFontSize() * 2;
  // In a narrow column (a large UI scale) each label goes above its control, which takes the whole line.
  const bool narrow = ImGui::GetContentRegionAvail().x - label_w < ImGui::GetFontSize() * 9;
  ImGui::PushItemWidth(narrow ? -FLT_MIN : std::max(ImGui::GetContentRegionAvail().x - label_w, 80.0f));
  std::string id;
  auto labelled = [&](const char* label) {
    if (!narrow) return label;
    ImGui::TextUnformatted(label);
    id = std::string("##") + label;
    return id.c_str();
  };
  const std::string checkpoint_label = c.model ? trf("Checkpoint: %s", c.name().c_str()) : std::string();
  const std::string current = k.preset < 0                        ? checkpoint_label
                              : k.preset < int(k.presets.size()) ? k.presets[size_t(k.preset)].label
                                                                 : tr("custom");
  const char* model_label = labelled(tr("model"));
  // The preview fits the frame beside the arrow (a checkpoint's long folder name is shortened with "…").
  const float preview_w = ImGui::CalcItemWidth() - ImGui::GetFrameHeight() - ImGui::GetStyle().FramePadding.x * 2;
  const bool combo_open = ImGui::BeginCombo(model_label, Ellipsize(current, preview_w).c_str(), ImGuiComboFlags_HeightLarge);
  RecordLastItem(state, "kv.model");
  if (combo_open) {
    if (c.model && ImGui::Selectable(checkpoint_label.c_str(), k.preset < 0)) UseCheckpoint(k, c);
    for (int i = 0; i <= int(k.presets.size()); ++i) {
      const std::string name = i < int(k.presets.size()) ? k.presets[size_t(i)].label : tr("custom");
      if (ImGui::Selectable(name.c_str(), i == k.preset)) UsePreset(k, i);
      if (i < int(k.presets.size()) && ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", k.presets[size_t(i)].source.c_str());
    }
    ImGui::EndCombo();
  }
  const bool custom = k.preset >= int(k.presets.size());
  if (custom) {
    SliderInt64(labelled(tr("layers L")), &k.input.layers, 1, 256, true);
    SliderInt64(labelled(tr("heads H")), &k.input.heads, 1, 256, true);
    SliderInt64(labelled(tr("kv heads G")), &k.input.kv_heads, 1, 256, true);
    SliderInt64(labelled(tr("d_head")), &k.input.head_dim, 1, 512, true);
    CustomLayerTypes(state, k.input, labelled);
  } else {
    const KvCacheInput& in = k.input;
    WrappedText(trf("L = %lld layers, H = %lld heads, G = %lld kv heads, d_head = %lld", (long long)in.layers,
                                 (long long)in.heads, (long long)in.kv_heads, (long long)in.head_dim)
                                 .c_str());
    if (in.kv_lora_rank > 0)
      WrappedText(trf("MLA: kv_lora_rank = %lld, qk_rope_head_dim = %lld, d_v = %lld", (long long)in.kv_lora_rank,
                      (long long)in.rope_dim, (long long)(in.v_head_dim > 0 ? in.v_head_dim : in.head_dim)));
    if (k.preset < 0 && c.model && c.model->config.is_mla()) DrawLatentCache(k.input, c.model->config);
  }
  SliderInt64(labelled(tr("tokens")), &k.input.seq, 1, int64_t(1) << 20, true);
  RecordLastItem(state, "kv.seq");
  SliderInt64(labelled(tr("batch")), &k.input.batch, 1, 1024, true);
  double memory = k.input.memory_gib;
  const double mem_min = 0, mem_max = 2048;
  std::string refused;  // SliderDoubleFinite notes a typed text that is no number under the slider itself
  if (SliderDoubleFinite(labelled(tr("memory (GiB)")), &memory, mem_min, mem_max, "%.1f", refused, true)) k.input.memory_gib = memory;
  ImGui::PopItemWidth();
  ImGui::TextUnformatted(tr("element"));
  const ElementType types[] = {ElementType::fp32, ElementType::fp16, ElementType::int8};
  for (ElementType t : types) {
    SameLineIfFits(RadioWidth(to_string(t)));
    if (ImGui::RadioButton(to_string(t), k.input.dtype == t)) k.input.dtype = t;
  }
  const std::string bytes = trf("(%d bytes)", bytes_per_element(k.input.dtype));
  SameLineIfFits(ImGui::CalcTextSize(bytes.c_str()).x);
  ImGui::TextDisabled("%s", bytes.c_str());
  ImGui::TextUnformatted(tr("memory"));
  for (double gib : {16.0, 24.0, 40.0, 80.0}) {
    char label[32];
    std::snprintf(label, sizeof label, "%.0f GiB", gib);
    SameLineIfFits(ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::SmallButton(label)) k.input.memory_gib = gib;
  }

  try {
    const KvCacheReport report = kv_cache_report(k.input);
    // A model with layers of its own (windows, MLA) shows them first: that is its cache. The bars
    // below keep the grouping comparison, every layer full attention.
    const bool own_layers = !(report.layer_types.size() == 1 && report.layer_types[0].group.kind == LayerKind::full);
    if (own_layers) DrawLayerTypes(state, report);
    // Layers that stop growing (states, windows): their bytes against the length, beside all-softmax.
    if (std::any_of(report.layer_types.begin(), report.layer_types.end(), [](const KvLayerTypeRow& r) {
          return is_state_kind(r.group.kind) || r.group.kind == LayerKind::sliding;
        }))
      DrawGrowthPlot(state, report);
    SectionHeader(tr("KV cache: MHA, GQA, MQA"));
    if (own_layers) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      WrappedText(tr("These bars count every layer as full attention; the table above counts the model's own layers."));
      ImGui::PopStyleColor();
    }
    DrawKvCacheBars(state, report, true);
    WrappedText(trf("One token of one sequence costs %s with MHA, %s with GQA and %s with MQA.",
                                 HumanBytes(report.mha.bytes_per_token).c_str(),
                                 HumanBytes(report.gqa.bytes_per_token).c_str(),
                                 HumanBytes(report.mqa.bytes_per_token).c_str())
                                 .c_str());
    if (!own_layers) DrawLayerTypes(state, report);
  } catch (const InputError& e) {
    ErrorText(e.what());
  }
  ImGui::End();
}

}  // namespace attnscope::gui
