// window_training.cpp — the Training window: train a small Llama-layout transformer on a built-in
// task (core/training_worker.h runs it on a worker thread) and watch it learn. Laid out for a class:
// the buttons and a steps-per-second control (slow motion for the phase change) in a row at the top,
// the settings folded away once a run exists, then the loss curve and the chosen layer's induction
// scores on the left and that layer's heads on the probe sequence on the right, all in view at
// 1280×720 without scrolling. "Compare MHA / GQA / MQA / MLA" trains models that differ only in how they
// make keys and values (G for the grouped three, a latent for MLA; a windowed GQA run when a window is
// set) from the same seed and data: their loss curves together, each run's loss against its KV-cache
// bytes per token as a dot, and each run's heads in a band of its own under its name. "Compare without a
// softmax" trains MHA beside linear attention, retention, Mamba-2, Gated DeltaNet and a hybrid the same way, their
// dots at the memory a token costs (the fixed state ÷ T where there is no cache). Save writes a Hugging Face
// checkpoint folder. Layers and heads are counted from 0, as everywhere in attnscope.
//
// Sections: line plot · settings · runs · scripted actions · heads · window
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>

#include <GLFW/glfw3.h>

#include "attnscope/core/error.h"
#include "core/platform_download.h"
#include "core/user_path.h"
#include "core/zip_folder.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/training_windows.h"
#include "gui/line_plot.h"
#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

// ---- line plot (gui/line_plot.h) -----------------------------------------------------------------

// The mean of each block of `per` losses: a readable curve for thousands of noisy steps.
Series LossSeries(const std::vector<float>& losses, std::string label, ImU32 color, float pixels) {
  Series s{std::move(label), color, {}, {}};
  const int n = int(losses.size());
  const int per = std::max(1, int(std::ceil(float(n) / std::max(pixels, 1.0f))));
  for (int i = 0; i < n; i += per) {
    const int end = std::min(n, i + per);
    double sum = 0;
    for (int j = i; j < end; ++j) sum += losses[size_t(j)];
    s.x.push_back(float(end));
    s.y.push_back(float(sum / (end - i)));
  }
  return s;
}

void RecordRect(AppState& state, const std::string& name, ImVec2 min, ImVec2 max);

// The attention kinds as the form names them: the softmax kinds described, the ones without a softmax by
// their names (the Model window's; linear attention and retention translated, the others proper names).
const char* AttentionKindLabel(train::AttentionKind kind) {
  switch (kind) {
    case train::AttentionKind::grouped: return tr("grouped (MHA/GQA/MQA)");
    case train::AttentionKind::mla: return tr("MLA (latent KV)");
    case train::AttentionKind::linear: return tr("linear attention");
    case train::AttentionKind::retention: return tr("retention");
    case train::AttentionKind::mamba2: return "Mamba-2";
    case train::AttentionKind::deltanet: return "DeltaNet";
    case train::AttentionKind::gated_deltanet: return "Gated DeltaNet";
  }
  return "?";
}

// A hybrid's kinds: "Gated DeltaNet + softmax" (the kinds without a softmax by their labels).
std::string HybridKindLabel(const train::ModelConfig& c) {
  std::string kinds;
  for (int l = 0; l < c.layers; ++l)
    if (c.layer_softmax_free(l) && kinds.find(AttentionKindLabel(c.kind_of(l))) == std::string::npos)
      kinds += (kinds.empty() ? "" : " + ") + std::string(AttentionKindLabel(c.kind_of(l)));
  return trf("%s + softmax", kinds.c_str());
}

// The softmax layers of a hybrid, numbered from 0 ("1, 3").
std::string SoftmaxLayers(const train::ModelConfig& c) {
  std::string out;
  for (int l = 0; l < c.layers; ++l)
    if (!c.layer_softmax_free(l)) out += (out.empty() ? "" : ", ") + std::to_string(l);
  return out;
}

// The pattern choice's items: 0 every layer the attention kind, k ≥ 2 a softmax layer every k-th layer.
std::string SoftmaxEveryLabel(int k) {
  switch (k) {
    case 0: return tr("none (every layer this kind)");
    case 2: return tr("every 2nd layer");
    case 3: return tr("every 3rd layer");
    default: return tr("every 4th layer");
  }
}

// A run's short name ("MHA", "MLA", "GQA + window"): the legends of a comparison, whose full names
// stand on the run lines and over the heads.
std::string RunKind(const TrainingWindowState& t, size_t i) {
  return i < t.run_kinds.size() ? t.run_kinds[i] : t.runs[i]->label();
}

