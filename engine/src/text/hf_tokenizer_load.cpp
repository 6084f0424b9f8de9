// hf_tokenizer_load.cpp — tokenizer.json / vocab.json + merges.txt → Pipeline, checking every part.
//
// Every message names the file and the JSON path of the part at fault, says what is wrong and what
// would be valid: "tokenizer.json: pre_tokenizer.pretokenizers[1].type: 'Whitespace' is not supported
// (supported: Split, ByteLevel, Metaspace, Digits, Sequence)".
#include <algorithm>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/text/tokenizer.h"
#include "text/hf_pipeline.h"
#include "text/token_quote.h"
#include "text/tokenizer_json_reader.h"
#include "text/unicode_text.h"

namespace attnscope {
namespace text_detail {
namespace {

using json = nlohmann::json;

class Loader {
 public:
  explicit Loader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw InputError(source_ + ": " + path + ": " + message);
  }

  const json& object(const json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "must be an object, got " + std::string(j.type_name()));
    return j;
  }
  const json& member(const json& obj, const std::string& path, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("the field \"") + key + "\" is missing");
    return *it;
  }
  std::string string_member(const json& obj, const std::string& path, const char* key) const {
    const json& v = member(obj, path, key);
    if (!v.is_string()) fail(path + "." + key, "must be a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
  }
  bool bool_member(const json& obj, const std::string& path, const char* key, bool fallback) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) fail(path + "." + key, "must be true or false, got " + std::string(it->type_name()));
    return it->get<bool>();
  }
  int64_t int_member(const json& obj, const std::string& path, const char* key, int64_t lo, int64_t hi) const {
    const json& v = member(obj, path, key);
    if (!v.is_number_integer()) fail(path + "." + key, "must be an integer, got " + std::string(v.type_name()));
    const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX) ? INT64_MAX : v.get<int64_t>();
    if (x < lo || x > hi)
      fail(path + "." + key, std::to_string(x) + " is outside " + std::to_string(lo) + " … " + std::to_string(hi));
    return x;
  }
  std::string type_of(const json& obj, const std::string& path) const {
    object(obj, path);
    return string_member(obj, path, "type");
  }
  // One character (Metaspace's replacement, Strip's content).
  std::string one_char_member(const json& obj, const std::string& path, const char* key) const {
    const std::string s = string_member(obj, path, key);
    size_t i = 0;
    if (!s.empty()) (void)next_code_point(s, i);
    if (s.empty() || i != s.size()) fail(path + "." + key, quote_token(s) + " must be exactly one character");
    return s;
  }
  [[noreturn]] void unsupported(const std::string& path, const std::string& what, const std::string& supported) const {
    fail(path + ".type", quote_token(what) + " is not supported (supported: " + supported + ")");
  }

  Pattern pattern(const json& j, const std::string& path) const {
    object(j, path);
    if (j.size() == 1 && j.contains("String")) {
      if (!j["String"].is_string()) fail(path + ".String", "must be a string");
      return Pattern{j["String"].get<std::string>(), nullptr};
    }
    if (j.size() == 1 && j.contains("Regex")) {
      if (!j["Regex"].is_string()) fail(path + ".Regex", "must be a string");
      return Pattern{{}, std::make_shared<const Regex>(j["Regex"].get<std::string>(), source_ + ": " + path + ".Regex")};
    }
    fail(path, "a pattern must be {\"String\": \"…\"} or {\"Regex\": \"…\"}");
  }

  PrependScheme prepend_scheme(const json& j, const std::string& path) const {
    std::optional<PrependScheme> scheme;
    if (const auto it = j.find("prepend_scheme"); it != j.end() && !it->is_null()) {
      const std::string s = string_member(j, path, "prepend_scheme");
      if (s == "always") scheme = PrependScheme::always;
      else if (s == "first") scheme = PrependScheme::first;
      else if (s == "never") scheme = PrependScheme::never;
      else fail(path + ".prepend_scheme", quote_token(s) + " is not one of always, first, never");
    }
    // Older files say add_prefix_space instead; false means never (the library's reading).
    if (j.contains("add_prefix_space") && !bool_member(j, path, "add_prefix_space", true)) {
      if (scheme && *scheme != PrependScheme::never)
        fail(path, "add_prefix_space is false but prepend_scheme is not \"never\"");
      scheme = PrependScheme::never;
    }
    return scheme.value_or(PrependScheme::always);
  }

  void normalizer(const json& j, const std::string& path, std::vector<NormalizerStep>& out) const {
    const std::string type = type_of(j, path);
    if (type == "NFC") {
      out.push_back({NormalizerStep::Kind::nfc, {}, {}});
    } else if (type == "NFKC") {
      out.push_back({NormalizerStep::Kind::nfkc, {}, {}});
    } else if (type == "Prepend") {
      out.push_back({NormalizerStep::Kind::prepend, string_member(j, path, "prepend"), {}});
    } else if (type == "Replace") {
      out.push_back({NormalizerStep::Kind::replace, string_member(j, path, "content"),
                     pattern(member(j, path, "pattern"), path + ".pattern")});
    } else if (type == "Sequence") {
      const json& list = member(j, path, "normalizers");
      if (!list.is_array()) fail(path + ".normalizers", "must be a list");
      for (size_t i = 0; i < list.size(); ++i) normalizer(list[i], path + ".normalizers[" + std::to_string(i) + "]", out);
    } else {
      unsupported(path, type, "NFC, NFKC, Prepend, Replace, Sequence");
    }
  }

  void pre_tokenizer(const json& j, const std::string& path, std::vector<PreTokenizerStep>& out) const {
    const std::string type = type_of(j, path);
    PreTokenizerStep step{};
    if (type == "Split") {
      step.kind = PreTokenizerStep::Kind::split;
      step.pattern = pattern(member(j, path, "pattern"), path + ".pattern");
      const std::string b = string_member(j, path, "behavior");
      if (b == "Removed") step.behavior = SplitBehavior::removed;
      else if (b == "Isolated") step.behavior = SplitBehavior::isolated;
      else if (b == "MergedWithPrevious") step.behavior = SplitBehavior::merged_with_previous;
      else if (b == "MergedWithNext") step.behavior = SplitBehavior::merged_with_next;
      else if (b == "Contiguous") step.behavior = SplitBehavior::contiguous;
      else fail(path + ".behavior", quote_token(b) + " is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
      step.invert = bool_member(j, path, "invert", false);
    } else if (type == "ByteLevel") {
      step.kind = PreTokenizerStep::Kind::byte_level;
      step.add_prefix_space = bool_member(j, path, "add_prefix_space", false);
      step.use_regex = bool_member(j, path, "use_regex", true);
    } else if (type == "Metaspace") {
      step.kind = PreTokenizerStep::Kind::metaspace;
      step.replacement = one_char_member(j, path, "replacement");
      step.prepend = prepend_scheme(j, path);
      step.split = bool_member(j, path, "split", true);
    } else if (type == "Digits") {
      step.kind = PreTokenizerStep::Kind::digits;
      step.individual_digits = bool_member(j, path, "individual_digits", false);
    } else if (type == "Sequence") {
      const json& list = member(j, path, "pretokenizers");
      if (!list.is_array()) fail(path + ".pretokenizers", "must be a list");
      for (size_t i = 0; i < list.size(); ++i)
        pre_tokenizer(list[i], path + ".pretokenizers[" + std::to_string(i) + "]", out);
      return;
    } else {
      unsupported(path, type, "Split, ByteLevel, Metaspace, Digits, Sequence");
    }
    out.push_back(std::move(step));
  }

  void decoder(const json& j, const std::string& path, std::vector<DecoderStep>& out) const {
    const std::string type = type_of(j, path);
    DecoderStep step{};
    if (type == "ByteLevel") {
      step.kind = DecoderStep::Kind::byte_level;
    } else if (type == "Metaspace") {
      step.kind = DecoderStep::Kind::metaspace;
      step.replacement = one_char_member(j, path, "replacement");
      step.prepend = prepend_scheme(j, path);
    } else if (type == "Replace") {
      step.kind = DecoderStep::Kind::replace;
      step.pattern = pattern(member(j, path, "pattern"), path + ".pattern");
      step.content = string_member(j, path, "content");
    } else if (type == "ByteFallback") {
      step.kind = DecoderStep::Kind::byte_fallback;
    } else if (type == "Fuse") {
      step.kind = DecoderStep::Kind::fuse;
    } else if (type == "Strip") {
      step.kind = DecoderStep::Kind::strip;
      step.content = one_char_member(j, path, "content");
      step.start = size_t(int_member(j, path, "start", 0, 1 << 20));
      step.stop = size_t(int_member(j, path, "stop", 0, 1 << 20));
    } else if (type == "Sequence") {
      const json& list = member(j, path, "decoders");
      if (!list.is_array()) fail(path + ".decoders", "must be a list");
      for (size_t i = 0; i < list.size(); ++i) decoder(list[i], path + ".decoders[" + std::to_string(i) + "]", out);
      return;
    } else {
      unsupported(path, type, "ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence");
    }
    out.push_back(std::move(step));
  }

  // TemplateProcessing's "single" template; special token names resolve through "special_tokens".
  std::vector<TemplatePiece> template_processing(const json& j, const std::string& path, int32_t id_limit,
                                                 const std::function<bool(int32_t)>& id_exists) const {
    const json& single = member(j, path, "single");
    if (!single.is_array()) fail(path + ".single", "must be a list of pieces");
    const json* specials = j.contains("special_tokens") ? &j["special_tokens"] : nullptr;
    if (specials && !specials->is_object()) fail(path + ".special_tokens", "must be an object");
    std::vector<TemplatePiece> pieces;
    bool has_sequence = false;
    for (size_t i = 0; i < single.size(); ++i) {
      const std::string at = path + ".single[" + std::to_string(i) + "]";
      const json& piece = single[i];
      std::string name;
      bool is_sequence = false;
      if (piece.is_string()) {  // the short form: "$A", "$A:0", "<s>:0"
        name = piece.get<std::string>();
        name = name.substr(0, name.find(':'));
        is_sequence = name.starts_with("$");
        if (is_sequence && name != "$" && name != "$A" && name != "$0")
          fail(at, quote_token(name) + ": a single-sequence template can only hold $A");
      } else if (piece.is_object() && piece.contains("Sequence")) {
        const std::string id = string_member(object(piece["Sequence"], at + ".Sequence"), at + ".Sequence", "id");
        if (id != "A") fail(at + ".Sequence.id", quote_token(id) + ": a single-sequence template can only hold A");
        is_sequence = true;
      } else if (piece.is_object() && piece.contains("SpecialToken")) {
        name = string_member(object(piece["SpecialToken"], at + ".SpecialToken"), at + ".SpecialToken", "id");
      } else {
        fail(at, "a template piece must be {\"Sequence\": …} or {\"SpecialToken\": …}");
      }
      if (is_sequence) {
        has_sequence = true;
        pieces.push_back({true, {}});
        continue;
      }
      if (!specials || !specials->contains(name))
        fail(at, "the special token " + quote_token(name) + " is not listed in " + path + ".special_tokens");
      const std::string sp = path + ".special_tokens[" + quote_token(name) + "]";
      const json& ids = member(object((*specials)[name], sp), sp, "ids");
      if (!ids.is_array()) fail(sp + ".ids", "must be a list of ids");
      TemplatePiece t;
      for (const json& id : ids) {
        if (!id.is_number_integer()) fail(sp + ".ids", "must hold integer ids");
        const int64_t v = id.get<int64_t>();
        if (v < 0 || v >= id_limit || !id_exists(int32_t(v)))
          fail(sp + ".ids", "id " + std::to_string(v) + " names no token of this vocabulary (ids are 0 … " +
                                std::to_string(id_limit - 1) + ")");
        t.ids.push_back(int32_t(v));
      }
      pieces.push_back(std::move(t));
    }
    if (!has_sequence) fail(path + ".single", "the template never places the text ($A)");
    return pieces;
  }

  void post_processor(const json& j, const std::string& path, int32_t id_limit,
                      const std::function<bool(int32_t)>& id_exists,
                      std::vector<std::vector<TemplatePiece>>& out) const {
    const std::string type = type_of(j, path);
    if (type == "TemplateProcessing") {
      out.push_back(template_processing(j, path, id_limit, id_exists));
    } else if (type == "ByteLevel") {
      // Adds no tokens: it only trims offsets, which attnscope does not report.
    } else if (type == "Sequence") {
      const json& list = member(j, path, "processors");
      if (!list.is_array()) fail(path + ".processors", "must be a list");
      for (size_t i = 0; i < list.size(); ++i)
        post_processor(list[i], path + ".processors[" + std::to_string(i) + "]", id_limit, id_exists, out);
    } else {
      unsupported(path, type, "TemplateProcessing, ByteLevel, Sequence");
    }
  }

 private:
  const std::string& source_;
};

