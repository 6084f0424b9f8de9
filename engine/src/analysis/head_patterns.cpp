// head_patterns.cpp — per-head sink, previous-token and induction scores of an attention stack, and
// the repeated random sequence that shows induction heads (formulas in head_patterns.h).
#include "attnscope/analysis/head_patterns.h"

#include <algorithm>
#include <string>

#include "attnscope/attention/head_stats.h"
#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"

namespace attnscope {

const char* head_pattern_name(HeadPattern pattern) {
  switch (pattern) {
    case HeadPattern::sink: return "sink";
    case HeadPattern::previous: return "previous";
    case HeadPattern::induction: return "induction";
  }
  return "";
}

std::optional<RepeatedSpan> find_repeat(const std::vector<int32_t>& ids) {
  const int T = int(ids.size());
  for (int start : {0, 1}) {
    const int rest = T - start;
    if (rest < 4 || rest % 2 != 0) continue;
    const int p = rest / 2;
    if (std::equal(ids.begin() + start, ids.begin() + start + p, ids.begin() + start + p)) return RepeatedSpan{start, p};
  }
  return std::nullopt;
}

float HeadPatternScores::at(HeadPattern pattern, int layer, int head) const {
  const size_t k = size_t(layer) * size_t(heads) + size_t(head);
  switch (pattern) {
    case HeadPattern::sink: return sink[k];
    case HeadPattern::previous: return previous[k];
    case HeadPattern::induction: return induction.empty() ? 0.0f : induction[k];
  }
  return 0.0f;
}

float previous_token_score(const Eigen::Ref<const Mat>& p) {
  double sum = 0;
  for (int i = 1; i < p.rows(); ++i) sum += p(i, i - 1);
  return float(sum / double(p.rows() - 1));
}

HeadPatternScores head_pattern_scores(const model::AttentionStack& stack, int period) {
  const int T = stack.tokens;
  require(T >= 2, "head pattern scores need at least 2 tokens (got " + std::to_string(T) + ")");
  require(int64_t(stack.attentions.size()) == int64_t(stack.layers) * stack.heads * T * T,
          "the attention stack holds " + std::to_string(stack.attentions.size()) + " values, not L·H·T·T");
  HeadPatternScores s;
  s.layers = stack.layers;
  s.heads = stack.heads;
  if (period > 0) {
    require(period >= 2 && 2 * period <= T, "the repeat's period " + std::to_string(period) +
                                                 " must be from 2 to half the " + std::to_string(T) + " tokens");
    s.repeat = RepeatedSpan{T - 2 * period, period};
  } else {
    s.repeat = find_repeat(stack.ids);
  }
  const size_t cells = size_t(stack.layers) * size_t(stack.heads);
  s.sink.assign(cells, 0.0f);
  s.previous.assign(cells, 0.0f);
  if (s.repeat) s.induction.assign(cells, 0.0f);
  for (int l = 0; l < stack.layers; ++l) s.skipped_layers.push_back(stack.linear_layer(l));
  for (int l = 0; l < stack.layers; ++l)
    for (int h = 0; h < stack.heads && !stack.linear_layer(l); ++h) {
      const auto P = stack.attention(l, h);  // [T, T], rows are queries
      const size_t k = size_t(l) * size_t(stack.heads) + size_t(h);
      s.sink[k] = float(attention_sink(P));  // head_stats.h: the windows' definition too
      s.previous[k] = previous_token_score(P);
      if (s.repeat) {
        const int a = s.repeat->start, p = s.repeat->period;
        double sum = 0;
        int count = 0;
        for (int i = a + p + 1; i < a + 2 * p; ++i, ++count) sum += P(i, i - p + 1);
        s.induction[k] = count ? float(sum / count) : 0.0f;
      }
    }
  return s;
}

std::vector<TopHead> top_heads(const HeadPatternScores& scores, HeadPattern pattern, int count) {
  std::vector<TopHead> all;
  if (pattern == HeadPattern::induction && scores.induction.empty()) return all;
  for (int l = 0; l < scores.layers; ++l)
    for (int h = 0; h < scores.heads && !(l < int(scores.skipped_layers.size()) && scores.skipped_layers[size_t(l)]); ++h)
      all.push_back({l, h, scores.at(pattern, l, h)});
  std::stable_sort(all.begin(), all.end(), [](const TopHead& a, const TopHead& b) { return a.score > b.score; });
  if (int(all.size()) > count) all.resize(size_t(std::max(0, count)));
  return all;
}

std::vector<int32_t> repeated_random_ids(int n, int vocab_size, uint64_t seed) {
  require(n >= 2 && n <= 4096, "a repeated sequence needs 2 to 4096 tokens per copy, not " + std::to_string(n));
  require(vocab_size >= 2, "a repeated random sequence needs a vocabulary of at least 2 tokens");
  Rng rng(seed);
  std::vector<int32_t> ids(size_t(2 * n));
  for (int i = 0; i < n; ++i) ids[size_t(i)] = int32_t(rng.next_u64() % uint64_t(vocab_size));
  std::copy(ids.begin(), ids.begin() + n, ids.begin() + n);
  return ids;
}

}  // namespace attnscope
