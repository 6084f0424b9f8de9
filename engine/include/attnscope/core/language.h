// language.h — the two languages of attnscope's teaching text (English, 中文).
//
// Lessons, sample sentences and the names of designed heads carry both languages; the GUI's
// language switch picks one with text(…, language).
#pragma once
#include <string>

namespace attnscope {

enum class Language { en, zh };

// A text in both languages. Both are non-empty UTF-8 whenever it comes from a loader.
struct LocalizedText {
  std::string en;
  std::string zh;
  const std::string& text(Language language) const { return language == Language::zh ? zh : en; }
};

const char* to_string(Language language);              // "en" | "zh"
Language parse_language(const std::string& name);      // throws InputError listing en, zh

}  // namespace attnscope
