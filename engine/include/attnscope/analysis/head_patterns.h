// head_patterns.h — what each head of a real model does, as three numbers per head, read off one
// forward pass's attentions (model::AttentionStack [L, H, T, T]):
//
//   attention sink   mean over queries i ≥ 1 of P[i, 0]        (attention parked on the first token;
//                                                              head_stats.h's attention_sink(), the one
//                                                              definition the windows share)
//   previous token   mean over queries i ≥ 1 of P[i, i − 1]
//   induction        on a repeated sequence  s … s+p−1 | s+p … s+2p−1  (the same p ids twice after a
//                    prefix of s tokens): mean over queries i = s+p+1 … s+2p−1 of P[i, i − p + 1], the
//                    attention from a token of the second copy to the token that followed its earlier
//                    occurrence — train::induction_scores' definition (SPEC "Training") when s = 0
//
// and the heads that score highest on each. The Lessons window's lesson 6 shows them live.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "attnscope/core/types.h"
#include "attnscope/model/attention_file.h"

namespace attnscope {

enum class HeadPattern { sink, previous, induction };
const char* head_pattern_name(HeadPattern pattern);  // "sink", "previous", "induction"

// Where a sequence is one block of p ids repeated: tokens [start, start + p) equal [start + p, start + 2p)
// and start + 2p is the sequence's length.
struct RepeatedSpan {
  int start = 0, period = 0;
};

// The ids' second half repeating the first (start 0, T even), else the same after one leading token (a
// tokenizer's BOS; start 1, T odd). nullopt when neither, or when a half is shorter than 2 tokens.
std::optional<RepeatedSpan> find_repeat(const std::vector<int32_t>& ids);

// One head's previous-token score (legend above).  p [T, T], T ≥ 2. (Its sink score is attention_sink().)
float previous_token_score(const Eigen::Ref<const Mat>& p);

struct HeadPatternScores {
  int layers = 0, heads = 0;          // L, H
  std::vector<float> sink, previous;  // [L, H]
  std::vector<float> induction;       // [L, H]; empty when the input is no repeated sequence
  std::optional<RepeatedSpan> repeat; // the span the induction scores were measured on
  // [L] layers without a softmax (AttentionStack::linear_layer, Qwen3-Next's Gated DeltaNet): their signed
  // matrices have no sink, previous-token or induction score (their entries stay 0) and top_heads skips them.
  std::vector<bool> skipped_layers;
  float at(HeadPattern pattern, int layer, int head) const;
};

// Every head's three scores. `period` > 0 names the repeat's length (the last 2·period tokens are the
// two copies; the ids are not compared); 0 finds it with find_repeat(stack.ids). Throws InputError when
// the stack has fewer than 2 tokens or a given period does not fit (2·period > T or period < 2).
HeadPatternScores head_pattern_scores(const model::AttentionStack& stack, int period = 0);

struct TopHead {
  int layer = 0, head = 0;
  float score = 0;
};
// The `count` heads with the highest score of `pattern`, highest first (ties: lower layer, then lower
// head). Empty for induction when the scores have none.
std::vector<TopHead> top_heads(const HeadPatternScores& scores, HeadPattern pattern, int count);

// n ids drawn uniformly from [0, vocab_size) by a seeded Rng, then the same n again (T = 2n): the input
// that shows induction heads, for any model's vocabulary. Throws InputError unless 2 ≤ n ≤ 4096 and
// vocab_size ≥ 2.
std::vector<int32_t> repeated_random_ids(int n, int vocab_size, uint64_t seed);

}  // namespace attnscope
