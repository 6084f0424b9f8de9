// language.cpp — the names of the two languages.
#include "attnscope/core/language.h"

#include "attnscope/core/error.h"

namespace attnscope {

const char* to_string(Language language) { return language == Language::zh ? "zh" : "en"; }

Language parse_language(const std::string& name) {
  if (name == "en") return Language::en;
  if (name == "zh") return Language::zh;
  throw InputError("unknown language '" + name + "' (valid: en, zh)");
}

}  // namespace attnscope
