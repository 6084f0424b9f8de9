// test_vocab_tokenizer.cpp — `attnscope train`'s vocab.json as a tokenizer (vocab_tokenizer.h).
#include <doctest/doctest.h>

#include <filesystem>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/text/tokenizer_interface.h"
#include "attnscope/text/vocab_tokenizer.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {
std::shared_ptr<const Tokenizer> vocab(const std::string& level, const std::string& tokens_json) {
  return train_vocab_tokenizer(R"({"task": "text", "level": ")" + level + R"(", "tokens": )" + tokens_json + "}",
                               "'vocab.json'");
}
}  // namespace

TEST_CASE("vocab tokenizer: chars give one id per character, spaces included, and decode back") {
  const auto t = vocab("chars", R"([" ", "a", "b", "我", "\n"])");
  CHECK(t->has_vocabulary());
  CHECK(t->vocab_size() == 5);
  CHECK(t->encode_ids("ab a") == std::vector<int32_t>{1, 2, 0, 1});
  CHECK(t->encode_ids("我\nb") == std::vector<int32_t>{3, 4, 2});
  const std::vector<int32_t> ids{1, 0, 3, 4};
  CHECK(t->decode(ids) == "a 我\n");
  const Encoding e = t->describe(ids);
  CHECK(e.pieces == std::vector<std::string>{"a", " ", "我", "\n"});
  CHECK(e.labels == std::vector<std::string>{"a", "␣", "我", "↵"});  // readable, as other tokenizers label them
}

TEST_CASE("vocab tokenizer: words split as SPEC's tokenizer splits them") {
  const auto t = vocab("words", R"(["the", "cat", ".", "sat", "<unk>"])");
  CHECK(t->encode_ids("the cat sat.") == std::vector<int32_t>{0, 1, 3, 2});
  const std::vector<int32_t> ids{0, 1, 3};
  CHECK(t->decode(ids) == "the cat sat");
  CHECK(t->encode_ids(t->decode(ids)) == ids);
}

TEST_CASE("vocab tokenizer: symbols take spaced names and runs of one-character symbols") {
  const auto t = vocab("symbols", R"(["A", "B", "C", "s52", "|"])");
  CHECK(t->encode_ids("A B C") == std::vector<int32_t>{0, 1, 2});
  CHECK(t->encode_ids("ABCA") == std::vector<int32_t>{0, 1, 2, 0});
  CHECK(t->encode_ids("s52 | AB") == std::vector<int32_t>{3, 4, 0, 1});
  const std::vector<int32_t> ids{2, 3, 4};
  CHECK(t->encode_ids(t->decode(ids)) == ids);
}

TEST_CASE("vocab tokenizer: unknown characters are an error that names them") {
  const auto chars = vocab("chars", R"(["a", "b"])");
  CHECK_THROWS_WITH_AS(chars->encode_ids("abxyx z"),
                       doctest::Contains("has no 'x', 'y', '␣', 'z': type only characters it knows, e.g. 'a', 'b'"),
                       InputError);
  const auto words = vocab("words", R"(["the", "cat"])");
  CHECK_THROWS_WITH_AS(words->encode_ids("the dog"), doctest::Contains("has no 'dog'"), InputError);
  const auto symbols = vocab("symbols", R"(["A", "B"])");
  CHECK_THROWS_WITH_AS(symbols->encode_ids("A Q"), doctest::Contains("has no 'Q'"), InputError);
  CHECK_THROWS_AS(chars->encode_ids("a\xff"), InputError);  // invalid UTF-8
  CHECK_THROWS_WITH_AS(chars->describe(std::vector<int32_t>{2}), doctest::Contains("outside this model's vocabulary"),
                       InputError);
}

TEST_CASE("vocab tokenizer: a malformed vocab.json is refused by name") {
  CHECK_THROWS_WITH_AS(train_vocab_tokenizer("{", "'v.json'"), doctest::Contains("'v.json': not valid JSON"), InputError);
  CHECK_THROWS_WITH_AS(vocab("letters", R"(["a"])"), doctest::Contains("unknown level 'letters'"), InputError);
  CHECK_THROWS_WITH_AS(vocab("chars", R"(["a", "a"])"), doctest::Contains("token 1 'a' repeats token 0"), InputError);
  CHECK_THROWS_WITH_AS(vocab("chars", R"(["a", 3])"), doctest::Contains("token 1 is not a non-empty string"), InputError);
  CHECK_THROWS_WITH_AS(vocab("chars", "[]"), doctest::Contains("list is empty"), InputError);
  CHECK(is_train_vocab(R"({"tokens": ["a"]})"));
  CHECK_FALSE(is_train_vocab(R"({"a": 0, "tokens": 1})"));  // GPT-2's piece → id table
}

TEST_CASE("vocab tokenizer: load_tokenizer reads a train-made folder and the shipped induction model") {
  const fs::path dir = test::fresh_dir("test_vocab_tokenizer_folder");
  write_file_atomic(dir / "vocab.json", R"({"task": "text", "level": "chars", "tokens": ["h", "i", " "]})");
  const auto t = load_tokenizer(dir);
  CHECK(t->description().find("attnscope train, chars") != std::string::npos);
  CHECK(t->kind() == TokenizerKind::trained_chars);
  CHECK(t->encode_ids("hi hi") == std::vector<int32_t>{0, 1, 2, 0, 1});
  CHECK(load_tokenizer(dir / "vocab.json")->vocab_size() == 3);

  const auto shipped = load_tokenizer_cached(fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "models" / "induction");
  CHECK(shipped->vocab_size() == 32);
  CHECK(shipped->kind() == TokenizerKind::trained_symbols);
  CHECK(shipped->encode_ids("A B C A B C") == std::vector<int32_t>{0, 1, 2, 0, 1, 2});
}
