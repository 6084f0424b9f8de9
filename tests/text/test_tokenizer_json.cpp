// tokenizer.json pipeline (hf_pipeline.h): normalizers, pre-tokenizers, added tokens, post-processors,
// decoders — each checked on a small document written here, against what the tokenizers library does.
#include <doctest/doctest.h>

#include "attnscope/core/error.h"
#include "text/hf_pipeline.h"
#include "tokenizer_fixtures.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

// The words the model sees (added tokens as their content).
std::vector<std::string> words(const Tokenizer& t, std::string_view text) {
  std::vector<std::string> out;
  for (const auto& p : dynamic_cast<const text_detail::HfTokenizer&>(t).pre_tokenize(text)) out.push_back(p.text);
  return out;
}

// Every character of `alphabet` as a token, no merges (words() shows the pre-tokenizer's cuts).
MiniVocab characters(const std::string& alphabet) {
  MiniVocab v;
  for (size_t i = 0; i < alphabet.size();) {
    const size_t n = (static_cast<unsigned char>(alphabet[i]) >= 0xF0) ? 4 : (static_cast<unsigned char>(alphabet[i]) >= 0xE0) ? 3
                     : (static_cast<unsigned char>(alphabet[i]) >= 0xC0) ? 2 : 1;
    v.add(alphabet.substr(i, n));
    i += n;
  }
  return v;
}

