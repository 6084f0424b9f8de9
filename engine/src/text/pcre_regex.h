// pcre_regex.h — the regexes of tokenizer files, run by PCRE2 exactly as the files state them
// (private to engine/src/text; PCRE2 is linked PRIVATE into the engine).
//
// The pre-tokenizer patterns use \p{L}, \p{N}, (?i:…) and (?!\S), which std::regex cannot express.
// They are compiled in UTF + UCP mode, so \s, \w and \d and case folding are Unicode-aware as in the
// Oniguruma engine Hugging Face's tokenizers uses; JIT-compiled when PCRE2 has a JIT for this CPU.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnscope::text_detail {

struct Span {
  size_t begin;
  size_t end;
};

class Regex {
 public:
  // Throws InputError "<where>: the regex /…/ does not compile: <PCRE2's reason> at offset N".
  // `where` names the file and the JSON path of the pattern, for every later message too.
  Regex(std::string_view pattern, std::string where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Every match in `subject` (valid UTF-8), left to right and non-overlapping. An empty match right
  // where the previous match ended is skipped (the Rust regex/Oniguruma iterators' rule), so a
  // pattern that can match nothing still advances. Throws InputError when PCRE2 gives up (match or
  // depth limit: a pattern that backtracks without end on this text).
  std::vector<Span> find_all(std::string_view subject) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::string where_;
  void* code_ = nullptr;     // pcre2_code_8*
  void* context_ = nullptr;  // pcre2_match_context_8*: match and depth limits
};

}  // namespace attnscope::text_detail