// The model section: BPE only, with the options attnscope can honour exactly.
std::unique_ptr<BpeModel> bpe_model(const Loader& l, const json& model, TokenizerJsonDocument& doc,
                                    const std::string& source) {
  l.object(model, "model");
  const auto type_it = model.find("type");
  if (type_it == model.end())
    l.fail("model", "the field \"type\" is missing (attnscope reads tokenizer.json models of type BPE)");
  if (!type_it->is_string()) l.fail("model.type", "must be a string");
  const std::string type = type_it->get<std::string>();
  if (type != "BPE")
    l.fail("model.type", quote_token(type) + " is not supported: attnscope reads BPE models (GPT-2, Llama, Qwen, "
                                             "Mistral …), not WordPiece or Unigram");
  if (!doc.has_vocab) l.fail("model", "the field \"vocab\" is missing (an object mapping tokens to ids)");
  if (!doc.has_merges) l.fail("model", "the field \"merges\" is missing (a list of merges)");
  if (const auto it = model.find("dropout"); it != model.end() && !it->is_null()) {
    if (!it->is_number()) l.fail("model.dropout", "must be a number or null");
    if (it->get<double>() != 0.0)
      l.fail("model.dropout", "BPE dropout picks merges at random (a training aid); attnscope needs the same ids "
                              "every time: set it to null");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const auto it = model.find(key); it != model.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty()))
      l.fail(std::string("model.") + key, "is not supported (byte-level and SentencePiece-style BPE leave it empty)");
  BpeOptions options;
  if (const auto it = model.find("unk_token"); it != model.end() && !it->is_null()) {
    if (!it->is_string()) l.fail("model.unk_token", "must be a string or null");
    options.unk_token = it->get<std::string>();
  }
  options.fuse_unk = l.bool_member(model, "model", "fuse_unk", false);
  options.byte_fallback = l.bool_member(model, "model", "byte_fallback", false);
  options.ignore_merges = l.bool_member(model, "model", "ignore_merges", false);
  return std::make_unique<BpeModel>(std::move(doc.vocab), doc.merges, std::move(options), source + ": model");
}

