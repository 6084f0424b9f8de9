// Tokenizer and sample embeddings (SPEC "Tokens and sample embeddings").
#include <doctest/doctest.h>

#include "attnscope/text/embeddings.h"
#include "attnscope/core/error.h"
#include "attnscope/text/tokenizer.h"

using namespace attnscope;

namespace {
std::vector<std::string> texts(std::string_view s) {
  std::vector<std::string> out;
  for (const Token& t : tokenize(s)) out.push_back(t.text);
  return out;
}
}  // namespace

TEST_CASE("tokenizer: English words and punctuation") {
  CHECK(texts("The cat sat on the mat because it was tired.") ==
        std::vector<std::string>{"The", "cat", "sat", "on", "the", "mat", "because", "it", "was", "tired", "."});
  CHECK(texts("Hello, world! (x2)") == std::vector<std::string>{"Hello", ",", "world", "!", "(", "x2", ")"});
  CHECK(texts("don't stop...") == std::vector<std::string>{"don", "'", "t", "stop", ".", ".", "."});
  CHECK(texts("GPT-2 has 12 heads") == std::vector<std::string>{"GPT", "-", "2", "has", "12", "heads"});
  const auto tokens = tokenize("a  bc.");
  REQUIRE(tokens.size() == 3);
  CHECK(tokens[1].byte_begin == 3);
  CHECK(tokens[1].byte_end == 5);
  CHECK(tokens[2].kind == TokenKind::punctuation);
}

TEST_CASE("tokenizer: each CJK ideograph is its own token") {
  CHECK(texts("我喜欢打篮球") == std::vector<std::string>{"我", "喜", "欢", "打", "篮", "球"});
  CHECK(texts("我喜欢打篮球。") == std::vector<std::string>{"我", "喜", "欢", "打", "篮", "球", "。"});
  CHECK(tokenize("我")[0].kind == TokenKind::cjk);
  CHECK(texts("「你好」，世界！") == std::vector<std::string>{"「", "你", "好", "」", "，", "世", "界", "！"});
}

TEST_CASE("tokenizer: mixed scripts, accents and full-width spaces") {
  CHECK(texts("我爱 Paris 和 café!") == std::vector<std::string>{"我", "爱", "Paris", "和", "café", "!"});
  CHECK(texts("GPU是好的") == std::vector<std::string>{"GPU", "是", "好", "的"});
  CHECK(texts("a\u3000b") == std::vector<std::string>{"a", "b"});  // ideographic space
}

TEST_CASE("tokenizer: empty and whitespace-only text give no tokens") {
  CHECK(tokenize("").empty());
  CHECK(tokenize(" \t\n  ").empty());
  CHECK_THROWS_WITH_AS(embed_tokens(tokenize("   "), 8, 1), doctest::Contains("no tokens"), InputError);
}

TEST_CASE("tokenizer: invalid UTF-8 is rejected with its byte offset") {
  CHECK_THROWS_WITH_AS(tokenize("ab\xff"), doctest::Contains("byte 2"), InputError);
  CHECK_THROWS_WITH_AS(tokenize("abc\xe4\xbd"), doctest::Contains("byte 3: sequence truncated"), InputError);
  CHECK_THROWS_WITH_AS(tokenize("\xc0\xaf"), doctest::Contains("byte 0: overlong"), InputError);
  CHECK_THROWS_WITH_AS(tokenize("x\xed\xa0\x80"), doctest::Contains("byte 1: UTF-16 surrogate"), InputError);
  CHECK_THROWS_WITH_AS(tokenize("ok \x80"), doctest::Contains("byte 3: unexpected continuation"), InputError);
  CHECK_THROWS_WITH_AS(tokenize("\xe4x\xa0"), doctest::Contains("byte 1: expected a continuation"), InputError);
  CHECK_THROWS_WITH_AS(tokenize("\xf4\x90\x80\x80"), doctest::Contains("above U+10FFFF"), InputError);
}

TEST_CASE("embeddings: a token's vector depends on (seed, lower-cased text) only") {
  const Vec the1 = token_embedding("The", 16, 42), the2 = token_embedding("the", 16, 42);
  CHECK(the1 == the2);
  CHECK(token_embedding("the", 16, 43) != the1);
  CHECK(token_embedding("cat", 16, 42) != the1);
  CHECK(the1.cwiseAbs().maxCoeff() <= std::sqrt(3.0f));
  // The same word in two sentences at the same position gets the same row; positions differ.
  const Mat a = embed_tokens(tokenize("the cat"), 16, 42), b = embed_tokens(tokenize("the dog"), 16, 42);
  CHECK(a.row(0) == b.row(0));
  CHECK(a.row(1) != b.row(1));
  const Mat pe = sinusoidal_positions(4, 16);
  CHECK(Vec(a.row(1).transpose() - pe.row(1).transpose()).isApprox(token_embedding("cat", 16, 42), 1e-6f));
}

TEST_CASE("embeddings: sinusoidal positions follow Vaswani et al.") {
  const Mat pe = sinusoidal_positions(5, 8);
  CHECK(pe(0, 0) == 0.0f);
  CHECK(pe(0, 1) == 1.0f);
  CHECK(pe(3, 0) == doctest::Approx(std::sin(3.0)));
  CHECK(pe(3, 1) == doctest::Approx(std::cos(3.0)));
  CHECK(pe(2, 4) == doctest::Approx(std::sin(2.0 / std::pow(10000.0, 4.0 / 8))));
  CHECK(pe(2, 5) == doctest::Approx(std::cos(2.0 / std::pow(10000.0, 4.0 / 8))));
}
