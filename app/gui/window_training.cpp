// window_training.cpp — the Training window: train a small Llama-layout transformer on a built-in
// task (core/training_worker.h runs it on a worker thread) and watch it learn — the loss curve, every
// layer's heads on a fixed probe sequence, each head's induction score over time, steps per second.
// "Compare MHA / GQA / MQA" trains three models that differ only in G from the same seed and data and
// draws their loss curves together, each with its KV-cache bytes per token. Save writes a Hugging
// Face checkpoint folder.
//
// Sections: line plot · settings · runs · scripted actions · heads · window
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <GLFW/glfw3.h>

#include "attnscope/core/error.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/training_windows.h"
#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

// ---- line plot -----------------------------------------------------------------------------------

struct Series {
  std::string label;
  ImU32 color = 0;
  std::vector<float> x, y;  // [points]
};

// Colours of the series: the kv-group palette, so run and head colours read the same everywhere.
ImU32 SeriesColor(int i) { return KvGroupColor(i); }

std::string TickText(float v) {
  char buf[32];
  const float a = std::fabs(v);
  if (a != 0 && (a >= 1e5f || a < 1e-3f)) std::snprintf(buf, sizeof buf, "%.1e", double(v));
  else if (a >= 100) std::snprintf(buf, sizeof buf, "%.0f", double(v));
  else if (a >= 10) std::snprintf(buf, sizeof buf, "%.1f", double(v));
  else std::snprintf(buf, sizeof buf, "%.2f", double(v));
  return buf;
}

// A line plot drawn with the draw list: a framed area, 5 y ticks and 5 x ticks with numbers in the
// UI font (readable on a projector at any UI scale), the axis names, and a legend under it that
// wraps. Fixed y range when y_lo < y_hi, else the data's.
void DrawLinePlot(const char* id, const std::vector<Series>& series, const char* x_name, const char* y_name,
                  float height, float y_lo = 0, float y_hi = 0) {
  ImGui::PushID(id);
  float x_max = 1, lo = FLT_MAX, hi = -FLT_MAX;
  for (const Series& s : series) {
    for (float x : s.x) x_max = std::max(x_max, x);
    for (float y : s.y)
      if (std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
  }
  if (y_lo < y_hi) lo = y_lo, hi = y_hi;
  if (lo > hi) lo = 0, hi = 1;
  if (hi - lo < 1e-6f) hi = lo + 1;
  const float pad = (hi - lo) * 0.05f;
  if (!(y_lo < y_hi)) lo = lo >= 0 ? std::max(0.0f, lo - pad) : lo - pad, hi += pad;  // a loss never goes below 0

  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const float tick_w = std::max(ImGui::CalcTextSize(TickText(hi).c_str()).x, ImGui::CalcTextSize(TickText(lo).c_str()).x);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 120.0f);
  // y name rotated on the far left, the tick numbers, then the plot area; x ticks and name below it.
  const ImVec2 area_min(origin.x + line * 1.3f + tick_w + 6, origin.y + line * 0.5f);
  const ImVec2 area_max(origin.x + width - ImGui::CalcTextSize("0000").x * 0.5f, origin.y + height - line * 2.4f);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border);
  draw->AddRectFilled(area_min, area_max, ImGui::GetColorU32(ImGuiCol_FrameBg));
  const float w = area_max.x - area_min.x, h = area_max.y - area_min.y;
  auto to_screen = [&](float x, float y) {
    return ImVec2(area_min.x + w * x / x_max, area_max.y - h * (std::clamp(y, lo, hi) - lo) / (hi - lo));
  };
  for (int i = 0; i <= 4; ++i) {  // y ticks
    const float v = lo + (hi - lo) * float(i) / 4;
    const ImVec2 p = to_screen(0, v);
    draw->AddLine(ImVec2(area_min.x, p.y), ImVec2(area_max.x, p.y), grid);
    const std::string t = TickText(v);
    draw->AddText(ImVec2(area_min.x - 4 - ImGui::CalcTextSize(t.c_str()).x, p.y - line * 0.5f), text, t.c_str());
  }
  for (int i = 0; i <= 4; ++i) {  // x ticks: whole steps
    const float v = std::round(x_max * float(i) / 4);
    const ImVec2 p = to_screen(v, lo);
    draw->AddLine(ImVec2(p.x, area_min.y), ImVec2(p.x, area_max.y), grid);
    const std::string t = std::to_string(int(v));
    const float tw = ImGui::CalcTextSize(t.c_str()).x;
    draw->AddText(ImVec2(std::clamp(p.x - tw * 0.5f, area_min.x, area_max.x - tw), area_max.y + 2), text, t.c_str());
  }
  draw->AddRect(area_min, area_max, text);
  const float x_name_w = ImGui::CalcTextSize(x_name).x;
  draw->AddText(ImVec2(area_min.x + (w - x_name_w) * 0.5f, area_max.y + line + 4), text, x_name);
  AddTextRotated(draw, ImVec2(origin.x, area_min.y + (h + ImGui::CalcTextSize(y_name).x) * 0.5f), text, y_name);
  draw->PushClipRect(area_min, area_max, true);
  for (const Series& s : series) {
    std::vector<ImVec2> points;
    points.reserve(s.x.size());
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      if (std::isfinite(s.y[i])) points.push_back(to_screen(s.x[i], s.y[i]));
    if (points.size() >= 2) draw->AddPolyline(points.data(), int(points.size()), s.color, 0, std::max(1.5f, line * 0.12f));
    else if (points.size() == 1) draw->AddCircleFilled(points[0], line * 0.2f, s.color);
  }
  draw->PopClipRect();
  ImGui::Dummy(ImVec2(width, height));
  // Legend: a colour swatch and the label of each series, wrapping.
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const float item_w = line + ImGui::CalcTextSize(s.label.c_str()).x + ImGui::GetStyle().ItemSpacing.x;
    if (i > 0) SameLineIfFits(item_w);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    draw->AddRectFilled(ImVec2(p.x, p.y + line * 0.3f), ImVec2(p.x + line * 0.7f, p.y + line * 0.7f), s.color);
    ImGui::Dummy(ImVec2(line * 0.8f, line));
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(s.label.c_str());
  }
  ImGui::PopID();
}

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