void add_added_tokens(const Loader& l, const json& list, Pipeline& p) {
  if (list.is_null()) return;
  if (!list.is_array()) l.fail("added_tokens", "must be a list");
  std::unordered_map<std::string, size_t> by_content;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    const json& t = l.object(list[i], path);
    AddedToken token;
    token.id = int32_t(l.int_member(t, path, "id", 0, limits::max_vocab_tokens - 1));
    token.content = l.string_member(t, path, "content");
    if (token.content.empty()) l.fail(path + ".content", "an added token cannot be empty");
    token.special = l.bool_member(t, path, "special", false);
    token.single_word = l.bool_member(t, path, "single_word", false);
    token.lstrip = l.bool_member(t, path, "lstrip", false);
    token.rstrip = l.bool_member(t, path, "rstrip", false);
    token.normalized = l.bool_member(t, path, "normalized", !token.special);
    if (!by_content.emplace(token.content, i).second)
      l.fail(path, "the added token " + quote_token(token.content) + " is listed twice");
    if (const auto model_id = p.model->token_to_id(token.content); model_id && *model_id != token.id)
      l.fail(path + ".id", "the added token " + quote_token(token.content) + " has id " + std::to_string(token.id) +
                               " but the vocabulary gives it id " + std::to_string(*model_id));
    if (const std::string* other = p.model->id_to_token(token.id); other && *other != token.content)
      l.fail(path + ".id", "id " + std::to_string(token.id) + " is both the added token " + quote_token(token.content) +
                               " and the vocabulary's " + quote_token(*other));
    if (!p.added_by_id.emplace(token.id, p.added.size()).second)
      l.fail(path + ".id", "id " + std::to_string(token.id) + " is given to two added tokens");
    p.added.push_back(std::move(token));
  }
}