// Tick spacing of about span/4 rounded to 1, 2 or 5 times a power of ten.
double NiceStep(double span) {
  const double raw = std::max(span / 4, 1e-9), p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

// The mean of the last tenth of the losses (at least the last one); NAN without any.
float RecentLoss(const std::vector<float>& losses) {
  if (losses.empty()) return NAN;
  const size_t n = std::max<size_t>(1, losses.size() / 10);
  double sum = 0;
  for (size_t i = losses.size() - n; i < losses.size(); ++i) sum += losses[i];
  return float(sum / double(n));
}

// The memory one token of the run's T costs (train::memory_bytes_per_token_at): its KV cache per token
// (the L layers, windows counted at T), or without a softmax its fixed state divided by T.
double MemoryPerToken(const TrainingRun& run) {
  return train::memory_bytes_per_token_at(run.settings().model, run.settings().task.seq_len);
}

bool AnyWithoutSoftmax(const TrainingWindowState& t) {
  for (const auto& r : t.runs)
    if (r->settings().model.softmax_free() || r->settings().model.hybrid()) return true;
  return false;
}

// A comparison's runs as dots: x = memory per token (MemoryPerToken), y = recent loss, each dot named
// beside it. Lower left keeps quality at the least memory.
void DrawLossAgainstCache(AppState& state, const TrainingWindowState& t,
                          const std::vector<std::shared_ptr<const TrainingView>>& views, ImVec2 size) {
  const bool states = AnyWithoutSoftmax(t);
  const char* x_name = nullptr;
  if (states) {
    x_name = tr("KV or state ÷ T per token");
    ImGui::TextUnformatted(tr("Loss against memory (?)"));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s\n%s", tr("Each run's loss (the mean over its last tenth of steps) against the memory a token "
                                     "costs at the run's T. Lower left: good quality at a small memory."),
                        tr("MHA keeps K and V of every token: 2 · L · H · d_head · 4 bytes per token (float32). Without "
                           "a softmax a layer keeps a fixed state whatever T (L · H · d_head² floats; linear attention "
                           "adds its normaliser), plotted divided by T: it shrinks per token as T grows."));
  } else {
    x_name = tr("KV-cache bytes per token");
    ImGui::TextUnformatted(tr("Loss against KV cache (?)"));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s\n%s", tr("Each run's loss (the mean over its last tenth of steps) against the KV-cache bytes it "
                                     "keeps per token over all layers. Lower left: good quality at a small cache."),
                        tr("KV bytes per token (float32): 2 · L · G · d_head · 4 for MHA/GQA/MQA, L · (r_kv + d_rope) · 4 "
                           "for MLA; a window keeps W of T tokens."));
  }
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float height = std::max(size.y - ImGui::GetTextLineHeightWithSpacing(), line * 5);
  double x_max = 1;
  float lo = FLT_MAX, hi = -FLT_MAX;
  std::vector<float> loss(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    x_max = std::max(x_max, MemoryPerToken(*t.runs[i]));
    loss[i] = RecentLoss(views[i]->snapshot.losses);
    if (std::isfinite(loss[i])) lo = std::min(lo, loss[i]), hi = std::max(hi, loss[i]);
  }
  if (lo > hi) lo = 0, hi = 1;
  const float pad = std::max((hi - lo) * 0.15f, 0.05f);
  lo = std::max(0.0f, lo - pad), hi += pad;
  x_max *= 1.1;  // room for the last dot's name
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float tick_w = std::max(ImGui::CalcTextSize(TickText(hi).c_str()).x, ImGui::CalcTextSize(TickText(lo).c_str()).x);
  const ImVec2 area_min(origin.x + line * 1.3f + tick_w + 6, origin.y + line * 0.5f);
  const ImVec2 area_max(origin.x + size.x - ImGui::CalcTextSize("0000").x * 0.5f, origin.y + height - line * 2.4f);
  const float w = area_max.x - area_min.x, h = area_max.y - area_min.y;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border);
  draw->AddRectFilled(area_min, area_max, ImGui::GetColorU32(ImGuiCol_FrameBg));
  auto to_screen = [&](double x, float y) {
    return ImVec2(area_min.x + float(double(w) * x / x_max), area_max.y - h * (std::clamp(y, lo, hi) - lo) / (hi - lo));
  };
  for (int i = 0; i <= 2; ++i) {  // y ticks
    const float v = lo + (hi - lo) * float(i) / 2;
    const ImVec2 p = to_screen(0, v);
    draw->AddLine(ImVec2(area_min.x, p.y), ImVec2(area_max.x, p.y), grid);
    const std::string s = TickText(v);
    draw->AddText(ImVec2(area_min.x - 4 - ImGui::CalcTextSize(s.c_str()).x, p.y - line * 0.5f), text, s.c_str());
  }
  const double x_step = NiceStep(x_max);
  for (double v = 0; v <= x_max + 1e-9; v += x_step) {  // x ticks in bytes, at round numbers
    const ImVec2 p = to_screen(v, lo);
    draw->AddLine(ImVec2(p.x, area_min.y), ImVec2(p.x, area_max.y), grid);
    const std::string s = HumanBytes(std::llround(v));
    const float tw = ImGui::CalcTextSize(s.c_str()).x;
    draw->AddText(ImVec2(std::clamp(p.x - tw * 0.5f, area_min.x, area_max.x - tw), area_max.y + 2), text, s.c_str());
  }
  draw->AddRect(area_min, area_max, text);
  draw->AddText(ImVec2(area_min.x + (w - ImGui::CalcTextSize(x_name).x) * 0.5f, area_max.y + line + 4), text, x_name);
  const char* y_name = tr("loss");
  AddTextRotated(draw, ImVec2(origin.x, area_min.y + (h + ImGui::CalcTextSize(y_name).x) * 0.5f), text, y_name);
  draw->PushClipRect(area_min, area_max, true);
  // Dots first, then each name at the first place beside its dot that covers no dot and no name placed
  // before it (runs of a comparison often end at nearly the same loss, and their names once overlapped).
  std::vector<ImVec2> dots(views.size(), ImVec2(NAN, NAN));
  for (size_t i = 0; i < views.size(); ++i) {
    if (!std::isfinite(loss[i])) continue;
    dots[i] = to_screen(MemoryPerToken(*t.runs[i]), loss[i]);
    draw->AddCircleFilled(dots[i], line * 0.35f, SeriesColor(int(i)));
  }
  std::vector<ImRect> taken;
  for (const ImVec2& d : dots)
    if (std::isfinite(d.x)) taken.emplace_back(ImVec2(d.x - line * 0.35f, d.y - line * 0.35f), ImVec2(d.x + line * 0.35f, d.y + line * 0.35f));
  for (size_t i = 0; i < views.size(); ++i) {
    if (!std::isfinite(dots[i].x)) continue;
    const ImVec2 p = dots[i];
    const std::string name = RunKind(t, i);
    const ImVec2 ts = ImGui::CalcTextSize(name.c_str());
    auto place = [&](float dx, float dy) {  // dx > 0: right of the dot; < 0: left; dy in lines from its centre
      float x = dx >= 0 ? p.x + line * 0.5f + line * (dx - 1) : p.x - line * 0.5f - ts.x + line * (dx + 1);
      x = std::clamp(x, area_min.x + 2, std::max(area_min.x + 2, area_max.x - 2 - ts.x));  // never past the frame
      const float y = std::clamp(p.y + line * dy, area_min.y + 1, std::max(area_min.y + 1, area_max.y - 1 - ts.y));
      return ImRect(ImVec2(x, y), ImVec2(x + ts.x, y + ts.y));
    };
    // the first free place in this order, else the one that covers the least
    ImRect best;
    float least = FLT_MAX;
    for (const float dy : {-0.95f, -0.05f, -1.9f, 0.9f, -2.85f, 1.85f, -3.8f, 2.8f}) {
      for (const float dx : {1.0f, -1.0f}) {
        const ImRect r = place(dx, dy);
        float covered = 0;
        for (const ImRect& o : taken) {
          const float ox = std::min(r.Max.x, o.Max.x) - std::max(r.Min.x, o.Min.x),
                      oy = std::min(r.Max.y, o.Max.y) - std::max(r.Min.y, o.Min.y);
          if (ox > 0 && oy > 0) covered += ox * oy;
        }
        if (covered < least) best = r, least = covered;
      }
      if (least == 0) break;
    }
    taken.push_back(best);
    // a name pushed away from its dot gets a leader line in the run's colour
    const ImVec2 near(std::clamp(p.x, best.Min.x, best.Max.x), std::clamp(p.y, best.Min.y, best.Max.y));
    if (std::hypot(near.x - p.x, near.y - p.y) > line * 0.9f) draw->AddLine(p, near, SeriesColor(int(i)), 1.5f);
    draw->AddText(best.Min, text, name.c_str());
  }
  draw->PopClipRect();
  ImGui::Dummy(ImVec2(size.x, height));
  RecordRect(state, "training.loss_vs_cache", area_min, area_max);
}

// ---- settings -------------------------------------------------------------------------------------

// A task id of training_task_names() in the window's language (the ids stay the engine's and the CLI's).
const char* TaskLabel(const char* id) {
  static constexpr const char* keys[] = {TrKey("induction"), TrKey("copy"), TrKey("reverse"), TrKey("sort"), TrKey("recall"),
                                         TrKey("text")};
  for (const char* key : keys)
    if (std::strcmp(key, id) == 0) return tr(key);
  return id;
}

// A typed value is the value; one out of its range takes the nearest allowed value, with a note under
// the field (InputIntTyped). What ranges cannot say (heads dividing d_model, groups dividing heads)
// training_settings refuses at Start with a message.
void IntField(const char* label, int* value, int min, int max) { InputIntTyped(label, value, min, max); }

