// tasks.cpp — sequence generators of the built-in tasks, the text task's vocabulary, induction scores.
#include "attnscope/train/tasks.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "attnscope/core/error.h"
#include "attnscope/text/tokenizer.h"

namespace attnscope::train {

namespace {
constexpr uint64_t probe_seed = 0x5eed'0f'9e0bull;  // fixed: probes do not depend on the training seed
constexpr int max_symbols = 1024;

std::string symbol_name(int i) {
  if (i < 26) return std::string(1, char('A' + i));
  if (i < 52) return std::string(1, char('a' + i - 26));
  return "s" + std::to_string(i);
}

int32_t draw(Rng& rng, int n) { return int32_t(rng.next_u64() % uint64_t(n)); }
}  // namespace

TaskKind parse_task(std::string_view name) {
  if (name == "induction") return TaskKind::induction;
  if (name == "copy") return TaskKind::copy;
  if (name == "reverse") return TaskKind::reverse;
  if (name == "sort") return TaskKind::sort;
  if (name == "recall") return TaskKind::recall;
  if (name == "text") return TaskKind::text;
  throw InputError("unknown task '" + std::string(name) + "': use induction, copy, reverse, sort, recall or text");
}

const char* task_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::induction: return "induction";
    case TaskKind::copy: return "copy";
    case TaskKind::reverse: return "reverse";
    case TaskKind::sort: return "sort";
    case TaskKind::recall: return "recall";
    case TaskKind::text: return "text";
  }
  return "?";
}

TextLevel parse_text_level(std::string_view name) {
  if (name == "chars" || name == "char") return TextLevel::chars;
  if (name == "words" || name == "word") return TextLevel::words;
  throw InputError("unknown text level '" + std::string(name) +
                   "': use chars (one token per character) or words (SPEC's words, punctuation and ideographs)");
}

const char* text_level_name(TextLevel level) { return level == TextLevel::chars ? "chars" : "words"; }

Task::Task(const TaskSettings& settings) : s_(settings) {
  const std::string T = std::to_string(s_.seq_len);
  require(s_.seq_len >= 4, "the sequence length must be at least 4 tokens, got " + T);
  if (s_.kind != TaskKind::text) {
    require(s_.symbols >= 2 && s_.symbols <= max_symbols, "the number of symbols must be 2 to " +
                                                              std::to_string(max_symbols) + ", got " +
                                                              std::to_string(s_.symbols));
    for (int i = 0; i < s_.symbols; ++i) vocab_.push_back(symbol_name(i));
    if (s_.kind == TaskKind::induction) {
      require(s_.seq_len % 2 == 0, "the induction task's longest period is half the sequence (its induction score repeats a half): its sequence length must be even, got " + T);
    } else if (s_.kind == TaskKind::recall) {
      require(s_.symbols >= 4, "the recall task draws keys and values from two halves of the symbols: it needs at least 4, got " +
                                   std::to_string(s_.symbols));
    } else {
      separator_ = int32_t(vocab_.size());
      vocab_.push_back("|");
    }
    return;
  }

  // Text: split into tokens, then ids by frequency (ties: first occurrence); the rarest beyond
  // max_text_vocab − 1 share "<unk>".
  require(!s_.text.empty(), s_.text_name + " is empty: the text task needs some text to learn from");
  std::vector<std::string> pieces;
  try {
    if (s_.level == TextLevel::chars) {
      for (char32_t cp : decode_utf8(s_.text)) pieces.push_back(encode_utf8(cp));
    } else {
      for (const Token& t : tokenize(s_.text)) pieces.push_back(t.text);
    }
  } catch (const InputError& e) {
    throw InputError(s_.text_name + ": " + e.what());
  }
  require(!pieces.empty(), s_.text_name + " has no tokens (only whitespace)");
  std::unordered_map<std::string, std::pair<int64_t, size_t>> seen;  // text → (count, first index)
  for (size_t i = 0; i < pieces.size(); ++i) {
    auto [it, fresh] = seen.try_emplace(pieces[i], 0, i);
    ++it->second.first;
  }
  std::vector<std::pair<std::string, std::pair<int64_t, size_t>>> order(seen.begin(), seen.end());
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.second.second < b.second.second;
  });
  const bool needs_unk = order.size() > size_t(max_text_vocab);
  if (needs_unk) order.resize(max_text_vocab - 1);
  std::unordered_map<std::string, int32_t> id_of;
  for (const auto& [text, stats] : order) {
    id_of[text] = int32_t(vocab_.size());
    vocab_.push_back(text);
  }
  if (needs_unk) vocab_.push_back("<unk>");
  const int32_t unk = int32_t(vocab_.size()) - 1;
  if (vocab_.size() < 2) vocab_.push_back("<unk>");  // a one-token text still gets a two-way softmax
  stream_.reserve(pieces.size());
  for (const std::string& p : pieces) {
    auto it = id_of.find(p);
    stream_.push_back(it != id_of.end() ? it->second : unk);
  }
  require(stream_.size() >= size_t(s_.seq_len) + 1,
          s_.text_name + " has " + std::to_string(stream_.size()) + " " + text_level_name(s_.level) +
              "-level tokens; training on sequences of " + T + " needs at least " +
              std::to_string(s_.seq_len + 1) + " (use a shorter sequence length or a longer text)");
}

