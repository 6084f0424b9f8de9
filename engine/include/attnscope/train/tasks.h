// tasks.h — the built-in training tasks: sequences to learn, which positions are scored, probes.
//
//   induction  x₁ … xₚ x₁ … xₚ x₁ …         p random tokens repeated cyclically to fill T, with a period
//                                           p of its own per example, uniform in [⌊T/3⌋, T/2] (21…32
//                                           for T = 64); scored: positions i ≥ p (0-based), whose next
//                                           token is predictable from its earlier occurrence. The
//                                           varying p leaves no fixed look-back that works: only
//                                           induction does. Periods stay ≥ T/3 because with short ones
//                                           (T/8) "guess one of the few tokens in view" pays so well
//                                           that the default model settles on it and no induction head
//                                           forms in 6000 steps; from T/3 it forms in a few hundred
//                                           and still works at periods far below T/3.
//   copy       x₁ … xₙ | x₁ … xₙ            scored: from the separator on (T = 2n + 1)
//   reverse    x₁ … xₙ | xₙ … x₁            scored: from the separator on
//   sort       x₁ … xₙ | sorted(x)           scored: from the separator on
//   recall     k₁ v₁ k₂ v₂ … k_p v_p  q₁ v(q₁) q₂ v(q₂) …
//              multi-query associative recall (after Zoology's MQAR, Arora et al. 2023): p key–value
//              pairs, then queries, each a key of those pairs followed by its value. Keys are the
//              first ⌊S/2⌋ symbols, values the rest (disjoint ranges: a value is never mistaken for
//              a key); the p keys of an example are distinct, values drawn freely; p = min(⌊T/8⌋,
//              ⌊S/2⌋) (8 pairs at T = 64, S = 32), the other T − 2p tokens are ⌊(T − 2p)/2⌋
//              queries drawn from the p keys (with repeats; an odd T ends with one unscored key).
//              Scored: each query's position, whose next token is the value that key was paired
//              with — found only by looking the key up among the pairs (its position is random).
//              Needs S ≥ 4 symbols.
//   text       windows of a UTF-8 text, every position scored (next-token language modelling);
//              tokens are characters (code points) or the words, punctuation marks and CJK
//              ideographs of SPEC's tokenizer (text/tokenizer.h) — Chinese works either way
// Symbols are drawn uniformly from `symbols` tokens; "|" is one extra token. A target of −1 marks
// a position that is not scored. All draws come from the caller's Rng, so a seed fixes the data.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/core/rng.h"

namespace attnscope::train {

enum class TaskKind { induction, copy, reverse, sort, recall, text };
enum class TextLevel { chars, words };

TaskKind parse_task(std::string_view name);  // InputError listing the valid names
const char* task_name(TaskKind kind);
TextLevel parse_text_level(std::string_view name);
const char* text_level_name(TextLevel level);

struct TaskSettings {
  TaskKind kind = TaskKind::induction;
  int seq_len = 64;     // T, tokens per training sequence
  int symbols = 32;     // synthetic tasks: distinct random tokens
  std::string text;     // text task: the UTF-8 content
  std::string text_name = "the text";  // named in error messages (the file path)
  TextLevel level = TextLevel::chars;
};

inline constexpr int max_text_vocab = 4096;  // rarer tokens of a text share "<unk>"

class Task {
 public:
  // Validates the settings (sequence length, symbols, a text that is valid UTF-8 and long enough)
  // and builds the vocabulary. Throws InputError saying what is wrong.
  explicit Task(const TaskSettings& settings);

  TaskKind kind() const { return s_.kind; }
  int seq_len() const { return s_.seq_len; }
  int vocab_size() const { return int(vocab_.size()); }
  // The text of every token id (synthetic symbols are "A"…"Z", "a"…"z", then "s52", …; "|" the separator).
  const std::vector<std::string>& vocab() const { return vocab_; }
  // Tokens of the text task's token stream (empty for synthetic tasks).
  size_t text_tokens() const { return stream_.size(); }

  // B fresh examples: ids [B·T], targets [B·T] (−1 where not scored).
  void sample(Rng& rng, int B, int32_t* ids, int32_t* targets) const;
  // The example shown while training: the same sequence for a given task and settings, whatever the
  // training seed (drawn from a fixed seed; the text task shows the text's first T tokens).
  std::vector<int32_t> probe() const;
  // A random half of length n repeated (T = 2n), from a fixed seed over this task's vocabulary: the
  // sequence that induction scores are measured on, for every task.
  std::vector<int32_t> induction_probe(int n) const;

 private:
  void one_example(Rng& rng, int32_t* ids, int32_t* targets) const;
  TaskSettings s_;
  std::vector<std::string> vocab_;
  std::vector<int32_t> stream_;  // text task: the whole text as token ids
  int32_t separator_ = -1;
};

// The shortest period of the induction task's examples for sequence length T: max(2, ⌊T/3⌋); the
// longest is T/2, so every example repeats its first period at least once.
int induction_min_period(int T);

// The recall task's pairs per example for sequence length T and S symbols: min(⌊T/8⌋, ⌊S/2⌋) (≥ 1).
int recall_pairs(int T, int symbols);

// Induction score of each head on a sequence made of a random half of length n repeated (SPEC
// "Training"): the mean over queries i ≥ n + 1 (0-based) of P[i, i − n + 1], the attention to the
// token that followed the earlier occurrence of the current token.
//   probs [H, T, T] with T ≥ 2n  →  [H]
std::vector<float> induction_scores(const float* probs, int H, int T, int n);

}  // namespace attnscope::train
