// tokenizer_json_reader.cpp — a SAX handler that builds a DOM except for model.vocab/model.merges.
#include "text/tokenizer_json_reader.h"

#include "attnscope/core/error.h"
#include "attnscope/text/tokenizer.h"
#include "text/token_quote.h"

namespace attnscope::text_detail {
namespace {

using json = nlohmann::json;

class Reader final : public nlohmann::json_sax<json> {
 public:
  Reader(TokenizerJsonDocument& doc, const std::string& source, bool root_is_vocab)
      : doc_(doc), source_(source), root_is_vocab_(root_is_vocab) {}

  std::string error;  // set when the handler stopped the parse

  bool null() override { return value(json(nullptr)); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override {
    if (mode_ == Mode::vocab) return vocab_id(v);
    return value(json(v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (mode_ == Mode::vocab) return vocab_id(v > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(v));
    return value(json(v));
  }
  bool number_float(number_float_t v, const string_t&) override {
    if (mode_ == Mode::vocab) return fail("model.vocab: the id of " + quote_token(key_) + " is not an integer");
    return value(json(v));
  }
  bool string(string_t& v) override {
    switch (mode_) {
      case Mode::vocab:
        return fail("model.vocab: the id of " + quote_token(key_) + " is a string, not an integer");
      case Mode::merges: {
        // The older format: "left right", split at the first space.
        const size_t space = v.find(' ');
        if (space == std::string::npos)
          return fail("model.merges[" + std::to_string(doc_.merges.size()) + "] " + quote_token(v) +
                      " is not two tokens separated by a space");
        doc_.merges.emplace_back(v.substr(0, space), v.substr(space + 1));
        return true;
      }
      case Mode::merge_pair:
        if (pair_.size() == 2) return fail(merge_pair_error());
        pair_.push_back(std::move(v));
        return true;
      case Mode::dom:
        return value(json(std::move(v)));
    }
    return true;
  }
  bool binary(binary_t&) override { return fail("binary values are not JSON text"); }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool start_object(std::size_t) override {
    if (mode_ != Mode::dom) return fail(mode_ == Mode::vocab ? "model.vocab must map tokens to integer ids"
                                                             : "model.merges must be a list of merges");
    if (frames_.size() >= 64) return fail("nested deeper than 64 levels");
    if (is_vocab_here()) {
      mode_ = Mode::vocab;
      doc_.has_vocab = true;
      frames_.push_back({nullptr, key_});
      return true;
    }
    frames_.push_back({add(json::object()), key_});
    return true;
  }
  bool end_object() override {
    if (mode_ == Mode::vocab) mode_ = Mode::dom;
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (mode_ == Mode::vocab) return fail("model.vocab: the id of " + quote_token(key_) + " is a list, not an integer");
    if (mode_ == Mode::merge_pair) return fail(merge_pair_error());
    if (mode_ == Mode::merges) {
      mode_ = Mode::merge_pair;
      pair_.clear();
      return true;
    }
    if (frames_.size() >= 64) return fail("nested deeper than 64 levels");
    if (frames_.size() == 2 && frames_[1].key == "model" && key_ == "merges" && frames_[1].value &&
        frames_[1].value->is_object()) {
      mode_ = Mode::merges;
      doc_.has_merges = true;
      frames_.push_back({nullptr, key_});
      return true;
    }
    frames_.push_back({add(json::array()), key_});
    return true;
  }
  bool end_array() override {
    if (mode_ == Mode::merge_pair) {
      if (pair_.size() != 2) return fail(merge_pair_error());
      doc_.merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      mode_ = Mode::merges;
      return true;
    }
    if (mode_ == Mode::merges) mode_ = Mode::dom;
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann's message already says where ("syntax error while parsing value - … at line 3, column 7").
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    error = "not valid JSON: " + what + " (byte " + std::to_string(position) + ")";
    return false;
  }

 private:
  enum class Mode { dom, vocab, merges, merge_pair };
  struct Frame {
    json* value;  // nullptr for the streamed vocab/merges
    std::string key;  // the key this container was stored under in its parent
  };

  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }
  std::string merge_pair_error() const {
    return "model.merges[" + std::to_string(doc_.merges.size()) + "] must be a string \"left right\" or a pair [\"left\", \"right\"]";
  }
  bool is_vocab_here() const {
    if (root_is_vocab_) return frames_.empty();
    return frames_.size() == 2 && frames_[1].key == "model" && key_ == "vocab" && frames_[1].value &&
           frames_[1].value->is_object();
  }
  bool vocab_id(int64_t id) {
    doc_.vocab.emplace_back(std::move(key_), id);
    return true;
  }
  // Stores a value in the current container (or as the root) and returns where it went.
  json* add(json v) {
    if (frames_.empty()) {
      doc_.rest = std::move(v);
      return &doc_.rest;
    }
    json* parent = frames_.back().value;
    if (parent->is_array()) {
      parent->push_back(std::move(v));
      return &parent->back();
    }
    json& slot = (*parent)[key_];  // a repeated key keeps its last value, as JSON readers usually do
    slot = std::move(v);
    return &slot;
  }
  bool value(json v) {
    if (mode_ == Mode::vocab) return fail("model.vocab: the id of " + quote_token(key_) + " is not an integer");
    if (mode_ == Mode::merges || mode_ == Mode::merge_pair) return fail(merge_pair_error());
    add(std::move(v));
    return true;
  }

  TokenizerJsonDocument& doc_;
  const std::string& source_;
  bool root_is_vocab_;
  Mode mode_ = Mode::dom;
  std::vector<Frame> frames_;
  std::string key_;
  std::vector<std::string> pair_;
};

}  // namespace

TokenizerJsonDocument read_tokenizer_json(std::string_view text, const std::string& source, bool root_is_vocab) {
  TokenizerJsonDocument doc;
  Reader reader(doc, source, root_is_vocab);
  // nlohmann checks that strings are valid UTF-8 (and that \u escapes pair their surrogates).
  const bool ok = json::sax_parse(text, &reader, json::input_format_t::json, /*strict=*/true);
  if (!ok) throw InputError(source + ": " + (reader.error.empty() ? "not valid JSON" : reader.error));
  if (root_is_vocab)
    require(doc.has_vocab, source + ": a vocab.json must be one object mapping tokens to ids, like {\"hello\": 31373}");
  return doc;
}

std::vector<std::pair<std::string, std::string>> read_merges_txt(std::string_view text, const std::string& source) {
  validate_utf8(text, source);
  std::vector<std::pair<std::string, std::string>> merges;
  size_t line_number = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.starts_with("#version")) continue;
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos || space == 0 ||
        space + 1 == line.size())
      throw InputError(source + ": line " + std::to_string(line_number) + " " + quote_token(line) +
                       " is not two tokens separated by one space (a merges.txt line is \"left right\")");
    merges.emplace_back(std::string(line.substr(0, space)), std::string(line.substr(space + 1)));
  }
  return merges;
}

}  // namespace attnscope::text_detail