json split(const std::string& regex, const std::string& behavior, bool invert = false) {
  return {{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", behavior}, {"invert", invert}};
}

}  // namespace

TEST_CASE("tokenizer.json: GPT-2's pre-tokenizer pattern cuts words, numbers, punctuation and spaces") {
  const auto t = from_document(byte_level_document(byte_level_vocab()));
  // Words keep their leading space (as Ġ); "'s" is its own piece; a run of spaces gives all but the
  // last space to the run (\s+(?!\S)) so the last one starts the next word.
  CHECK(words(*t, "Hello world's  end!") ==
        std::vector<std::string>{"Hello", "Ġworld", "'s", "Ġ", "Ġend", "!"});
  CHECK(words(*t, "abc123 4") == std::vector<std::string>{"abc", "123", "Ġ4"});
  // Bytes become GPT-2's table characters: é = C3 A9 → Ã ©; a newline → Ċ.
  CHECK(words(*t, "é\n") == std::vector<std::string>{"Ã©", "Ċ"});
}

TEST_CASE("tokenizer.json: byte-level BPE merges and decodes back to the text") {
  MiniVocab v = byte_level_vocab();
  v.merge("Ġ", "t");
  v.merge("h", "e");
  v.merge("Ġt", "he");
  const auto t = from_document(byte_level_document(v));
  const Encoding e = t->encode("the the", false);
  CHECK(e.pieces == std::vector<std::string>{"t", "he", "Ġthe"});
  CHECK(e.ids[2] == v.vocab["Ġthe"].get<int>());
  CHECK(e.bytes == std::vector<std::string>{"t", "he", " the"});
  for (std::string text : {"the the", "我喜欢打篮球", "  tabs\tand\nnewlines  ", "emoji 👍🏽!", ""})
    CHECK(t->decode(t->encode_ids(text, false)) == text);
}

TEST_CASE("tokenizer.json: Split behaviours and invert follow the tokenizers library") {
  const MiniVocab v = characters("ab-");
  auto with = [&](json pre) { return from_document(tokenizer_document(v.model(), nullptr, pre)); };
  const std::string text = "a-b--a";
  CHECK(words(*with(split("-", "Isolated")), text) == std::vector<std::string>{"a", "-", "b", "-", "-", "a"});
  CHECK(words(*with(split("-", "Removed")), text) == std::vector<std::string>{"a", "b", "a"});
  CHECK(words(*with(split("-", "MergedWithPrevious")), text) == std::vector<std::string>{"a-", "b-", "-", "a"});
  CHECK(words(*with(split("-", "MergedWithNext")), text) == std::vector<std::string>{"a", "-b", "-", "-a"});
  CHECK(words(*with(split("-", "Contiguous")), text) == std::vector<std::string>{"a", "-", "b", "--", "a"});
  // invert: the pattern names what to keep; Removed then drops the rest.
  CHECK(words(*with(split("[ab]+", "Removed", true)), text) == std::vector<std::string>{"a", "b", "a"});
  // A literal String pattern matches as written ("." is not a wildcard).
  const auto literal = from_document(tokenizer_document(
      characters("a.b").model(), nullptr, {{"type", "Split"}, {"pattern", {{"String", "."}}}, {"behavior", "Removed"}, {"invert", false}}));
  CHECK(words(*literal, "a.b.") == std::vector<std::string>{"a", "b"});
}

TEST_CASE("tokenizer.json: Qwen's pattern (case-insensitive contractions, one digit per piece, newlines)") {
  const std::string qwen =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  const auto t = from_document(tokenizer_document(
      byte_level_vocab().model(), {{"type", "NFC"}},
      {{"type", "Sequence"},
       {"pretokenizers", json::array({split(qwen, "Isolated"),
                                      {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}},
      nullptr, {{"type", "ByteLevel"}}));
  CHECK(words(*t, "I'M 2024年") == std::vector<std::string>{"I", "'M", "Ġ", "2", "0", "2", "4", "å¹´"});
  CHECK(words(*t, "x\n\ny") == std::vector<std::string>{"x", "ĊĊ", "y"});
  CHECK(words(*t, "我喜欢") == std::vector<std::string>{"æĪĳåĸľæ¬¢"});  // one \p{L}+ run: three characters, nine bytes
}

TEST_CASE("tokenizer.json: normalizers NFC, NFKC, Prepend, Replace and Sequence") {
  const MiniVocab v = byte_level_vocab();
  auto with = [&](json normalizer) {
    return from_document(tokenizer_document(v.model(), normalizer,
                                            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}},
                                            nullptr, {{"type", "ByteLevel"}}));
  };
  // e + combining acute (65 CC 81) composes to é (C3 A9) under NFC.
  CHECK(with({{"type", "NFC"}})->decode(with({{"type", "NFC"}})->encode_ids("e\xCC\x81", false)) == "é");
  // NFKC folds compatibility forms: full-width letters, circled digits, the fi ligature.
  const auto nfkc = with({{"type", "NFKC"}});
  CHECK(nfkc->decode(nfkc->encode_ids("ＡＢ①ﬁ", false)) == "AB1fi");
  const auto seq = with({{"type", "Sequence"},
                         {"normalizers", json::array({{{"type", "Prepend"}, {"prepend", "▁"}},
                                                      {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}})}});
  CHECK(seq->decode(seq->encode_ids("a b", false)) == "▁a▁b");
  CHECK(seq->encode_ids("", false).empty());  // Prepend leaves empty text empty
  const auto regex = with({{"type", "Replace"}, {"pattern", {{"Regex", "[0-9]+"}}}, {"content", "#"}});
  CHECK(regex->decode(regex->encode_ids("a12b3", false)) == "a#b#");
}

TEST_CASE("tokenizer.json: Metaspace prepends ▁ as its scheme says and splits before each ▁") {
  const MiniVocab v = characters("▁abc");
  auto with = [&](const std::string& scheme, bool split_words) {
    return from_document(tokenizer_document(
        v.model(), nullptr,
        {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", scheme}, {"split", split_words}}, nullptr,
        {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", scheme}, {"split", split_words}},
        json::array({added_token(100, "<s>", true)})));
  };
  CHECK(words(*with("always", true), "ab  c") == std::vector<std::string>{"▁ab", "▁", "▁c"});
  CHECK(words(*with("never", true), "ab c") == std::vector<std::string>{"ab", "▁c"});
  CHECK(words(*with("always", false), "ab c") == std::vector<std::string>{"▁ab▁c"});
  // "first": only the piece that starts the text gets the ▁, not the one after a special token.
  CHECK(words(*with("first", true), "a<s>b") == std::vector<std::string>{"▁a", "<s>", "b"});
  CHECK(words(*with("always", true), "a<s>b") == std::vector<std::string>{"▁a", "<s>", "▁b"});
  // The decoder drops the first token's ▁ (the one the encoder added) and turns the others into spaces.
  const auto t = with("always", true);
  CHECK(t->decode(t->encode_ids("ab c", false)) == "ab c");
  // Older files say add_prefix_space instead of prepend_scheme.
  const auto old = from_document(tokenizer_document(
      v.model(), nullptr, {{"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", false}}));
  CHECK(words(*old, "ab c") == std::vector<std::string>{"ab", "▁c"});
}

TEST_CASE("tokenizer.json: Digits splits numbers, one digit each or whole runs") {
  const MiniVocab v = characters("ab0123456789");
  auto with = [&](bool individual) {
    return from_document(
        tokenizer_document(v.model(), nullptr, {{"type", "Digits"}, {"individual_digits", individual}}));
  };
  CHECK(words(*with(true), "ab123a") == std::vector<std::string>{"ab", "1", "2", "3", "a"});
  CHECK(words(*with(false), "ab123a4") == std::vector<std::string>{"ab", "123", "a", "4"});
}

TEST_CASE("tokenizer.json: ByteLevel add_prefix_space and use_regex") {
  const MiniVocab v = byte_level_vocab();
  auto with = [&](bool prefix, bool regex) {
    return from_document(tokenizer_document(
        v.model(), nullptr, {{"type", "ByteLevel"}, {"add_prefix_space", prefix}, {"use_regex", regex}}));
  };
  CHECK(words(*with(true, true), "hi there") == std::vector<std::string>{"Ġhi", "Ġthere"});
  CHECK(words(*with(true, true), " hi") == std::vector<std::string>{"Ġhi"});  // already starts with a space
  CHECK(words(*with(false, false), "hi there") == std::vector<std::string>{"hiĠthere"});
}

TEST_CASE("tokenizer.json: added tokens are found in the raw text first, special or not") {
  MiniVocab v = byte_level_vocab();
  const json added = json::array({added_token(256, "<|end|>", true), added_token(257, "<tool>", false, {{"normalized", false}}),
                                  added_token(258, "<|end|>x", true)});
  const auto t = from_document(byte_level_document(v, added));
  // Longest match wins where two start at the same place; the pre-tokenizer never sees them.
  CHECK(words(*t, "a<|end|>x<|end|> b<tool>") == std::vector<std::string>{"a", "<|end|>x", "<|end|>", "Ġb", "<tool>"});
  const Encoding e = t->encode("a<|end|><tool>", false);
  CHECK(e.ids == std::vector<int32_t>{v.vocab["a"].get<int>(), 256, 257});
  CHECK(e.special == std::vector<uint8_t>{0, 1, 0});
  // Decoding can skip the special tokens; non-special added tokens stay.
  CHECK(t->decode(e.ids) == "a<|end|><tool>");
  CHECK(t->decode(e.ids, true) == "a<tool>");
}

TEST_CASE("tokenizer.json: lstrip, rstrip and single_word change where an added token matches") {
  const MiniVocab v = byte_level_vocab();
  auto with = [&](json flags) {
    return from_document(byte_level_document(v, json::array({added_token(300, "<m>", true, flags)})));
  };
  // lstrip takes the whitespace before the token into it; rstrip the whitespace after.
  CHECK(words(*with({{"lstrip", true}}), "a  <m> b") == std::vector<std::string>{"a", "<m>", "Ġb"});
  CHECK(words(*with({{"rstrip", true}}), "a <m>  b") == std::vector<std::string>{"a", "Ġ", "<m>", "b"});
  // single_word: only where the token is not glued to a word character.
  CHECK(words(*with({{"single_word", true}}), "x<m> <m>") == std::vector<std::string>{"x", "<", "m", ">", "Ġ", "<m>"});
}

TEST_CASE("tokenizer.json: an added token with normalized on is matched in the normalized text") {
  // Llama-style normalizer: ▁ before the text, spaces as ▁. A normalized added token "hi" becomes "▁hi".
  MiniVocab v = characters("▁abhi");
  const json normalizer = {{"type", "Sequence"},
                           {"normalizers", json::array({{{"type", "Prepend"}, {"prepend", "▁"}},
                                                        {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}})}};
  const auto t = from_document(tokenizer_document(v.model(), normalizer, nullptr, nullptr, nullptr,
                                                  json::array({added_token(50, "hi", false, {{"normalized", true}})})));
  CHECK(words(*t, "hi ab") == std::vector<std::string>{"hi", "▁ab"});  // the added token, shown by its content
  CHECK(t->encode_ids("hi ab", false).front() == 50);
  CHECK(words(*t, "abhi") == std::vector<std::string>{"▁abhi"});  // "▁hi" does not occur in "▁abhi"
}

TEST_CASE("tokenizer.json: TemplateProcessing adds BOS/EOS only when special tokens are asked for") {
  MiniVocab v = characters("<s>/ab");
  v.add("<s>");
  v.add("</s>");
  const int bos = v.vocab["<s>"], eos = v.vocab["</s>"];
  const json post = {{"type", "TemplateProcessing"},
                     {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                             {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                             {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}})},
                     {"pair", json::array()},
                     {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {bos}}, {"tokens", {"<s>"}}}},
                                         {"</s>", {{"id", "</s>"}, {"ids", {eos}}, {"tokens", {"</s>"}}}}}}};
  const json added = json::array({added_token(bos, "<s>", true), added_token(eos, "</s>", true)});
  const json doc = tokenizer_document(v.model(), nullptr, nullptr, post, nullptr, added);
  const auto t = from_document(doc);
  const int a = v.vocab["a"];
  CHECK(t->encode_ids("a", true) == std::vector<int32_t>{bos, a, eos});
  CHECK(t->encode_ids("a", false) == std::vector<int32_t>{a});
  CHECK(t->encode_ids("", true) == std::vector<int32_t>{bos, eos});
  // A Llama-class tokenizer_config.json rebuilds the template from add_bos_token/add_eos_token, as
  // transformers' LlamaTokenizerFast does; other classes leave the file's template alone.
  const std::string llama_no_bos = R"({"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": false, "add_eos_token": true, "bos_token": "<s>", "eos_token": "</s>"})";
  CHECK(from_document(doc, llama_no_bos)->encode_ids("a", true) == std::vector<int32_t>{a, eos});
  const std::string llama_default = R"({"tokenizer_class": "LlamaTokenizer", "bos_token": {"content": "<s>", "__type": "AddedToken"}})";
  CHECK(from_document(doc, llama_default)->encode_ids("a", true) == std::vector<int32_t>{bos, a});
  const std::string qwen = R"({"tokenizer_class": "Qwen2Tokenizer", "add_bos_token": false})";
  CHECK(from_document(doc, qwen)->encode_ids("a", true) == std::vector<int32_t>{bos, a, eos});
}