void DrawSettings(AppState& state, bool locked) {
  TrainingForm& f = state.training.form;
  ImGui::BeginDisabled(locked);
  const float field = ImGui::GetFontSize() * 5.5f;
  const float label_w = ImGui::GetFontSize() * 6.5f;
  const float column = field + label_w;
  auto next = [&](bool first) {
    if (!first) SameLineIfFits(column);
    ImGui::SetNextItemWidth(field);
  };
  // The same for a field whose label may be longer than a column's (it still stays on the row only if it fits).
  auto next_labeled = [&](const char* label) {
    SameLineIfFits(std::max(column, field + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x));
    ImGui::SetNextItemWidth(field);
  };
  ImGui::SetNextItemWidth(field * 1.5f);
  const auto& names = training_task_names();  // the engine's and the CLI's ids, shown translated
  if (ImGui::BeginCombo(tr("task"), TaskLabel(names[size_t(f.task)]))) {
    for (int i = 0; i < int(names.size()); ++i)
      if (ImGui::Selectable((std::string(TaskLabel(names[size_t(i)])) + "##" + names[size_t(i)]).c_str(), i == f.task))
        f.task = i;
    ImGui::EndCombo();
  }
  if (f.task == int(names.size()) - 1) {  // text: a file and its tokens
    ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - label_w, field));
    ImGui::InputTextWithHint(tr("text file"), tr("path of a UTF-8 text file"), &f.text_path);
    ImGui::Checkbox(tr("words (else characters)"), &f.words);
  }
  next(true);
  IntField(tr("layers L"), &f.layers, 1, train::max_layers);
  next(false);
  IntField(tr("d_model C"), &f.d_model, 2, train::max_d_model);
  next(false);
  // Not "heads H": that is the Model window's, of the model the other views draw; this one is the trained model's.
  IntField(tr("trained heads H"), &f.heads, 1, train::max_heads);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("The heads of the model this window trains. The Model window's heads H belong to the "
                               "model the views draw, not to this one."));
  next(false);
  IntField(tr("kv heads G"), &f.groups, 1, train::max_heads);
  SameLineIfFits(column);
  ImGui::Checkbox(tr("MLP"), &f.mlp);
  // Attention: grouped (G above), MLA with its latent and rotary widths (a sliding window for either), or a
  // kind without a softmax; the kinds in the order of the engine's one table (train::attention_kinds()).
  next(true);
  auto combo_width = [](std::initializer_list<std::string> items) {  // the longest item and the arrow
    float w = 0;
    for (const std::string& i : items) w = std::max(w, ImGui::CalcTextSize(i.c_str()).x);
    return w + ImGui::GetStyle().FramePadding.x * 2 + ImGui::GetFrameHeight();
  };
  {
    const std::vector<train::AttentionKindEntry>& kinds = train::attention_kinds();
    float w = 0;
    for (const train::AttentionKindEntry& e : kinds) w = std::max(w, combo_width({AttentionKindLabel(e.kind)}));
    ImGui::SetNextItemWidth(w);
    if (ImGui::BeginCombo(tr("attention"), AttentionKindLabel(f.attention))) {
      for (const train::AttentionKindEntry& e : kinds) {
        if (ImGui::Selectable(AttentionKindLabel(e.kind), e.kind == f.attention)) {
          f.attention = e.kind;
          if (!train::ModelConfig::softmax_free_kind(e.kind)) f.softmax_every = 0;  // a softmax kind: no hybrid
        }
        RecordLastItem(state, std::string("training.attention.") + e.name);
      }
      ImGui::EndCombo();
    }
    RecordLastItem(state, "training.attention");
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s\n%s", tr("Start trains this kind; Compare trains MHA, GQA, MQA and MLA side by side."),
                      tr("Without a softmax (linear attention, retention, Mamba-2, DeltaNet, Gated DeltaNet) every head "
                         "keeps a state of a fixed size and is drawn as its signed matrix M."));
  {  // a hybrid: softmax layers between layers of the kind above (Qwen3-Next: every 4th; Granite 4.0-H)
    const int choices[] = {0, 2, 3, 4};
    const float w = combo_width({SoftmaxEveryLabel(0), SoftmaxEveryLabel(2), SoftmaxEveryLabel(3), SoftmaxEveryLabel(4)});
    SameLineIfFits(w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(tr("softmax layers")).x);
    ImGui::SetNextItemWidth(w);
    ImGui::BeginDisabled(!train::ModelConfig::softmax_free_kind(f.attention));
    if (ImGui::BeginCombo(tr("softmax layers"), SoftmaxEveryLabel(f.softmax_every).c_str())) {
      for (const int k : choices) {
        if (ImGui::Selectable(SoftmaxEveryLabel(k).c_str(), f.softmax_every == k)) f.softmax_every = k;
        RecordLastItem(state, "training.softmax_every." + std::to_string(k));
      }
      ImGui::EndCombo();
    }
    RecordLastItem(state, "training.softmax_every");
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", tr("A hybrid, as Qwen3-Next and Granite 4.0-H are built: a softmax layer every k-th layer, "
                                 "the kind above in the others (every head its own keys and values, G = H)."));
  }
  next_labeled(tr("MLA latent r_kv"));
  IntField(tr("MLA latent r_kv"), &f.kv_rank, 1, train::max_d_model);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("The width of the latent c_KV that MLA caches per token and layer (at most d_model)."));
  next_labeled(tr("MLA rotary d_rope"));
  IntField(tr("MLA rotary d_rope"), &f.rope_dim, 2, 64);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("The rotary part of each MLA key, shared by all heads and cached beside c_KV (even)."));
  next_labeled(tr("window W"));
  IntField(tr("window W"), &f.window, 0, train::max_seq_len);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("Sliding window: query i sees keys i − W < j ≤ i only (0: no window). With a window, "
                               "Compare adds a fifth run: GQA with this window."));
  static constexpr const char* patterns[] = {"all", "local,global", "local,local,local,local,local,global"};
  auto pattern_label = [](const std::string& p) -> std::string {
    if (p == "all") return tr("every layer");
    if (p == "local,global") return tr("local, global, …");
    if (p == "local,local,local,local,local,global") return tr("5 local, 1 global");
    return p;
  };
  const float pattern_w = combo_width({pattern_label(patterns[0]), pattern_label(patterns[1]), pattern_label(patterns[2])});
  SameLineIfFits(pattern_w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(tr("windowed layers")).x);
  ImGui::SetNextItemWidth(pattern_w);
  ImGui::BeginDisabled(f.window == 0);
  if (ImGui::BeginCombo(tr("windowed layers"), pattern_label(f.window_pattern).c_str())) {
    for (const char* p : patterns)
      if (ImGui::Selectable((pattern_label(p) + "##" + p).c_str(), f.window_pattern == p)) f.window_pattern = p;
    ImGui::EndCombo();
  }
  ImGui::EndDisabled();
  next(true);
  IntField(tr("tokens T"), &f.seq_len, 4, train::max_seq_len);
  next(false);
  IntField(tr("batch"), &f.batch, 1, 1024);
  next(false);
  IntField(tr("steps"), &f.steps, 1, 10000000);
  next(false);
  InputFloatTyped(tr("learning rate"), &f.lr, 1e-6f, 1.0f, "%.4g");
  next(false);
  IntField(tr("warm-up steps"), &f.warmup, 0, 10000000);
  next(false);
  IntField(tr("seed"), &f.seed, 0, std::numeric_limits<int>::max());
  RecordLastItem(state, "training.seed");
  next(false);
  IntField(tr("refresh every"), &f.snapshot_every, 1, 100000);
  ImGui::EndDisabled();
}

// ---- runs -----------------------------------------------------------------------------------------

void Reset(TrainingWindowState& t) {
  t.runs.clear();  // each run cancels between steps and joins its thread
  t.run_kinds.clear();
  t.comparing = false;
  t.error.clear();
  t.heads.clear();
  t.heads_step = -1;
  t.shown_run = 0;
  t.open_settings = true;
}