// ---- settings -------------------------------------------------------------------------------------

// A task id of training_task_names() in the window's language (the ids stay the engine's and the CLI's).
const char* TaskLabel(const char* id) {
  static constexpr const char* keys[] = {TrKey("induction"), TrKey("copy"), TrKey("reverse"), TrKey("sort"), TrKey("text")};
  for (const char* key : keys)
    if (std::strcmp(key, id) == 0) return tr(key);
  return id;
}

// Out-of-range values are not clamped silently: training_settings refuses them with a message.
void IntField(const char* label, int* value) { ImGui::InputInt(label, value, 0, 0); }

void DrawSettings(TrainingWindowState& t, bool locked) {
  TrainingForm& f = t.form;
  ImGui::BeginDisabled(locked);
  const float field = ImGui::GetFontSize() * 5.5f;
  const float label_w = ImGui::GetFontSize() * 6.5f;
  const float column = field + label_w;
  auto next = [&](bool first) {
    if (!first) SameLineIfFits(column);
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
  IntField(tr("layers L"), &f.layers);
  next(false);
  IntField(tr("d_model C"), &f.d_model);
  next(false);
  IntField(tr("heads H"), &f.heads);
  next(false);
  IntField(tr("kv heads G"), &f.groups);
  SameLineIfFits(column);
  ImGui::Checkbox(tr("MLP"), &f.mlp);
  next(true);
  IntField(tr("tokens T"), &f.seq_len);
  next(false);
  IntField(tr("batch"), &f.batch);
  next(false);
  IntField(tr("steps"), &f.steps);
  next(false);
  ImGui::InputFloat(tr("learning rate"), &f.lr, 0, 0, "%.4g");
  next(false);
  IntField(tr("seed"), &f.seed);
  next(false);
  IntField(tr("refresh every"), &f.snapshot_every);
  ImGui::EndDisabled();
}

// ---- runs -----------------------------------------------------------------------------------------

void Reset(TrainingWindowState& t) {
  t.runs.clear();  // each run cancels between steps and joins its thread
  t.comparing = false;
  t.error.clear();
  t.textures.clear();
  t.uploaded_run = nullptr;
  t.uploaded_generation = 0;
  t.heads_step = -1;
  t.shown_run = 0;
}

std::function<void()> WakeWindow() {
  return [] { glfwPostEmptyEvent(); };
}

// Builds the run(s) from the form; bad settings land in t.error and nothing starts.
void StartRuns(TrainingWindowState& t, bool compare) {
  Reset(t);
  try {
    train::TrainSettings s = training_settings(t.form);
    if (compare) {
      // One OpenMP thread each: three runs share the cores evenly, and each stays deterministic.
      for (train::TrainSettings v : train::group_variants(s)) {
        v.threads = 1;
        t.runs.push_back(std::make_unique<TrainingRun>(
            v, trf("%s (G = %d)", grouping_name(v.model.heads, v.model.groups), v.model.groups), WakeWindow()));
      }
      t.comparing = true;
    } else {
      t.runs.push_back(std::make_unique<TrainingRun>(s, trf("G = %d", s.model.groups), WakeWindow()));
    }
  } catch (const InputError& e) {
    Reset(t);
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

// ---- scripted actions -------------------------------------------------------------------------------

// --train-actions: each action once every run is idle again (pause: at once, to pause a running run).
void RunScriptedActions(AppState& state) {
  TrainingWindowState& t = state.training;
  while (t.next_action < t.actions.size()) {
    const std::string& a = t.actions[t.next_action];
    if (a != "pause" && AnyBusy(t)) return;
    ++t.next_action;
    if (a == "start") {
      if (t.runs.empty()) StartRuns(t, false);
      for (auto& r : t.runs) r->start();
    } else if (a == "compare") {
      StartRuns(t, true);
      for (auto& r : t.runs) r->start();
    } else if (a == "pause") {
      for (auto& r : t.runs) r->pause();
    } else if (a == "step") {
      if (t.runs.empty()) StartRuns(t, false);
      for (auto& r : t.runs) r->step_once();
    } else if (a == "reset") {
      Reset(t);
    } else if (a.rfind("save:", 0) == 0) {
      t.save_path = a.substr(5);
      if (!t.runs.empty()) t.runs[size_t(t.shown_run)]->save(t.save_path);
    } else if (a.rfind("show:", 0) == 0) {
      t.shown_run = std::clamp(std::atoi(a.c_str() + 5), 0, std::max(0, int(t.runs.size()) - 1));
    }
    return;  // one action per frame, so the frames between show each state
  }
}

// ---- heads -----------------------------------------------------------------------------------------

void UploadHeads(TrainingWindowState& t, const TrainingRun& run, const TrainingView& view) {
  if (t.uploaded_run == &run && t.uploaded_generation == view.generation) return;
  t.textures.resize(view.heads.size());
  for (size_t l = 0; l < view.heads.size(); ++l) {
    t.textures[l].resize(view.heads[l].size());
    for (size_t h = 0; h < view.heads[l].size(); ++h) {
      const Picture& p = view.heads[l][h];
      t.textures[l][h].update(p.width, p.height, p.pixels);
    }
  }
  t.uploaded_run = &run;
  t.uploaded_generation = view.generation;
  t.heads_step = view.snapshot.step;
  ++t.heads_refreshes;
}

void DrawHeads(AppState& state, const TrainingView& view) {
  TrainingWindowState& t = state.training;
  const train::TrainSnapshot& s = view.snapshot;
  const float label_cap = ImGui::GetFontSize() * 3;
  const float extent = LabelExtent(s.probe_tokens, label_cap);
  for (int l = 0; l < int(view.heads.size()); ++l) {
    ImGui::TextUnformatted(trf("Layer %d", l + 1).c_str());
    const float width = ImGui::GetContentRegionAvail().x;
    const int H = int(view.heads[size_t(l)].size());
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float height = std::clamp((width - extent - line * 4) / float(std::max(H, 1)) + extent + line * 2.5f,
                                    line * 6, line * 22);
    ImGui::BeginChild(ImGui::GetID(("layer" + std::to_string(l)).c_str()), ImVec2(width, height), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    HeatmapGridSpec spec;
    spec.count = H;
    spec.rows = spec.cols = view.heads[size_t(l)].empty() ? 0 : view.heads[size_t(l)][0].height;
    spec.texture = [&t, l](int h) { return t.textures[size_t(l)][size_t(h)].id(); };
    const int per_group = std::max(1, s.heads / std::max(1, s.groups));
    spec.frame_color = [per_group](int h) { return KvGroupColor(h / per_group); };
    const std::vector<std::vector<float>>& ind = s.induction;
    spec.captions = [&ind, l, per_group](int h, int form) {
      const float score = l < int(ind.size()) && h < int(ind[size_t(l)].size()) ? ind[size_t(l)][size_t(h)] : 0.0f;
      return form == 0 ? trf("h%d · G%d · ind. %.2f", h, h / per_group, double(score)) : trf("h%d", h);
    };
    spec.caption_forms = 2;
    spec.row_labels = &s.probe_tokens;
    spec.col_labels = &s.probe_tokens;
    spec.labels_extent = extent;
    spec.shared_range = view.range;
    spec.masked = true;
    spec.columns = H;
    DrawHeatmapGrid(spec, t.bar, state.ui_scale, nullptr);
    ImGui::EndChild();
  }
}

// Induction score of every head over time, one plot per layer.
void DrawInduction(const TrainingView& view, float height) {
  const train::TrainSnapshot& s = view.snapshot;
  for (int l = 0; l < s.layers; ++l) {
    std::vector<Series> series(size_t(s.heads));
    for (int h = 0; h < s.heads; ++h) {
      series[size_t(h)].label = trf("h%d", h);
      series[size_t(h)].color = SeriesColor(h);
      for (const train::InductionPoint& p : s.induction_history)
        if (l < int(p.scores.size()) && h < int(p.scores[size_t(l)].size())) {
          series[size_t(h)].x.push_back(float(p.step));
          series[size_t(h)].y.push_back(p.scores[size_t(l)][size_t(h)]);
        }
    }
    ImGui::TextUnformatted(trf("Layer %d: induction score per head", l + 1).c_str());
    DrawLinePlot(("induction" + std::to_string(l)).c_str(), series, tr("step"), tr("induction score"), height, 0.0f, 1.0f);
  }
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
  PlaceNextWindow(state, Slot::main);
  if (!ImGui::Begin(WindowTitle("Training", "training").c_str(), &state.show_training)) {
    ImGui::End();
    return;
  }
  const bool has_runs = !t.runs.empty();
  const bool busy = AnyBusy(t);

  // 1. Settings (locked while runs exist: Reset to change them).
  if (ImGui::CollapsingHeader(tr("Model and training settings"), ImGuiTreeNodeFlags_DefaultOpen)) {
    DrawSettings(t, has_runs);
    if (has_runs) HintText(tr("The settings are locked while there is a run: Reset to change them."));
  }

  // 2. Buttons.
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  auto button_w = [&](const char* label) { return ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2 + spacing; };
  bool all_done = has_runs;
  for (const auto& r : t.runs) all_done = all_done && (r->state() == RunState::finished || r->state() == RunState::failed);
  ImGui::BeginDisabled(busy || all_done);
  if (ImGui::Button(tr("Start"))) {
    if (!has_runs) StartRuns(t, false);
    for (auto& r : t.runs) r->start();
  }
  RecordLastItem(state, "training.start");
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!busy);
  if (ImGui::Button(tr("Pause")))
    for (auto& r : t.runs) r->pause();
  ImGui::EndDisabled();
  SameLineIfFits(button_w(tr("Step")));
  ImGui::BeginDisabled(busy || all_done);
  if (ImGui::Button(tr("Step"))) {
    if (!has_runs) StartRuns(t, false);
    for (auto& r : t.runs) r->step_once();
  }
  ImGui::EndDisabled();
  SameLineIfFits(button_w(tr("Reset")));
  ImGui::BeginDisabled(!has_runs && t.error.empty());
  if (ImGui::Button(tr("Reset"))) Reset(t);
  ImGui::EndDisabled();
  SameLineIfFits(button_w(tr("Compare MHA / GQA / MQA")));
  ImGui::BeginDisabled(busy);
  if (ImGui::Button(tr("Compare MHA / GQA / MQA"))) {
    StartRuns(t, true);
    for (auto& r : t.runs) r->start();
  }
  RecordLastItem(state, "training.compare");
  ImGui::EndDisabled();
  if (!t.error.empty()) ErrorText(std::string(tr("Error: ")) + t.error);
  if (!has_runs) {
    HintText(tr("Start trains one model; Step does one step; Compare trains three that differ only in G. "
                "The induction task repeats random tokens with a period that changes from sequence to sequence: "
                "induction heads form after a plateau of a few hundred steps."));
    ImGui::End();
    return;
  }

  // 3. Save.
  ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - button_w(tr("Save checkpoint")) - spacing, ImGui::GetFontSize() * 6));
  ImGui::InputText("##save_path", &t.save_path);
  ImGui::SameLine();
  ImGui::BeginDisabled(busy || t.save_path.empty());
  if (ImGui::Button(tr("Save checkpoint"))) t.runs[size_t(t.shown_run)]->save(t.save_path);
  ImGui::EndDisabled();
  if (const std::string saved = t.runs[size_t(t.shown_run)]->save_result(); !saved.empty()) {
    if (t.runs[size_t(t.shown_run)]->save_ok()) {
      HintText(trf("Saved %s: config.json, model.safetensors, vocab.json, loss.csv", saved.c_str()));
      // The saved folder opens like any real model (the Heads view's layers, the Model view).
      if (ImGui::Button(tr("Open in the Checkpoint window"))) {
        OpenCheckpoint(state, saved);
        ImGui::SetWindowFocus("###checkpoint");  // in front of this window, which covers its place
      }
      RecordLastItem(state, "training.open_saved");
    } else {
      ErrorText(std::string(tr("Error: ")) + saved);
    }
  }

  // 4. Each run: state, step, loss, speed (and in a comparison its KV cache).
  std::vector<std::shared_ptr<const TrainingView>> views;
  for (const auto& r : t.runs) views.push_back(r->view());
  for (size_t i = 0; i < t.runs.size(); ++i) {
    const TrainingRun& r = *t.runs[i];
    const train::TrainSnapshot& s = views[i]->snapshot;
    const float loss = s.losses.empty() ? NAN : s.losses.back();
    std::string line = trf("%s: %s · step %d / %d · loss %.3f · %.1f steps/s", r.label().c_str(), tr(StateName(r.state())),
                           s.step, s.total_steps, double(loss), s.steps_per_second);
    if (t.comparing)
      line += trf(" · KV cache %s per token", HumanBytes(s.kv_cache_bytes_per_token).c_str());
    if (t.comparing) {
      if (ImGui::RadioButton(("##show" + std::to_string(i)).c_str(), t.shown_run == int(i))) t.shown_run = int(i);
      ImGui::SameLine();
    }
    WrappedText(line);
    if (r.state() == RunState::failed) ErrorText(std::string(tr("Error: ")) + r.error());
  }
  if (t.comparing)
    HintText(tr("KV-cache bytes per token = 2 (K and V) · L · G · d_head · 4 bytes (float32). Same seed, same data: "
                "only G differs."));

  // 5. Loss curves.
  const float plot_h = std::max(ImGui::GetTextLineHeight() * 12, ImGui::GetContentRegionAvail().y * 0.3f);
  SectionHeader(tr("Loss"));
  std::vector<Series> loss_series;
  for (size_t i = 0; i < t.runs.size(); ++i) {
    const train::TrainSnapshot& s = views[i]->snapshot;
    std::string label = t.runs[i]->label();
    if (t.comparing) label += " · " + trf("%s KV/token", HumanBytes(s.kv_cache_bytes_per_token).c_str());
    loss_series.push_back(LossSeries(s.losses, label, SeriesColor(int(i)), ImGui::GetContentRegionAvail().x));
  }
  DrawLinePlot("loss", loss_series, tr("step"), tr("loss"), plot_h);

  // 6. The shown run's heads on the probe and its induction scores.
  t.shown_run = std::clamp(t.shown_run, 0, int(t.runs.size()) - 1);
  const TrainingView& view = *views[size_t(t.shown_run)];
  UploadHeads(t, *t.runs[size_t(t.shown_run)], view);
  SectionHeader(trf("Heads on the probe sequence (%s, step %d)", t.runs[size_t(t.shown_run)]->label().c_str(), view.snapshot.step).c_str());
  DrawHeads(state, view);
  SectionHeader(tr("Induction score over time"));
  HintText(tr("The mean attention from each token of the second copy to the token after its earlier occurrence."));
  DrawInduction(view, ImGui::GetTextLineHeight() * 10);
  ImGui::End();
}

nlohmann::json TrainingLayoutJson(const AppState& state) {
  const TrainingWindowState& t = state.training;
  nlohmann::json j = {{"shown", state.show_training},  {"error", t.error},         {"comparing", t.comparing},
                      {"heads_step", t.heads_step},      {"heads_refreshes", t.heads_refreshes},
                      {"heads_textures", 0},             {"runs", nlohmann::json::array()}};
  int textures = 0;
  for (const auto& layer : t.textures)
    for (const GlTexture& tex : layer) textures += tex.valid() ? 1 : 0;
  j["heads_textures"] = textures;
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
                         {"steps_per_second", s.steps_per_second},
                         {"induction", s.induction},
                         {"induction_history", history},
                         {"probe_tokens", s.probe_tokens}});
  }
  return j;
}

}  // namespace attnscope::gui
