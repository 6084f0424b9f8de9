// fuzz_entries.h — one entry point per fuzz target, shared by the libFuzzer executables
// (fuzz_main.cpp, built by scripts/fuzz.sh with clang) and by the normal test suite, which replays
// the committed corpus and every regression input through the same functions
// (tests/test_fuzz_corpus.cpp). Each entry must return normally for ANY bytes: user mistakes are
// InputError (caught here); anything else — a crash, a sanitizer report, another exception —
// is a bug.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/text/embeddings.h"
#include "attnscope/core/error.h"
#include "attnscope/relpos/grids.h"
#include "attnscope/io/npy.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/config.h"
#include "attnscope/core/parse_lists.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/text/bpe.h"
#include "attnscope/text/byte_level.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/text/tokenizer_interface.h"
#include "core/scene_options.h"
#include "core/translations.h"
#include "fuzz_mxfp4.h"

namespace attnscope::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void npy(const uint8_t* data, size_t size) {
  try {
    const NpyArray a = parse_npy(as_text(data, size), "fuzz.npy");
    int64_t count = 1;
    for (int64_t d : a.shape) count *= d;
    if (size_t(count) != a.data.size()) __builtin_trap();  // the parser's own promise
  } catch (const InputError&) {
  }
}

inline void scene_json(const uint8_t* data, size_t size) {
  try {
    const auto j = nlohmann::json::parse(as_text(data, size));
    std::vector<std::string> warnings;
    const Scene s = scene_from_json(j, &warnings);
    // What was read must write and read back identically.
    if (scene_to_json(scene_from_json(scene_to_json(s))) != scene_to_json(s)) __builtin_trap();
  } catch (const nlohmann::json::exception&) {
  } catch (const InputError&) {
  }
}

inline void tokenizer(const uint8_t* data, size_t size) {
  try {
    const auto tokens = tokenize(as_text(data, size));
    size_t last_end = 0;
    for (const Token& t : tokens) {
      if (t.byte_begin < last_end || t.byte_end <= t.byte_begin || t.byte_end > size) __builtin_trap();
      last_end = t.byte_end;
    }
    if (!tokens.empty() && tokens.size() <= 64) (void)embed_tokens(tokens, 8, 1);
  } catch (const InputError&) {
  }
}

// ---- tokenizer_json: arbitrary tokenizer.json text, and arbitrary text through loaded vocabularies ----