// The run Save writes and whose step the heads report: null without runs, else t.shown_run brought
// back into range. The one way the window reaches a run by index, so no index outlives a Reset.
TrainingRun* ShownRun(TrainingWindowState& t) {
  if (t.runs.empty()) return nullptr;
  t.shown_run = std::clamp(t.shown_run, 0, int(t.runs.size()) - 1);
  return t.runs[size_t(t.shown_run)].get();
}

std::function<void()> WakeWindow() {
  return [] { glfwPostEmptyEvent(); };
}

// A run's name: its kind and what sets its KV cache ("GQA (G = 2)", "MLA (r_kv = 16, d_rope = 8)") or,
// without a softmax, its state ("Mamba-2 (state 2.0 KB)"), with its window when it has one.
std::string RunLabel(const train::ModelConfig& c) {
  if (c.hybrid())
    return trf("%s (softmax in layer %s, state %s)", HybridKindLabel(c).c_str(), SoftmaxLayers(c).c_str(),
               HumanBytes(train::state_bytes(c)).c_str());
  std::string label =
      c.softmax_free() ? trf("%s (state %s)", AttentionKindLabel(c.attention), HumanBytes(train::state_bytes(c)).c_str())
      : c.mla()        ? trf("MLA (r_kv = %d, d_rope = %d)", c.kv_lora_rank, c.rope_head_dim)
                       : trf("%s (G = %d)", train::attention_kind_name(c), c.groups);
  if (c.window > 0) {
    const std::string pattern = train::window_pattern_text(c.local_layers, c.layers);
    label += pattern == "all" ? trf(", window %d", c.window) : trf(", window %d on %s", c.window, pattern.c_str());
  }
  return label;
}

// What Start, Compare and Compare without a softmax train.
enum class Runs { one, softmax_kinds, without_softmax };

// Builds the run(s) from the form; bad settings land in t.error and nothing starts.
void StartRuns(TrainingWindowState& t, Runs which) {
  Reset(t);
  t.open_settings = false;
  try {
    train::TrainSettings s = training_settings(t.form);
    if (which != Runs::one) {
      // One OpenMP thread each: the runs share the cores evenly, and each stays deterministic.
      const std::vector<train::TrainSettings> variants = which == Runs::softmax_kinds
                                                             ? train::attention_variants(s, s.model.window > 0)
                                                             : train::no_softmax_variants(s);
      for (train::TrainSettings v : variants) {
        v.threads = 1;
        t.runs.push_back(std::make_unique<TrainingRun>(v, RunLabel(v.model), WakeWindow()));
        t.run_kinds.push_back(v.model.window > 0         ? trf("%s + window", train::attention_kind_name(v.model))
                              : v.model.hybrid()       ? std::string(tr("hybrid"))  // the plots' room is short
                              : v.model.softmax_free() ? std::string(AttentionKindLabel(v.model.attention))
                                                       : std::string(train::attention_kind_name(v.model)));
      }
      t.comparing = true;
    } else {
      t.runs.push_back(std::make_unique<TrainingRun>(s, RunLabel(s.model), WakeWindow()));
      t.run_kinds.push_back(s.model.hybrid()         ? HybridKindLabel(s.model)
                            : s.model.softmax_free() ? AttentionKindLabel(s.model.attention)
                                                     : train::attention_kind_name(s.model));
    }
    for (auto& r : t.runs) r->set_speed(t.form.speed);
    t.collapse_settings = true;  // the curve and the heads take the room now
  } catch (const InputError& e) {
    Reset(t);
    t.open_settings = false;
    t.error = e.what();
  }
}

bool AnyBusy(const TrainingWindowState& t) {
  for (const auto& r : t.runs)
    if (r->busy()) return true;
  return false;
}

const char* StateName(RunState s) {
  switch (s) {
    case RunState::paused: return TrKey("paused");
    case RunState::running: return TrKey("training");
    case RunState::finished: return TrKey("finished");
    case RunState::failed: return TrKey("failed");
  }
  return "";
}

// What the buttons and the scripted actions do, in one place. Called before anything of the frame
// reads the runs, so a Reset never leaves a reference to a run behind.
void Act(TrainingWindowState& t, const std::string& a) {
  if (a == "start") {
    if (t.runs.empty()) StartRuns(t, Runs::one);
    for (auto& r : t.runs) r->start();
  } else if (a == "compare" || a == "compare-no-softmax") {
    StartRuns(t, a == "compare" ? Runs::softmax_kinds : Runs::without_softmax);
    for (auto& r : t.runs) r->start();
  } else if (a == "pause") {
    for (auto& r : t.runs) r->pause();
  } else if (a == "step") {
    if (t.runs.empty()) StartRuns(t, Runs::one);
    for (auto& r : t.runs) r->step_once();
  } else if (a == "reset") {
    Reset(t);
  } else if (a.rfind("save:", 0) == 0 || a == "save") {
    if (a != "save") t.save_path = a.substr(5);
    const std::string folder = user_path_text(t.save_path);  // blank: nothing to save to
    if (TrainingRun* run = ShownRun(t); run && !folder.empty()) run->save(t.save_path = folder);
  } else if (a.rfind("show:", 0) == 0) {
    t.shown_run = std::atoi(a.c_str() + 5);
    ShownRun(t);
  }
}

// ---- scripted actions -------------------------------------------------------------------------------

// --train-actions: each action once every run is idle again (pause: at once, to pause a running run).
void RunScriptedActions(AppState& state) {
  TrainingWindowState& t = state.training;
  while (t.next_action < t.actions.size()) {
    const std::string& a = t.actions[t.next_action];
    if (a != "pause" && AnyBusy(t)) return;
    ++t.next_action;
    Act(t, a);
    return;  // one action per frame, so the frames between show each state
  }
}

// ---- heads -----------------------------------------------------------------------------------------

void RecordRect(AppState& state, const std::string& name, ImVec2 min, ImVec2 max) {
  const ImVec2 s = state.framebuffer_scale;
  state.layout.widgets.push_back({name, ImVec2(min.x * s.x, min.y * s.y), ImVec2(max.x * s.x, max.y * s.y)});
}

// Sends each run's newest probe heads to the GPU when they changed.
void UploadHeads(TrainingWindowState& t, const std::vector<std::shared_ptr<const TrainingView>>& views) {
  t.heads.resize(t.runs.size());
  for (size_t i = 0; i < t.runs.size(); ++i) {
    TrainingWindowState::RunHeads& u = t.heads[i];
    const TrainingView& view = *views[i];
    if (u.run == t.runs[i].get() && u.generation == view.generation) continue;
    u.textures.resize(view.heads.size());
    for (size_t l = 0; l < view.heads.size(); ++l) {
      u.textures[l].resize(view.heads[l].size());
      for (size_t h = 0; h < view.heads[l].size(); ++h) {
        const Picture& p = view.heads[l][h];
        u.textures[l][h].update(p.width, p.height, p.pixels);
      }
    }
    u.run = t.runs[i].get();
    u.generation = view.generation;
    if (int(i) == t.shown_run) {
      t.heads_step = view.snapshot.step;
      ++t.heads_refreshes;
    }
  }
}

