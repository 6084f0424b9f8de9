// The pieces under the tokenizers: the PCRE2 regex, Unicode helpers, GPT-2's byte table.
#include <doctest/doctest.h>

#include <set>

#include "attnscope/core/error.h"
#include "attnscope/text/byte_level.h"
#include "attnscope/text/tokenizer.h"
#include "text/pcre_regex.h"
#include "text/unicode_text.h"

using namespace attnscope;
using namespace attnscope::text_detail;

namespace {
std::vector<std::string> matches(const Regex& r, std::string_view s) {
  std::vector<std::string> out;
  for (const Span& m : r.find_all(s)) out.emplace_back(s.substr(m.begin, m.end - m.begin));
  return out;
}
}  // namespace

TEST_CASE("pcre regex: Unicode classes, inline case-insensitivity and lookahead work as the files mean them") {
  const Regex letters(R"(\p{L}+|\p{N})", "test");
  CHECK(matches(letters, "café 42 我们") == std::vector<std::string>{"café", "4", "2", "我们"});
  const Regex contractions(R"((?i:'s|'re))", "test");
  CHECK(matches(contractions, "it's WE'RE 'S") == std::vector<std::string>{"'s", "'RE", "'S"});
  // \s+(?!\S): a run of spaces before a word gives up its last space.
  const Regex spaces(R"(\s+(?!\S)|\s+)", "test");
  CHECK(matches(spaces, "a   b") == std::vector<std::string>{"  ", " "});
  // \s is Unicode-aware (UCP): the ideographic space counts.
  CHECK(matches(spaces, "a\u3000b") == std::vector<std::string>{"\u3000"});
}

TEST_CASE("pcre regex: a pattern that can match nothing still walks the whole text") {
  const Regex maybe("a*", "test");
  // Empty matches at 0 and 2 are kept, but never one right where the previous match ended.
  const auto spans = maybe.find_all("baab");
  REQUIRE(spans.size() == 3);
  CHECK((spans[0].begin == 0 && spans[0].end == 0));
  CHECK((spans[1].begin == 1 && spans[1].end == 3));
  CHECK((spans[2].begin == 4 && spans[2].end == 4));  // (3, 3), right where "aa" ended, is skipped
}

TEST_CASE("pcre regex: bad patterns and runaway backtracking fail with a message") {
  CHECK_THROWS_WITH_AS(Regex("(ab", "'t.json': x.Regex"),
                       doctest::Contains("'t.json': x.Regex: the regex /(ab/ does not compile: missing closing parenthesis"),
                       InputError);
  CHECK_THROWS_WITH_AS(Regex("a\\C", "w"), doctest::Contains("does not compile"), InputError);
  const Regex runaway("(a|a)+$", "w");
  CHECK_THROWS_WITH_AS((void)runaway.find_all(std::string(40, 'a') + "b"), doctest::Contains("gave up"), InputError);
}

TEST_CASE("unicode: NFC composes, NFKC folds compatibility forms, character classes follow Rust") {
  CHECK(normalize_nfc("e\xCC\x81") == "é");
  CHECK(normalize_nfc("ＡＢ") == "ＡＢ");
  CHECK(normalize_nfkc("ＡＢ①ﬁ²") == "AB1fi2");
  CHECK(normalize_nfc(std::string("a\0b", 3)) == std::string("a\0b", 3));  // U+0000 survives
  CHECK(is_numeric(U'7'));
  CHECK(is_numeric(U'²'));   // No
  CHECK(is_numeric(U'Ⅻ'));   // Nl
  CHECK(is_numeric(U'٣'));   // Nd, Arabic-Indic
  CHECK_FALSE(is_numeric(U'a'));
  CHECK(is_white_space(U'\u3000'));
  CHECK_FALSE(is_white_space(U'\uFEFF'));  // not White_Space, though JavaScript's \s has it
  CHECK(is_word_char(U'_'));
  CHECK(is_word_char(U'我'));
  CHECK_FALSE(is_word_char(U'-'));
}

TEST_CASE("unicode: lossy decoding replaces each maximal bad subpart with one U+FFFD") {
  const std::string r = "\xEF\xBF\xBD";
  CHECK(utf8_lossy("ok") == "ok");
  CHECK(utf8_lossy("a\xFF" "b") == "a" + r + "b");
  CHECK(utf8_lossy("\xE6\x88") == r);                 // truncated: one
  CHECK(utf8_lossy("\xE6\x88" "a") == r + "a");       // a broken prefix: one
  CHECK(utf8_lossy("\xED\xA0\x80") == r + r + r);     // a surrogate: ED then two lone continuations
  CHECK(utf8_lossy("\xF0\x9F\x91\x8D") == "👍");
}

TEST_CASE("validate_utf8: the SPEC message, with the file when one is named") {
  CHECK_NOTHROW(validate_utf8("我喜欢 ok"));
  CHECK_THROWS_WITH_AS(validate_utf8("ab\xff"), doctest::Contains("invalid UTF-8 at byte 2"), InputError);
  CHECK_THROWS_WITH_AS(validate_utf8("abc\xe4\xbd", "'m.txt'"),
                       doctest::Contains("'m.txt': invalid UTF-8 at byte 3: sequence truncated"), InputError);
}

TEST_CASE("byte-level table: 256 distinct printable characters that map back to their bytes") {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t c = byte_to_unicode(uint8_t(b));
    CHECK(unicode_to_byte(c) == b);
    CHECK(c > 0x20);
    seen.insert(c);
  }
  CHECK(seen.size() == 256);
  CHECK(byte_to_unicode(' ') == U'Ġ');
  CHECK(byte_to_unicode('\n') == U'Ċ');
  CHECK(byte_to_unicode('A') == U'A');
  CHECK(bytes_to_byte_level("héllo ") == "hÃ©lloĠ");
  std::string bytes;
  CHECK(byte_level_to_bytes("hÃ©lloĠ", bytes));
  CHECK(bytes == "héllo ");
  CHECK_FALSE(byte_level_to_bytes("我", bytes));  // not a table character
}