namespace tokenizer_json_detail {

using json = nlohmann::json;

// A byte-level vocabulary (GPT-2's 256 characters) with a few merges, Qwen's Split pattern, NFC,
// added tokens with every flag and a BOS/EOS template: decoding gives the text back exactly.
inline const Tokenizer& byte_level() {
  static const auto t = [] {
    json vocab = json::object(), merges = json::array();
    int id = 0;
    auto add = [&](const std::string& s) {
      if (!vocab.contains(s)) vocab[s] = id++;
    };
    for (int b = 0; b < 256; ++b) add(encode_utf8(byte_to_unicode(uint8_t(b))));
    for (auto [l, r] : {std::pair{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"æ", "Ī"}, {"æĪ", "ĳ"}, {"Ġ", "Ġ"}, {"1", "2"}}) {
      add(l), add(r), add(std::string(l) + r);
      merges.push_back(json::array({l, r}));
    }
    const std::string pattern =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    auto added = [&](int i, const char* content, bool special, bool lstrip, bool rstrip, bool single_word, bool normalized) {
      return json{{"id", i}, {"content", content}, {"special", special}, {"lstrip", lstrip}, {"rstrip", rstrip},
                  {"single_word", single_word}, {"normalized", normalized}};
    };
    const json doc = {
        {"added_tokens", json::array({added(id, "<|end|>", true, false, false, false, false),
                                      added(id + 1, "<m>", true, true, true, false, false),
                                      added(id + 2, "word", false, false, false, true, true)})},
        {"normalizer", {{"type", "NFC"}}},
        {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", json::array({
             {{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
             {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}}},
        {"post_processor", {{"type", "TemplateProcessing"}, {"single", json::array({"<|end|>", "$A", "<|end|>"})},
                            {"special_tokens", {{"<|end|>", {{"id", "<|end|>"}, {"ids", {id}}, {"tokens", {"<|end|>"}}}}}}}},
        {"decoder", {{"type", "ByteLevel"}}},
        {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
    return tokenizer_from_json(doc.dump(), "fuzz byte-level");
  }();
  return *t;
}

// A SentencePiece-style vocabulary: ▁ normalizer, byte fallback for everything, the Llama decoder.
inline const Tokenizer& sentencepiece() {
  static const auto t = [] {
    json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
    int id = 3;
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      vocab[name] = id++;
    }
    json merges = json::array();
    for (const char* s : {"▁", "a", "b", "t", "h", "e", "我"}) vocab[s] = id++;
    for (auto [l, r] : {std::pair{"▁", "t"}, {"h", "e"}, {"▁t", "he"}, {"a", "b"}}) {
      if (!vocab.contains(std::string(l) + r)) vocab[std::string(l) + r] = id++;
      merges.push_back(std::string(l) + " " + r);
    }
    const json doc = {
        {"added_tokens", json::array({{{"id", 0}, {"content", "<unk>"}, {"special", true}, {"normalized", false}},
                                      {{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
                                      {{"id", 2}, {"content", "</s>"}, {"special", true}, {"normalized", false}}})},
        {"normalizer", {{"type", "Sequence"}, {"normalizers", json::array({
             {{"type", "Prepend"}, {"prepend", "▁"}},
             {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}})}}},
        {"pre_tokenizer", nullptr},
        {"post_processor", {{"type", "TemplateProcessing"}, {"single", json::array({"<s>", "$A"})},
                            {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
        {"decoder", {{"type", "Sequence"}, {"decoders", json::array({
             {{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
             {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
             {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}}},
        {"model", {{"type", "BPE"}, {"unk_token", "<unk>"}, {"fuse_unk", true}, {"byte_fallback", true},
                   {"vocab", vocab}, {"merges", merges}}}};
    return tokenizer_from_json(doc.dump(), "fuzz sentencepiece");
  }();
  return *t;
}

// Encodes, describes and decodes; traps when an id is out of range, the per-token fields disagree
// in length, a label is not valid UTF-8, or a lossless tokenizer does not give the text back.
inline void exercise(const Tokenizer& t, std::string_view text, bool lossless) {
  std::vector<int32_t> ids;
  try {
    ids = t.encode_ids(text, false);
  } catch (const InputError&) {
    return;  // invalid UTF-8 or too long: a message, as promised
  }
  for (int32_t id : ids)
    if (id < 0 || id >= t.vocab_size()) __builtin_trap();
  const Encoding e = t.describe(ids);
  if (e.labels.size() != ids.size() || e.bytes.size() != ids.size() || e.pieces.size() != ids.size()) __builtin_trap();
  for (const std::string& label : e.labels) try {
      validate_utf8(label);
    } catch (const InputError&) {
      __builtin_trap();
    }
  const std::string decoded = t.decode(ids);
  try {
    validate_utf8(decoded);
  } catch (const InputError&) {
    __builtin_trap();
  }
  if (lossless && decoded != text) __builtin_trap();
  (void)t.encode_ids(text, true);
}

}  // namespace tokenizer_json_detail

// Input: tokenizer.json text, then optionally a NUL byte and a text to encode with it, then optionally
// another NUL byte and a tokenizer_config.json beside it (add_bos_token, clean_up_tokenization_spaces).
// The whole input is also encoded as text by two fixed vocabularies, so the encoder is fuzzed even
// when the JSON is broken; and the BPE fast path is checked against its plain-loop reference on it.
inline void tokenizer_json(const uint8_t* data, size_t size) {
  namespace d = tokenizer_json_detail;
  const std::string_view input = as_text(data, size);
  const size_t nul = input.find('\0');
  const std::string_view document = input.substr(0, nul);
  const std::string_view rest = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  const size_t nul2 = rest.find('\0');
  const std::string_view text = nul == std::string_view::npos ? std::string_view("Hello 世界 123!") : rest.substr(0, nul2);
  const std::string_view config = nul2 == std::string_view::npos ? std::string_view() : rest.substr(nul2 + 1);
  try {
    const auto t = tokenizer_from_json(document, "fuzz.json", config, config.empty() ? "" : "fuzz_config.json");
    d::exercise(*t, text, false);
  } catch (const InputError&) {
  }
  // Byte-level BPE gives the text back, except where NFC changes it (ASCII never changes) and where
  // "<m>" (lstrip/rstrip) takes the spaces around it.
  bool ascii = true;
  for (unsigned char c : input) ascii &= c < 0x80;
  d::exercise(d::byte_level(), input, ascii && input.find("<m>") == std::string_view::npos);
  // The ▁ scheme is lossless for text without ▁ itself and without its special tokens' strings.
  const bool plain = input.find("\xE2\x96\x81") == std::string_view::npos && input.find("<s>") == std::string_view::npos &&
                     input.find("</s>") == std::string_view::npos && input.find("<unk>") == std::string_view::npos;
  d::exercise(d::sentencepiece(), input, plain);
  // BPE merges: the heap against the plain loop, on the input as one word (short: the loop is O(n²)).
  static const BpeModel model = [] {
    std::vector<std::pair<std::string, int64_t>> vocab;
    std::vector<std::pair<std::string, std::string>> merges;
    for (int c = 'a'; c <= 'e'; ++c) vocab.emplace_back(std::string(1, char(c)), c - 'a');
    // Each merge joins two earlier tokens (a fixed pseudo-random choice): many ties and overlaps.
    for (unsigned i = 0, x = 12345; merges.size() < 120; ++i) {
      x = x * 1103515245u + 12345u;
      const auto& l = vocab[(x >> 8) % vocab.size()].first;
      x = x * 1103515245u + 12345u;
      const auto& r = vocab[(x >> 8) % vocab.size()].first;
      if (l.size() + r.size() > 6) continue;
      const std::string joined = l + r;
      merges.emplace_back(l, r);
      if (std::none_of(vocab.begin(), vocab.end(), [&](const auto& v) { return v.first == joined; }))
        vocab.emplace_back(joined, int64_t(vocab.size()));
    }
    return BpeModel(vocab, merges, BpeOptions{}, "fuzz");
  }();
  std::string word;
  for (size_t i = 0; i < size && word.size() < 200; ++i) word += char('a' + data[i] % 5);
  std::vector<int32_t> fast;
  model.encode_word(word, fast);
  if (fast != model.encode_word_reference(word)) __builtin_trap();
}

inline void lists(const uint8_t* data, size_t size) {
  const std::string_view text = as_text(data, size);
  try {
    (void)parse_number_list(text, "--alphas");
  } catch (const InputError&) {
  }
  for (int dims : {1, 2}) try {
      (void)parse_delta_list(text, dims);
    } catch (const InputError&) {
    }
  try {
    (void)parse_grid_size(text);
  } catch (const InputError&) {
  }
}

inline void image(const uint8_t* data, size_t size) {
  try {
    (void)decode_image_grid(as_text(data, size), "fuzz.png", 64, 64, size % 2 == 0);
  } catch (const InputError&) {
  }
}

// The command line: NUL-separated arguments parsed by the flags every command shares, then turned
// into a Scene. Subcommands are not registered, so nothing runs and nothing is written.
inline void cli(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"attnscope"};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += char(data[i]);
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  CLI::App app;
  cli::SceneOptions options;
  cli::add_scene_options(app, options, cli::flags_all);
  try {
    app.parse(int(argv.size()), argv.data());
    (void)cli::build_scene(options);
  } catch (const CLI::Error&) {
  } catch (const InputError&) {
  }
}

// A safetensors file's first bytes: the header is parsed and validated against the given length.
// Whatever passes must describe tensors that tile the data area exactly.
inline void safetensors(const uint8_t* data, size_t size) {
  try {
    const SafetensorsHeader h = parse_safetensors_header(as_text(data, size), size, "fuzz.safetensors");
    uint64_t at = 0;
    for (const SafetensorsTensor& t : h.tensors) {
      if (t.begin != at || t.end < t.begin) __builtin_trap();
      if (uint64_t(t.count()) * uint64_t(element_bytes(t.dtype)) != t.end - t.begin) __builtin_trap();
      at = t.end;
    }
    if (h.data_start + at != size) __builtin_trap();
    // Converting what the header promises must stay inside the bytes.
    std::vector<float> out;
    for (const SafetensorsTensor& t : h.tensors)
      if (converts_to_float32(t.dtype) && t.count() <= (1 << 16)) {
        out.resize(size_t(t.count()));
        convert_to_float32(data + h.data_start + t.begin, t.dtype, t.count(), out.data());
      }
  } catch (const InputError&) {
  }
}

// config.json text: accepted configs must describe a buildable network.
inline void model_config(const uint8_t* data, size_t size) {
  try {
    const model::ModelConfig c = model::parse_model_config(as_text(data, size), "fuzz/config.json");
    if (c.heads < 1 || c.kv_heads < 1 || c.heads % c.kv_heads != 0 || c.head_dim < 1 || c.layers < 1 ||
        c.vocab < 1 || c.parameter_count() <= 0)
      __builtin_trap();
    // A mixture's routing is well formed, and Granite's multipliers are positive.
    if (c.moe.experts > 0 && (c.moe.top_k < 1 || c.moe.top_k > c.moe.experts || c.moe.expert_ffn < 1 ||
                              c.moe.sparse_step < 1))
      __builtin_trap();
    if (!(c.attn_scale > 0) || !(c.residual_scale > 0) || !(c.logits_divisor > 0) || !(c.embedding_scale > 0))
      __builtin_trap();
    // Every accepted rope setting gives finite frequencies, one per rotated pair, at any input length.
    if (c.positions == model::PositionKind::rotary && !c.is_mla())
      for (int l = 0; l < std::min(c.layers, 4); ++l)
        for (const int T : {1, 2048})
          if (!c.nope_layer(l)) {
            const model::RopeFrequencies f = c.layer_rope(l, T);
            if (f.inv_freq.size() != size_t(c.rotated_dim() / 2) || !std::isfinite(f.attention_factor)) __builtin_trap();
            for (const float v : f.inv_freq)
              if (!std::isfinite(v) || v < 0) __builtin_trap();
          }
  } catch (const InputError&) {
  }
  try {
    const model::HeadCounts h = model::parse_head_counts(as_text(data, size), "fuzz/config.json");
    if (h.heads < 1 || h.kv_heads < 1 || h.heads % h.kv_heads != 0) __builtin_trap();
  } catch (const InputError&) {
  }
}

// tokens.json beside an attentions file: the first byte chooses T (1–16), the rest is the JSON. What is
// accepted holds T labels, and T ids or none.
inline void attention_tokens(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const int tokens = 1 + data[0] % 16;
  try {
    std::vector<int32_t> ids;
    std::vector<std::string> labels;
    model::parse_attention_tokens(as_text(data + 1, size - 1), tokens, "fuzz/tokens.json", ids, labels);
    if (int(labels.size()) != tokens || (!ids.empty() && int(ids.size()) != tokens)) __builtin_trap();
    for (int32_t id : ids)
      if (id < 0) __builtin_trap();
  } catch (const InputError&) {
  }
}

// A translation file of the window (assets/i18n/<code>.json): whatever it holds, every string kept
// has its English key's printf conversions, so trf() can never read a wrong argument.
inline void translations(const uint8_t* data, size_t size) {
  try {
    const Translations t = parse_translations(as_text(data, size), "fuzz.json");
    for (const auto& [english, translated] : t.strings)
      if (printf_conversions(english) != printf_conversions(translated) || translated.empty()) __builtin_trap();
  } catch (const InputError&) {
  }
}

// ---- the table of targets ------------------------------------------------------------------------
// Every target, by name: the fuzz executable picks one at start (ATTNSCOPE_FUZZ_TARGET), scripts/fuzz.sh
// runs each in turn, and the normal suite replays each one's corpus. A new target is one line here.
using Entry = void (*)(const uint8_t*, size_t);
struct Target {
  const char* name;
  Entry entry;
  int min_corpus;  // committed seed inputs it must have
};
inline constexpr Target targets[] = {
    {"npy", npy, 4},       {"scene_json", scene_json, 3}, {"tokenizer", tokenizer, 3},
    {"tokenizer_json", tokenizer_json, 6},
    {"lists", lists, 4},   {"image", image, 2},           {"cli", cli, 3},
    {"safetensors", safetensors, 4}, {"model_config", model_config, 4},
    {"translations", translations, 3}, {"attention_tokens", attention_tokens, 2},
    {"mxfp4", mxfp4, 4},
};

}  // namespace attnscope::fuzz
