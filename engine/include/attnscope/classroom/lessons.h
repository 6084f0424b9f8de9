// lessons.h — guided lessons and sample sentences, in English and Chinese, read from assets/.
//
// A lesson is a scene to start from, a title and a short explanation in both languages, and a few
// steps: each step changes some settings of the scene (a JSON merge patch, RFC 7396, applied to the
// lesson's scene) and says what to look at. The GUI shows the explanation in a side panel and the
// steps as buttons (or side by side); the CLI can run any step's scene.
//
// assets/lessons/NN_name.json:
//   { "attnscope_lesson": 1,
//     "number": 4,
//     "title":       {"en": "…", "zh": "…"},
//     "explanation": {"en": "…", "zh": "…"},
//     "scene": { a full scene, scene_json.h format },
//     "steps": [ {"caption": {"en": "…", "zh": "…"}, "changes": { e.g. "model": {"kind": "gqa"} },
//                 "training": {"task": "induction", "layers": 2, "d_model": 64, "heads": 4, "groups": 2,
//                              "mlp": false, "seq_len": 64, "batch": 16, "steps": 300, "lr": 0.003,
//                              "warmup": 50, "seed": 1},
//                 "checkpoint": {"model": "models/induction", "open": true, "layer": 1,
//                                "repeat": {"tokens": 20, "seed": 7}, "head": "induction"},
//                 "cells": [[10, 1], [10, 10]]}, … ],
//     "kv_cache": {"model": "llama-2-70b", "seq": 4096, "batch": 16, "dtype": "fp16", "memory_gib": 80} }
// "kv_cache" is optional (lesson 4 shows the calculator beside the maps); so is a step's "training"
// (lesson 7: the step opens the Training window with these settings; every key is optional, the
// defaults are `attnscope train`'s, and the settings are validated as the trainer does); so is a step's
// "checkpoint" (lesson 6: what the step does with the open checkpoint, see LessonCheckpoint); so are a step's
// "cells" ([query, key] token pairs its caption names, outlined in the heads). Unknown keys anywhere,
// in the lesson or in its scenes, are errors: lessons ship with attnscope, so a typo must not pass.
//
// assets/sentences.json:
//   { "sentences": [ {"lang": "en", "text": "The cat sat on the mat because it was tired."}, … ] }
//
// Where assets/ is found: assets.h.
#pragma once
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/attention/kv_cache.h"
#include "attnscope/core/language.h"
#include "attnscope/model/forward.h"
#include "attnscope/scene/scene.h"
#include "attnscope/train/trainer.h"

