// tokenizer.h — UTF-8 text to tokens (SPEC "Tokens and sample embeddings").
//
// Runs of letters/digits split on whitespace form one token; each punctuation mark is its own
// token; each CJK ideograph is its own token ("我喜欢打篮球" → 6 tokens). Invalid UTF-8 raises
// InputError naming the byte offset of the first bad byte.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

enum class TokenKind { word, punctuation, cjk };

struct Token {
  std::string text;    // the token's UTF-8 bytes as written
  size_t byte_begin;   // offset of its first byte in the input
  size_t byte_end;     // one past its last byte
  TokenKind kind;
};

// Decodes UTF-8 strictly (no overlongs, surrogates or code points above U+10FFFF).
// Throws InputError "invalid UTF-8 at byte N: <reason>".
std::u32string decode_utf8(std::string_view text);
// The same check without decoding. A non-empty `where` (a file name) starts the message:
// "'vocab.json': invalid UTF-8 at byte N: …".
void validate_utf8(std::string_view text, std::string_view where = {});
std::string encode_utf8(char32_t codepoint);

bool is_cjk_ideograph(char32_t cp);
bool is_punctuation(char32_t cp);
bool is_space(char32_t cp);

// Throws InputError on invalid UTF-8. Empty or all-whitespace text gives an empty vector; callers
// that need tokens check that themselves (see embeddings.h: embed_tokens).
std::vector<Token> tokenize(std::string_view text);

// ASCII letters lower-cased; every other byte unchanged. Used as the embedding key.
std::string lower_ascii(std::string_view text);

}  // namespace attnscope
