// window_lessons.cpp — the Lessons panel: choose one of the lessons (assets/lessons, lessons.h), read
// its title and explanation in the UI language, and step through it. Each step's scene replaces the
// app's scene, so every view follows; lesson 4 also shows the KV-cache comparison of its model, and
// lesson 6 acts on the open checkpoint (its layer, input and a head shown large) and lists the heads of
// THIS model that score highest as attention sinks, previous-token and induction heads (head_patterns.h,
// computed by the compute worker with each forward pass: the frame only reads them), or says how to get
// a model when none is open.
//
// Layout, top to bottom: the lesson chooser, the title, the step buttons with the step's caption
// (what to look at now), the KV-cache bars (lesson 4), and the explanation filling the rest (lesson 6:
// below the checkpoint's heads or how to get a model, scrolling with them).
//
// Sections: steps · the open checkpoint (lesson 6) · window
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include <GLFW/glfw3.h>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/core/error.h"
#include "attnscope/pipeline/model_input.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/training_windows.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// ---- steps -------------------------------------------------------------------------------------------

void EnsureLoaded(AppState& state) {
  LessonsWindowState& l = state.lessons;
  if (l.loaded) return;
  l.loaded = true;
  try {
    l.lessons = load_lessons();
  } catch (const InputError& e) {
    l.load_error = e.what();
  }
  // Every lesson's text in both languages: its glyphs are baked before it is shown.
  for (const Lesson& lesson : l.lessons) {
    state.fonts->request_text(lesson.title.zh);
    state.fonts->request_text(lesson.explanation.zh);
    for (const LessonStep& s : lesson.steps) state.fonts->request_text(s.caption.zh);
  }
}

bool& ShownFlag(AppState& state, LessonViewKind kind) {
  switch (kind) {
    case LessonViewKind::rollout: return state.show_rollout;
    case LessonViewKind::lens: return state.show_lens;
    case LessonViewKind::model: break;
  }
  return state.show_model_view;
}

// Closes a view a step opened; the lens also forgets the step's page and target (the user's own choice next time).
void CloseLessonView(AppState& state, LessonViewKind kind) {
  ShownFlag(state, kind) = false;
  if (kind == LessonViewKind::lens) {
    state.lens.tab = 0;
    state.lens.target = -1;
    state.lens.position = -1;
  }
}

// A step's view in the view's place (the one opened last shows: the other two close), with its settings. Noted as
// the lesson's (closed by a step without it) unless the user had it open already.
void OpenLessonView(AppState& state, const LessonView& view, int vocab) {
  LessonsWindowState& l = state.lessons;
  bool& shown = ShownFlag(state, view.kind);
  if (!l.opened_view && !shown) l.opened_view = view.kind;
  else if (l.opened_view) l.opened_view = view.kind;
  const int position = view.position.value_or(-1);
  switch (view.kind) {
    case LessonViewKind::model:
      state.show_model_view = true;
      state.show_rollout = state.show_lens = false;
      break;
    case LessonViewKind::rollout: ShowRolloutAt(state, position); break;
    case LessonViewKind::lens:
      state.show_lens = true;
      state.show_model_view = state.show_rollout = false;
      state.lens.position = position;
      state.lens.tab = view.attribution ? 1 : 0;
      state.lens.target = view.target && *view.target < vocab ? *view.target : -1;
      break;
  }
}

