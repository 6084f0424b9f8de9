// Loading tokenizer files (tokenizer_interface.h): the three kinds, folders, the cache, and every
// kind of bad input named with its file and problem.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/io/file_io.h"
#include "check.h"
#include "tokenizer_fixtures.h"
#include "test_tmp.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = attnscope::test::test_tmp() / "tokenizer_files" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A GPT-2 pair of files: the byte table plus two merges.
void write_gpt2_files(const fs::path& dir, const std::string& vocab_name = "vocab.json",
                      const std::string& merges_name = "merges.txt") {
  MiniVocab v = byte_level_vocab();
  v.merge("Ġ", "t");
  v.merge("h", "e");
  write_file_atomic(dir / vocab_name, v.vocab.dump());
  write_file_atomic(dir / merges_name, "#version: 0.2\nĠ t\nh e\n");
}

std::string load_error(const std::string& json_text) {
  return error_of([&] { (void)tokenizer_from_json(json_text, "'bad.json'"); });
}

}  // namespace

TEST_CASE("tokenizer files: the word tokenizer is SPEC's, without ids") {
  const auto t = word_tokenizer();
  CHECK(t->kind() == TokenizerKind::words);
  const Encoding e = t->encode("我喜欢 Paris!");
  CHECK(e.labels == std::vector<std::string>{"我", "喜", "欢", "Paris", "!"});
  CHECK(e.ids == std::vector<int32_t>(5, kNoTokenId));
  CHECK_FALSE(t->has_vocabulary());
  const std::vector<int32_t> ids{1};
  CHECK_THROWS_WITH_AS(t->decode(ids), doctest::Contains("no vocabulary"), InputError);
  CHECK_THROWS_WITH_AS(t->encode("ab\xff"), doctest::Contains("invalid UTF-8 at byte 2"), InputError);
}

TEST_CASE("tokenizer files: a GPT-2 vocab.json + merges.txt, as a file or as a folder") {
  const fs::path dir = fresh_dir("gpt2");
  write_gpt2_files(dir);
  for (const fs::path& p : {dir, dir / "vocab.json"}) {
    const auto t = load_tokenizer(p);
    CHECK(t->encode("the the", false).pieces == std::vector<std::string>{"t", "he", "Ġt", "he"});
    CHECK(t->vocab_size() == 256 + 2);  // the byte table, "Ġt" and "he"
    CHECK(t->description().find("GPT-2 vocab.json + merges.txt") == 0);
    CHECK(t->kind() == TokenizerKind::byte_level_bpe);
  }
  // OpenAI's own names: encoder.json with vocab.bpe beside it.
  const fs::path openai = fresh_dir("openai");
  write_gpt2_files(openai, "encoder.json", "vocab.bpe");
  CHECK(load_tokenizer(openai / "encoder.json")->encode_ids("the", false).size() == 2);
  // No merges beside the vocabulary.
  const fs::path lonely = fresh_dir("lonely");
  write_file_atomic(lonely / "vocab.json", R"({"a": 0})");
  CHECK_THROWS_WITH_AS(load_tokenizer(lonely / "vocab.json"), doctest::Contains("no merges.txt (or vocab.bpe)"), InputError);
}

TEST_CASE("tokenizer files: a folder's tokenizer.json comes first, with its tokenizer_config.json") {
  const fs::path dir = fresh_dir("hf");
  write_gpt2_files(dir);  // tokenizer.json wins over these
  MiniVocab v = byte_level_vocab();
  v.add("<s>");
  const int bos = v.vocab["<s>"];
  const json post = {{"type", "TemplateProcessing"},
                     {"single", json::array({"<s>", "$A"})},
                     {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {bos}}, {"tokens", {"<s>"}}}}}}};
  write_file_atomic(dir / "tokenizer.json", byte_level_document(v, json::array({added_token(bos, "<s>", true)}), post).dump());
  const auto t = load_tokenizer(dir);
  CHECK(t->description().find("tokenizer.json") == 0);
  CHECK(t->kind() == TokenizerKind::byte_level_bpe);
  CHECK(t->encode_ids("hi", true) == std::vector<int32_t>{bos, v.vocab["h"].get<int>(), v.vocab["i"].get<int>()});
  // A Llama-class config that turns BOS off (as a Llama-2 folder may state it) is obeyed.
  write_file_atomic(dir / "tokenizer_config.json",
                    R"({"tokenizer_class": "LlamaTokenizer", "add_bos_token": false, "bos_token": "<s>"})");
  CHECK(load_tokenizer(dir / "tokenizer.json")->encode_ids("hi", true).size() == 2);
  // A folder with neither kind of file.
  const fs::path empty = fresh_dir("empty");
  CHECK_THROWS_WITH_AS(load_tokenizer(empty), doctest::Contains("has no tokenizer.json, no vocab.json + merges.txt"),
                       InputError);
  CHECK_THROWS_WITH_AS(load_tokenizer(empty / "missing.json"), doctest::Contains("no such file or folder"), InputError);
  write_file_atomic(empty / "notes.txt", "x");
  CHECK_THROWS_WITH_AS(load_tokenizer(empty / "notes.txt"), doctest::Contains("cannot tell what tokenizer"), InputError);
}

