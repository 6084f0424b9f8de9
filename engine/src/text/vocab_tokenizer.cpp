// vocab_tokenizer.cpp — `attnscope train`'s vocab.json as a Tokenizer (vocab_tokenizer.h).
#include "attnscope/text/vocab_tokenizer.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/text/token_labels.h"
#include "attnscope/text/tokenizer.h"

namespace attnscope {
namespace {

enum class Level { chars, words, symbols };

class TrainVocabTokenizer final : public Tokenizer {
 public:
  TrainVocabTokenizer(Level level, std::vector<std::string> tokens, std::string source)
      : level_(level), tokens_(std::move(tokens)), source_(std::move(source)) {
    for (size_t i = 0; i < tokens_.size(); ++i) id_of_.emplace(tokens_[i], int32_t(i));
  }

  TokenizerKind kind() const override {
    return level_ == Level::chars ? TokenizerKind::trained_chars
           : level_ == Level::words ? TokenizerKind::trained_words
                                    : TokenizerKind::trained_symbols;
  }
  std::string description() const override {
    return "vocab.json (attnscope train, " + std::string(level_name()) + "): " + std::to_string(tokens_.size()) +
           " tokens (" + source_ + ")";
  }
  bool has_vocabulary() const override { return true; }
  int32_t vocab_size() const override { return int32_t(tokens_.size()); }

  std::vector<int32_t> encode_ids(std::string_view text, bool) const override {
    require(int64_t(text.size()) <= limits::max_text_bytes,
            "the text has " + std::to_string(text.size()) + " bytes; at most " + std::to_string(limits::max_text_bytes) +
                " are allowed");
    std::vector<int32_t> ids;
    std::vector<std::string> unknown;  // distinct, in order of appearance
    auto add = [&](const std::string& piece) {
      if (auto it = id_of_.find(piece); it != id_of_.end()) ids.push_back(it->second);
      else if (std::find(unknown.begin(), unknown.end(), piece) == unknown.end()) unknown.push_back(piece);
    };
    switch (level_) {
      case Level::chars:
        for (char32_t cp : decode_utf8(text)) add(encode_utf8(cp));
        break;
      case Level::words:
        for (const Token& t : tokenize(text)) add(t.text);
        break;
      case Level::symbols:
        for (const Token& word : split_on_space(text)) {
          if (id_of_.count(word.text)) {
            add(word.text);
            continue;
          }
          // "ABCA": one-character symbols typed without spaces.
          for (char32_t cp : decode_utf8(word.text)) add(encode_utf8(cp));
        }
        break;
    }
    if (!unknown.empty()) {
      std::string list;
      const size_t shown = std::min<size_t>(unknown.size(), 8);
      for (size_t i = 0; i < shown; ++i) list += (i ? ", '" : "'") + visible_label(unknown[i]) + "'";
      if (unknown.size() > shown) list += " and " + std::to_string(unknown.size() - shown) + " more";
      throw InputError("this model's vocabulary (" + std::to_string(tokens_.size()) + " " + piece_kind() + ", " +
                       source_ + ") has no " + list + ": type only " + piece_kind() + " it knows, e.g. " + examples());
    }
    return ids;
  }

  Encoding describe(std::span<const int32_t> ids) const override {
    Encoding e;
    for (int32_t id : ids) {
      require(id >= 0 && id < int32_t(tokens_.size()), "token id " + std::to_string(id) + " is outside this model's "
                                                       "vocabulary (0 to " + std::to_string(tokens_.size() - 1) + ")");
      const std::string& piece = tokens_[size_t(id)];
      e.ids.push_back(id);
      e.pieces.push_back(piece);
      e.bytes.push_back(piece);
      e.labels.push_back(visible_label(piece));
      e.special.push_back(0);
    }
    return e;
  }

  std::string decode(std::span<const int32_t> ids, bool) const override {
    const Encoding e = describe(ids);
    std::string text;
    for (size_t i = 0; i < e.size(); ++i) {
      if (i > 0 && level_ != Level::chars) text += ' ';  // words and symbols are read back split on spaces
      text += e.bytes[i];
    }
    return text;
  }

 private:
  const char* level_name() const { return level_ == Level::chars ? "chars" : level_ == Level::words ? "words" : "symbols"; }
  const char* piece_kind() const { return level_ == Level::chars ? "characters" : level_ == Level::words ? "words" : "symbols"; }

  // The first few pieces, quoted: what the user may type instead.
  std::string examples() const {
    std::string out;
    int shown = 0;
    for (const std::string& piece : tokens_) {
      if (piece == "<unk>") continue;
      if (shown == 6) return out + ", …";
      out += (shown++ ? ", '" : "'") + visible_label(piece) + "'";
    }
    return out;
  }

  // Whitespace-separated words as they are (no punctuation split: "|" and "s52" are symbols).
  static std::vector<Token> split_on_space(std::string_view text) {
    std::vector<Token> out;
    const std::u32string cps = decode_utf8(text);
    std::string current;
    for (char32_t cp : cps) {
      if (is_space(cp)) {
        if (!current.empty()) out.push_back(Token{std::move(current), 0, 0, TokenKind::word});
        current.clear();
      } else {
        current += encode_utf8(cp);
      }
    }
    if (!current.empty()) out.push_back(Token{std::move(current), 0, 0, TokenKind::word});
    return out;
  }

  Level level_;
  std::vector<std::string> tokens_;
  std::string source_;
  std::unordered_map<std::string, int32_t> id_of_;
};

}  // namespace

bool is_train_vocab(std::string_view json_text) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  return j.is_object() && j.contains("tokens") && j["tokens"].is_array();
}

std::shared_ptr<const Tokenizer> train_vocab_tokenizer(std::string_view json_text, const std::string& source) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  require(!j.is_discarded(), source + ": not valid JSON");
  require(j.is_object() && j.contains("tokens") && j["tokens"].is_array(),
          source + ": not a vocabulary written by attnscope train (an object with a \"tokens\" list)");
  const std::string level = j.contains("level") && j["level"].is_string() ? j["level"].get<std::string>() : "";
  Level parsed = Level::symbols;
  if (level == "chars") parsed = Level::chars;
  else if (level == "words") parsed = Level::words;
  else require(level == "symbols", source + ": unknown level '" + level + "' (valid: chars, words, symbols)");
  std::vector<std::string> tokens;
  std::unordered_map<std::string, size_t> seen;
  for (const nlohmann::json& t : j["tokens"]) {
    const std::string at = source + ": token " + std::to_string(tokens.size());
    require(t.is_string() && !t.get<std::string>().empty(), at + " is not a non-empty string");
    const std::string piece = t.get<std::string>();
    validate_utf8(piece, at);
    const auto [first, fresh] = seen.emplace(piece, tokens.size());
    if (!fresh) throw InputError(at + " '" + visible_label(piece) + "' repeats token " + std::to_string(first->second));
    tokens.push_back(piece);
  }
  require(!tokens.empty(), source + ": the \"tokens\" list is empty");
  require(int64_t(tokens.size()) <= limits::max_vocab_tokens, source + ": too many tokens");
  return std::make_shared<const TrainVocabTokenizer>(parsed, std::move(tokens), source);
}

}  // namespace attnscope