// Puts the current step on screen, whole, whichever way it was reached (the Lessons panel's buttons and
// chooser, the lesson keys in presentation mode or not, --lesson/--step): its scene (with its view and
// text), no head large but the step's own, its Training window settings with the layer the captions talk
// about (the last), and its checkpoint work, which UpdateLessonCheckpoint does for the model open (once it
// is open) on every frame while the lesson is shown, presented or in its panel. Going back to a step does
// the same as going forward to it: nothing of the step left is kept.
void ApplyStep(AppState& state) {
  LessonsWindowState& l = state.lessons;
  const Lesson& lesson = l.lessons[size_t(l.lesson)];
  const LessonStep& step = lesson.steps[size_t(l.step)];
  // A step that is not about a checkpoint closes the model a lesson step opened (lesson 6's shipped one,
  // when lesson 7 or 5 follows): the synthetic model's sentence would otherwise go through that model's
  // 32-symbol vocabulary. A model the user opened stays (the panel says the views show it).
  const CheckpointWindowState& c = state.checkpoint;
  if (!step.checkpoint && !l.opened_model.empty()) {
    if (c.path == l.opened_model && (c.is_open() || !c.loading.empty())) CloseCheckpoint(state);
    l.opened_model.clear();
  }
  // Likewise the view a step opened in the view's place (lesson 11: the Model view of a step that switches heads
  // off, the Logit lens, the Rollout), on any step that shows another or none.
  if (l.opened_view && step_view(step) != l.opened_view) {
    CloseLessonView(state, *l.opened_view);
    l.opened_view.reset();
  }
  // Likewise the Training window a step showed (lesson 7) closes on a step without training settings.
  if (!step.training && l.showed_training) {
    state.show_training = false;
    l.showed_training = false;
  }
  state.scene = step.scene;
  state.heads.large_head = -1;  // a checkpoint step's head is shown large once its run is back
  // Lesson 7: the step sets up the Training window (the user presses Start or Compare), on the layer
  // where induction heads form (the last), not one a student picked in an earlier step.
  if (step.training) {
    ShowTrainingWith(state, *step.training);
    state.training.layer = -1;
    l.showed_training = true;
  }
  // Lesson 6: the step's checkpoint settings are applied (again) for the model open then.
  l.applied_for.reset();
  l.open_tried = false;
  l.focus_pending = false;
  state.fonts->request_text(state.scene.input.text);
  NoteEdit(state, Panel::startup);
}

const LessonStep* CurrentStep(const AppState& state) {
  const LessonsWindowState& l = state.lessons;
  if (l.lesson < 0 || l.lesson >= int(l.lessons.size())) return nullptr;
  const Lesson& lesson = l.lessons[size_t(l.lesson)];
  return l.step >= 0 && l.step < int(lesson.steps.size()) ? &lesson.steps[size_t(l.step)] : nullptr;
}

// ---- the open checkpoint (lesson 6) ------------------------------------------------------------------

// Opens the step's shipped model. The Checkpoint window stays as it was: this panel says what the model
// is, and the Heads view keeps its width.
void OpenShipped(AppState& state, const LessonCheckpoint& step) {
  const bool shown = state.show_checkpoint;
  OpenCheckpoint(state, step.model_dir.string());
  state.lessons.opened_model = step.model_dir.string();
  state.show_checkpoint = shown;
}

// The step's "checkpoint": open the shipped model if asked and none is open; once per open model, set
// the layer, the input (a repeated sequence from this model's vocabulary) and the head shown large.
void ApplyCheckpointStep(AppState& state, const LessonCheckpoint& step) {
  LessonsWindowState& l = state.lessons;
  CheckpointWindowState& c = state.checkpoint;
  // An open attentions file stays: the user chose it (the panel offers the shipped model instead).
  if (step.open && !l.open_tried && !c.is_open() && c.loading.empty()) {
    l.open_tried = true;
    OpenShipped(state, step);
  }
  if (!c.model || l.applied_for.lock() == c.model) return;  // (a closed model's pointer is expired, never reused)
  l.applied_for = c.model;
  const model::ModelConfig& cfg = c.model->config;
  if (step.layer) c.layer = std::min(*step.layer, cfg.layers - 1);
  if (step.repeat_tokens > 0) {
    try {
      state.scene.input.text = ids_input(repeated_random_ids(step.repeat_tokens, cfg.vocab, step.repeat_seed));
    } catch (const InputError& e) {
      state.error = e.what();  // a model with a vocabulary of one token: said where the run's errors go
      state.error_panel = Panel::checkpoint;
    }
  } else if (!step.input.empty()) {
    state.scene.input.text = step.input;
  }
  state.scene.input.source = InputSource::text;
  state.fonts->request_text(state.scene.input.text);
  state.heads.large_head = step.head && *step.head < cfg.heads ? *step.head : -1;
  // "ablate": the heads this model has (another model open keeps only those), shown in the Model view.
  c.ablation = {step.ablation.mode, {}};
  for (const model::HeadRef& h : step.ablation.heads)
    if (h.layer < cfg.layers && h.head < cfg.heads && !cfg.trained.active && !cfg.is_linear_layer(h.layer))
      c.ablation.heads.push_back(h);
  // "view" (or the Model view for heads switched off): in the view's place, with the step's settings.
  if (step.view) OpenLessonView(state, *step.view, cfg.vocab);
  else if (!c.ablation.heads.empty()) OpenLessonView(state, LessonView{}, cfg.vocab);
  l.focus_pending = step.top_head.has_value();
  l.focus_generation = 0;
  NoteEdit(state, Panel::checkpoint);
}