TEST_CASE("tokenizer files: the cache gives the same tokenizer until the file changes") {
  const fs::path dir = fresh_dir("cache");
  write_gpt2_files(dir);
  const auto a = load_tokenizer_cached(dir);
  CHECK(load_tokenizer_cached(dir) == a);
  // Rewritten with one more merge (a different size, hence a different key).
  MiniVocab v = byte_level_vocab();
  v.merge("Ġ", "t");
  v.merge("h", "e");
  v.merge("t", "he");
  write_file_atomic(dir / "vocab.json", v.vocab.dump());
  write_file_atomic(dir / "merges.txt", "#version: 0.2\nĠ t\nh e\nt he\n");
  const auto b = load_tokenizer_cached(dir);
  CHECK(b != a);
  CHECK(b->encode_ids("the", false).size() == 1);
}

TEST_CASE("tokenizer files: malformed JSON is refused with the file and the byte") {
  const std::string e = load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [})");
  CHECK(e.find("'bad.json': not valid JSON") == 0);
  CHECK(e.find("(byte ") != std::string::npos);
  CHECK(load_error("").find("not valid JSON") != std::string::npos);
  CHECK(load_error("[1, 2]").find("(top level): must be an object") != std::string::npos);
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []}})")
            .find("model.vocab: the id of 'a' is a string, not an integer") != std::string::npos);
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}})")
            .find("model.merges[0] 'ab' is not two tokens separated by a space") != std::string::npos);
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}})")
            .find("model.merges[0] must be a string") != std::string::npos);
  // Invalid UTF-8 inside a JSON string is a JSON error (nlohmann checks every string).
  CHECK(load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\xff\": 0}, \"merges\": []}}").find("not valid JSON") !=
        std::string::npos);
  CHECK(load_error(std::string(100, '[')).find("nested deeper than 64") != std::string::npos);
}

TEST_CASE("tokenizer files: merges naming unknown tokens and bad ids are refused") {
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a c"]}})") ==
        "'bad.json': model: merge 0 ('a' + 'c') names 'c', which is not in the vocabulary");
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}})") ==
        "'bad.json': model: merge 0 ('a' + 'b') makes 'ab', which is not in the vocabulary");
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}})")
            .find("id 0 is given to both 'a' and 'b'") != std::string::npos);
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 99999999}, "merges": []}})")
            .find("the id of 'a' is 99999999, outside 0 … 4194303") != std::string::npos);
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}})").find("is -1, outside") !=
        std::string::npos);
  // Added tokens must agree with the vocabulary and with each other.
  const std::string base = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}, "added_tokens": )";
  CHECK(load_error(base + R"([{"id": 5, "content": "a", "special": true}]})")
            .find("added_tokens[0].id: the added token 'a' has id 5 but the vocabulary gives it id 0") != std::string::npos);
  CHECK(load_error(base + R"([{"id": 1, "content": "<s>", "special": true}]})")
            .find("id 1 is both the added token '<s>' and the vocabulary's 'b'") != std::string::npos);
  CHECK(load_error(base + R"([{"id": 7, "content": "<s>"}, {"id": 7, "content": "</s>"}]})")
            .find("id 7 is given to two added tokens") != std::string::npos);
  CHECK(load_error(base + R"([{"id": -2, "content": "<s>"}]})").find("added_tokens[0].id: -2 is outside 0") !=
        std::string::npos);
  // A template naming an id no token has.
  CHECK(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "post_processor": {"type": "TemplateProcessing",
      "single": ["<s>", "$A"], "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]}}}})")
            .find("id 3 names no token of this vocabulary") != std::string::npos);
}

TEST_CASE("tokenizer files: a regex that does not compile is refused with where it is") {
  const std::string e = load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(\\p{L}+"},
      "behavior": "Isolated", "invert": false}]}})");
  CHECK(e.find("'bad.json': pre_tokenizer.pretokenizers[0].pattern.Regex: the regex /(\\p{L}+/ does not compile: ") == 0);
  CHECK(e.find("missing closing parenthesis") != std::string::npos);
}