// Templates, matchers and the id range, once the model and the added tokens are in.
void finish(Pipeline& p) {
  p.id_limit = p.model->id_limit();
  for (const AddedToken& t : p.added) p.id_limit = std::max(p.id_limit, t.id + 1);
  for (size_t i = 0; i < p.added.size(); ++i) {
    const AddedToken& t = p.added[i];
    if (t.normalized)
      p.normalized_matcher.add(apply_normalizers(p.normalizers, t.content), int32_t(i));
    else
      p.raw_matcher.add(t.content, int32_t(i));
  }
}

std::optional<int32_t> find_id(const Pipeline& p, std::string_view content) {
  for (const AddedToken& t : p.added)
    if (t.content == content) return t.id;
  return p.model->token_to_id(content);
}

// tokenizer_config.json: the transformers classes that rebuild the post-processor from
// add_bos_token / add_eos_token (LlamaTokenizerFast.update_post_processor and its kin).
void apply_tokenizer_config(std::string_view config_text, const std::string& config_source, Pipeline& p) {
  json config;
  try {
    config = json::parse(config_text);
  } catch (const json::exception& e) {
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    throw InputError(config_source + ": not valid JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
  const Loader l(config_source);
  l.object(config, "(top level)");
  std::string cls = config.contains("tokenizer_class") && config["tokenizer_class"].is_string()
                        ? config["tokenizer_class"].get<std::string>() : "";
  // Every class: transformers' PreTrainedTokenizerBase reads it (absent: false, its default since 4.45).
  p.clean_up_spaces = l.bool_member(config, "(top level)", "clean_up_tokenization_spaces", false);
  if (cls.ends_with("Fast")) cls.resize(cls.size() - 4);
  if (cls != "LlamaTokenizer" && cls != "CodeLlamaTokenizer" && cls != "GemmaTokenizer") return;
  const bool add_bos = l.bool_member(config, "(top level)", "add_bos_token", true);
  const bool add_eos = l.bool_member(config, "(top level)", "add_eos_token", false);
  auto special = [&](const char* key) -> int32_t {
    const auto it = config.find(key);
    std::string content;
    if (it != config.end() && it->is_string()) content = it->get<std::string>();
    else if (it != config.end() && it->is_object() && it->contains("content") && (*it)["content"].is_string())
      content = (*it)["content"].get<std::string>();
    else l.fail(key, std::string("is needed because ") + (key[0] == 'b' ? "add_bos_token" : "add_eos_token") + " is true");
    const auto id = find_id(p, content);
    if (!id) l.fail(key, quote_token(content) + " is not in the vocabulary");
    return *id;
  };
  std::vector<TemplatePiece> single;
  if (add_bos) single.push_back({false, {special("bos_token")}});
  single.push_back({true, {}});
  if (add_eos) single.push_back({false, {special("eos_token")}});
  p.templates = {std::move(single)};
}

}  // namespace
}  // namespace text_detail