// "head": "induction" (…): once the step's run is back, its top head of that pattern is shown large,
// in its layer.
void FocusTopHead(AppState& state, HeadPattern pattern) {
  LessonsWindowState& l = state.lessons;
  if (!l.focus_pending || !state.checkpoint.model) return;
  if (l.focus_generation == 0) {
    if (!state.scene_edited) l.focus_generation = state.submitted_generation;  // sent at the end of the last frame
    return;
  }
  if (state.result_generation < l.focus_generation) return;
  l.focus_pending = false;
  const std::shared_ptr<const HeadPatternScores>& scores = state.checkpoint.head_patterns;  // of the run on screen
  if (!scores) return;
  const std::vector<TopHead> top = top_heads(*scores, pattern, 1);
  if (top.empty()) return;
  state.heads.large_head = top[0].head;
  if (state.checkpoint.layer != top[0].layer) {
    state.checkpoint.layer = top[0].layer;
    NoteEdit(state, Panel::heads);
  }
}

std::string HeadName(const TopHead& t) {
  char value[32];
  std::snprintf(value, sizeof value, "%.2f", double(t.score));
  return std::to_string(t.layer) + "." + std::to_string(t.head) + "  " + value;
}

// The three top-3 lists of the run on screen, side by side.
void DrawTopHeadsTable(AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  const int heads = c.heads(), kv = c.model ? c.model->config.kv_heads : c.attentions->kv_heads;
  WrappedText(trf("%s: %d layers, %d query heads sharing %d K/V heads (%s).", c.name().c_str(), c.layers(), heads, kv,
                  grouping_name(heads, kv)));
  ErrorText(c.head_patterns_error);
  if (!c.head_patterns) {
    if (c.head_patterns_error.empty() && ErrorFor(state, Panel::checkpoint).empty()) SpinnerText(tr("running the model…"));
    return;
  }
  const HeadPatternScores& scores = *c.head_patterns;
  constexpr int rows = 3;
  const HeadPattern patterns[] = {HeadPattern::sink, HeadPattern::previous, HeadPattern::induction};
  if (ImGui::BeginTable("##top_heads", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableSetupColumn(tr("attention sink"));
    ImGui::TableSetupColumn(tr("previous"));
    ImGui::TableSetupColumn(tr("induction"));
    ImGui::TableHeadersRow();
    std::vector<TopHead> top[3];
    for (int k = 0; k < 3; ++k) top[k] = top_heads(scores, patterns[k], rows);
    for (int r = 0; r < rows; ++r) {
      ImGui::TableNextRow();
      for (int k = 0; k < 3; ++k) {
        ImGui::TableNextColumn();
        if (r < int(top[k].size())) {
          const TopHead& t = top[k][size_t(r)];
          // The head shown large, where the table lists it: the captions point from one to the other.
          if (t.layer == c.layer && t.head == state.heads.large_head)
            ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, ImGui::GetColorU32(ImGuiCol_TextSelectedBg));
          ImGui::TextUnformatted(HeadName(t).c_str());
        }
        else if (r == 0) ImGui::TextDisabled("%s", tr("no repeat"));
      }
    }
    ImGui::EndTable();
  }
  RecordLastItem(state, "lesson.top_heads");
  HintText(tr("layer.head and score, from 0 as on the Heads view's layer slider; computed from the input on screen."));
  if (!scores.repeat)
    HintText(tr("Induction needs an input whose second half repeats the first (the lesson's steps give one)."));
}

// A step about the synthetic model while a checkpoint the user opened is what the views draw: the notice
// the panel and the banner show (a lesson step's own model closes by itself), or nullptr.
const char* SyntheticStepNotice(const AppState& state, const LessonStep& step) {
  if (step.checkpoint || step.training || !state.checkpoint.current()) return nullptr;
  return tr("This step is about the synthetic model, but a checkpoint is open: the views show the checkpoint.");
}

