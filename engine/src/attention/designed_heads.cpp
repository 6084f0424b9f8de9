// designed_heads.cpp — the designed embedding, the two position kernels, and the weights that make
// each head show one pattern (the design is documented in designed_heads.h).
//
// Sections: names · the designed embedding · position kernels · weights
#include "attnscope/attention/designed_heads.h"

#include <cmath>
#include <numbers>
#include <unordered_set>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/core/rng.h"

namespace attnscope {

// ---- names --------------------------------------------------------------------------------------

const std::vector<DesignedPattern>& all_designed_patterns() {
  static const std::vector<DesignedPattern> all = {
      DesignedPattern::previous, DesignedPattern::next,  DesignedPattern::self,   DesignedPattern::first,
      DesignedPattern::punct,    DesignedPattern::local, DesignedPattern::repeat, DesignedPattern::broad};
  return all;
}

const char* to_string(DesignedPattern p) {
  switch (p) {
    case DesignedPattern::previous: return "previous";
    case DesignedPattern::next: return "next";
    case DesignedPattern::self: return "self";
    case DesignedPattern::first: return "first";
    case DesignedPattern::punct: return "punct";
    case DesignedPattern::local: return "local";
    case DesignedPattern::repeat: return "repeat";
    case DesignedPattern::broad: return "broad";
  }
  return "?";
}

namespace {

std::string valid_pattern_names() {
  std::string names;
  for (DesignedPattern p : all_designed_patterns()) names += (names.empty() ? "" : ", ") + std::string(to_string(p));
  return names;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

DesignedPattern parse_designed_pattern(std::string_view name) {
  for (DesignedPattern p : all_designed_patterns())
    if (name == to_string(p)) return p;
  throw InputError("unknown designed pattern '" + std::string(name) + "' (valid: " + valid_pattern_names() + ")");
}

std::vector<DesignedPattern> parse_designed_patterns(const std::vector<std::string>& names) {
  require(!names.empty(), "designed heads need at least one pattern, one per head (valid: " + valid_pattern_names() + ")");
  require(names.size() <= size_t(limits::max_heads), "designed heads: " + std::to_string(names.size()) +
                                                         " patterns given, but the limit is " +
                                                         std::to_string(limits::max_heads) + " heads");
  std::vector<DesignedPattern> patterns;
  for (size_t i = 0; i < names.size(); ++i) {
    try {
      patterns.push_back(parse_designed_pattern(names[i]));
    } catch (const InputError& e) {
      throw InputError("designed pattern " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  return patterns;
}

std::vector<std::string> split_designed_list(std::string_view text) {
  std::vector<std::string> names;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string_view item = trim(text.substr(begin, comma == std::string_view::npos ? text.npos : comma - begin));
    require(!item.empty(), "designed pattern " + std::to_string(names.size() + 1) +
                               " is empty: give names separated by commas, e.g. previous,self,first,punct");
    names.emplace_back(item);
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  parse_designed_patterns(names);  // validates every name and the count
  return names;
}

const LocalizedText& designed_pattern_label(DesignedPattern p) {
  static const LocalizedText labels[] = {
      {"previous token", "前一个词元"},
      {"next token", "后一个词元"},
      {"same token (self)", "自身"},
      {"first token (attention sink)", "第一个词元（注意力汇聚点）"},
      {"punctuation", "标点符号"},
      {"local window ±2", "局部窗口 ±2"},
      {"repeated word", "重复的词"},
      {"broad (uniform)", "广泛（均匀）"},
  };
  return labels[int(p)];
}

const LocalizedText& designed_pattern_caption(DesignedPattern p) {
  static const LocalizedText captions[] = {
      {"previous", "前一个"}, {"next", "后一个"}, {"self", "自身"},   {"first", "第一个"},
      {"punct", "标点"},      {"local", "局部"}, {"repeat", "重复"}, {"broad", "均匀"},
  };
  return captions[int(p)];
}

const LocalizedText& designed_pattern_description(DesignedPattern p) {
  static const LocalizedText descriptions[] = {
      {"Each token attends to the token just before it.", "每个词元都关注它前面紧挨着的那个词元。"},
      {"Each token attends to the token just after it (a causal mask hides it).",
       "每个词元都关注它后面紧挨着的那个词元（因果掩码会把它遮住）。"},
      {"Each token attends to itself.", "每个词元都关注它自己。"},
      {"Every token attends to the first token, a resting place for attention (the attention sink).",
       "所有词元都关注第一个词元：注意力无处可去时的“停靠点”（注意力汇聚点）。"},
      {"Tokens attend to the punctuation marks of the sentence, or to the first token if there are none.",
       "词元关注句中的标点符号；句中没有标点时关注第一个词元。"},
      {"Each token attends to a window of two tokens on either side of it, nearest most.",
       "每个词元关注自己左右各两个词元的窗口，越近权重越大。"},
      {"A word that occurred before attends to its first occurrence; a new word attends to itself.",
       "出现过的词关注它第一次出现的位置；新出现的词关注它自己。"},
      {"Every token spreads its attention evenly: the head averages the sentence.",
       "每个词元把注意力平均分给所有词元：这个头相当于对整句求平均。"},
  };
  return descriptions[int(p)];
}

// ---- the designed embedding ---------------------------------------------------------------------

Mat designed_embedding(const std::vector<Token>& tokens, int d_model, uint64_t seed) {
  require(!tokens.empty(), "the text has no tokens: type at least one word, character or punctuation mark");
  require(tokens.size() <= size_t(limits::max_tokens), "the text has " + std::to_string(tokens.size()) +
                                                           " tokens; the limit is " + std::to_string(limits::max_tokens));
  require(d_model >= designed_min_d_model && d_model <= limits::max_d_model,
          "the designed embedding needs d_model between " + std::to_string(designed_min_d_model) + " and " +
              std::to_string(limits::max_d_model) + ", got " + std::to_string(d_model));
  const int t_count = int(tokens.size());
  Mat x = Mat::Zero(t_count, d_model);
  std::unordered_set<std::string> seen;
  for (int p = 0; p < t_count; ++p) {
    // Position: the angle π·p/2^f reduced modulo 2π exactly in integers, so large p loses no precision.
    for (int f = 0; f < designed_frequencies; ++f) {
      const int64_t period = int64_t(2) << f;  // 2^(f+1) tokens
      const double angle = std::numbers::pi * double(p % period) / double(int64_t(1) << f);
      x(p, 2 * f) = float(std::cos(angle));
      x(p, 2 * f + 1) = float(std::sin(angle));
    }
    const Token& token = tokens[size_t(p)];
    const std::string key = lower_ascii(token.text);
    x(p, designed_channel_constant) = 1;
    x(p, designed_channel_first) = p == 0 ? 1.0f : 0.0f;
    x(p, designed_channel_punct) = token.kind == TokenKind::punctuation ? 1.0f : 0.0f;
    x(p, designed_channel_first_occurrence) = seen.insert(key).second ? 1.0f : 0.0f;
    // Identity: one random sign per channel from a stream keyed by (seed, lower-cased text) only.
    Rng rng(fnv1a64(key) ^ (seed * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull));
    for (int c = designed_channel_identity; c < d_model; ++c) x(p, c) = (rng.next_u64() >> 63) ? 1.0f : -1.0f;
  }
  return x;
}

// ---- position kernels ---------------------------------------------------------------------------
namespace {

// a_f for the two kernels (see the header).
double sharp_weight(int f) { return std::ldexp(1.0, f); }
double window_weight(int f) { return f <= 6 ? std::ldexp(1.0, 2 * f) : std::ldexp(1.0, 12 + (f - 6)); }

double angular_frequency(int f) { return std::numbers::pi / std::ldexp(1.0, f); }

// Σ_f a_f·(1 − cos(ω_f·d)), unnormalised.
template <class Weight>
double raw_kernel(double offset, Weight weight) {
  double sum = 0;
  for (int f = 0; f < designed_frequencies; ++f) sum += weight(f) * (1 - std::cos(angular_frequency(f) * offset));
  return sum;
}

}  // namespace

double designed_kernel_sharp(double offset) {
  static const double norm = raw_kernel(1.0, sharp_weight);
  return raw_kernel(offset, sharp_weight) / norm;
}

double designed_kernel_window(double offset) {
  static const double norm = raw_kernel(1.0, window_weight);
  return raw_kernel(offset, window_weight) / norm;
}

// ---- weights ------------------------------------------------------------------------------------
namespace {

// Logit strengths (nats after the 1/√d_k scale), documented in the header.
constexpr double sharp_strength = 8;       // previous, next, self: the runner-up key is e^−8 behind
constexpr double window_strength = 0.4;    // local: weights 1, 0.67, 0.25, 0.06 at offsets 0, 1, 2, 3
constexpr double first_strength = 10;      // first: token 0 keeps ≥ 1/2 of the mass up to T ≈ 22 000
constexpr double punct_strength = 10;      // punct
constexpr double punct_fallback = 5;       // punct: token 0 when the sentence has no punctuation
constexpr double repeat_same = 16;         // repeat: same word
constexpr double repeat_first_occurrence = 6;  // repeat: prefer the first (earliest) occurrence

// Key rows of one head for the score −strength·κ_a(j − i − Δ): per frequency f the key pair is
// c_f·(cos ω_f(j − Δ), sin ω_f(j − Δ)), a rotation of the position pair of key j, and the constant
// −Σ_f c_f (read from the constant channel) makes the score 0 at the peak.
template <class Weight>
void add_position_kernel(Mat& wk, Eigen::Index row0, double strength, double delta, Weight weight) {
  double norm = 0;
  for (int f = 0; f < designed_frequencies; ++f) norm += weight(f) * (1 - std::cos(angular_frequency(f)));
  double total = 0;
  for (int f = 0; f < designed_frequencies; ++f) {
    const double c = strength * weight(f) / norm, w = angular_frequency(f) * delta;
    const Eigen::Index r = row0 + 2 * f;
    wk(r, 2 * f) += float(c * std::cos(w));
    wk(r, 2 * f + 1) += float(c * std::sin(w));
    wk(r + 1, 2 * f) += float(-c * std::sin(w));
    wk(r + 1, 2 * f + 1) += float(c * std::cos(w));
    total += c;
  }
  wk(row0 + designed_channel_constant, designed_channel_constant) += float(-total);
}

}  // namespace

AttentionWeights designed_weights(const std::vector<DesignedPattern>& patterns) {
  require(!patterns.empty(), "designed heads need at least one pattern, one per head (valid: " +
                                 valid_pattern_names() + ")");
  require(patterns.size() <= size_t(limits::max_heads), "designed heads: " + std::to_string(patterns.size()) +
                                                            " patterns given, but the limit is " +
                                                            std::to_string(limits::max_heads) + " heads");
  const int heads = int(patterns.size()), dk = designed_head_dim, c = designed_d_model(heads);
  const double key_scale = std::sqrt(double(dk));  // undo the 1/√d_k so the logits are as documented
  AttentionWeights w;
  w.wq = Mat::Zero(c, c);
  w.wk = Mat::Zero(c, c);
  w.wv = Mat::Identity(c, c);
  w.wo = Mat::Identity(c, c);
  const int identity_q0 = designed_channel_constant + 1;  // query/key dims 25 … 60
  for (int h = 0; h < heads; ++h) {
    const Eigen::Index r0 = Eigen::Index(h) * dk;
    // The shared query map: positions, the constant, the identity channels.
    for (int t = 0; t <= designed_channel_constant; ++t) w.wq(r0 + t, t) = 1;
    for (int t = 0; t < designed_identity_dims; ++t) w.wq(r0 + identity_q0 + t, designed_channel_identity + t) = 1;

    // The pattern, in the keys. The constant query dim (24) carries every key-only bias.
    const Eigen::Index bias_row = r0 + designed_channel_constant;
    switch (patterns[size_t(h)]) {
      case DesignedPattern::previous: add_position_kernel(w.wk, r0, sharp_strength, -1, sharp_weight); break;
      case DesignedPattern::next: add_position_kernel(w.wk, r0, sharp_strength, +1, sharp_weight); break;
      case DesignedPattern::self: add_position_kernel(w.wk, r0, sharp_strength, 0, sharp_weight); break;
      case DesignedPattern::local: add_position_kernel(w.wk, r0, window_strength, 0, window_weight); break;
      case DesignedPattern::first: w.wk(bias_row, designed_channel_first) = float(first_strength); break;
      case DesignedPattern::punct:
        w.wk(bias_row, designed_channel_punct) = float(punct_strength);
        w.wk(bias_row, designed_channel_first) = float(punct_fallback);
        break;
      case DesignedPattern::repeat:
        for (int t = 0; t < designed_identity_dims; ++t)
          w.wk(r0 + identity_q0 + t, designed_channel_identity + t) = float(repeat_same / designed_identity_dims);
        w.wk(bias_row, designed_channel_first_occurrence) = float(repeat_first_occurrence);
        break;
      case DesignedPattern::broad: break;  // all-zero keys: every score is 0, so each row is uniform
    }
    w.wk.middleRows(r0, dk) *= float(key_scale);
  }
  return w;
}

}  // namespace attnscope