std::shared_ptr<const Tokenizer> tokenizer_from_json(std::string_view json_text, const std::string& source,
                                                     std::string_view config_json, const std::string& config_source) {
  using namespace text_detail;
  require(int64_t(json_text.size()) <= limits::max_vocab_file_bytes,
          source + ": " + std::to_string(json_text.size()) + " bytes is more than the " +
              std::to_string(limits::max_vocab_file_bytes >> 20) + " MiB a tokenizer file may have");
  TokenizerJsonDocument doc = read_tokenizer_json(json_text, source, /*root_is_vocab=*/false);
  const Loader l(source);
  const json& root = l.object(doc.rest, "(top level)");
  if (!root.contains("model"))
    l.fail("(top level)", "the field \"model\" is missing: this is not a tokenizer.json (a GPT-2 vocab.json needs "
                          "its merges.txt beside it)");
  Pipeline p;
  p.source = source;
  p.kind = "tokenizer.json";
  if (const auto it = root.find("normalizer"); it != root.end() && !it->is_null()) {
    p.has_normalizer = true;
    l.normalizer(*it, "normalizer", p.normalizers);
  }
  if (const auto it = root.find("pre_tokenizer"); it != root.end() && !it->is_null())
    l.pre_tokenizer(*it, "pre_tokenizer", p.pre_tokenizers);
  p.model = bpe_model(l, root["model"], doc, source);
  if (const auto it = root.find("added_tokens"); it != root.end()) add_added_tokens(l, *it, p);
  finish(p);
  if (const auto it = root.find("post_processor"); it != root.end() && !it->is_null()) {
    auto exists = [&p](int32_t id) { return p.model->id_to_token(id) != nullptr || p.added_by_id.count(id) > 0; };
    l.post_processor(*it, "post_processor", p.id_limit, exists, p.templates);
  }
  if (const auto it = root.find("decoder"); it != root.end() && !it->is_null()) {
    p.has_decoder = true;
    l.decoder(*it, "decoder", p.decoders);
  }
  if (!config_json.empty()) apply_tokenizer_config(config_json, config_source, p);
  return std::make_shared<const HfTokenizer>(std::move(p));
}