// The heads of layer l of one run on the probe sequence, filling a region of `size`; returns the
// rectangle their images cover.
ImRect DrawLayerHeads(AppState& state, const TrainingWindowState::RunHeads& u, const TrainingView& view, int l,
                      ImVec2 size, const char* id, bool shared_bar, bool one_row, bool own_bar) {
  TrainingWindowState& t = state.training;
  const train::TrainSnapshot& s = view.snapshot;
  ImRect images(FLT_MAX, FLT_MAX, -FLT_MAX, -FLT_MAX);
  if (l < 0 || l >= int(view.heads.size()) || l >= int(u.textures.size())) return images;
  const int H = int(view.heads[size_t(l)].size());
  ImGui::BeginChild(ImGui::GetID(id), size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  HeatmapGridSpec spec;
  spec.count = H;
  spec.rows = spec.cols = view.heads[size_t(l)].empty() ? 0 : view.heads[size_t(l)][0].height;
  spec.texture = [&u, l](int h) { return u.textures[size_t(l)][size_t(h)].id(); };
  const int per_group = std::max(1, s.heads / std::max(1, s.groups));
  spec.frame_color = [per_group](int h) { return KvGroupColor(h / per_group); };
  const std::vector<std::vector<float>>& ind = s.induction;
  // One caption format for every tile: layer, head, kv group and induction score when all fit, else
  // layer, head and score, else layer and head.
  auto score = [&ind, l](int h) {
    return l < int(ind.size()) && h < int(ind[size_t(l)].size()) ? double(ind[size_t(l)][size_t(h)]) : 0.0;
  };
  // Every form names the layer and the head (the same head is "layer 1, head 0" in the Heads view and
  // the lessons), so even the shortest tells a class which head it is.
  spec.captions = [&score, per_group, l](int h, int form) {
    switch (form) {
      case 0: return trf("L%d h%d · G%d · ind. %.2f", l, h, h / per_group, score(h));
      case 1: return trf("L%d h%d · %.2f", l, h, score(h));
      case 2: return trf("L%d h%d", l, h);
      // the compact Latin form of papers, for tiles too narrow for the translated one (Chinese, five runs
      // of a comparison at 1280×720)
      default: return "L" + std::to_string(l) + " h" + std::to_string(h);
    }
  };
  spec.caption_forms = 4;
  // Token labels, but not in a comparison's two columns of bands: there the tiles are too small for the
  // tokens to be read, and the room goes to the tiles and their captions.
  if (!shared_bar || one_row) {
    spec.row_labels = &s.probe_tokens;
    spec.col_labels = &s.probe_tokens;
    spec.labels_extent = LabelExtent(s.probe_tokens, ImGui::GetFontSize() * 2);
  }
  // a hybrid's softmax layers draw probabilities (0 … 1), its other layers their signed M (view.range)
  const bool signed_layer = probe_layer_signed(s, l);
  spec.shared_range = signed_layer ? view.range : ValueRange{0.0f, 1.0f};
  if (signed_layer) spec.colormap = Colormap::diverging, spec.value_name = "M, signed (no softmax)";
  spec.masked = true;
  spec.color_bar = own_bar;  // a comparison's bands of one kind of value share one bar, drawn beside them
  // bands stacked in one column: one row of tiles per run; else as large as they fit
  spec.columns = one_row && H <= 8 ? H : 0;
  const HeatmapGridResult r = DrawHeatmapGrid(spec, t.bar, state.ui_scale, nullptr);
  for (const ImVec2& m : r.image_min) {
    images.Add(m);
    images.Add(ImVec2(m.x + r.image_size.x, m.y + r.image_size.y));
  }
  ImGui::EndChild();
  return images;
}

// Induction score over time of layer l: each head of a single run, or each run's best head of the
// layer in a comparison.
void DrawInduction(const TrainingWindowState& t, const std::vector<std::shared_ptr<const TrainingView>>& views, int l,
                   ImVec2 size) {
  std::vector<Series> series;
  if (t.comparing) {
    for (size_t i = 0; i < views.size(); ++i) {
      Series s{RunKind(t, i), SeriesColor(int(i)), {}, {}};
      for (const train::InductionPoint& p : views[i]->snapshot.induction_history)
        if (l < int(p.scores.size()) && !p.scores[size_t(l)].empty()) {
          s.x.push_back(float(p.step));
          s.y.push_back(*std::max_element(p.scores[size_t(l)].begin(), p.scores[size_t(l)].end()));
        }
      series.push_back(std::move(s));
    }
  } else {
    const train::TrainSnapshot& snap = views[0]->snapshot;
    for (int h = 0; h < snap.heads; ++h) {
      Series s{trf("h%d", h), SeriesColor(h), {}, {}};
      for (const train::InductionPoint& p : snap.induction_history)
        if (l < int(p.scores.size()) && h < int(p.scores[size_t(l)].size())) {
          s.x.push_back(float(p.step));
          s.y.push_back(p.scores[size_t(l)][size_t(h)]);
        }
      series.push_back(std::move(s));
    }
  }
  // The title wraps in a comparison's narrower column; the plot takes what is left.
  const std::string title = t.comparing ? trf("Induction score of layer %d (best head of each run)", l)
                                        : trf("Induction score of layer %d, per head", l);
  const float title_h = ImGui::CalcTextSize(title.c_str(), nullptr, false, size.x).y;
  ImGui::PushTextWrapPos(ImGui::GetCursorPos().x + size.x);
  ImGui::TextUnformatted(title.c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("The mean attention from each token of the second copy to the token after its earlier "
                               "occurrence."));
  LinePlotOptions fixed;
  fixed.y_lo = 0, fixed.y_hi = 1;
  DrawLinePlot("induction", series, tr("step"), tr("induction score"), size.y - title_h - ImGui::GetStyle().ItemSpacing.y,
               fixed);
}

}  // namespace

void ShowTrainingWith(AppState& state, const train::TrainSettings& settings) {
  TrainingWindowState& t = state.training;
  const TrainingForm form = training_form(settings, t.form);
  if (!same_training(form, t.form)) {
    Reset(t);
    t.form = form;
  }
  state.show_training = true;
}

bool TrainingBusy(const AppState& state) {
  const TrainingWindowState& t = state.training;
  return t.drawn_busy || t.next_action < t.actions.size() || AnyBusy(t);
}