// With no checkpoint open: how to get GPT-2 once, where to point attnscope, and the shipped model.
void DrawNoCheckpoint(AppState& state, const LessonCheckpoint& step) {
  const CheckpointWindowState& c = state.checkpoint;
  if (CheckpointLoadingBar(state)) return;
  NoticeText(tr("No checkpoint is open."));
  if (!step.model.empty()) {
    WrappedText(tr("Look at the model attnscope's own trainer made (2 layers, trained on repeated sequences):"));
    if (ImGui::Button(trf("Open the shipped model %s", step.model.c_str()).c_str())) OpenShipped(state, step);
    RecordLastItem(state, "lesson.open_shipped");
  }
  WrappedText(tr("Or download GPT-2 once (about 550 MB) from the Hugging Face Hub:"));
  static const char* commands[] = {
      "pipx install huggingface_hub",
      "hf download gpt2 config.json model.safetensors tokenizer.json vocab.json merges.txt "
      "--local-dir ~/models/gpt2"};
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
  for (const char* command : commands) ImGui::TextWrapped("%s", command);
  ImGui::PopStyleColor();
  RecordLastItem(state, "lesson.download");
  if (ImGui::SmallButton(tr("Copy the commands")))
    ImGui::SetClipboardText((std::string(commands[0]) + "\n" + commands[1] + "\n").c_str());
  WrappedText(tr("Then open that folder (~/models/gpt2) in Windows → Checkpoint."));
  ErrorText(c.error.empty() ? "" : std::string(tr("Error: ")) + c.error);
}

void DrawCheckpointStep(AppState& state, const LessonCheckpoint& step) {
  SectionHeader(tr("Heads of this model"));
  const CheckpointWindowState& c = state.checkpoint;
  if (!c.is_open()) {
    DrawNoCheckpoint(state, step);
    return;
  }
  if (c.attentions) {  // its heads rank the same way, but on the file's own tokens, not this step's input
    NoticeText(tr("An attentions file is open: the table ranks its heads on the file's own tokens, not on this "
                  "step's input."));
    if (!step.model.empty()) {
      if (ImGui::Button(trf("Open the shipped model %s", step.model.c_str()).c_str())) OpenShipped(state, step);
      RecordLastItem(state, "lesson.open_shipped");
    }
  }
  DrawTopHeadsTable(state);
  ErrorText(ErrorFor(state, Panel::checkpoint));
}

// A caption's numbers that are results, filled in from the analysis on screen: {conv.interior} and
// {conv.border} are the largest |MHSA − conv| over the interior and over the border cells, {conv.alpha}
// the α they were computed with (ConvAnalysis). Until the convolution of the settings on screen is
// computed, each reads "…".
std::string CaptionNumbers(std::string caption, const AppState& state) {
  if (caption.find("{conv.") == std::string::npos) return caption;
  const ConvAnalysis* conv = state.analysis ? state.analysis->conv.get() : nullptr;
  if (conv && (conv->alpha != state.scene.conv.alpha || conv->pad_keys != state.scene.relpos.pad_keys)) conv = nullptr;
  const std::pair<const char*, double> numbers[] = {
      {"{conv.interior}", conv ? conv->max_abs_interior : 0.0},
      {"{conv.border}", conv ? conv->max_abs_border : 0.0},
      {"{conv.alpha}", conv ? conv->alpha : 0.0},
  };
  for (const auto& [key, value] : numbers)
    for (size_t at = caption.find(key); at != std::string::npos; at = caption.find(key, at)) {
      const std::string shown = conv ? FormatValue(float(value)) : "…";
      caption.replace(at, std::strlen(key), shown);
      at += shown.size();
    }
  return caption;
}

std::string LessonName(const Lesson& lesson) {
  return std::to_string(lesson.number) + ". " + lesson.title.text(UiLanguage());
}

}  // namespace

// ---- window ------------------------------------------------------------------------------------------