std::shared_ptr<const Tokenizer> tokenizer_from_gpt2_files(std::string_view vocab_json, std::string_view merges_txt,
                                                           const std::string& vocab_source,
                                                           const std::string& merges_source) {
  using namespace text_detail;
  for (const auto& [bytes, name] : {std::pair{vocab_json.size(), &vocab_source}, std::pair{merges_txt.size(), &merges_source}})
    require(int64_t(bytes) <= limits::max_vocab_file_bytes,
            *name + ": " + std::to_string(bytes) + " bytes is more than the " +
                std::to_string(limits::max_vocab_file_bytes >> 20) + " MiB a tokenizer file may have");
  TokenizerJsonDocument doc = read_tokenizer_json(vocab_json, vocab_source, /*root_is_vocab=*/true);
  Pipeline p;
  p.source = vocab_source + " + " + merges_source;
  p.kind = "GPT-2 vocab.json + merges.txt";
  // OpenAI's encoder.py: GPT-2's pattern, bytes as table characters, BPE; no normalizer, no added
  // tokens (so "<|endoftext|>" typed in the text is plain text, as encoder.py treats it).
  PreTokenizerStep byte_level{};
  byte_level.kind = PreTokenizerStep::Kind::byte_level;
  byte_level.use_regex = true;
  p.pre_tokenizers.push_back(byte_level);
  p.model = std::make_unique<BpeModel>(std::move(doc.vocab), read_merges_txt(merges_txt, merges_source), BpeOptions{},
                                       p.source);
  p.has_decoder = true;
  p.decoders.push_back({DecoderStep::Kind::byte_level, {}, {}, {}, PrependScheme::always, 0, 0});
  finish(p);
  return std::make_shared<const HfTokenizer>(std::move(p));
}

}  // namespace attnscope
