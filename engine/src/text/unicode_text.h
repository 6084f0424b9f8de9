// unicode_text.h — the Unicode pieces the tokenizers need (private to engine/src/text).
//
// NFC/NFKC come from utf8proc; the character classes follow what Hugging Face's tokenizers (Rust)
// uses at each place: char::is_numeric for the Digits pre-tokenizer, regex \s and \w for the
// lstrip/rstrip/single_word flags of added tokens. Every function takes valid UTF-8 (the caller
// validated the text once at the door).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace attnscope::text_detail {

// Number of bytes of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte, so
// a walk always advances).
inline size_t utf8_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Decodes the code point at s[i] (valid UTF-8 assumed) and advances i past it.
char32_t next_code_point(std::string_view s, size_t& i);
// The code point that ends at s[end) (valid UTF-8 assumed); `begin` receives its first byte.
char32_t previous_code_point(std::string_view s, size_t end, size_t& begin);

std::string normalize_nfc(std::string_view text);
std::string normalize_nfkc(std::string_view text);

bool is_numeric(char32_t cp);      // Rust char::is_numeric: general category Nd, Nl or No
bool is_white_space(char32_t cp);  // Unicode White_Space (Rust regex \s)
bool is_word_char(char32_t cp);    // Rust regex \w: letters, marks, Nd, Nl, Pc, ZWJ/ZWNJ

// Bytes → text, each maximal invalid subpart replaced by U+FFFD (what Rust's from_utf8_lossy and
// the WHATWG decoder do), so a decode of arbitrary ids always gives valid UTF-8.
std::string utf8_lossy(std::string_view bytes);

// One step of a UTF-8 walk at s[i], following Unicode's table of well-formed sequences (3.9, D92):
// `complete` — a valid code point of `length` bytes; `invalid` — a maximal ill-formed subpart of
// `length` ≥ 1 bytes (it becomes one U+FFFD); `truncated` — the `length` bytes left are a valid but
// unfinished start of a code point that later bytes could complete.
enum class Utf8Step { complete, invalid, truncated };
Utf8Step utf8_step(std::string_view s, size_t i, size_t& length);

}  // namespace attnscope::text_detail
