// lessons.cpp — loading and validating lessons and sample sentences (formats in lessons.h).
//
// Sections: helpers · lessons · sample sentences
#include "attnscope/classroom/lessons.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "attnscope/io/assets.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/io/file_io.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/text/tokenizer.h"

namespace attnscope {
namespace fs = std::filesystem;
using nlohmann::json;

// ---- helpers ------------------------------------------------------------------------------------
namespace {

constexpr int64_t max_asset_bytes = 1 << 20;

json read_json(const fs::path& file, const std::string& what) {
  const std::string text = read_file(file, max_asset_bytes);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(what + " '" + file.string() + "' is not valid JSON: " + e.what());
  }
}

// Throws unless every key of `object` is one of `allowed`.
void require_known_keys(const json& object, std::initializer_list<const char*> allowed, const std::string& where) {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();  // not a structured binding: clang 14 cannot capture those
    const bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char* k) { return key == k; });
    require(known, where + ": unknown key '" + key + "'");
  }
}

LocalizedText localized(const json& parent, const char* key, const std::string& where) {
  const std::string here = where + ": \"" + key + "\"";
  require(parent.contains(key) && parent[key].is_object(), here + " must be an object {\"en\": …, \"zh\": …}");
  const json& t = parent[key];
  require_known_keys(t, {"en", "zh"}, here);
  LocalizedText text;
  for (const char* lang : {"en", "zh"}) {
    require(t.contains(lang) && t[lang].is_string() && !t[lang].get<std::string>().empty(),
            here + " needs a non-empty \"" + lang + "\" text");
    decode_utf8(t[lang].get<std::string>());  // throws on invalid UTF-8
  }
  text.en = t["en"].get<std::string>();
  text.zh = t["zh"].get<std::string>();
  return text;
}

