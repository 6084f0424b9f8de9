// window_lessons.cpp — the Lessons panel: choose one of the lessons (assets/lessons, lessons.h), read
// its title and explanation in the UI language, and step through it. Each step's scene replaces the
// app's scene, so every view follows; lesson 4 also shows the KV-cache comparison of its model.
//
// Layout, top to bottom: the lesson chooser, the title, the step buttons with the step's caption
// (what to look at now), the KV-cache bars (lesson 4), and the explanation filling the rest.
#include <algorithm>
#include <string>

#include "attnscope/core/error.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/training_windows.h"
#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

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

void ApplyStep(AppState& state) {
  const Lesson& lesson = state.lessons.lessons[size_t(state.lessons.lesson)];
  state.scene = lesson.steps[size_t(state.lessons.step)].scene;
  // Lesson 6: the step sets up the Training window (the user presses Start or Compare).
  if (const auto& training = lesson.steps[size_t(state.lessons.step)].training) ShowTrainingWith(state, *training);
  state.fonts->request_text(state.scene.input.text);
  NoteEdit(state, Panel::startup);
}

std::string LessonName(const Lesson& lesson) {
  return std::to_string(lesson.number) + ". " + lesson.title.text(UiLanguage());
}

}  // namespace

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

void DrawLessonsWindow(AppState& state) {
  if (!state.show_lessons) return;
  // The whole left column (where Input and Model sit; opening a lesson closes them).
  const ImRect top = SlotRect(state, Slot::left_top), bottom = SlotRect(state, Slot::left_bottom);
  const ImGuiCond cond = (state.scripted || state.reset_layout) ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  ImGui::SetNextWindowPos(top.Min, cond);
  ImGui::SetNextWindowSize(ImVec2(bottom.Max.x - top.Min.x, bottom.Max.y - top.Min.y), cond);
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
  if (ImGui::BeginCombo("##lesson", current.c_str())) {
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
  WrappedText(lesson.steps[size_t(l.step)].caption.text(language));
  ImGui::EndGroup();
  RecordLastItem(state, "lesson.caption");
  ErrorText(ErrorFor(state, Panel::startup));

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

  // The explanation fills the rest and scrolls.
  SectionHeader(tr("About this lesson"));
  ImGui::BeginChild("##explanation", ImVec2(0, 0), false);
  WrappedText(lesson.explanation.text(language).c_str());
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attnscope::gui
