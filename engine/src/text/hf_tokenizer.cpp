// hf_tokenizer.cpp — running the Hugging Face pipeline: encode, decode, per-token bytes.
//
// Sections: patterns and split behaviours · added-token matching · encode · decode · describe
#include <algorithm>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/text/byte_level.h"
#include "attnscope/text/token_labels.h"
#include "attnscope/text/tokenizer.h"
#include "text/hf_pipeline.h"
#include "text/token_quote.h"
#include "text/unicode_text.h"

namespace attnscope::text_detail {

// ---- patterns and split behaviours ------------------------------------------------------------

std::vector<std::pair<Span, bool>> Pattern::find_matches(std::string_view text) const {
  std::vector<std::pair<Span, bool>> out;
  if (text.empty()) return {{{0, 0}, false}};
  if (!regex && literal.empty()) return {{{0, text.size()}, false}};
  size_t prev = 0;
  auto add_match = [&](size_t begin, size_t end) {
    if (prev != begin) out.push_back({{prev, begin}, false});
    out.push_back({{begin, end}, true});
    prev = end;
  };
  if (regex) {
    for (const Span& m : regex->find_all(text)) add_match(m.begin, m.end);
  } else {
    for (size_t at = text.find(literal); at != std::string_view::npos; at = text.find(literal, at + literal.size()))
      add_match(at, at + literal.size());
  }
  if (prev != text.size()) out.push_back({{prev, text.size()}, false});
  return out;
}

namespace {

// The spans a split keeps, from (span, is_match) pieces (NormalizedString::split in the library).
std::vector<Span> split_spans(const std::vector<std::pair<Span, bool>>& matches, SplitBehavior behavior) {
  std::vector<Span> out;
  switch (behavior) {
    case SplitBehavior::isolated:
      for (const auto& [span, is_match] : matches) out.push_back(span);
      break;
    case SplitBehavior::removed:
      for (const auto& [span, is_match] : matches)
        if (!is_match) out.push_back(span);
      break;
    case SplitBehavior::contiguous: {
      bool previous = false;
      for (const auto& [span, is_match] : matches) {
        if (is_match == previous && !out.empty())
          out.back().end = span.end;
        else
          out.push_back(span);
        previous = is_match;
      }
      break;
    }
    case SplitBehavior::merged_with_previous: {
      bool previous = false;
      for (const auto& [span, is_match] : matches) {
        if (is_match && !previous && !out.empty())
          out.back().end = span.end;
        else
          out.push_back(span);
        previous = is_match;
      }
      break;
    }
    case SplitBehavior::merged_with_next: {
      bool previous = false;
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        if (it->second && !previous && !out.empty())
          out.back().begin = it->first.begin;
        else
          out.push_back(it->first);
        previous = it->second;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
  }
  return out;
}

// (span, is_match) pieces where every character for which `pred` holds is a match of its own (the
// library's Pattern for Fn(char) -> bool).
template <class Pred>
std::vector<std::pair<Span, bool>> char_matches(std::string_view text, Pred pred) {
  if (text.empty()) return {{{0, 0}, false}};
  std::vector<std::pair<Span, bool>> out;
  size_t last = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t begin = i;
    const char32_t cp = next_code_point(text, i);
    if (!pred(cp)) continue;
    if (last < begin) out.push_back({{last, begin}, false});
    out.push_back({{begin, i}, true});
    last = i;
  }
  if (last < text.size()) out.push_back({{last, text.size()}, false});
  return out;
}

std::string replace_all(std::string_view text, const Pattern& pattern, std::string_view content) {
  std::string out;
  for (const auto& [span, is_match] : pattern.find_matches(text))
    if (is_match)
      out.append(content);
    else
      out.append(text.substr(span.begin, span.end - span.begin));
  return out;
}

}  // namespace

std::shared_ptr<const Regex> gpt2_pattern() {
  static const auto regex = std::make_shared<const Regex>(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", "GPT-2's pre-tokenizer pattern");
  return regex;
}

// ---- added-token matching -----------------------------------------------------------------------

void AddedTokenMatcher::add(std::string_view pattern, int32_t token_index) {
  if (pattern.empty()) return;
  int32_t node = 0;
  for (unsigned char c : pattern) {
    auto& edges = nodes_[size_t(node)].next;
    const auto it = std::find_if(edges.begin(), edges.end(), [&](const auto& e) { return e.first == c; });
    if (it != edges.end()) {
      node = it->second;
    } else {
      const int32_t child = int32_t(nodes_.size());
      edges.emplace_back(c, child);  // before push_back, which may move `edges`
      nodes_.emplace_back();
      node = child;
    }
  }
  // The same pattern twice keeps the first token (the library's automaton reports the first pattern).
  if (nodes_[size_t(node)].token_index < 0) nodes_[size_t(node)].token_index = token_index;
  first_byte_[static_cast<unsigned char>(pattern[0])] = true;
}

std::vector<AddedTokenMatcher::Match> AddedTokenMatcher::find_all(std::string_view text) const {
  std::vector<Match> matches;
  if (empty()) return matches;
  for (size_t i = 0; i < text.size();) {
    if (!first_byte_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    int32_t node = 0, best_token = -1;
    size_t best_end = 0;
    for (size_t j = i; j < text.size(); ++j) {
      const auto& edges = nodes_[size_t(node)].next;
      const unsigned char c = static_cast<unsigned char>(text[j]);
      const auto it = std::find_if(edges.begin(), edges.end(), [&](const auto& e) { return e.first == c; });
      if (it == edges.end()) break;
      node = it->second;
      if (nodes_[size_t(node)].token_index >= 0) best_token = nodes_[size_t(node)].token_index, best_end = j + 1;
    }
    if (best_token < 0) {
      ++i;
      continue;
    }
    matches.push_back({i, best_end, best_token});
    i = best_end;
  }
  return matches;
}

// ---- encode -------------------------------------------------------------------------------------

namespace {

bool ends_with_word(std::string_view s) {
  if (s.empty()) return false;
  size_t begin;
  return is_word_char(previous_code_point(s, s.size(), begin));
}

bool starts_with_word(std::string_view s) {
  if (s.empty()) return false;
  size_t i = 0;
  return is_word_char(next_code_point(s, i));
}

// Splits `text` around the added tokens `matcher` finds (AddedVocabulary::find_matches).
void split_on_added(const Pipeline& p, const AddedTokenMatcher& matcher, std::string_view text, bool at_origin,
                    std::vector<Piece>& out) {
  auto push_text = [&](size_t begin, size_t end) {
    if (end > begin) out.push_back({std::string(text.substr(begin, end - begin)), -1, at_origin && begin == 0});
  };
  size_t done = 0;  // text before this is already in `out`
  for (const auto& m : matcher.find_all(text)) {
    const AddedToken& token = p.added[size_t(m.token_index)];
    size_t begin = m.begin, end = m.end;
    if (token.single_word) {
      const bool space_before = begin == 0 || !ends_with_word(text.substr(0, begin));
      const bool space_after = end == text.size() || !starts_with_word(text.substr(end));
      if (!space_before || !space_after) continue;  // inside a word: not this token
    }
    // An rstrip'ed token before may already have taken the text this match starts in.
    if (begin < done) continue;
    if (token.lstrip) {
      size_t s = begin;
      while (s > done) {
        size_t prev_begin;
        if (!is_white_space(previous_code_point(text, s, prev_begin))) break;
        s = prev_begin;
      }
      begin = s;
    }
    if (token.rstrip) {
      while (end < text.size()) {
        size_t next = end;
        if (!is_white_space(next_code_point(text, next))) break;
        end = next;
      }
    }
    push_text(done, begin);
    out.push_back({token.content, token.id, at_origin && begin == 0});
    done = end;
  }
  push_text(done, text.size());
}

}  // namespace

std::string apply_normalizers(const std::vector<NormalizerStep>& steps, std::string text) {
  for (const NormalizerStep& step : steps) {
    switch (step.kind) {
      case NormalizerStep::Kind::nfc:
        text = normalize_nfc(text);
        break;
      case NormalizerStep::Kind::nfkc:
        text = normalize_nfkc(text);
        break;
      case NormalizerStep::Kind::prepend:
        if (!text.empty()) text.insert(0, step.content);
        break;
      case NormalizerStep::Kind::replace:
        text = replace_all(text, step.pattern, step.content);
        break;
    }
  }
  return text;
}

namespace {

// One pre-tokenizer step over every piece that is not an added token yet.
std::vector<Piece> apply_pre_tokenizer(const PreTokenizerStep& step, std::vector<Piece> pieces) {
  std::vector<Piece> out;
  out.reserve(pieces.size());
  auto emit = [&](const Piece& from, std::string_view text, const std::vector<Span>& spans) {
    for (const Span& s : spans)
      if (s.end > s.begin) out.push_back({std::string(text.substr(s.begin, s.end - s.begin)), -1, from.at_origin && s.begin == 0});
  };
  for (Piece& piece : pieces) {
    if (piece.added_id >= 0) {
      out.push_back(std::move(piece));
      continue;
    }
    switch (step.kind) {
      case PreTokenizerStep::Kind::split: {
        auto matches = step.pattern.find_matches(piece.text);
        if (step.invert)
          for (auto& m : matches) m.second = !m.second;
        emit(piece, piece.text, split_spans(matches, step.behavior));
        break;
      }
      case PreTokenizerStep::Kind::digits:
        emit(piece, piece.text,
             split_spans(char_matches(piece.text, is_numeric),
                         step.individual_digits ? SplitBehavior::isolated : SplitBehavior::contiguous));
        break;
      case PreTokenizerStep::Kind::metaspace: {
        std::string text;
        text.reserve(piece.text.size() + 8);
        for (char c : piece.text)
          if (c == ' ')
            text += step.replacement;
          else
            text += c;
        const bool starts = text.starts_with(step.replacement);
        if (!starts && (step.prepend == PrependScheme::always || (step.prepend == PrependScheme::first && piece.at_origin)))
          text.insert(0, step.replacement);
        if (!step.split) {
          if (!text.empty()) out.push_back({std::move(text), -1, piece.at_origin});
          break;
        }
        size_t i = 0;
        const char32_t mark = next_code_point(step.replacement, i);
        emit(piece, text, split_spans(char_matches(text, [mark](char32_t c) { return c == mark; }),
                                      SplitBehavior::merged_with_next));
        break;
      }
      case PreTokenizerStep::Kind::byte_level: {
        std::string text = std::move(piece.text);
        if (step.add_prefix_space && !text.starts_with(' ')) text.insert(text.begin(), ' ');
        std::vector<Span> spans;
        if (step.use_regex)
          spans = split_spans(Pattern{{}, gpt2_pattern()}.find_matches(text), SplitBehavior::isolated);
        else
          spans.push_back({0, text.size()});
        for (const Span& s : spans)
          if (s.end > s.begin)
            out.push_back({bytes_to_byte_level(std::string_view(text).substr(s.begin, s.end - s.begin)), -1,
                           piece.at_origin && s.begin == 0});
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<Piece> HfTokenizer::pre_tokenize(std::string_view text) const {
  require(int64_t(text.size()) <= limits::max_text_bytes,
          "the text has " + std::to_string(text.size()) + " bytes; the limit is " +
              std::to_string(limits::max_text_bytes) + " (1 MiB)");
  validate_utf8(text);
  // 1–2. Added tokens in the raw text, then normalization and added tokens in the normalized text.
  std::vector<Piece> raw;
  split_on_added(p_, p_.raw_matcher, text, true, raw);
  std::vector<Piece> pieces;
  pieces.reserve(raw.size());
  for (Piece& piece : raw) {
    if (piece.added_id >= 0 || (!p_.has_normalizer && p_.normalized_matcher.empty())) {
      pieces.push_back(std::move(piece));
      continue;
    }
    const std::string normalized = apply_normalizers(p_.normalizers, std::move(piece.text));
    split_on_added(p_, p_.normalized_matcher, normalized, piece.at_origin, pieces);
  }
  // 3. Pre-tokenizers.
  for (const PreTokenizerStep& step : p_.pre_tokenizers) pieces = apply_pre_tokenizer(step, std::move(pieces));
  return pieces;
}

std::vector<int32_t> HfTokenizer::encode_ids(std::string_view text, bool add_special_tokens) const {
  const std::vector<Piece> pieces = pre_tokenize(text);
  // 4. The model.
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  BpeCache cache;
  for (const Piece& piece : pieces) {
    if (piece.added_id >= 0)
      ids.push_back(piece.added_id);
    else
      p_.model->encode_word(piece.text, ids, &cache);
  }
  // 5. Post-processor.
  if (add_special_tokens)
    for (const auto& pieces_of_template : p_.templates) {
      std::vector<int32_t> with;
      with.reserve(ids.size() + 4);
      for (const TemplatePiece& t : pieces_of_template)
        if (t.is_sequence)
          with.insert(with.end(), ids.begin(), ids.end());
        else
          with.insert(with.end(), t.ids.begin(), t.ids.end());
      ids = std::move(with);
    }
  return ids;
}

// ---- decode -------------------------------------------------------------------------------------

const std::string& HfTokenizer::piece_of(int32_t id) const {
  if (const auto it = p_.added_by_id.find(id); it != p_.added_by_id.end()) return p_.added[it->second].content;
  if (const std::string* s = p_.model->id_to_token(id)) return *s;
  throw InputError("token id " + std::to_string(id) + " is not in the vocabulary of " + p_.source + " (ids are 0 … " +
                   std::to_string(p_.id_limit - 1) + ")");
}

namespace {

// "<0xE6>" → 0xE6; −1 for anything else (the ByteFallback decoder's test).
int byte_fallback_value(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return -1;
  auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  const int hi = hex(token[3]), lo = hex(token[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string byte_level_decode_one(const std::string& token) {
  std::string bytes;
  return byte_level_to_bytes(token, bytes) ? bytes : token;  // a character outside the table: keep the token
}

}  // namespace

std::vector<std::string> HfTokenizer::decode_chain(std::vector<std::string> tokens) const {
  for (const DecoderStep& step : p_.decoders) {
    switch (step.kind) {
      case DecoderStep::Kind::byte_level: {
        std::string bytes;
        for (const std::string& t : tokens) bytes += byte_level_decode_one(t);
        tokens = {utf8_lossy(bytes)};
        break;
      }
      case DecoderStep::Kind::metaspace: {
        size_t i = 0;
        const char32_t mark = next_code_point(step.replacement, i);
        for (size_t t = 0; t < tokens.size(); ++t) {
          std::string out;
          for (size_t k = 0; k < tokens[t].size();) {
            const size_t begin = k;
            if (next_code_point(tokens[t], k) != mark)
              out.append(tokens[t], begin, k - begin);
            else if (!(t == 0 && step.prepend != PrependScheme::never))
              out += ' ';  // the first token's marks are the prepended space: dropped
          }
          tokens[t] = std::move(out);
        }
        break;
      }
      case DecoderStep::Kind::replace:
        for (std::string& t : tokens) t = replace_all(t, step.pattern, step.content);
        break;
      case DecoderStep::Kind::byte_fallback: {
        std::vector<std::string> out;
        std::string bytes;
        size_t byte_count = 0;
        auto flush = [&] {
          if (byte_count == 0) return;
          // Bytes that are not valid UTF-8 give one U+FFFD per byte (the library's rule).
          bool valid = true;
          for (size_t i = 0; i < bytes.size() && valid;) {
            size_t n;
            valid = utf8_step(bytes, i, n) == Utf8Step::complete;
            i += n;
          }
          if (valid)
            out.push_back(bytes);
          else
            for (size_t i = 0; i < byte_count; ++i) out.push_back("\xEF\xBF\xBD");
          bytes.clear();
          byte_count = 0;
        };
        for (std::string& t : tokens) {
          const int b = byte_fallback_value(t);
          if (b >= 0) {
            bytes += char(b);
            ++byte_count;
          } else {
            flush();
            out.push_back(std::move(t));
          }
        }
        flush();
        tokens = std::move(out);
        break;
      }
      case DecoderStep::Kind::fuse: {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens = {std::move(all)};
        break;
      }
      case DecoderStep::Kind::strip: {
        size_t i = 0;
        const char32_t c = next_code_point(step.content, i);
        for (std::string& t : tokens) {
          size_t begin = 0, end = t.size();
          for (size_t n = 0; n < step.start && begin < t.size(); ++n) {
            size_t k = begin;
            if (next_code_point(t, k) != c) break;
            begin = k;
          }
          for (size_t n = 0; n < step.stop && end > begin; ++n) {
            size_t prev;
            if (previous_code_point(t, end, prev) != c) break;
            end = prev;
          }
          t = t.substr(begin, end - begin);
        }
        break;
      }
    }
  }
  return tokens;
}

std::string HfTokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string& piece = piece_of(id);
    if (skip_special_tokens)
      if (const auto it = p_.added_by_id.find(id); it != p_.added_by_id.end() && p_.added[it->second].special) continue;
    tokens.push_back(piece);
  }
  if (!p_.has_decoder) {
    // No decoder: the library joins the pieces with spaces.
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return p_.clean_up_spaces ? clean_up_tokenization(std::move(out)) : out;
  }
  std::string out;
  for (const std::string& t : decode_chain(std::move(tokens))) out += t;
  return p_.clean_up_spaces ? clean_up_tokenization(std::move(out)) : out;
}

std::string clean_up_tokenization(std::string text) {
  static constexpr std::pair<std::string_view, std::string_view> rules[] = {
      {" .", "."},    {" ?", "?"},      {" !", "!"},    {" ,", ","},    {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : rules) {
    std::string out;
    size_t at = 0;
    for (size_t hit; (hit = text.find(from, at)) != std::string::npos; at = hit + from.size())
      out.append(text, at, hit - at).append(to);
    text = out.append(text, at, std::string::npos);
  }
  return text;
}

// ---- describe -----------------------------------------------------------------------------------

std::string HfTokenizer::token_bytes(int32_t id) const {
  if (const auto it = p_.added_by_id.find(id); it != p_.added_by_id.end()) return p_.added[it->second].content;
  std::string t = piece_of(id);
  if (!p_.has_decoder) return t;
  for (const DecoderStep& step : p_.decoders) {
    switch (step.kind) {
      case DecoderStep::Kind::byte_level:
        t = byte_level_decode_one(t);
        break;
      case DecoderStep::Kind::metaspace: {
        size_t i = 0;
        const char32_t mark = next_code_point(step.replacement, i);
        std::string out;
        for (size_t k = 0; k < t.size();) {
          const size_t begin = k;
          if (next_code_point(t, k) == mark)
            out += ' ';
          else
            out.append(t, begin, k - begin);
        }
        t = std::move(out);
        break;
      }
      case DecoderStep::Kind::replace:
        // A regex needs valid UTF-8; bytes from an earlier step may not be (then nothing to replace).
        if (!step.pattern.regex || utf8_lossy(t) == t) t = replace_all(t, step.pattern, step.content);
        break;
      case DecoderStep::Kind::byte_fallback:
        if (const int b = byte_fallback_value(t); b >= 0) t = std::string(1, char(b));
        break;
      case DecoderStep::Kind::fuse:
      case DecoderStep::Kind::strip:
        break;  // whole-text steps: they depend on the token's place, not on the token
    }
  }
  return t;
}

Encoding HfTokenizer::describe(std::span<const int32_t> ids) const {
  Encoding e;
  e.ids.assign(ids.begin(), ids.end());
  for (int32_t id : ids) {
    e.pieces.push_back(piece_of(id));
    e.bytes.push_back(token_bytes(id));
    const auto it = p_.added_by_id.find(id);
    e.special.push_back(it != p_.added_by_id.end() && p_.added[it->second].special ? 1 : 0);
  }
  e.labels = token_labels(e.bytes, e.special);
  return e;
}

TokenizerKind HfTokenizer::kind() const {
  // Byte-level: a ByteLevel pre-tokenizer or decoder (GPT-2, Qwen2). SentencePiece-style: "▁" for spaces
  // (Metaspace, or a Replace decoder) with byte fallback (Llama, Mistral).
  bool byte_level = false, metaspace = false, byte_fallback = false;
  for (const PreTokenizerStep& step : p_.pre_tokenizers) {
    byte_level = byte_level || step.kind == PreTokenizerStep::Kind::byte_level;
    metaspace = metaspace || step.kind == PreTokenizerStep::Kind::metaspace;
  }
  for (const DecoderStep& step : p_.decoders) {
    byte_level = byte_level || step.kind == DecoderStep::Kind::byte_level;
    metaspace = metaspace || step.kind == DecoderStep::Kind::metaspace || step.kind == DecoderStep::Kind::replace;
    byte_fallback = byte_fallback || step.kind == DecoderStep::Kind::byte_fallback;
  }
  if (byte_level) return TokenizerKind::byte_level_bpe;
  if (metaspace || byte_fallback) return TokenizerKind::sentencepiece_bpe;
  return TokenizerKind::bpe;
}

std::string HfTokenizer::description() const {
  return p_.kind + ": BPE, " + std::to_string(p_.id_limit) + " ids (" + p_.source + ")";
}

}  // namespace attnscope::text_detail