void ScriptedTrainingPause(const AppState& state) {
  // A scripted run spins its frames: while the runs train, give them the cores instead of the renderer.
  if (state.scripted && AnyBusy(state.training)) std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

// ---- window ------------------------------------------------------------------------------------------

namespace {

// Start, Pause, Step, Reset, Compare and the speed, in one row at the top: they keep their places
// whatever the window shows under them. A press acts at once (Act), before the runs are read.
void DrawButtons(AppState& state) {
  TrainingWindowState& t = state.training;
  const bool has_runs = !t.runs.empty();
  const bool busy = AnyBusy(t);
  bool all_done = has_runs;
  for (const auto& r : t.runs) all_done = all_done && (r->state() == RunState::finished || r->state() == RunState::failed);
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  auto button_w = [&](const char* label) { return ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2 + spacing; };
  std::string pressed;
  ImGui::BeginDisabled(busy || all_done);
  if (ImGui::Button(tr("Start"))) pressed = "start";
  RecordLastItem(state, "training.start");
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!busy);
  if (ImGui::Button(tr("Pause"))) pressed = "pause";
  RecordLastItem(state, "training.pause");
  ImGui::EndDisabled();
  SameLineIfFits(button_w(tr("Step")));
  ImGui::BeginDisabled(busy || all_done);
  if (ImGui::Button(tr("Step"))) pressed = "step";
  RecordLastItem(state, "training.step");
  ImGui::EndDisabled();
  SameLineIfFits(button_w(tr("Reset")));
  ImGui::BeginDisabled(!has_runs && t.error.empty());
  if (ImGui::Button(tr("Reset"))) pressed = "reset";
  RecordLastItem(state, "training.reset");
  ImGui::EndDisabled();
  SameLineIfFits(button_w(tr("Compare MHA / GQA / MQA / MLA")));
  ImGui::BeginDisabled(busy);
  if (ImGui::Button(tr("Compare MHA / GQA / MQA / MLA"))) pressed = "compare";
  RecordLastItem(state, "training.compare");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", tr("Trains MHA, GQA, MQA and MLA (and GQA with the window, when one is set) from the same "
                               "seed on the same data, and plots each run's loss against its KV cache per token."));
  SameLineIfFits(button_w(tr("Compare without a softmax")));
  if (ImGui::Button(tr("Compare without a softmax"))) pressed = "compare-no-softmax";
  RecordLastItem(state, "training.compare_no_softmax");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", tr("Trains MHA, linear attention, retention, Mamba-2, Gated DeltaNet and a hybrid (Gated "
                               "DeltaNet with a softmax layer every 2nd layer) from the same seed on the same data, "
                               "everything else equal, and plots each run's loss against the memory a token costs: MHA's "
                               "KV cache per token, the others' fixed state divided by T (the hybrid: both)."));
  ImGui::EndDisabled();
  // The speed: not a training setting, so it can change while the runs train.
  const char* speed_label = tr("steps per second");
  const float slider_w = ImGui::GetFontSize() * 7;
  SameLineIfFits(slider_w + ImGui::CalcTextSize(speed_label).x + spacing * 2);
  ImGui::SetNextItemWidth(slider_w);
  std::string shown = "%d";
  if (t.form.speed == 0) {  // the words as the slider's format: a '%' in a translation stays a '%'
    shown.clear();
    for (const char* c = tr("no limit"); *c; ++c) shown += *c == '%' ? std::string("%%") : std::string(1, *c);
  }
  SliderIntTyped(speed_label, &t.form.speed, 0, max_training_speed, shown.c_str());
  RecordLastItem(state, "training.speed");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("Slow motion: at most this many steps per second (0: as fast as the computer can). "
                               "The loss curve is the same at any speed."));
  for (auto& r : t.runs) r->set_speed(t.form.speed);
  if (!pressed.empty()) Act(t, pressed);
}

// Settings, folded away while runs exist (and locked: Reset to change them).
void DrawSettingsSection(AppState& state) {
  TrainingWindowState& t = state.training;
  const bool has_runs = !t.runs.empty();
  if (t.collapse_settings || t.open_settings) ImGui::SetNextItemOpen(t.open_settings, ImGuiCond_Always);
  t.collapse_settings = t.open_settings = false;
  if (ImGui::CollapsingHeader(tr("Model and training settings"), has_runs ? 0 : ImGuiTreeNodeFlags_DefaultOpen)) {
    DrawSettings(state, has_runs);
    if (has_runs) HintText(tr("The settings are locked while there is a run: Reset to change them."));
  }
}

// One line per run: state, step, loss, speed (and in a comparison its KV cache and which run Save writes).
void DrawRunLines(TrainingWindowState& t, const std::vector<std::shared_ptr<const TrainingView>>& views) {
  for (size_t i = 0; i < t.runs.size(); ++i) {
    const TrainingRun& r = *t.runs[i];
    const train::TrainSnapshot& s = views[i]->snapshot;
    const float loss = s.losses.empty() ? NAN : s.losses.back();
    if (t.comparing) {  // state, step, loss and KV cache (the speed is the single run's: room for the heads)
      if (ImGui::RadioButton(("##show" + std::to_string(i)).c_str(), t.shown_run == int(i))) t.shown_run = int(i);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("The run Save checkpoint writes"));
      ImGui::SameLine();
      if (r.settings().model.hybrid())  // its softmax layers' cache and the others' state ÷ T
        WrappedText(trf("%s: %s · step %d / %d · loss %.3f · KV cache + state ÷ T: %s per token", r.label().c_str(),
                        tr(StateName(r.state())), s.step, s.total_steps, double(loss),
                        HumanBytes(std::llround(MemoryPerToken(r))).c_str()));
      else if (r.settings().model.softmax_free())  // no cache: its fixed state (in its label) over the T tokens
        WrappedText(trf("%s: %s · step %d / %d · loss %.3f · state ÷ T: %s per token", r.label().c_str(),
                        tr(StateName(r.state())), s.step, s.total_steps, double(loss),
                        HumanBytes(std::llround(MemoryPerToken(r))).c_str()));
      else
        WrappedText(trf("%s: %s · step %d / %d · loss %.3f · KV cache %s per token", r.label().c_str(),
                        tr(StateName(r.state())), s.step, s.total_steps, double(loss),
                        HumanBytes(std::llround(s.kv_cache_bytes_per_token_at_T)).c_str()));
    } else {
      WrappedText(trf("%s: %s · step %d / %d · loss %.3f · %.1f steps/s", r.label().c_str(), tr(StateName(r.state())),
                      s.step, s.total_steps, double(loss), s.steps_per_second));
    }
    if (r.state() == RunState::failed) ErrorText(std::string(tr("Error: ")) + r.error());
  }
}

// The browser: the page's memory is not the student's disk, so the folder just saved there is offered as
// one download, a zip of it beside the folder (one download per file would ask the student to allow
// several downloads).
void OfferSavedFolder(TrainingWindowState& t, const std::string& saved) {
  std::filesystem::path folder = std::filesystem::path(saved).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();  // "runs/window/"
  const std::filesystem::path zip = folder.string() + ".zip";
  try {
    zip_folder(folder, zip);
    offer_download(zip);
    t.save_download = zip.filename().string();
  } catch (const std::exception& e) {
    t.save_download_error = e.what();
  }
}

void DrawSaveRow(AppState& state) {
  TrainingWindowState& t = state.training;
  TrainingRun* run = ShownRun(t);
  if (!run) return;
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float button_w = ImGui::CalcTextSize(tr("Save checkpoint")).x + ImGui::GetStyle().FramePadding.x * 2;
  ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - button_w - spacing, ImGui::GetFontSize() * 6));
  ImGui::InputText("##save_path", &t.save_path);
  ImGui::SameLine();
  ImGui::BeginDisabled(AnyBusy(t) || user_path_text(t.save_path).empty());
  if (ImGui::Button(tr("Save checkpoint"))) {
    Act(t, "save");
    t.offer_save = files_are_downloads();  // the browser: offered as a download once written
    t.save_download.clear();
    t.save_download_error.clear();
  }
  ImGui::EndDisabled();
  RecordLastItem(state, "training.save");
  if (const std::string saved = run->save_result(); !saved.empty()) {
    if (t.offer_save && run->save_ok()) OfferSavedFolder(t, saved);
    t.offer_save = false;
    if (run->save_ok()) {
      HintText(trf("Saved %s: config.json, model.safetensors, vocab.json, loss.csv", saved.c_str()));
      if (!t.save_download.empty())
        HintText(trf("Offered as a download: %s, the folder as one zip file. Unzip it to open the folder in attnscope.",
                     t.save_download.c_str()));
      if (!t.save_download_error.empty()) ErrorText(std::string(tr("Error: ")) + t.save_download_error);
      // The saved folder opens like any real model (the Heads view's layers, the Model view); a model without a
      // softmax as attnscope_linear, its layers drawn as their signed matrices.
      if (ImGui::Button(tr("Open in the Checkpoint window"))) {
        OpenCheckpoint(state, saved);
        state.show_training = false;  // the view's place goes back to the Heads view, which draws the opened model
      }
      RecordLastItem(state, "training.open_saved");
    } else {
      ErrorText(std::string(tr("Error: ")) + saved);
    }
  }
}

