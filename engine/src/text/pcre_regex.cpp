// pcre_regex.cpp — PCRE2 (8-bit, UTF + UCP, JIT when available) behind a small class.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/pcre_regex.h"

#include <memory>

#include <pcre2.h>

#include "attnscope/core/error.h"
#include "text/unicode_text.h"

namespace attnscope::text_detail {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(code, buffer, sizeof buffer);
  return n < 0 ? "PCRE2 error " + std::to_string(code) : std::string(reinterpret_cast<const char*>(buffer), size_t(n));
}

// A pattern that backtracks exponentially must fail with a message rather than hang the window:
// these limits stop one match attempt after about ten million steps (a few hundred milliseconds).
constexpr uint32_t kMatchLimit = 10'000'000;
constexpr uint32_t kDepthLimit = 100'000;

}  // namespace

Regex::Regex(std::string_view pattern, std::string where) : pattern_(pattern), where_(std::move(where)) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // \C could match half a character and leave invalid UTF-8 behind, so it is refused at compile time.
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C, &error, &offset, nullptr);
  if (!code)
    throw InputError(where_ + ": the regex /" + pattern_ + "/ does not compile: " + pcre2_message(error) +
                     " at offset " + std::to_string(offset) + " (PCRE2 syntax, as Oniguruma/Perl)");
  // JIT is an optimisation only: without it (or if it fails for this pattern) the interpreter runs.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  code_ = code;
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  if (!context) {
    pcre2_code_free(code);
    throw std::bad_alloc();
  }
  pcre2_set_match_limit(context, kMatchLimit);
  pcre2_set_depth_limit(context, kDepthLimit);
  context_ = context;
}

Regex::~Regex() {
  pcre2_match_context_free(static_cast<pcre2_match_context*>(context_));
  pcre2_code_free(static_cast<pcre2_code*>(code_));
}

std::vector<Span> Regex::find_all(std::string_view subject) const {
  auto* code = static_cast<const pcre2_code*>(code_);
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
  if (!data) throw std::bad_alloc();
  // A pattern that recurses deeply needs more than the default 32 KiB JIT stack; made on first need.
  std::unique_ptr<pcre2_jit_stack, decltype(&pcre2_jit_stack_free)> jit_stack(nullptr, &pcre2_jit_stack_free);
  std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> big_context(nullptr,
                                                                                      &pcre2_match_context_free);
  auto* context = static_cast<pcre2_match_context*>(context_);
  std::vector<Span> matches;
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  size_t pos = 0;
  size_t last_end = std::string_view::npos;
  while (pos <= subject.size()) {
    // The subject was validated once; PCRE2 need not check it again for every start offset.
    const int rc = pcre2_match(code, text, subject.size(), pos, PCRE2_NO_UTF_CHECK, data.get(), context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !jit_stack) {
      jit_stack.reset(pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr));
      big_context.reset(pcre2_match_context_copy(context));
      if (!jit_stack || !big_context) throw std::bad_alloc();
      pcre2_jit_stack_assign(big_context.get(), nullptr, jit_stack.get());
      context = big_context.get();
      continue;
    }
    if (rc < 0)
      throw InputError(where_ + ": the regex /" + pattern_ + "/ gave up at byte " + std::to_string(pos) + ": " +
                       pcre2_message(rc) + " (it backtracks too much on this text)");
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    const size_t begin = ovector[0], end = ovector[1];
    // \K can move the reported start; a match must still lie inside [pos, size].
    if (begin < pos || end < begin || end > subject.size())
      throw InputError(where_ + ": the regex /" + pattern_ + "/ reported a match outside the text (\\K is not supported)");
    if (begin == end && end == last_end) {
      // An empty match where the last one ended: step over one character and search again.
      if (pos >= subject.size()) break;
      pos += utf8_length(static_cast<unsigned char>(subject[pos]));
      continue;
    }
    matches.push_back({begin, end});
    last_end = end;
    pos = end;
  }
  return matches;
}

}  // namespace attnscope::text_detail
