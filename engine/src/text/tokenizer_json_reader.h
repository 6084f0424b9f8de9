// tokenizer_json_reader.h — reads a tokenizer.json (or a GPT-2 vocab.json) in one SAX pass.
//
// model.vocab and model.merges hold almost all of an 11 MB file (Qwen: 151,643 tokens and 151,387
// merges). Building them as nlohmann::json nodes and then copying them out costs three times the
// parse itself, so the reader streams those two straight into vectors and builds a json DOM only for
// the small rest (normalizer, pre_tokenizer, added_tokens, …).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnscope::text_detail {

struct TokenizerJsonDocument {
  nlohmann::json rest;                                  // the document without model.vocab and model.merges
  std::vector<std::pair<std::string, int64_t>> vocab;   // in file order
  std::vector<std::pair<std::string, std::string>> merges;
  bool has_vocab = false;
  bool has_merges = false;
};

// root_is_vocab: the whole document is a {token: id} object (GPT-2's vocab.json / encoder.json).
// Throws InputError naming `source`: not JSON (with the byte offset), nested deeper than 64, a vocab
// value that is not an integer id, a merge that is not "left right" or ["left", "right"].
TokenizerJsonDocument read_tokenizer_json(std::string_view text, const std::string& source, bool root_is_vocab);

// merges.txt: one "left right" per line; "#version" lines and empty lines are skipped.
std::vector<std::pair<std::string, std::string>> read_merges_txt(std::string_view text, const std::string& source);

}  // namespace attnscope::text_detail