// The loss curve, the chosen layer's heads and its induction scores, together in what is left of the
// window: the plots in a column on the left, the heads (each run's, side by side in a comparison) on
// the right; one under the other when the window is narrow.
void DrawCurvesAndHeads(AppState& state, const std::vector<std::shared_ptr<const TrainingView>>& views) {
  TrainingWindowState& t = state.training;
  const int L = views[0]->snapshot.layers;
  if (t.layer < 0 || t.layer >= L) t.layer = L - 1;  // the last layer: where induction heads form
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
  if (L > 1) {
    ImGui::SetNextItemWidth(font * 6);
    ImGui::SliderInt(tr("layer"), &t.layer, 0, L - 1, "%d", ImGuiSliderFlags_AlwaysClamp);
    RecordLastItem(state, "training.layer");
    ImGui::SameLine();
  }
  HintText(trf("Heads of layer %d on the probe sequence (a random stretch, then the same again)", t.layer));
  UploadHeads(t, views);

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool side_by_side = avail.x >= font * 40 && avail.y >= line * 12;
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  // A comparison: the loss curves over the full left column, under them the loss-against-cache dots
  // and the induction scores side by side; the left column is then half the window.
  const float left_w = side_by_side ? std::floor(avail.x * (t.comparing ? 0.5f : 0.38f)) : avail.x;
  const float plots_h = side_by_side ? avail.y : std::max(line * 24, avail.y * 0.6f);
  const float loss_h = std::floor(plots_h * (t.comparing ? 0.46f : 0.52f));
  const float lower_h = plots_h - loss_h - ImGui::GetStyle().ItemSpacing.y;

  ImGui::BeginGroup();
  const ImVec2 loss_min = ImGui::GetCursorScreenPos();
  ImGui::BeginChild("##loss", ImVec2(left_w, loss_h), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  std::vector<Series> loss_series;
  for (size_t i = 0; i < t.runs.size(); ++i) {
    // a comparison's runs, and a hybrid, by their short names (a hybrid's full one, with its softmax layers and
    // state, is longer than the plot: it stands on the run line above)
    const bool short_name = t.comparing || t.runs[i]->settings().model.hybrid();
    loss_series.push_back(LossSeries(views[i]->snapshot.losses, short_name ? RunKind(t, i) : t.runs[i]->label(),
                                     SeriesColor(int(i)), left_w));
  }
  ImGui::TextUnformatted(tr("Loss"));
  DrawLinePlot("loss", loss_series, tr("step"), tr("loss"), loss_h - line);
  ImGui::EndChild();
  RecordRect(state, "training.loss", loss_min, ImVec2(loss_min.x + left_w, loss_min.y + loss_h));
  float ind_w = left_w;
  if (t.comparing) {
    const float cache_w = std::floor((left_w - gap) * 0.5f);
    ind_w = left_w - cache_w - gap;
    ImGui::BeginChild("##loss_vs_cache", ImVec2(cache_w, lower_h), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    DrawLossAgainstCache(state, t, views, ImVec2(cache_w, lower_h));
    ImGui::EndChild();
    ImGui::SameLine(0, gap);
  }
  const ImVec2 ind_min = ImGui::GetCursorScreenPos();
  const ImVec2 ind_size(ind_w, lower_h);
  ImGui::BeginChild("##induction", ind_size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawInduction(t, views, t.layer, ind_size);
  ImGui::EndChild();
  RecordRect(state, "training.induction", ind_min, ImVec2(ind_min.x + ind_size.x, ind_min.y + ind_size.y));
  ImGui::EndGroup();
  if (side_by_side) ImGui::SameLine(0, gap);

  // Heads: one band per run, each headed by the run's name and step; four runs in two columns, five in
  // three, so each band keeps tiles large enough for their captions.
  const float heads_w = side_by_side ? avail.x - left_w - gap : avail.x;
  const float heads_h = side_by_side ? avail.y : std::max(line * 14 * float(t.runs.size()), ImGui::GetContentRegionAvail().y);
  ImGui::BeginGroup();
  const ImVec2 heads_origin = ImGui::GetCursorScreenPos();
  ImRect all(FLT_MAX, FLT_MAX, -FLT_MAX, -FLT_MAX);
  const int columns = t.runs.size() >= 5 ? 3 : t.runs.size() >= 4 ? 2 : 1;
  const int rows = (int(t.runs.size()) + columns - 1) / columns;
  const float band_h = std::floor(heads_h / float(rows));
  // Several bands share one colour bar on their right (each of its own would not fit a band's height).
  // Beside runs without a softmax (Compare without a softmax) a second bar under it: each such run's signed
  // M is coloured on the diverging map over its own ±max|M|, so that bar reads M ÷ max|M|, −1 … 1.
  const bool one_bar = t.runs.size() > 1;
  const bool signed_bar = one_bar && AnyWithoutSoftmax(t);
  const ValueRange range = views[0]->range, unit{-1.0f, 1.0f};
  const float bar_w =
      one_bar ? std::max({font * 1.4f + ColorBarLabelWidth(range, 5) + font * 0.5f,
                          font * 1.4f + (signed_bar ? ColorBarLabelWidth(unit, 5) : 0.0f) + font * 0.5f,
                          font * 0.8f + std::max({ImGui::CalcTextSize(tr("probability")).x,
                                                  signed_bar ? ImGui::CalcTextSize(tr("M ÷ max|M|")).x : 0.0f,
                                                  font * 1.2f + ImGui::CalcTextSize(tr("masked")).x}) + font * 0.3f})
              : 0.0f;
  const float band_w = std::floor((heads_w - bar_w - gap * float(columns - 1)) / float(columns));
  for (size_t i = 0; i < t.runs.size(); ++i) {
    const train::TrainSnapshot& s = views[i]->snapshot;
    ImGui::SetCursorScreenPos(ImVec2(heads_origin.x + float(int(i) % columns) * (band_w + gap),
                                     heads_origin.y + float(int(i) / columns) * band_h));
    ImGui::BeginGroup();
    // The run's full name when it fits the band, else its short name (the legends' one; the run lines above
    // give the full names), with the full name on hover.
    const std::string full = trf("%s · step %d", t.runs[i]->label().c_str(), s.step);
    const bool fits = ImGui::CalcTextSize(full.c_str()).x <= band_w;
    ImGui::TextUnformatted(fits ? full.c_str() : Ellipsize(trf("%s · step %d", RunKind(t, i).c_str(), s.step), band_w).c_str());
    if (!fits && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", full.c_str());
    const ImVec2 size(band_w, band_h - line - ImGui::GetStyle().ItemSpacing.y);
    const ImRect r = DrawLayerHeads(state, t.heads[i], *views[i], t.layer, size, ("heads" + std::to_string(i)).c_str(),
                                    t.runs.size() > 1, t.runs.size() > 1 && columns == 1, !one_bar);
    ImGui::EndGroup();
    if (r.Min.x <= r.Max.x) {
      RecordRect(state, "training.heads." + std::to_string(i), r.Min, r.Max);
      all.Add(r);
    }
  }
  ImGui::SetCursorScreenPos(heads_origin);
  ImGui::Dummy(ImVec2(heads_w - bar_w, float(rows) * band_h - ImGui::GetStyle().ItemSpacing.y));
  ImGui::EndGroup();
  if (all.Min.x <= all.Max.x) {
    RecordRect(state, "training.heads", all.Min, all.Max);
    if (one_bar) {  // beside the bands, from the first band's heads to the last's, the masked swatch under it
      ImDrawList* draw = ImGui::GetWindowDrawList();
      const float x = heads_origin.x + heads_w - bar_w + font * 0.8f, top = all.Min.y;
      const float both_h = std::max(all.Max.y - top - font * 2.0f, font * 3.0f);
      // with a second bar: each takes half the height, the second's name in the gap between them
      const float bar_h = signed_bar ? std::max((both_h - font * 2.2f) * 0.5f, font * 3.0f) : both_h;
      draw->AddText(ImVec2(x, top - font * 1.6f), ImGui::GetColorU32(ImGuiCol_TextDisabled), tr("probability"));
      DrawColorBar(draw, t.bar, Colormap::viridis, ImVec2(x, top), ImVec2(x + font * 0.9f, top + bar_h), range, 5);
      float bottom = top + bar_h;
      if (signed_bar) {
        const float top2 = bottom + font * 2.2f;
        draw->AddText(ImVec2(x, top2 - font * 1.6f), ImGui::GetColorU32(ImGuiCol_TextDisabled), tr("M ÷ max|M|"));
        DrawColorBar(draw, t.bar_signed, Colormap::diverging, ImVec2(x, top2), ImVec2(x + font * 0.9f, top2 + bar_h), unit, 5);
        bottom = top2 + bar_h;
      }
      const ImVec2 swatch(x, bottom + font * 0.8f);
      const Rgba c = masked_color(Colormap::viridis);
      draw->AddRectFilled(swatch, ImVec2(swatch.x + font * 0.9f, swatch.y + font * 0.9f), IM_COL32(c.r, c.g, c.b, 255));
      draw->AddRect(swatch, ImVec2(swatch.x + font * 0.9f, swatch.y + font * 0.9f), ImGui::GetColorU32(ImGuiCol_Border));
      draw->AddText(ImVec2(swatch.x + font * 1.2f, swatch.y - font * 0.05f), ImGui::GetColorU32(ImGuiCol_Text), tr("masked"));
    }
  }
}

}  // namespace

void DrawTrainingWindow(AppState& state) {
  TrainingWindowState& t = state.training;
  RunScriptedActions(state);
  // Asked before the views are read: when idle now, this frame shows each run's last view.
  t.drawn_busy = t.next_action < t.actions.size() || AnyBusy(t);
  if (!state.show_training) {
    // Closing the window pauses its runs (nothing trains out of sight); Start goes on from there.
    for (auto& r : t.runs)
      if (r->state() == RunState::running) r->pause();
    return;
  }
  PlaceNextWindow(state, Slot::training);
  if (!ImGui::Begin(WindowTitle("Training", "training").c_str(), &state.show_training)) {
    ImGui::End();
    return;
  }
  // 1. The buttons act first; from here on the runs stay as they are for the rest of the frame.
  DrawButtons(state);
  DrawSettingsSection(state);
  if (!t.error.empty()) ErrorText(std::string(tr("Error: ")) + t.error);
  if (t.runs.empty()) {
    HintText(tr("Start trains one model; Step does one step; Compare trains MHA, GQA, MQA and MLA on the same data "
                "and plots their loss against their KV cache. The induction task repeats random tokens with a period "
                "that changes from sequence to sequence: induction heads form after a plateau of a few hundred steps."));
    HintText(tr("Compare without a softmax trains MHA beside linear attention, retention, Mamba-2, Gated DeltaNet "
                "and a hybrid of Gated DeltaNet and softmax layers, and plots their loss against the memory a token "
                "costs. The recall task (key-value pairs, then queries) needs more steps: see README."));
    ImGui::End();
    return;
  }
  // 2. Each run's line, Save, then the curves and the heads.
  std::vector<std::shared_ptr<const TrainingView>> views;
  for (const auto& r : t.runs) views.push_back(r->view());
  DrawRunLines(t, views);
  DrawSaveRow(state);
  DrawCurvesAndHeads(state, views);
  ImGui::End();
}

nlohmann::json TrainingLayoutJson(const AppState& state) {
  const TrainingWindowState& t = state.training;
  nlohmann::json j = {{"shown", state.show_training},  {"error", t.error},         {"comparing", t.comparing},
                      {"heads_step", t.heads_step},      {"heads_refreshes", t.heads_refreshes},
                      {"heads_textures", 0},             {"runs", nlohmann::json::array()}};
  int textures = 0;
  for (const auto& run : t.heads)
    for (const auto& layer : run.textures)
      for (const GlTexture& tex : layer) textures += tex.valid() ? 1 : 0;
  j["heads_textures"] = textures;
  j["layer"] = t.layer;
  j["shown_run"] = t.shown_run;
  j["save_download"] = t.save_download;  // the browser: the zip Save checkpoint offered
  j["save_download_error"] = t.save_download_error;
  j["speed"] = t.form.speed;
  const TrainingForm& f = t.form;  // the settings form as typed (tests type into it)
  j["form"] = {{"layers", f.layers}, {"d_model", f.d_model}, {"heads", f.heads},  {"groups", f.groups},
               {"mla", f.attention == train::AttentionKind::mla},
               {"attention", train::attention_kind_word(f.attention)}, {"kv_rank", f.kv_rank}, {"rope_dim", f.rope_dim}, {"window", f.window},
               {"window_pattern", f.window_pattern}, {"softmax_every", f.softmax_every},
               {"seq_len", f.seq_len}, {"batch", f.batch},   {"steps", f.steps},  {"lr", f.lr}, {"warmup", f.warmup},
               {"seed", f.seed},     {"snapshot_every", f.snapshot_every}};
  for (const auto& r : t.runs) {
    const std::shared_ptr<const TrainingView> view = r->view();
    const train::TrainSnapshot& s = view->snapshot;
    nlohmann::json history = nlohmann::json::array();
    for (const train::InductionPoint& p : s.induction_history) history.push_back({{"step", p.step}, {"scores", p.scores}});
    j["runs"].push_back({{"label", r->label()},
                         {"state", StateName(r->state())},
                         {"error", r->error()},
                         {"save", r->save_result()},
                         {"save_ok", r->save_ok()},
                         {"step", s.step},
                         {"total_steps", s.total_steps},
                         {"losses", s.losses},
                         {"layers", s.layers},
                         {"heads", s.heads},
                         {"groups", s.groups},
                         {"kv_cache_bytes_per_token", s.kv_cache_bytes_per_token},
                         {"kv_cache_bytes_per_token_at_T", s.kv_cache_bytes_per_token_at_T},
                         {"memory_bytes_per_token_at_T", MemoryPerToken(*r)},  // the loss-against-memory plot's x
                         {"mla", s.mla},
                         {"attention", s.attention},
                         {"layer_kinds", s.layer_kinds},
                         {"probe_range", {view->range.lo, view->range.hi}},
                         {"steps_per_second", s.steps_per_second},
                         {"induction", s.induction},
                         {"induction_history", history},
                         {"probe_tokens", s.probe_tokens}});
  }
  return j;
}

}  // namespace attnscope::gui