TEST_CASE("tokenizer.json: clean_up_tokenization_spaces in tokenizer_config.json (Llama 3) tidies the decode") {
  // Llama 3's tokenizer_config.json sets it true: transformers (and transformers.js) then remove the
  // space before . ? ! , and English contractions when decoding, so "y != 2" decodes as "y!= 2".
  const json doc = byte_level_document(byte_level_vocab());
  const std::string text = "if y != 2 , it 's what they 're , they do n't , isn 't it ' ok ' ?";
  const std::string on = R"({"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": true})";
  const auto cleaned = from_document(doc, on);
  CHECK(cleaned->decode(cleaned->encode_ids(text, false)) == "if y!= 2, it's what they're, they don't, isn 't it'ok '?");
  CHECK(text_detail::clean_up_tokenization(" . ? ! , ' n't 'm 's 've 're") == ".?!,'n't'm's've're");
  // One rule after the other, as Python's str.replace chain: " ?" goes first, so "' ?" is no " ' ".
  CHECK(text_detail::clean_up_tokenization("a ' ?") == "a '?");
  CHECK(text_detail::clean_up_tokenization("no change: a.b 'x y") == "no change: a.b 'x y");
  // Off, absent (transformers' default since 4.45), or with no tokenizer_config.json: the text back.
  for (const std::string config : {std::string(R"({"clean_up_tokenization_spaces": false})"), std::string("{}"), std::string()}) {
    const auto plain = from_document(doc, config);
    CHECK(plain->decode(plain->encode_ids(text, false)) == text);
  }
  CHECK_THROWS_WITH_AS(from_document(doc, R"({"clean_up_tokenization_spaces": "yes"})"),
                       doctest::Contains("clean_up_tokenization_spaces: must be true or false"), InputError);
}