std::string OpenLesson(AppState& state, int number, int step) {
  EnsureLoaded(state);
  LessonsWindowState& l = state.lessons;
  if (!l.load_error.empty()) return l.load_error;
  const auto it = std::find_if(l.lessons.begin(), l.lessons.end(), [&](const Lesson& x) { return x.number == number; });
  if (it == l.lessons.end())
    return l.open_error = trf("there is no lesson %d (valid: 1 to %d)", number, int(l.lessons.size()));
  if (step < 0 || step >= int(it->steps.size()))
    return l.open_error = trf("lesson %d has steps 1 to %d, not %d", number, int(it->steps.size()), step + 1);
  l.open_error.clear();
  l.lesson = int(it - l.lessons.begin());
  l.step = step;
  state.show_lessons = true;
  ApplyStep(state);
  return {};
}

void GoToLessonStep(AppState& state, int step) {
  LessonsWindowState& l = state.lessons;
  if (l.lesson < 0 || l.lesson >= int(l.lessons.size())) return;
  const int count = int(l.lessons[size_t(l.lesson)].steps.size());
  l.step = std::clamp(step, 0, count - 1);
  ApplyStep(state);
}

bool LessonShown(const AppState& state) {
  const LessonsWindowState& l = state.lessons;
  return (state.presenting || state.show_lessons) && l.lesson >= 0 && l.lesson < int(l.lessons.size());
}

void UpdateLessonCheckpoint(AppState& state) {
  if (!LessonShown(state)) return;  // presented (its panel hidden) or in its panel
  const LessonStep* step = CurrentStep(state);
  if (!step || !step->checkpoint) return;
  ApplyCheckpointStep(state, *step->checkpoint);
  if (step->checkpoint->top_head) FocusTopHead(state, *step->checkpoint->top_head);
}

bool PresentedHeadsTable(const AppState& state) {
  const LessonStep* step = state.presenting && LessonShown(state) ? CurrentStep(state) : nullptr;
  return step && step->checkpoint && state.checkpoint.is_open();
}

void DrawPresentedHeadsTable(AppState& state) {
  const LessonStep* step = CurrentStep(state);
  if (!PresentedHeadsTable(state) || !step) return;
  DrawCheckpointStep(state, *step->checkpoint);
}