namespace attnscope {

// A step's "checkpoint" (every key optional): what the Lessons window does with the open checkpoint.
//   "model"   a checkpoint folder shipped in assets/, e.g. "models/induction": with no checkpoint open,
//             the window offers to open it (must hold a config.json)
//   "open"    true: the step opens "model" itself when no checkpoint is open (so a class with nothing
//             downloaded sees real heads)
//   "layer"   the layer the Heads view draws (kept below the model's L)
//   "input"   the Input window's text: words for the checkpoint's tokenizer, or "ids: 1 2 3"
//   "repeat"  {"tokens": n, "seed": s}: instead of "input", n ids drawn from the open model's vocabulary
//             and the same n again (repeated_random_ids), the sequence induction heads show on
//   "head"    a head shown large: its number (in "layer"), or "sink" / "previous" / "induction" for the
//             head of this run that scores highest on that pattern (and its layer)
//   "ablate"  [[layer, head], …]: the heads switched off (model/forward.h HeadAblation; the Model view shows
//             them crossed out and what changed); a step without it switches every head on again
//   "ablate_mode"  "zero" (the default) or "mean"
//   "view"    {"name": "model" | "rollout" | "lens", …}: the view the step opens in the Heads view's place
//             (LessonView; a step that switches heads off and names no view opens the Model view):
//               "model"    the Model view (no other key)
//               "rollout"  the Rollout view; "position": the query position drawn (from 0; default the last)
//               "lens"     the Logit lens; "page": "lens" (the default) or "attribution" (the direct logit
//                          attribution); "position": the position chosen (from 0; default the last);
//                          "target": with "page": "attribution", the token id attributed (default each
//                          position's top-1)
//             A position past the step's input (a "repeat" of n tokens has 2n) is refused.
enum class LessonViewKind { model, rollout, lens };
const char* to_string(LessonViewKind kind);  // "model", "rollout", "lens"

struct LessonView {
  LessonViewKind kind = LessonViewKind::model;
  std::optional<int> position;   // rollout: the query position; lens: the position chosen (none: the last token)
  bool attribution = false;      // lens: the attribution page ("page": "attribution")
  std::optional<int32_t> target; // lens attribution: the token attributed (none: the model's top-1)
};

struct LessonCheckpoint {
  std::string model;                        // as written ("" none)
  std::filesystem::path model_dir;          // <assets>/<model>
  bool open = false;
  std::optional<int> layer;
  std::string input;                        // "" keeps the scene's text (unless repeat_tokens)
  int repeat_tokens = 0;                    // n (0: no repeated sequence)
  uint64_t repeat_seed = 0;
  std::optional<int> head;                  // a head number
  std::optional<HeadPattern> top_head;      // or the top head of a pattern
  model::HeadAblation ablation;             // "ablate", "ablate_mode" (no heads: none)
  std::optional<LessonView> view;           // "view" (none: the Model view with "ablate", else no view)
};

struct LessonStep {
  LocalizedText caption;  // what this step shows
  Scene scene;            // the lesson's scene with this step's changes applied
  std::optional<train::TrainSettings> training;  // the Training window's settings for this step
  std::optional<LessonCheckpoint> checkpoint;    // what this step does with the open checkpoint
  // Cells the caption names, outlined in every head of the Heads view: {query, key} token indices
  // ("cells": [[10, 1], [10, 10]]); empty: none. Cells past the text's tokens are not drawn.
  std::vector<std::array<int, 2>> cells;
};

// The view a step shows in the Heads view's place: its checkpoint's "view", or the Model view for a step that
// switches heads off without naming one; none: the scene's own view (or the Training window, lesson 7).
std::optional<LessonViewKind> step_view(const LessonStep& step);

// The calculator settings a lesson shows (a preset plus sequence, batch, element type, memory).
struct LessonKvCache {
  std::string model;      // a preset name of assets/models.json
  KvCacheInput input;     // the preset's L, H, G, d_head with the lesson's seq, batch, dtype, memory
};

struct Lesson {
  std::string id;                        // the file name without .json: "04_mha_gqa_mqa"
  int number = 0;                        // 1 … N, the order of the lessons
  LocalizedText title;
  LocalizedText explanation;             // a few sentences
  Scene scene;                           // the scene the lesson starts from
  std::vector<LessonStep> steps;         // at least one; steps[0] is usually the scene itself
  std::optional<LessonKvCache> kv_cache;
};

// Reads and validates one lesson file. `presets` are the model presets a "kv_cache" may name.
// Throws InputError naming the file and the key that is wrong.
Lesson load_lesson(const std::filesystem::path& file, const std::vector<ModelPreset>& presets);

// Every lessons/*.json under `assets` (models.json from the same folder), sorted by number; the
// numbers must be 1 … N without gaps or repeats. Throws InputError naming the file at fault.
std::vector<Lesson> load_lessons(const std::filesystem::path& assets);
std::vector<Lesson> load_lessons();  // load_lessons(assets_dir())

struct SampleSentence {
  Language language = Language::en;
  std::string text;  // UTF-8, at least one token
};

// Reads and validates a sentences file (every text non-empty, valid UTF-8, tokenizable).
std::vector<SampleSentence> load_sample_sentences(const std::filesystem::path& file);
std::vector<SampleSentence> load_sample_sentences();  // assets_dir()/sentences.json

}  // namespace attnscope