TEST_CASE("tokenizer files: unsupported models and components are refused by name") {
  const std::string vocab = R"("vocab": {"a": 0}, "merges": [])";
  CHECK(load_error(R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})")
            .find("model.type: 'WordPiece' is not supported: attnscope reads BPE models") != std::string::npos);
  CHECK(load_error(R"({"model": {"type": "Unigram", "vocab": [["a", 0.0]]}})").find("'Unigram' is not supported") !=
        std::string::npos);
  CHECK(load_error(R"({"model": {"vocab": {"a": 0}, "merges": []}})").find("model: the field \"type\" is missing") !=
        std::string::npos);
  const std::string model = R"("model": {"type": "BPE", )" + vocab + "}";
  CHECK(load_error("{" + model + R"(, "normalizer": {"type": "Lowercase"}})") ==
        "'bad.json': normalizer.type: 'Lowercase' is not supported (supported: NFC, NFKC, Prepend, Replace, Sequence)");
  CHECK(load_error("{" + model + R"(, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}]}})") ==
        "'bad.json': pre_tokenizer.pretokenizers[0].type: 'Whitespace' is not supported (supported: Split, ByteLevel, "
        "Metaspace, Digits, Sequence)");
  CHECK(load_error("{" + model + R"(, "post_processor": {"type": "RobertaProcessing"}})").find("'RobertaProcessing' is not supported") !=
        std::string::npos);
  CHECK(load_error("{" + model + R"(, "decoder": {"type": "WordPiece"}})").find("decoder.type: 'WordPiece' is not supported") !=
        std::string::npos);
  CHECK(load_error(R"({"model": {"type": "BPE", "dropout": 0.1, )" + vocab + "}}").find("model.dropout") != std::string::npos);
  CHECK(load_error(R"({"model": {"type": "BPE", "continuing_subword_prefix": "##", )" + vocab + "}}")
            .find("model.continuing_subword_prefix: is not supported") != std::string::npos);
  CHECK(load_error(R"({"vocab": {"a": 0}})").find("the field \"model\" is missing") != std::string::npos);
}

TEST_CASE("tokenizer files: a file over the size limit is refused before it is parsed") {
  const std::string big(size_t(limits::max_vocab_file_bytes) + 1, ' ');
  CHECK(load_error(big).find("more than the 64 MiB a tokenizer file may have") != std::string::npos);
  // On disk: read_file stops at the limit (a sparse file, so the test writes nothing real).
  const fs::path dir = fresh_dir("big");
  { std::ofstream(dir / "tokenizer.json") << "{"; }
  fs::resize_file(dir / "tokenizer.json", uintmax_t(limits::max_vocab_file_bytes) + 10);
  CHECK_THROWS_WITH_AS(load_tokenizer(dir), doctest::Contains("is larger than the limit of 67108864 bytes"), InputError);
}

TEST_CASE("tokenizer files: invalid UTF-8 text and merges files name the byte offset") {
  const fs::path dir = fresh_dir("utf8");
  write_gpt2_files(dir);
  const auto t = load_tokenizer(dir);
  CHECK_THROWS_WITH_AS(t->encode("ok \xe4\xbd"), doctest::Contains("invalid UTF-8 at byte 3: sequence truncated"), InputError);
  CHECK_THROWS_WITH_AS(t->encode_ids("\xc0\xaf"), doctest::Contains("invalid UTF-8 at byte 0: overlong"), InputError);
  write_file_atomic(dir / "merges.txt", "#version: 0.2\nĠ t\nh \xff\n");
  CHECK_THROWS_WITH_AS(load_tokenizer(dir), doctest::Contains("merges.txt': invalid UTF-8 at byte"), InputError);
  write_file_atomic(dir / "merges.txt", "#version: 0.2\nĠ t h\n");
  CHECK_THROWS_WITH_AS(load_tokenizer(dir), doctest::Contains("line 2 'Ġ t h' is not two tokens separated by one space"),
                       InputError);
  // Text over 1 MiB.
  CHECK_THROWS_WITH_AS(t->encode_ids(std::string(size_t(limits::max_text_bytes) + 1, 'a')),
                       doctest::Contains("the limit is 1048576"), InputError);
}

TEST_CASE("tokenizer files: ids outside the vocabulary are refused when decoding or describing") {
  const fs::path dir = fresh_dir("ids");
  write_gpt2_files(dir);
  const auto t = load_tokenizer(dir);
  const std::vector<int32_t> bad{3, 259};
  CHECK_THROWS_WITH_AS(t->decode(bad), doctest::Contains("token id 259 is not in the vocabulary"), InputError);
  CHECK_THROWS_WITH_AS(t->describe(bad), doctest::Contains("(ids are 0 … 257)"), InputError);
  const std::vector<int32_t> negative{-1};
  CHECK_THROWS_AS(t->decode(negative), InputError);
}