// A scene from JSON where any ignored (unknown) key is an error.
Scene strict_scene(const json& j, const std::string& where) {
  std::vector<std::string> warnings;
  Scene s;
  try {
    s = scene_from_json(j, &warnings);
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  require(warnings.empty(), where + ": " + (warnings.empty() ? "" : warnings.front()));
  return s;
}

// A step's "training": the trainer's settings, each key optional (defaults: `attnscope train`'s).
train::TrainSettings lesson_training(const json& t, const std::string& here) {
  require(t.is_object(), here + " must be an object");
  require_known_keys(t, {"task", "layers", "d_model", "heads", "groups", "mlp", "seq_len", "batch", "steps", "lr", "warmup", "seed"},
                     here);
  train::TrainSettings s = train::default_train_settings();
  auto whole = [&](const char* key, int& field) {
    if (!t.contains(key)) return;
    require(t[key].is_number_integer() && t[key].get<int64_t>() >= 0 && t[key].get<int64_t>() <= 1000000,
            here + ": \"" + key + "\" must be a whole number from 0 to 1000000");
    field = int(t[key].get<int64_t>());
  };
  try {
    if (t.contains("task")) {
      require(t["task"].is_string(), "\"task\" must be a task name");
      s.task.kind = train::parse_task(t["task"].get<std::string>());
      require(s.task.kind != train::TaskKind::text, "a lesson trains on a built-in task, not on a text file");
    }
    whole("layers", s.model.layers), whole("d_model", s.model.d_model), whole("heads", s.model.heads);
    whole("groups", s.model.groups), whole("seq_len", s.task.seq_len), whole("batch", s.batch);
    whole("steps", s.steps);
    whole("warmup", s.optimizer.warmup);
    int seed = int(s.seed);
    whole("seed", seed);
    s.seed = uint64_t(seed);
    if (t.contains("mlp")) {
      require(t["mlp"].is_boolean(), "\"mlp\" must be true or false");
      s.model.mlp = t["mlp"].get<bool>();
    }
    if (t.contains("lr")) {
      require(t["lr"].is_number(), "\"lr\" must be a number");
      s.optimizer.lr = t["lr"].get<float>();
    }
    train::validate_train_settings(s);
  } catch (const InputError& e) {
    if (std::string(e.what()).rfind(here, 0) == 0) throw;
    throw InputError(here + ": " + e.what());
  }
  return s;
}

// A step's checkpoint "view" (lessons.h LessonView). `repeat_tokens` > 0: the input is 2·repeat_tokens long.
LessonView lesson_view(const json& v, int repeat_tokens, const std::string& here) {
  require(v.is_object() && v.contains("name") && v["name"].is_string(),
          here + " must be an object with a \"name\": \"model\", \"rollout\" or \"lens\"");
  const std::string name = v["name"].get<std::string>();
  LessonView out;
  if (name == "model") {
    out.kind = LessonViewKind::model;
    require_known_keys(v, {"name"}, here + " (the Model view)");
  } else if (name == "rollout") {
    out.kind = LessonViewKind::rollout;
    require_known_keys(v, {"name", "position"}, here + " (the Rollout view)");
  } else if (name == "lens") {
    out.kind = LessonViewKind::lens;
    require_known_keys(v, {"name", "page", "position", "target"}, here + " (the Logit lens)");
  } else {
    throw InputError(here + ": \"name\" must be \"model\", \"rollout\" or \"lens\", not \"" + name + "\"");
  }
  if (v.contains("position")) {
    const int tokens = repeat_tokens > 0 ? 2 * repeat_tokens : int(limits::max_tokens);
    const std::string what = repeat_tokens > 0 ? " (the repeated sequence has " + std::to_string(tokens) + " tokens)" : "";
    require(v["position"].is_number_integer() && v["position"].get<int64_t>() >= 0 && v["position"].get<int64_t>() < tokens,
            here + ": \"position\" must be a whole number from 0 to " + std::to_string(tokens - 1) + what);
    out.position = int(v["position"].get<int64_t>());
  }
  if (v.contains("page")) {
    const json& p = v["page"];
    require(p.is_string() && (p.get<std::string>() == "lens" || p.get<std::string>() == "attribution"),
            here + ": \"page\" must be \"lens\" or \"attribution\"");
    out.attribution = p.get<std::string>() == "attribution";
  }
  if (v.contains("target")) {
    require(out.attribution, here + ": \"target\" goes with \"page\": \"attribution\" (the token attributed)");
    require(v["target"].is_number_integer() && v["target"].get<int64_t>() >= 0 && v["target"].get<int64_t>() <= 100000000,
            here + ": \"target\" must be a token id, a whole number from 0");
    out.target = int32_t(v["target"].get<int64_t>());
  }
  return out;
}

// A step's "checkpoint" (lessons.h LessonCheckpoint). `assets` is the folder the lesson file is in.
LessonCheckpoint lesson_checkpoint(const json& c, const fs::path& assets, const std::string& here) {
  require(c.is_object(), here + " must be an object");
  require_known_keys(c, {"model", "open", "layer", "input", "repeat", "head", "ablate", "ablate_mode", "view"}, here);
  LessonCheckpoint out;
  auto whole = [&](const json& parent, const char* key, int lo, int hi, const std::string& where) {
    require(parent[key].is_number_integer() && parent[key].get<int64_t>() >= lo && parent[key].get<int64_t>() <= hi,
            where + ": \"" + key + "\" must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return int(parent[key].get<int64_t>());
  };
  if (c.contains("model")) {
    require(c["model"].is_string() && !c["model"].get<std::string>().empty(),
            here + ": \"model\" must name a checkpoint folder in assets/, e.g. \"models/induction\"");
    out.model = c["model"].get<std::string>();
    const fs::path rel(out.model);
    const bool inside = rel.is_relative() && std::none_of(rel.begin(), rel.end(), [](const fs::path& p) { return p == ".."; });
    require(inside, here + ": \"model\" must be a folder inside assets/, not '" + out.model + "'");
    out.model_dir = assets / rel;
    std::error_code ec;
    require(fs::is_regular_file(out.model_dir / "config.json", ec),
            here + ": \"model\": '" + out.model_dir.string() + "' is no checkpoint folder (it has no config.json)");
  }
  if (c.contains("open")) {
    require(c["open"].is_boolean(), here + ": \"open\" must be true or false");
    out.open = c["open"].get<bool>();
    require(!out.open || !out.model.empty(), here + ": \"open\" needs the \"model\" to open");
  }
  if (c.contains("layer")) out.layer = whole(c, "layer", 0, 1000, here);
  if (c.contains("input")) {
    require(c["input"].is_string() && !c["input"].get<std::string>().empty(),
            here + ": \"input\" must be a non-empty text (words, or \"ids: 1 2 3\")");
    out.input = c["input"].get<std::string>();
    decode_utf8(out.input);  // throws on invalid UTF-8
  }
  if (c.contains("repeat")) {
    const std::string where = here + ", repeat";
    const json& r = c["repeat"];
    require(r.is_object(), where + " must be an object {\"tokens\": n, \"seed\": s}");
    require_known_keys(r, {"tokens", "seed"}, where);
    require(r.contains("tokens"), where + ": \"tokens\" (how many ids each copy has) is missing");
    require(!c.contains("input"), here + ": \"repeat\" and \"input\" both set the Input text; give one");
    out.repeat_tokens = whole(r, "tokens", 2, 512, where);
    if (r.contains("seed")) out.repeat_seed = uint64_t(whole(r, "seed", 0, 1000000, where));
  }
  if (c.contains("head")) {
    const json& h = c["head"];
    if (h.is_string()) {
      const std::string name = h.get<std::string>();
      for (HeadPattern p : {HeadPattern::sink, HeadPattern::previous, HeadPattern::induction})
        if (name == head_pattern_name(p)) out.top_head = p;
      require(out.top_head.has_value(),
              here + ": \"head\" must be a head number or \"sink\", \"previous\" or \"induction\", not \"" + name + "\"");
    } else {
      out.head = whole(c, "head", 0, 1000, here);
    }
  }
  if (c.contains("ablate")) {
    const std::string where = here + ", ablate";
    require(c["ablate"].is_array() && !c["ablate"].empty(),
            where + " must be a list of [layer, head] pairs from 0, e.g. [[1, 0], [1, 3]]");
    for (const json& pair : c["ablate"]) {
      require(pair.is_array() && pair.size() == 2 && pair[0].is_number_integer() && pair[1].is_number_integer() &&
                  pair[0].get<int64_t>() >= 0 && pair[0].get<int64_t>() <= 1000 && pair[1].get<int64_t>() >= 0 &&
                  pair[1].get<int64_t>() <= 1000,
              where + " must be a list of [layer, head] pairs of whole numbers from 0, e.g. [[1, 0], [1, 3]]");
      const model::HeadRef ref{int(pair[0].get<int64_t>()), int(pair[1].get<int64_t>())};
      require(!out.ablation.contains(ref.layer, ref.head), where + ": [" + std::to_string(ref.layer) + ", " +
                                                               std::to_string(ref.head) + "] is listed twice");
      out.ablation.heads.push_back(ref);
    }
  }
  if (c.contains("ablate_mode")) {
    require(c.contains("ablate"), here + ": \"ablate_mode\" goes with \"ablate\" (the heads to switch off)");
    const json& m = c["ablate_mode"];
    require(m.is_string() && (m.get<std::string>() == "zero" || m.get<std::string>() == "mean"),
            here + ": \"ablate_mode\" must be \"zero\" or \"mean\"");
    out.ablation.mode = m.get<std::string>() == "mean" ? model::AblationMode::mean : model::AblationMode::zero;
  }
  if (c.contains("view")) out.view = lesson_view(c["view"], out.repeat_tokens, here + ", view");
  return out;
}

}  // namespace

// ---- lessons ------------------------------------------------------------------------------------

const char* to_string(LessonViewKind kind) {
  switch (kind) {
    case LessonViewKind::model: return "model";
    case LessonViewKind::rollout: return "rollout";
    case LessonViewKind::lens: return "lens";
  }
  return "model";
}

std::optional<LessonViewKind> step_view(const LessonStep& step) {
  if (!step.checkpoint) return std::nullopt;
  if (step.checkpoint->view) return step.checkpoint->view->kind;
  if (!step.checkpoint->ablation.heads.empty()) return LessonViewKind::model;
  return std::nullopt;
}

Lesson load_lesson(const fs::path& file, const std::vector<ModelPreset>& presets) {
  const std::string where = "lesson '" + file.string() + "'";
  const json j = read_json(file, "lesson");
  require(j.is_object(), where + " must be a JSON object");
  require_known_keys(j, {"attnscope_lesson", "number", "title", "explanation", "scene", "steps", "kv_cache"}, where);
  require(j.contains("attnscope_lesson") && j["attnscope_lesson"].is_number_integer() &&
              j["attnscope_lesson"].get<int64_t>() == 1,
          where + ": \"attnscope_lesson\" must be 1 (the lesson format version)");
  Lesson lesson;
  lesson.id = file.stem().string();
  require(j.contains("number") && j["number"].is_number_integer() && j["number"].get<int64_t>() >= 1 &&
              j["number"].get<int64_t>() <= 1000,
          where + ": \"number\" must be a whole number from 1");
  lesson.number = int(j["number"].get<int64_t>());
  lesson.title = localized(j, "title", where);
  lesson.explanation = localized(j, "explanation", where);

  require(j.contains("scene") && j["scene"].is_object(), where + ": \"scene\" must be a scene object");
  lesson.scene = strict_scene(j["scene"], where + ", scene");
  const json base = scene_to_json(lesson.scene);

  require(j.contains("steps") && j["steps"].is_array() && !j["steps"].empty() && j["steps"].size() <= 32,
          where + ": \"steps\" must be a list of 1 to 32 steps");
  for (size_t k = 0; k < j["steps"].size(); ++k) {
    const json& step = j["steps"][k];
    const std::string here = where + ", step " + std::to_string(k + 1);
    require(step.is_object(), here + " must be an object");
    require_known_keys(step, {"caption", "changes", "training", "checkpoint", "cells"}, here);
    LessonStep s;
    s.caption = localized(step, "caption", here);
    json patched = base;
    if (step.contains("changes")) {
      require(step["changes"].is_object(), here + ": \"changes\" must be an object (a patch of the scene)");
      patched.merge_patch(step["changes"]);
    }
    s.scene = strict_scene(patched, here);
    if (step.contains("training")) s.training = lesson_training(step["training"], here + ", training");
    if (step.contains("checkpoint"))
      s.checkpoint = lesson_checkpoint(step["checkpoint"], file.parent_path().parent_path(), here + ", checkpoint");
    if (step.contains("cells")) {
      const json& cells = step["cells"];
      const std::string what = here + ": \"cells\" must be a list of 1 to 16 [query, key] pairs of token indices from 0";
      require(cells.is_array() && !cells.empty() && cells.size() <= 16, what);
      for (const json& c : cells) {
        require(c.is_array() && c.size() == 2 && c[0].is_number_integer() && c[1].is_number_integer() &&
                    c[0].get<int64_t>() >= 0 && c[1].get<int64_t>() >= 0 && c[0].get<int64_t>() < limits::max_tokens &&
                    c[1].get<int64_t>() < limits::max_tokens,
                what);
        s.cells.push_back({int(c[0].get<int64_t>()), int(c[1].get<int64_t>())});
      }
    }
    lesson.steps.push_back(std::move(s));
  }

  if (j.contains("kv_cache")) {
    const json& kv = j["kv_cache"];
    const std::string here = where + ", kv_cache";
    require(kv.is_object(), here + " must be an object");
    require_known_keys(kv, {"model", "seq", "batch", "dtype", "memory_gib"}, here);
    require(kv.contains("model") && kv["model"].is_string(), here + ": \"model\" must be a preset name");
    require(kv.contains("seq") && kv["seq"].is_number_integer(), here + ": \"seq\" must be a whole number");
    LessonKvCache calc;
    try {
      calc.model = find_model_preset(presets, kv["model"].get<std::string>()).name;
      calc.input = kv_cache_input(find_model_preset(presets, calc.model));
      calc.input.seq = kv["seq"].get<int64_t>();
      if (kv.contains("batch")) {
        require(kv["batch"].is_number_integer(), "\"batch\" must be a whole number");
        calc.input.batch = kv["batch"].get<int64_t>();
      }
      if (kv.contains("dtype")) {
        require(kv["dtype"].is_string(), "\"dtype\" must be fp32, fp16 or int8");
        calc.input.dtype = parse_element_type(kv["dtype"].get<std::string>());
      }
      if (kv.contains("memory_gib")) {
        require(kv["memory_gib"].is_number(), "\"memory_gib\" must be a number");
        calc.input.memory_gib = kv["memory_gib"].get<double>();
      }
      validate_kv_cache_input(calc.input);
    } catch (const InputError& e) {
      throw InputError(here + ": " + e.what());
    }
    lesson.kv_cache = calc;
  }
  return lesson;
}

std::vector<Lesson> load_lessons(const fs::path& assets) {
  const fs::path dir = assets / "lessons";
  std::error_code ec;
  require(fs::is_directory(dir, ec), "no lessons folder at '" + dir.string() + "'");
  const std::vector<ModelPreset> presets = load_model_presets(assets / "models.json");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  require(!ec, "cannot list the lessons folder '" + dir.string() + "': " + ec.message());
  require(!files.empty(), "the lessons folder '" + dir.string() + "' holds no .json lesson");
  std::sort(files.begin(), files.end());
  std::vector<Lesson> lessons;
  for (const fs::path& f : files) lessons.push_back(load_lesson(f, presets));
  std::sort(lessons.begin(), lessons.end(), [](const Lesson& a, const Lesson& b) { return a.number < b.number; });
  for (size_t k = 0; k < lessons.size(); ++k)
    require(lessons[k].number == int(k) + 1, "lesson '" + lessons[k].id + "' has number " +
                                                 std::to_string(lessons[k].number) + " but lesson " +
                                                 std::to_string(k + 1) +
                                                 " was expected (numbers must run 1 … N without gaps or repeats)");
  return lessons;
}

std::vector<Lesson> load_lessons() { return load_lessons(assets_dir()); }

// ---- sample sentences ---------------------------------------------------------------------------

std::vector<SampleSentence> load_sample_sentences(const fs::path& file) {
  const std::string where = "sentences file '" + file.string() + "'";
  const json j = read_json(file, "sentences file");
  require(j.is_object() && j.contains("sentences") && j["sentences"].is_array() && !j["sentences"].empty(),
          where + " must be an object with a non-empty list \"sentences\"");
  std::vector<SampleSentence> sentences;
  for (size_t k = 0; k < j["sentences"].size(); ++k) {
    const json& s = j["sentences"][k];
    const std::string here = where + ", sentence " + std::to_string(k + 1);
    require(s.is_object(), here + " must be an object {\"lang\": \"en\" | \"zh\", \"text\": …}");
    require_known_keys(s, {"lang", "text"}, here);
    require(s.contains("lang") && s["lang"].is_string(), here + ": \"lang\" must be \"en\" or \"zh\"");
    require(s.contains("text") && s["text"].is_string(), here + ": \"text\" must be a string");
    SampleSentence sentence;
    try {
      sentence.language = parse_language(s["lang"].get<std::string>());
      sentence.text = s["text"].get<std::string>();
      require(!tokenize(sentence.text).empty(), "the text has no tokens");
    } catch (const InputError& e) {
      throw InputError(here + ": " + e.what());
    }
    sentences.push_back(std::move(sentence));
  }
  return sentences;
}

std::vector<SampleSentence> load_sample_sentences() { return load_sample_sentences(assets_dir() / "sentences.json"); }

}  // namespace attnscope
