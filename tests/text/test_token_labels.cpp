// Token labels (token_labels.h): split characters, whitespace marks, controls, special tokens.
#include <doctest/doctest.h>

#include "attnscope/text/token_labels.h"
#include "tokenizer_fixtures.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {
std::vector<std::string> labels(std::vector<std::string> bytes, std::vector<uint8_t> special = {}) {
  special.resize(bytes.size(), 0);
  return token_labels(bytes, special);
}
}  // namespace

TEST_CASE("token labels: a character split over tokens shows whole on the token that completes it") {
  // 我 = E6 88 91 in three byte tokens; 喜 = E5 96 9C split 1 + 2 and sharing a token with 我's end.
  CHECK(labels({"\xE6", "\x88", "\x91"}) == std::vector<std::string>{"·", "·", "我"});
  CHECK(labels({"\xE6\x88", "\x91\xE5", "\x96\x9C!"}) == std::vector<std::string>{"·", "我", "喜!"});
  // A four-byte emoji in two halves.
  CHECK(labels({"\xF0\x9F", "\x91\x8D"}) == std::vector<std::string>{"·", "👍"});
}

TEST_CASE("token labels: spaces read as spaces, whitespace-only tokens show marks") {
  CHECK(labels({" cat", "s", " sat"}) == std::vector<std::string>{" cat", "s", " sat"});
  CHECK(labels({"   ", "\n", "\n\n", "\t", " \t", "\u3000"}) ==
        std::vector<std::string>{"␣␣␣", "↵", "↵↵", "⇥", "␣⇥", "␣"});
  CHECK(labels({"a\nb", "x\ty"}) == std::vector<std::string>{"a↵b", "x⇥y"});
  CHECK(labels({"\r\n", "\x1b[0m"}) == std::vector<std::string>{"\\r↵", "\\x1B[0m"});
}

TEST_CASE("token labels: special tokens keep their text, broken bytes show U+FFFD") {
  CHECK(labels({"<s>", " Hi"}, {1, 0}) == std::vector<std::string>{"<s>", " Hi"});
  // A character cut off by a special token or by the end never completes.
  CHECK(labels({"\xE6\x88", "</s>"}, {0, 1}) == std::vector<std::string>{"\xEF\xBF\xBD", "</s>"});
  CHECK(labels({"a", "\xE6"}) == std::vector<std::string>{"a", "\xEF\xBF\xBD"});
  CHECK(labels({"\xFF" "a"}) == std::vector<std::string>{"\xEF\xBF\xBD" "a"});
  CHECK(labels({""}) == std::vector<std::string>{"∅"});
}

TEST_CASE("token labels: a byte-level encoding of Chinese never shows the table's mojibake") {
  // No merges: every byte is its own token, so each character spans three tokens.
  const auto t = from_document(byte_level_document(byte_level_vocab()));
  const Encoding e = t->encode("我喜欢 ok", false);
  REQUIRE(e.size() == 12);
  CHECK(e.pieces[0] == "æ");  // the table character of E6: what a naive label would show
  CHECK(e.labels == std::vector<std::string>{"·", "·", "我", "·", "·", "喜", "·", "·", "欢", "␣", "o", "k"});
  std::string joined;
  for (const std::string& b : e.bytes) joined += b;
  CHECK(joined == "我喜欢 ok");
}
