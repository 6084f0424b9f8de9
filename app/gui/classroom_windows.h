// classroom_windows.h — the classroom windows, one file each:
//
//   window_lessons.cpp   the Lessons panel: pick a lesson, read it, step through it (lesson 4 shows
//                        the KV-cache comparison beside the maps)
//   window_analysis.cpp  per-head entropy, distance, attention sink, the JS similarity matrix and
//                        the drift of each head from its MHA original
//   window_kv_cache.cpp  the KV-cache and attention-parameter calculator (MHA vs GQA vs MQA)
//   window_scene.cpp     Open scene… / Save scene… dialogs (a path field; no native file dialog)
#pragma once
#include <cstdint>
#include <string>

#include "attnscope/attention/kv_cache.h"
#include "gui/app_state.h"

namespace attnscope::gui {

void DrawLessonsWindow(AppState& state);
void DrawAnalysisWindow(AppState& state);
void DrawKvCacheWindow(AppState& state);
void DrawSceneDialogs(AppState& state);

// Opens lesson `number` (1 … N) at step `step` (0-based): its scene replaces the app's scene and
// the Lessons panel shows it. Returns an empty string, or why it could not (no such lesson/step,
// lessons unreadable) — in the current UI language.
std::string OpenLesson(AppState& state, int number, int step);
// Moves the open lesson to `step` and applies that step's scene.
void GoToLessonStep(AppState& state, int step);
// Presentation mode (F11): the open lesson's step under the view — its title and "3 / 7" on a quiet
// first line, then the step's caption — and the height that takes at `width` (0: no lesson open).
float LessonBannerHeight(const AppState& state, float width);
void DrawLessonBanner(AppState& state);
// PageDown / → / Space the next step, PageUp / ← / Backspace the previous, Home / End the first and
// last: in presentation mode, or while the Lessons panel shows a lesson; not while a text is edited.
void HandleLessonKeys(AppState& state);
// A lesson is on screen: presented (F11, its panel hidden) or in the Lessons panel.
bool LessonShown(const AppState& state);
// Lesson 6, each frame before the windows draw, while the lesson is shown (presented or in its panel;
// not a matter of which window draws): a step's "checkpoint" applied to the open model (layer,
// input, the shipped model opened) and the top head of the step's pattern (by the run's head pattern
// scores, which the compute worker made with it) shown large once its run is back.
void UpdateLessonCheckpoint(AppState& state);
// Presentation mode hides the Lessons panel, where lesson 6's table of the open model's top heads sits
// (its captions say "see the table"): while a step about a checkpoint is presented, the view draws it
// beside the head shown large. True when it is to be drawn; DrawPresentedHeadsTable draws it.
bool PresentedHeadsTable(const AppState& state);
void DrawPresentedHeadsTable(AppState& state);

// Save/Open through the dialog's logic (also used by scripted runs): the outcome lands in
// state.scene_dialog.message / ok / warnings, and in the status line. Return true on success.
bool SaveSceneFile(AppState& state, const std::string& path);
bool OpenSceneFile(AppState& state, const std::string& path);
// The scene of an attnscope link (the whole link or its ?scene= value, core/scene_link.h), as Open
// scene would open it; when it cannot be read the status line says why and the scene stays.
bool OpenSceneLink(AppState& state, const std::string& link);

// Reads assets/models.json into state.kv_cache once (the error, if any, is kept there).
void EnsureModelPresets(AppState& state);
// The three bars MHA / GQA / MQA of a report, with bytes in human units and fits / does not fit.
void DrawKvCacheBars(AppState& state, const KvCacheReport& report, bool show_params = false);
// 1536 → "1.5 KiB"; binary units B, KiB, MiB, GiB, TiB, PiB.
std::string HumanBytes(int64_t bytes);

}  // namespace attnscope::gui
