// tokenizer.cpp — strict UTF-8 decoding and the SPEC tokenizer.
#include "attnscope/text/tokenizer.h"

#include "attnscope/core/error.h"

namespace attnscope {
namespace {

[[noreturn]] void bad_utf8(size_t offset, const char* reason) {
  throw InputError("invalid UTF-8 at byte " + std::to_string(offset) + ": " + reason +
                   " (text must be valid UTF-8)");
}

// Decodes one code point starting at text[i]; advances i. Throws on any malformed sequence.
char32_t decode_one(std::string_view text, size_t& i) {
  const size_t start = i;
  const unsigned char b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int extra;
  char32_t cp;
  char32_t min_cp;
  if ((b0 & 0xE0) == 0xC0) {
    extra = 1, cp = b0 & 0x1F, min_cp = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    extra = 2, cp = b0 & 0x0F, min_cp = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    extra = 3, cp = b0 & 0x07, min_cp = 0x10000;
  } else if ((b0 & 0xC0) == 0x80) {
    bad_utf8(start, "unexpected continuation byte");
  } else {
    bad_utf8(start, "byte 0xF8-0xFF never occurs in UTF-8");
  }
  if (start + extra >= text.size())
    bad_utf8(start, "sequence truncated by the end of the text");
  for (int k = 1; k <= extra; ++k) {
    const unsigned char b = static_cast<unsigned char>(text[start + k]);
    if ((b & 0xC0) != 0x80) bad_utf8(start + k, "expected a continuation byte");
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min_cp) bad_utf8(start, "overlong encoding");
  if (cp >= 0xD800 && cp <= 0xDFFF) bad_utf8(start, "UTF-16 surrogate code point");
  if (cp > 0x10FFFF) bad_utf8(start, "code point above U+10FFFF");
  i = start + extra + 1;
  return cp;
}

}  // namespace

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) out.push_back(decode_one(text, i));
  return out;
}

void validate_utf8(std::string_view text, std::string_view where) {
  try {
    for (size_t i = 0; i < text.size();) {
      // ASCII needs no decoding; long English runs skip the general path.
      if (static_cast<unsigned char>(text[i]) < 0x80) {
        ++i;
        continue;
      }
      (void)decode_one(text, i);
    }
  } catch (const InputError& e) {
    if (where.empty()) throw;
    throw InputError(std::string(where) + ": " + e.what());
  }
}

std::string encode_utf8(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xF0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3F));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

bool is_cjk_ideograph(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) ||    // CJK Unified Ideographs
         (cp >= 0x3400 && cp <= 0x4DBF) ||    // Extension A
         (cp >= 0x20000 && cp <= 0x323AF) ||  // Extensions B–H
         (cp >= 0xF900 && cp <= 0xFAFF) ||    // Compatibility Ideographs
         (cp >= 0x2F800 && cp <= 0x2FA1F) ||  // Compatibility Supplement
         cp == 0x3007;                        // 〇
}

bool is_space(char32_t cp) {
  return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000 || cp == 0xFEFF;
}

bool is_punctuation(char32_t cp) {
  if (cp < 0x80) return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
                        (cp >= 0x7B && cp <= 0x7E);
  return (cp >= 0xA1 && cp <= 0xBF && cp != 0xAA && cp != 0xB2 && cp != 0xB3 && cp != 0xB5 && cp != 0xB9 &&
          cp != 0xBA && cp != 0xBC && cp != 0xBD && cp != 0xBE) ||
         cp == 0xD7 || cp == 0xF7 ||                  // × ÷
         (cp >= 0x2010 && cp <= 0x2027) ||            // dashes, quotes, bullets, ellipsis
         (cp >= 0x2030 && cp <= 0x205E) ||            // per mille, primes, guillemets …
         (cp >= 0x3001 && cp <= 0x3003) ||            // 、。〃
         (cp >= 0x3008 && cp <= 0x3011) ||            // 〈〉《》「」『』【】
         (cp >= 0x3014 && cp <= 0x301F) ||            // 〔〕〖〗〘〙〚〛〜〝〞〟
         cp == 0x30FB ||                              // ・
         (cp >= 0xFE10 && cp <= 0xFE19) || (cp >= 0xFE30 && cp <= 0xFE6B) ||  // vertical / small forms
         (cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) ||  // fullwidth ！＂…／ ：；…＠
         (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65);   // ［＼］… ｛｜｝～…
}

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  size_t word_begin = std::string_view::npos;  // start of the word being collected
  auto end_word = [&](size_t at) {
    if (word_begin == std::string_view::npos) return;
    tokens.push_back({std::string(text.substr(word_begin, at - word_begin)), word_begin, at, TokenKind::word});
    word_begin = std::string_view::npos;
  };
  for (size_t i = 0; i < text.size();) {
    const size_t start = i;
    const char32_t cp = decode_one(text, i);
    if (is_space(cp)) {
      end_word(start);
    } else if (is_cjk_ideograph(cp) || is_punctuation(cp)) {
      end_word(start);
      tokens.push_back({std::string(text.substr(start, i - start)), start, i,
                        is_cjk_ideograph(cp) ? TokenKind::cjk : TokenKind::punctuation});
    } else if (word_begin == std::string_view::npos) {
      word_begin = start;
    }
  }
  end_word(text.size());
  return tokens;
}

std::string lower_ascii(std::string_view text) {
  std::string s(text);
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}

}  // namespace attnscope