void DrawLessonsWindow(AppState& state) {
  if (!state.show_lessons) return;
  PlaceNextWindow(state, Slot::lessons);  // the left column (opening a lesson closes Input and Model)
  if (!ImGui::Begin(WindowTitle("Lessons", "lessons").c_str(), &state.show_lessons)) {
    ImGui::End();
    return;
  }
  EnsureLoaded(state);
  LessonsWindowState& l = state.lessons;
  if (!l.load_error.empty()) {
    ErrorText(std::string(tr("The lessons could not be read: ")) + l.load_error);
    ImGui::End();
    return;
  }
  const Language language = UiLanguage();

  // Chooser.
  ImGui::SetNextItemWidth(-1.0f);
  // The chooser names the lesson by number (its title is written out in full below).
  const std::string current = l.lesson >= 0 ? trf("Lesson %d of %d", l.lessons[size_t(l.lesson)].number, int(l.lessons.size()))
                                            : tr("Choose a lesson…");
  // Every lesson in the list (ImGui's combo shows 8 rows unless told: the ninth hid behind a scrollbar).
  if (ImGui::BeginCombo("##lesson", current.c_str(), ImGuiComboFlags_HeightLargest)) {
    for (int i = 0; i < int(l.lessons.size()); ++i)
      if (ImGui::Selectable(LessonName(l.lessons[size_t(i)]).c_str(), i == l.lesson) && i != l.lesson) {
        l.lesson = i;
        l.step = 0;
        l.open_error.clear();
        ApplyStep(state);
      }
    ImGui::EndCombo();
  }
  RecordLastItem(state, "lesson.chooser");
  ErrorText(l.open_error);
  if (l.lesson < 0) {
    WrappedText(tr("Each lesson sets up the views, says what to look at, and changes one thing per step."));
    ImGui::End();
    return;
  }
  const Lesson& lesson = l.lessons[size_t(l.lesson)];
  const int steps = int(lesson.steps.size());

  // Title.
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
  ImGui::BeginGroup();
  WrappedText(lesson.title.text(language));
  ImGui::EndGroup();
  ImGui::PopStyleColor();
  RecordLastItem(state, "lesson.title");
  ImGui::Separator();

  // Steps: previous / "step s of n" / next, then the caption.
  ImGui::BeginDisabled(l.step <= 0);
  if (ImGui::Button(trf("◀ %s", tr("Previous")).c_str())) GoToLessonStep(state, l.step - 1);
  ImGui::EndDisabled();
  RecordLastItem(state, "lesson.previous");
  ImGui::SameLine();
  const std::string counter = trf("Step %d of %d", l.step + 1, steps);
  const std::string next_label = trf("%s ▶", tr("Next"));
  const float next_w = ImGui::CalcTextSize(next_label.c_str()).x + ImGui::GetStyle().FramePadding.x * 2;
  const float gap = ImGui::GetContentRegionAvail().x - next_w - ImGui::CalcTextSize(counter.c_str()).x;
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + std::max(0.0f, gap * 0.5f - ImGui::GetStyle().ItemSpacing.x));
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(counter.c_str());
  SameLineIfFits(next_w);
  if (ImGui::GetContentRegionAvail().x > next_w) ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - next_w);
  ImGui::BeginDisabled(l.step + 1 >= steps);
  if (ImGui::Button(next_label.c_str())) GoToLessonStep(state, l.step + 1);
  ImGui::EndDisabled();
  RecordLastItem(state, "lesson.next");
  // The step dots: click any to jump there.
  for (int s = 0; s < steps; ++s) {
    if (s > 0) ImGui::SameLine();
    ImGui::PushID(s);
    const bool here = s == l.step;
    if (here) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::SmallButton(std::to_string(s + 1).c_str()) && !here) GoToLessonStep(state, s);
    if (here) ImGui::PopStyleColor();
    ImGui::PopID();
  }
  ImGui::Spacing();
  ImGui::BeginGroup();
  WrappedText(CaptionNumbers(lesson.steps[size_t(l.step)].caption.text(language), state));
  ImGui::EndGroup();
  RecordLastItem(state, "lesson.caption");
  ErrorText(ErrorFor(state, Panel::startup));
  // One model at a time: a step about the synthetic model says so while a checkpoint is what the views draw.
  if (const char* notice = SyntheticStepNotice(state, lesson.steps[size_t(l.step)])) {
    NoticeText(notice);
    if (ImGui::SmallButton(tr("Close the checkpoint"))) CloseCheckpoint(state);
    RecordLastItem(state, "lesson.close_checkpoint");
  }

  // Lesson 4: what the sharing saves on a real model.
  if (lesson.kv_cache) {
    EnsureModelPresets(state);
    std::string model = lesson.kv_cache->model;
    for (const ModelPreset& p : state.kv_cache.presets)
      if (p.name == model) model = p.label;
    SectionHeader(trf("KV cache of %s", model.c_str()).c_str());
    try {
      const KvCacheReport report = kv_cache_report(lesson.kv_cache->input);
      const KvCacheInput& in = report.input;
      WrappedText(trf("%lld layers, %lld heads, d_head %lld, %s, %lld tokens, batch %lld", (long long)in.layers,
                                   (long long)in.heads, (long long)in.head_dim, to_string(in.dtype), (long long)in.seq,
                                   (long long)in.batch)
                                   .c_str());
      DrawKvCacheBars(state, report);
    } catch (const InputError& e) {
      ErrorText(e.what());
    }
    if (ImGui::SmallButton(tr("Open the calculator"))) state.show_kv_cache = true;
  }

  if (lesson.steps[size_t(l.step)].training && !state.show_training &&
      ImGui::SmallButton(tr("Open the Training window")))
    ShowTrainingWith(state, *lesson.steps[size_t(l.step)].training);

  // The explanation fills the rest and scrolls. Lesson 6: below the open checkpoint's heads, ranked by
  // this run's scores (UpdateLessonCheckpoint), which scroll with it (at 720p a caption, the table or the
  // download text and the explanation do not all fit).
  const std::optional<LessonCheckpoint>& checkpoint = lesson.steps[size_t(l.step)].checkpoint;
  if (!checkpoint) SectionHeader(tr("About this lesson"));
  ImGui::BeginChild("##explanation", ImVec2(0, 0), false);
  if (checkpoint) {
    DrawCheckpointStep(state, *checkpoint);
    SectionHeader(tr("About this lesson"));
  }
  WrappedText(lesson.explanation.text(language).c_str());
  ImGui::EndChild();
  ImGui::End();
}

