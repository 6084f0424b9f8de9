#include "core/translations.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <set>

#include "attnscope/core/error.h"
#include "attnscope/core/printf_conversions.h"
#include "attnscope/io/assets.h"
#include "attnscope/io/file_io.h"

namespace attnscope {
namespace {

constexpr int64_t max_translation_bytes = int64_t(4) << 20;

std::string quoted(const std::string& text) {
  constexpr size_t shown = 60;
  return "\"" + (text.size() > shown ? text.substr(0, shown) + "…" : text) + "\"";
}

std::string string_field(const nlohmann::json& object, const char* field, const std::string& where) {
  const auto it = object.find(field);
  if (it == object.end()) return "";
  require(it->is_string(), where + ": \"" + field + "\" must be a string");
  return it->get<std::string>();
}

}  // namespace

Translations parse_translations(std::string_view text, const std::string& source) {
  // JSON objects may repeat a key (the last one wins): note repeats while parsing, so a translator's
  // second entry for the same English does not silently replace the first.
  std::vector<std::string> repeated;
  std::string section;
  std::map<std::string, std::set<std::string>> seen;
  const nlohmann::json::parser_callback_t note_keys = [&](int depth, nlohmann::json::parse_event_t event,
                                                          nlohmann::json& parsed) {
    if (event != nlohmann::json::parse_event_t::key || !parsed.is_string()) return true;
    const std::string& key = parsed.get_ref<const std::string&>();
    if (depth == 1) section = key;
    else if (depth == 2 && !seen[section].insert(key).second) repeated.push_back(section + " " + quoted(key));
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end(), note_keys);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source + " is not valid JSON: " + e.what());
  }
  require(j.is_object(), source + ": a translation file is a JSON object with \"language\", \"strings\" and \"trace_steps\"");
  Translations t;
  t.language = string_field(j, "language", source);
  t.name = string_field(j, "name", source);
  require(!t.language.empty(), source + ": \"language\" is missing (the language's code, e.g. \"zh\")");
  const auto strings = j.find("strings");
  require(strings != j.end() && strings->is_object(),
          source + ": \"strings\" is missing or not an object of English text → translation");
  for (const auto& [english, translated] : strings->items()) {
    require(translated.is_string(), source + ": strings " + quoted(english) + " must map to a string");
    const std::string& value = translated.get_ref<const std::string&>();
    if (printf_conversions(value) != printf_conversions(english)) {
      t.warnings.push_back(source + ": strings " + quoted(english) +
                           ": the translation's printf conversions differ from the English (the English is shown)");
      continue;
    }
    if (value.empty()) {
      t.warnings.push_back(source + ": strings " + quoted(english) + " has an empty translation (the English is shown)");
      continue;
    }
    t.strings.emplace(english, value);
  }
  if (const auto steps = j.find("trace_steps"); steps != j.end()) {
    require(steps->is_object(), source + ": \"trace_steps\" must be an object of step key → {\"name\", \"formula\"}");
    for (const auto& [key, step] : steps->items()) {
      const std::string where = source + ": trace_steps " + quoted(key);
      require(step.is_object(), where + " must be an object with \"name\" (and \"formula\" when it has words)");
      Translations::Step s{string_field(step, "name", where), string_field(step, "formula", where)};
      if (s.name.empty()) t.warnings.push_back(where + " has no \"name\" (the English is shown)");
      else t.trace_steps.emplace(key, std::move(s));
    }
  }
  for (const std::string& r : repeated) t.warnings.push_back(source + ": " + r + " is listed twice (the last one is used)");
  return t;
}

Translations load_translations(const std::filesystem::path& path) {
  return parse_translations(read_file(path, max_translation_bytes), path.string());
}

std::filesystem::path translations_path(const std::string& language) {
  return assets_dir() / "i18n" / (language + ".json");
}

FigureWords figure_words(const Translations& t) {
  FigureWords words;
  for (const std::string& key : figure_word_keys())
    if (const auto it = t.strings.find(key); it != t.strings.end()) words.strings.emplace(key, it->second);
  return words;
}

FigureWords figure_words(Language language) {
  if (language == Language::en) return {};
  return figure_words(load_translations(translations_path(to_string(language))));
}

Language parse_language_option(const std::string& text) {
  require(text == "en" || text == "zh", "--language '" + text + "' is not a language of attnscope (valid: en, zh)");
  return parse_language(text);
}

}  // namespace attnscope
