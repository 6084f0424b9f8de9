// hf_pipeline.h — the Hugging Face tokenizer pipeline (private to engine/src/text).
//
// Encoding a text, as the tokenizers library (Rust) does it:
//   1. added tokens whose `normalized` flag is off are found in the raw text (leftmost-longest, with
//      their lstrip/rstrip/single_word flags); the text between them goes on;
//   2. each remaining piece is normalized, then added tokens with `normalized` on are found in it;
//   3. the pre-tokenizers cut the pieces into words (and ByteLevel writes bytes as table characters);
//   4. the BPE model turns each word into ids (added tokens keep their own ids);
//   5. the post-processor adds BOS/EOS (TemplateProcessing) when special tokens are asked for.
// Decoding maps ids to their pieces and runs the decoder chain (Rust's decode_chain, step by step).
#pragma once
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attnscope/text/bpe.h"
#include "attnscope/text/tokenizer_interface.h"
#include "text/pcre_regex.h"

namespace attnscope::text_detail {

// A Split/Replace pattern: a literal string or a regex.
struct Pattern {
  std::string literal;                 // used when regex is null
  std::shared_ptr<const Regex> regex;
  // (span, is_match) pieces covering the whole text in order (the library's Pattern::find_matches);
  // an empty text gives one empty non-match, an empty literal matches nothing.
  std::vector<std::pair<Span, bool>> find_matches(std::string_view text) const;
};

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };
enum class PrependScheme { always, first, never };

struct NormalizerStep {
  enum class Kind { nfc, nfkc, prepend, replace } kind;
  std::string content;  // prepend: what to put in front; replace: the replacement
  Pattern pattern;      // replace
};

struct PreTokenizerStep {
  enum class Kind { split, byte_level, metaspace, digits } kind;
  Pattern pattern;                                 // split
  SplitBehavior behavior = SplitBehavior::isolated;  // split
  bool invert = false;                             // split
  bool add_prefix_space = false;                   // byte_level
  bool use_regex = true;                           // byte_level
  std::string replacement;                         // metaspace: "▁"
  PrependScheme prepend = PrependScheme::always;   // metaspace
  bool split = true;                               // metaspace
  bool individual_digits = false;                  // digits
};

struct DecoderStep {
  enum class Kind { byte_level, metaspace, replace, byte_fallback, fuse, strip } kind;
  Pattern pattern;                                 // replace
  std::string content;                             // replace: the replacement; strip: the character
  std::string replacement;                         // metaspace
  PrependScheme prepend = PrependScheme::always;   // metaspace
  size_t start = 0, stop = 0;                      // strip: at most this many from each end
};

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

// Finds added tokens: at the leftmost position where any matches, the longest one; then on from its
// end (Aho-Corasick with MatchKind::LeftmostLongest in the library).
class AddedTokenMatcher {
 public:
  void add(std::string_view pattern, int32_t token_index);
  struct Match {
    size_t begin, end;
    int32_t token_index;
  };
  std::vector<Match> find_all(std::string_view text) const;
  bool empty() const { return nodes_.size() == 1; }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> next;
    int32_t token_index = -1;
  };
  std::vector<Node> nodes_{1};
  std::array<bool, 256> first_byte_{};
};

// One step of TemplateProcessing: the sequence itself, or special ids to insert.
struct TemplatePiece {
  bool is_sequence = false;
  std::vector<int32_t> ids;
};

// A piece of text on its way to the model: a word after pre-tokenization, or an added token already
// turned into its id.
struct Piece {
  std::string text;
  int32_t added_id = -1;   // ≥ 0: an added token, already an id
  bool at_origin = false;  // starts at byte 0 of the original text (Metaspace's prepend_scheme "first")
};

struct Pipeline {
  std::string source;       // the file(s), for messages
  std::string kind;         // "tokenizer.json" or "GPT-2 vocab.json + merges.txt"
  bool has_normalizer = false;
  std::vector<NormalizerStep> normalizers;  // in order (a Sequence flattened)
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::unique_ptr<BpeModel> model;
  std::vector<AddedToken> added;
  std::unordered_map<int32_t, size_t> added_by_id;  // id → index in `added`
  AddedTokenMatcher raw_matcher;         // added tokens with normalized = false
  AddedTokenMatcher normalized_matcher;  // the normalized content of those with normalized = true
  std::vector<std::vector<TemplatePiece>> templates;  // TemplateProcessing steps, applied in order
  bool has_decoder = false;
  std::vector<DecoderStep> decoders;
  // tokenizer_config.json's clean_up_tokenization_spaces: decode() then removes the space before
  // . ? ! , and English contractions, as transformers' clean_up_tokenization does (Llama 3 sets it).
  bool clean_up_spaces = false;
  int32_t id_limit = 0;  // largest id (model or added) + 1
};

class HfTokenizer final : public Tokenizer {
 public:
  explicit HfTokenizer(Pipeline pipeline) : p_(std::move(pipeline)) {}
  TokenizerKind kind() const override;
  std::string description() const override;
  bool has_vocabulary() const override { return true; }
  int32_t vocab_size() const override { return p_.id_limit; }
  std::vector<int32_t> encode_ids(std::string_view text, bool add_special_tokens) const override;
  Encoding describe(std::span<const int32_t> ids) const override;
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens) const override;

  const Pipeline& pipeline() const { return p_; }
  // Steps 1–3: the words the model will see (added tokens as pieces with their id). Validates the text.
  std::vector<Piece> pre_tokenize(std::string_view text) const;

 private:
  // The piece an id stands for; throws InputError for an id no token has.
  const std::string& piece_of(int32_t id) const;
  // Rust's decode_chain over all decoder steps.
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const;
  // What one token adds to the text on its own (label bytes): the decoder steps without the ones
  // that depend on the token's place (Metaspace's first-token rule, Strip, Fuse).
  std::string token_bytes(int32_t id) const;

  Pipeline p_;
};

// The normalizer steps in order (NormalizedString::nfc, nfkc, prepend, replace).
std::string apply_normalizers(const std::vector<NormalizerStep>& steps, std::string text);

// transformers' clean_up_tokenization: " ." → ".", " ?", " !", " ,", " ' " → "'", " n't", " 'm",
// " 's", " 've", " 're" lose their space, one replacement after the other, in that order.
std::string clean_up_tokenization(std::string text);

// GPT-2's pre-tokenizer pattern, as the ByteLevel pre-tokenizer uses it.
std::shared_ptr<const Regex> gpt2_pattern();

}  // namespace attnscope::text_detail