// ---- presentation mode --------------------------------------------------------------------------------

namespace {

const LessonStep* ShownStep(const AppState& state) {
  const LessonsWindowState& l = state.lessons;
  if (l.lesson < 0 || l.lesson >= int(l.lessons.size())) return nullptr;
  const Lesson& lesson = l.lessons[size_t(l.lesson)];
  return l.step >= 0 && l.step < int(lesson.steps.size()) ? &lesson.steps[size_t(l.step)] : nullptr;
}

}  // namespace

float LessonBannerHeight(const AppState& state, float width) {
  const LessonStep* step = ShownStep(state);
  if (!step) return 0.0f;
  const ImGuiStyle& style = ImGui::GetStyle();
  const std::string caption = CaptionNumbers(step->caption.text(UiLanguage()), state);
  // The banner's first line (title and counter), then the caption as WrappedText draws it, then the
  // notice and its button when there is one.
  float notice = 0.0f;
  if (const char* text = SyntheticStepNotice(state, *step))
    notice = WrappedTextHeight(text, width - style.WindowPadding.x * 2) + ImGui::GetFrameHeightWithSpacing();
  return std::ceil(style.WindowPadding.y * 2 + ImGui::GetTextLineHeightWithSpacing() +
                   WrappedTextHeight(caption, width - style.WindowPadding.x * 2) + notice + 1.0f);
}

void DrawLessonBanner(AppState& state) {
  const LessonStep* step = ShownStep(state);
  if (!state.presenting || !step) return;
  const ImRect r = SlotRect(state, Slot::banner);
  if (r.GetWidth() <= 0 || r.GetHeight() <= 0) return;
  const LessonsWindowState& l = state.lessons;
  const Lesson& lesson = l.lessons[size_t(l.lesson)];
  ImGui::SetNextWindowPos(r.Min);
  ImGui::SetNextWindowSize(r.GetSize());
  // No title bar; a caption taller than the banner's share of the screen scrolls.
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoBringToFrontOnFocus;
  if (ImGui::Begin("##lesson_banner", nullptr, flags)) {
    // A quiet first line: the lesson's title, and the step counter at the right.
    const std::string counter = std::to_string(l.step + 1) + " / " + std::to_string(lesson.steps.size());
    const float counter_w = ImGui::CalcTextSize(counter.c_str()).x;
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    const std::string title = lesson.title.text(UiLanguage());
    const float room = ImGui::GetContentRegionAvail().x - counter_w - ImGui::GetFontSize();
    ImGui::TextUnformatted(Ellipsize(title, room).c_str());
    ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - counter_w);
    ImGui::TextUnformatted(counter.c_str());
    RecordLastItem(state, "banner.counter");
    ImGui::PopStyleColor();
    WrappedText(CaptionNumbers(step->caption.text(UiLanguage()), state));
    RecordLastItem(state, "banner.caption");
    // One model at a time, as in the panel.
    if (const char* notice = SyntheticStepNotice(state, *step)) {
      NoticeText(notice);
      if (ImGui::SmallButton(tr("Close the checkpoint"))) CloseCheckpoint(state);
      RecordLastItem(state, "banner.close_checkpoint");
    }
  }
  ImGui::End();
}

void HandleLessonKeys(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  LessonsWindowState& l = state.lessons;
  if (io.WantTextInput || io.KeyCtrl || io.KeyAlt || !LessonShown(state)) return;
  const int last = int(l.lessons[size_t(l.lesson)].steps.size()) - 1;
  auto pressed = [](std::initializer_list<int> keys) {
    for (const int k : keys)
      if (ImGui::IsKeyPressed(k, false)) return true;
    return false;
  };
  int to = l.step;
  if (pressed({GLFW_KEY_PAGE_DOWN, GLFW_KEY_RIGHT, GLFW_KEY_SPACE})) to = l.step + 1;
  if (pressed({GLFW_KEY_PAGE_UP, GLFW_KEY_LEFT, GLFW_KEY_BACKSPACE})) to = l.step - 1;
  if (pressed({GLFW_KEY_HOME})) to = 0;
  if (pressed({GLFW_KEY_END})) to = last;
  to = std::clamp(to, 0, last);
  if (to != l.step) GoToLessonStep(state, to);
}

}  // namespace attnscope::gui
