// translations.h — the window's words in another language, as data: assets/i18n/<code>.json.
//
//   {"language": "zh", "name": "中文",
//    "strings":     {"<the English text passed to tr()/trf()/TrKey()/WindowTitle()>": "<translation>", …},
//    "trace_steps": {"<TraceStep::key>": {"name": "<step name>", "formula": "<formula, when it has words>"}, …}}
//
// English is the sources' own text and has no file. A translation whose printf conversions differ
// from its English key's ("%d" for "%s") would make trf() read the wrong argument, so such entries are
// skipped (the English shows) and named in `warnings`, as are keys listed twice. No ImGui here: the
// window (app/gui/i18n.cpp), the tests and the fuzz target share this reader.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/core/language.h"
#include "attnscope/core/printf_conversions.h"
#include "attnscope/figure/export.h"

namespace attnscope {

struct Translations {
  struct Step {
    std::string name, formula;  // formula empty: the engine's formula is shown as it is
  };
  std::string language;  // "zh"
  std::string name;      // "中文", as the language calls itself
  std::map<std::string, std::string> strings;  // English → translation
  std::map<std::string, Step> trace_steps;     // TraceStep::key → translation
  std::vector<std::string> warnings;           // entries skipped, one sentence each
};

// Parses a translation file's text; `source` names it in messages. Throws InputError naming the
// source and the problem when the text is not such a file.
Translations parse_translations(std::string_view text, const std::string& source);
// Reads and parses `path` (at most 4 MiB). Throws InputError naming the path and the problem.
Translations load_translations(const std::filesystem::path& path);
// assets/i18n/<language>.json in the assets folder (io/assets.h). Throws InputError when there is no
// assets folder.
std::filesystem::path translations_path(const std::string& language);

// The words of exported figures (titles, captions, colour-bar titles) in `language`: every key of
// figure_word_keys() that the language's file translates (printf conversions checked as above).
// English: none (the engine's own words). Throws InputError when the file cannot be read.
FigureWords figure_words(const Translations& translations);
FigureWords figure_words(Language language);
// A command's --language value, "en" or "zh"; anything else throws InputError naming the valid values.
Language parse_language_option(const std::string& text);

}  // namespace attnscope
