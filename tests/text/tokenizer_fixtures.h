// tokenizer_fixtures.h — small tokenizer.json documents built in code for the text tests.
//
// MiniVocab grows a vocabulary with merges the way BPE training does (each merge adds its join);
// byte_level_vocab() starts from GPT-2's 256 byte characters, so any text can be encoded.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/text/byte_level.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/text/tokenizer_interface.h"

namespace attnscope::test {

using json = nlohmann::json;

struct MiniVocab {
  json vocab = json::object();
  json merges = json::array();
  int next_id = 0;
  int add(const std::string& token) {
    if (!vocab.contains(token)) vocab[token] = next_id++;
    return vocab[token].get<int>();
  }
  // Adds the merge (and its join) with the next rank.
  void merge(const std::string& left, const std::string& right) {
    add(left);
    add(right);
    add(left + right);
    merges.push_back(json::array({left, right}));
  }
  json model(json extra = json::object()) const {
    json m = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"vocab", vocab}, {"merges", merges}};
    for (auto& [k, v] : extra.items()) m[k] = v;
    return m;
  }
};

// The 256 byte characters of GPT-2's table as ids 0 … 255, in byte order.
inline MiniVocab byte_level_vocab() {
  MiniVocab v;
  for (int b = 0; b < 256; ++b) v.add(encode_utf8(byte_to_unicode(uint8_t(b))));
  return v;
}

inline json tokenizer_document(json model, json normalizer = nullptr, json pre_tokenizer = nullptr,
                               json post_processor = nullptr, json decoder = nullptr, json added = json::array()) {
  return {{"version", "1.0"},           {"truncation", nullptr},         {"padding", nullptr},
          {"added_tokens", added},      {"normalizer", normalizer},      {"pre_tokenizer", pre_tokenizer},
          {"post_processor", post_processor}, {"decoder", decoder},      {"model", model}};
}

inline json added_token(int id, const std::string& content, bool special, json flags = json::object()) {
  json t = {{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
            {"normalized", !special}, {"special", special}};
  for (auto& [k, v] : flags.items()) t[k] = v;
  return t;
}

inline std::shared_ptr<const Tokenizer> from_document(const json& doc, const std::string& config = {}) {
  return tokenizer_from_json(doc.dump(), "test.json", config, config.empty() ? std::string() : "tokenizer_config.json");
}

// GPT-2-style byte-level tokenizer: ByteLevel pre-tokenizer (GPT-2's regex) and decoder.
inline json byte_level_document(const MiniVocab& v, json added = json::array(), json post = nullptr) {
  return tokenizer_document(v.model(), nullptr,
                            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}},
                            post, {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}},
                            added);
}

}  // namespace attnscope::test