TEST_CASE("tokenizer.json: the SentencePiece-style decoder chain (Replace, ByteFallback, Fuse, Strip)") {
  MiniVocab v = characters("▁ab");
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    v.add(name);
  }
  const json normalizer = {{"type", "Sequence"},
                           {"normalizers", json::array({{{"type", "Prepend"}, {"prepend", "▁"}},
                                                        {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}})}};
  const json decoder = {{"type", "Sequence"},
                        {"decoders", json::array({{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                                                  {{"type", "ByteFallback"}},
                                                  {{"type", "Fuse"}},
                                                  {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}};
  const auto t = from_document(tokenizer_document(v.model({{"byte_fallback", true}}), normalizer, nullptr, nullptr, decoder));
  // 我 = E6 88 91 is not in the vocabulary: three byte tokens, joined again by the decoder.
  const Encoding e = t->encode("a 我", false);
  CHECK(e.pieces == std::vector<std::string>{"▁", "a", "▁", "<0xE6>", "<0x88>", "<0x91>"});
  CHECK(e.labels == std::vector<std::string>{"␣", "a", "␣", "·", "·", "我"});
  CHECK(t->decode(e.ids) == "a 我");
  CHECK(t->decode(t->encode_ids("  ab", false)) == "  ab");
  // Byte tokens that are not UTF-8 decode to one U+FFFD each (the library's rule).
  const std::vector<int32_t> broken{v.vocab["<0xE6>"].get<int>(), v.vocab["a"].get<int>()};
  CHECK(t->decode(broken) == "\xEF\xBF\xBD" "a");
  CHECK(t->kind() == TokenizerKind::sentencepiece_bpe);  // what a window names it (Llama's family)
}
