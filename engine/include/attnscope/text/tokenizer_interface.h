// tokenizer_interface.h — one interface for every tokenizer attnscope knows.
//
//   word_tokenizer()        SPEC's words/ideographs/punctuation (tokenizer.h); no vocabulary, so no ids.
//                           The default for scenes without a tokenizer file.
//   load_tokenizer(path)    a real model's files, run exactly as the model's own tokenizer runs them:
//     - tokenizer.json (Hugging Face tokenizers): BPE model; normalizers NFC, NFKC, Prepend, Replace,
//       Sequence; pre-tokenizers Split, ByteLevel, Metaspace, Digits, Sequence; added tokens matched in
//       the text first; post-processors TemplateProcessing, ByteLevel, Sequence; decoders ByteLevel,
//       Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence. Anything else is refused by name.
//     - vocab.json + merges.txt (GPT-2): byte-level BPE with GPT-2's pre-tokenizer pattern.
//     - a folder (a Hugging Face checkpoint): its tokenizer.json, else its vocab.json + merges.txt.
//       A tokenizer_config.json beside tokenizer.json is read for add_bos_token/add_eos_token where
//       the transformers library reads them (the Llama/Gemma tokenizer classes).
//
// Encoding (legend: T tokens):
//   ids     [T]  vocabulary ids (kNoTokenId for the word tokenizer)
//   pieces  [T]  vocabulary entries as the files write them: "Ġcat", "▁cat", "<0xE6>", "<s>"
//   bytes   [T]  what each token contributes to the text, raw: " cat", "\xE6", "<s>"
//   labels  [T]  readable text for heatmap axes (token_labels.h: spaces, split characters, controls)
//   special [T]  1 for special tokens (BOS/EOS, <|im_start|>, …), which decode(…, true) leaves out
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

inline constexpr int32_t kNoTokenId = -1;

struct Encoding {
  std::vector<int32_t> ids;
  std::vector<std::string> pieces;
  std::vector<std::string> bytes;
  std::vector<std::string> labels;
  std::vector<uint8_t> special;
  size_t size() const { return ids.size(); }
};

// What kind of tokenizer it is, for a window to name it in its own language.
enum class TokenizerKind {
  words,              // SPEC's words and ideographs (no vocabulary)
  byte_level_bpe,     // GPT-2's family: BPE over bytes mapped to printable characters ("Ġcat")
  sentencepiece_bpe,  // Llama's family: BPE over "▁"-marked text with byte fallback ("<0xE6>")
  bpe,                // another BPE pipeline
  trained_chars,      // vocab.json of `attnscope train`: one token per character
  trained_words,      //   one token per word
  trained_symbols,    //   one token per symbol of a synthetic task (the shipped induction model)
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual TokenizerKind kind() const = 0;

  // One line for status bars and errors: "tokenizer.json: BPE, 151665 ids (…/tokenizer.json)".
  virtual std::string description() const = 0;
  virtual bool has_vocabulary() const = 0;
  virtual int32_t vocab_size() const = 0;  // largest id + 1; 0 without a vocabulary

  // Text → ids. add_special_tokens adds what the files' post-processor adds (Llama's BOS <s>).
  // Throws InputError on invalid UTF-8 (naming the byte offset) or text over limits::max_text_bytes.
  virtual std::vector<int32_t> encode_ids(std::string_view text, bool add_special_tokens = true) const = 0;
  // Text → ids with pieces, bytes and labels.
  virtual Encoding encode(std::string_view text, bool add_special_tokens = true) const;
  // Pieces, bytes, labels and special flags for any ids of this vocabulary. Throws InputError for an
  // id outside it (and always for the word tokenizer, which has no ids).
  virtual Encoding describe(std::span<const int32_t> ids) const = 0;
  // Ids → text through the files' decoder: decode(encode_ids(t, false)) == t for byte-level BPE and
  // for byte-fallback BPE (NFC/NFKC normalizers excepted: those change the text on purpose).
  virtual std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const = 0;
};

// The SPEC word tokenizer (shared, stateless).
std::shared_ptr<const Tokenizer> word_tokenizer();

// Loads a tokenizer.json file, a vocab.json (merges.txt, or OpenAI's vocab.bpe, beside it) or a
// folder holding either. Files are read through io/file_io.h with limits::max_vocab_file_bytes.
// Throws InputError naming the file and the problem.
std::shared_ptr<const Tokenizer> load_tokenizer(const std::filesystem::path& path);

// load_tokenizer() behind a small cache keyed by the path and the files' sizes and modification
// times, so the window's worker does not re-read 11 MB on every slider move. Thread-safe.
std::shared_ptr<const Tokenizer> load_tokenizer_cached(const std::filesystem::path& path);

// From text in memory (tests, fuzzing). `config_json` is tokenizer_config.json text, or empty.
std::shared_ptr<const Tokenizer> tokenizer_from_json(std::string_view json_text, const std::string& source,
                                                     std::string_view config_json = {},
                                                     const std::string& config_source = {});
std::shared_ptr<const Tokenizer> tokenizer_from_gpt2_files(std::string_view vocab_json, std::string_view merges_txt,
                                                           const std::string& vocab_source,
                                                           const std::string& merges_source);

}  // namespace attnscope