void Task::one_example(Rng& rng, int32_t* ids, int32_t* targets) const {
  const int T = s_.seq_len;
  std::fill(targets, targets + T, -1);
  if (s_.kind == TaskKind::text) {
    const size_t start = size_t(rng.next_u64() % uint64_t(stream_.size() - size_t(T)));
    for (int t = 0; t < T; ++t) ids[t] = stream_[start + t], targets[t] = stream_[start + t + 1];
    return;
  }
  if (s_.kind == TaskKind::induction) {
    // A period of its own for every example, so that no fixed look-back predicts the repeats: only
    // "find the earlier occurrence of this token, copy what followed it" works at every period.
    const int lo = induction_min_period(T), hi = T / 2;
    const int p = lo + int(draw(rng, hi - lo + 1));
    for (int t = 0; t < p; ++t) ids[t] = draw(rng, s_.symbols);
    for (int t = p; t < T; ++t) ids[t] = ids[t - p];
    for (int t = p; t + 1 < T; ++t) targets[t] = ids[t + 1];  // every token from the first repeat on
    return;
  }
  if (s_.kind == TaskKind::recall) {
    // p pairs of distinct keys (a partial shuffle of the key range) and free values, then queries
    const int keys = s_.symbols / 2, values = s_.symbols - keys, p = recall_pairs(T, s_.symbols);
    std::vector<int32_t> key(keys);
    for (int i = 0; i < keys; ++i) key[i] = i;
    for (int i = 0; i < p; ++i) std::swap(key[i], key[i + draw(rng, keys - i)]);
    for (int i = 0; i < p; ++i) ids[2 * i] = key[i], ids[2 * i + 1] = keys + draw(rng, values);
    for (int t = 2 * p; t + 1 < T; t += 2) {
      const int pair = int(draw(rng, p));
      ids[t] = ids[2 * pair], ids[t + 1] = ids[2 * pair + 1];
      targets[t] = ids[t + 1];
    }
    if ((T - 2 * p) % 2) ids[T - 1] = ids[2 * draw(rng, p)];  // an odd T: one last key, not scored
    return;
  }
  // copy / reverse / sort: x₁…xₙ | y₁…yₙ in 2n + 1 ≤ T tokens; a spare last slot holds the separator
  const int n = (T - 1) / 2;
  std::vector<int32_t> x(n);
  for (int32_t& s : x) s = draw(rng, s_.symbols);
  std::vector<int32_t> y = x;
  if (s_.kind == TaskKind::reverse) std::reverse(y.begin(), y.end());
  if (s_.kind == TaskKind::sort) std::sort(y.begin(), y.end());
  std::copy(x.begin(), x.end(), ids);
  ids[n] = separator_;
  std::copy(y.begin(), y.end(), ids + n + 1);
  for (int t = 2 * n + 1; t < T; ++t) ids[t] = separator_;
  for (int t = n; t < 2 * n; ++t) targets[t] = ids[t + 1];
}

void Task::sample(Rng& rng, int B, int32_t* ids, int32_t* targets) const {
  for (int b = 0; b < B; ++b) one_example(rng, ids + size_t(b) * s_.seq_len, targets + size_t(b) * s_.seq_len);
}

std::vector<int32_t> Task::probe() const {
  std::vector<int32_t> ids(s_.seq_len), targets(s_.seq_len);
  if (s_.kind == TaskKind::text) return std::vector<int32_t>(stream_.begin(), stream_.begin() + s_.seq_len);
  Rng rng(probe_seed);
  one_example(rng, ids.data(), targets.data());
  return ids;
}

std::vector<int32_t> Task::induction_probe(int n) const {
  Rng rng(probe_seed ^ 0x1d);
  std::vector<int32_t> ids(size_t(2) * n);
  // Symbols only (never the separator or "<unk>"), distinct where the vocabulary allows, so each
  // token of the second half has one earlier occurrence and the score has one right answer.
  int pool = s_.kind == TaskKind::text ? vocab_size() : s_.symbols;
  if (s_.kind == TaskKind::text && vocab_.back() == "<unk>") --pool;
  std::vector<int32_t> all(pool);
  for (int i = 0; i < pool; ++i) all[i] = i;
  for (int i = pool - 1; i > 0; --i) std::swap(all[i], all[draw(rng, i + 1)]);
  for (int t = 0; t < n; ++t) ids[t] = ids[t + n] = t < pool ? all[t] : draw(rng, pool);
  return ids;
}

int induction_min_period(int T) { return std::max(2, T / 3); }

int recall_pairs(int T, int symbols) { return std::max(1, std::min(T / 8, symbols / 2)); }

std::vector<float> induction_scores(const float* probs, int H, int T, int n) {
  std::vector<float> scores(H, 0.0f);
  if (2 * n > T || n < 2) return scores;
  for (int h = 0; h < H; ++h) {
    double sum = 0;
    int count = 0;
    for (int i = n + 1; i < 2 * n; ++i, ++count) sum += probs[(size_t(h) * T + i) * T + (i - n + 1)];
    scores[h] = count ? float(sum / count) : 0.0f;
  }
  return scores;
}

}  // namespace attnscope::train
