// unicode_text.cpp — NFC/NFKC through utf8proc, character classes, lossy UTF-8.
#include "text/unicode_text.h"

#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "attnscope/core/error.h"

namespace attnscope::text_detail {

char32_t next_code_point(std::string_view s, size_t& i) {
  const unsigned char b0 = static_cast<unsigned char>(s[i]);
  const size_t n = utf8_length(b0);
  if (n == 1 || i + n > s.size()) {
    ++i;
    return b0;
  }
  char32_t cp = n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

char32_t previous_code_point(std::string_view s, size_t end, size_t& begin) {
  begin = end - 1;
  while (begin > 0 && (static_cast<unsigned char>(s[begin]) & 0xC0) == 0x80) --begin;
  size_t i = begin;
  return next_code_point(s, i);
}

namespace {

// utf8proc_map with an explicit length (the text may hold U+0000); the result is malloc'ed.
std::string utf8proc_normalize(std::string_view text, int options) {
  bool ascii = true;
  for (unsigned char c : text) ascii &= c < 0x80;
  if (ascii) return std::string(text);  // ASCII is its own NFC and NFKC
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          utf8proc_ssize_t(text.size()), &out, utf8proc_option_t(options));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  // The text was validated before; a failure here is out of memory or a utf8proc limit.
  require(n >= 0, std::string("Unicode normalization failed: ") + utf8proc_errmsg(n));
  return std::string(reinterpret_cast<const char*>(out), size_t(n));
}

}  // namespace

std::string normalize_nfc(std::string_view text) {
  return utf8proc_normalize(text, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
}

std::string normalize_nfkc(std::string_view text) {
  return utf8proc_normalize(text, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
}

bool is_numeric(char32_t cp) {
  const auto c = utf8proc_category(utf8proc_int32_t(cp));
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

bool is_word_char(char32_t cp) {
  if (cp == '_' || cp == 0x200C || cp == 0x200D) return true;
  switch (utf8proc_category(utf8proc_int32_t(cp))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

Utf8Step utf8_step(std::string_view s, size_t i, size_t& length) {
  const unsigned char b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    length = 1;
    return Utf8Step::complete;
  }
  // The allowed range of the second byte depends on the lead (Unicode Table 3-7); later bytes are 80..BF.
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    length = 1;
    return Utf8Step::invalid;
  }
  for (size_t k = 1; k < need; ++k) {
    if (i + k >= s.size()) {
      length = k;
      return Utf8Step::truncated;
    }
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    const bool ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) {
      length = k;
      return Utf8Step::invalid;
    }
  }
  length = need;
  return Utf8Step::complete;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t n;
    const Utf8Step step = utf8_step(bytes, i, n);
    if (step == Utf8Step::complete)
      out.append(bytes.substr(i, n));
    else
      out += "\xEF\xBF\xBD";  // U+FFFD
    i += n;
  }
  return out;
}

}  // namespace attnscope::text_detail
