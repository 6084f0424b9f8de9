// language.cpp — the names of the two languages.
#include "attnscope/language.h"

#include "attnscope/error.h"

namespace attnscope {

const char* to_string(Language language) { return language == Language::zh ? "zh" : "en"; }

Language parse_language(const std::string& name) {
  if (name == "en") return Language::en;
  if (name == "zh") return Language::zh;
  throw InputError("unknown language '" + name + "' (valid: en, zh)");
}

}  // namespace attnscope
