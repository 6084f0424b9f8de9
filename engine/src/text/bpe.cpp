// bpe.cpp — BPE merges: the priority-queue fast path and the plain-loop reference.
#include "attnscope/text/bpe.h"

#include <algorithm>
#include <bit>
#include <queue>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "text/token_quote.h"
#include "text/unicode_text.h"

namespace attnscope {

BpeModel::BpeModel(std::vector<std::pair<std::string, int64_t>> vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
                   const std::string& source)
    : options_(std::move(options)) {
  using text_detail::quote_token;
  // (Plain ifs, not require(): the messages must not be built for each of 150k good entries.)
  int64_t max_id = -1;
  for (const auto& [token, id] : vocab) {
    if (id < 0 || id >= limits::max_vocab_tokens)
      throw InputError(source + ": the id of " + quote_token(token) + " is " + std::to_string(id) + ", outside 0 … " +
                       std::to_string(limits::max_vocab_tokens - 1));
    max_id = std::max(max_id, id);
  }
  tokens_.resize(size_t(max_id + 1));
  has_token_.assign(size_t(max_id + 1), 0);
  token_slots_.assign(std::bit_ceil(std::max<size_t>(16, vocab.size() * 2)), TokenSlot{0, -1});
  const size_t mask = token_slots_.size() - 1;
  for (auto& [token, id] : vocab) {
    if (has_token_[size_t(id)])
      throw InputError(source + ": id " + std::to_string(id) + " is given to both " + quote_token(tokens_[size_t(id)]) +
                       " and " + quote_token(token) + "; every id must name one token");
    const size_t h = std::hash<std::string_view>{}(token);
    const uint32_t tag = uint32_t(uint64_t(h) >> 32);  // 0 where size_t is 32-bit (WebAssembly): h >> 32 would be undefined there
    size_t i = h & mask;
    for (; token_slots_[i].id >= 0; i = (i + 1) & mask)
      if (token_slots_[i].tag == tag && tokens_[size_t(token_slots_[i].id)] == token)
        throw InputError(source + ": the vocabulary lists " + quote_token(token) + " twice");
    token_slots_[i] = {tag, int32_t(id)};
    tokens_[size_t(id)] = std::move(token);
    has_token_[size_t(id)] = 1;
    ++token_count_;
  }
  merge_slots_.assign(std::bit_ceil(std::max<size_t>(16, merges.size() * 2)), MergeSlot{kNoKey, {}});
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    // (Not a structured binding: clang 14 cannot capture one in the lambda.)
    const std::string& left = merges[rank].first;
    const std::string& right = merges[rank].second;
    auto refuse = [&](const std::string& problem) {
      throw InputError(source + ": merge " + std::to_string(rank) + " (" + quote_token(left) + " + " +
                       quote_token(right) + ") " + problem);
    };
    const auto l = token_to_id(left), r = token_to_id(right);
    if (!l) refuse("names " + quote_token(left) + ", which is not in the vocabulary");
    if (!r) refuse("names " + quote_token(right) + ", which is not in the vocabulary");
    joined.assign(left).append(right);
    const auto result = token_to_id(joined);
    if (!result) refuse("makes " + quote_token(joined) + ", which is not in the vocabulary");
    // A pair listed twice keeps its last rank (the tokenizers library builds a map from the list).
    insert_merge(pair_key(*l, *r), Merge{int32_t(rank), *result});
  }
  if (options_.unk_token) unk_id_ = token_to_id(*options_.unk_token);
  for (int b = 0; b < 256; ++b) {
    static const char* hex = "0123456789ABCDEF";
    const std::string name = std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
    byte_ids_[size_t(b)] = token_to_id(name).value_or(-1);
  }
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  const size_t h = std::hash<std::string_view>{}(token);
  const uint32_t tag = uint32_t(uint64_t(h) >> 32);  // 0 where size_t is 32-bit (WebAssembly): h >> 32 would be undefined there
  const size_t mask = token_slots_.size() - 1;
  for (size_t i = h & mask; token_slots_[i].id >= 0; i = (i + 1) & mask)
    if (token_slots_[i].tag == tag && tokens_[size_t(token_slots_[i].id)] == token) return token_slots_[i].id;
  return std::nullopt;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  return id >= 0 && id < id_limit() && has_token_[size_t(id)] ? &tokens_[size_t(id)] : nullptr;
}

namespace {
// SplitMix64's finaliser: pair keys differ only in a few low bits of each half.
size_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return size_t(x ^ (x >> 31));
}
}  // namespace

void BpeModel::insert_merge(uint64_t key, Merge merge) {
  const size_t mask = merge_slots_.size() - 1;
  size_t i = mix(key) & mask;
  for (; merge_slots_[i].key != kNoKey; i = (i + 1) & mask)
    if (merge_slots_[i].key == key) {
      merge_slots_[i].merge = merge;
      return;
    }
  merge_slots_[i] = {key, merge};
  ++merge_count_;
}

const BpeModel::Merge* BpeModel::find_merge(int32_t left, int32_t right) const {
  const uint64_t key = pair_key(left, right);
  const size_t mask = merge_slots_.size() - 1;
  for (size_t i = mix(key) & mask; merge_slots_[i].key != kNoKey; i = (i + 1) & mask)
    if (merge_slots_[i].key == key) return &merge_slots_[i].merge;
  return nullptr;
}

std::vector<BpeModel::Symbol> BpeModel::initial_symbols(std::string_view word) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  std::optional<Symbol> unknown;  // a pending unknown token, so fuse_unk can extend it
  auto flush_unknown = [&] {
    if (unknown) symbols.push_back(*unknown);
    unknown.reset();
  };
  for (size_t i = 0; i < word.size();) {
    const size_t n = std::min(text_detail::utf8_length(static_cast<unsigned char>(word[i])), word.size() - i);
    const std::string_view ch = word.substr(i, n);
    i += n;
    if (const auto id = token_to_id(ch)) {
      flush_unknown();
      symbols.push_back({*id, int32_t(n)});
      continue;
    }
    if (options_.byte_fallback &&
        std::all_of(ch.begin(), ch.end(), [&](char c) { return byte_ids_[static_cast<unsigned char>(c)] >= 0; })) {
      flush_unknown();
      for (char c : ch) symbols.push_back({byte_ids_[static_cast<unsigned char>(c)], 1});
      continue;
    }
    if (!options_.unk_token) continue;  // no unknown token: the tokenizers library drops the character
    if (!unk_id_)
      throw InputError("the unknown token " + text_detail::quote_token(*options_.unk_token) +
                       " is not in the vocabulary, but the text has a character outside it: " +
                       text_detail::quote_token(ch));
    if (unknown && options_.fuse_unk) {
      unknown->bytes += int32_t(n);
    } else {
      flush_unknown();
      unknown = Symbol{*unk_id_, int32_t(n)};
    }
  }
  flush_unknown();
  return symbols;
}

// Fast path: candidate pairs in a min-heap ordered by (rank, position of the left symbol); symbols in
// a doubly linked list over their original positions. A popped pair is used only if the two symbols
// it named are still neighbours with the same ids (merges elsewhere may have consumed either one).
void BpeModel::merge_symbols(std::vector<Symbol>& symbols) const {
  const int n = int(symbols.size());
  if (n < 2) return;
  struct Candidate {
    int32_t rank, pos, left, right;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::vector<int32_t> prev(static_cast<size_t>(n)), next(static_cast<size_t>(n));
  std::vector<uint8_t> alive(static_cast<size_t>(n), 1);
  for (int i = 0; i < n; ++i) prev[size_t(i)] = i - 1, next[size_t(i)] = i + 1 < n ? i + 1 : -1;
  std::vector<Candidate> storage;
  storage.reserve(size_t(n));
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue(std::greater<>{}, std::move(storage));
  auto push_pair = [&](int left_pos) {
    const int right_pos = next[size_t(left_pos)];
    if (right_pos < 0) return;
    const int32_t l = symbols[size_t(left_pos)].id, r = symbols[size_t(right_pos)].id;
    if (const Merge* m = find_merge(l, r)) queue.push({m->rank, left_pos, l, r});
  };
  for (int i = 0; i + 1 < n; ++i) push_pair(i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    const int right_pos = next[size_t(c.pos)];
    if (!alive[size_t(c.pos)] || right_pos < 0 || symbols[size_t(c.pos)].id != c.left ||
        symbols[size_t(right_pos)].id != c.right)
      continue;  // stale: one side was merged into something else since this pair was queued
    Symbol& left = symbols[size_t(c.pos)];
    left.id = find_merge(c.left, c.right)->result;
    left.bytes += symbols[size_t(right_pos)].bytes;
    alive[size_t(right_pos)] = 0;
    next[size_t(c.pos)] = next[size_t(right_pos)];
    if (next[size_t(c.pos)] >= 0) prev[size_t(next[size_t(c.pos)])] = c.pos;
    if (prev[size_t(c.pos)] >= 0) push_pair(prev[size_t(c.pos)]);
    push_pair(c.pos);
  }
  size_t kept = 0;
  for (int i = 0; i < n; ++i)
    if (alive[size_t(i)]) symbols[kept++] = symbols[size_t(i)];
  symbols.resize(kept);
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out, BpeCache* cache) const {
  if (word.empty()) return;
  if (options_.ignore_merges)
    if (const auto id = token_to_id(word)) {
      out.push_back(*id);
      return;
    }
  const bool cacheable = cache && word.size() < 256;
  if (cacheable) {
    const auto it = cache->find(std::string(word));
    if (it != cache->end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<Symbol> symbols = initial_symbols(word);
  merge_symbols(symbols);
  const size_t first = out.size();
  for (const Symbol& s : symbols) out.push_back(s.id);
  if (cacheable) cache->emplace(std::string(word), std::vector<int32_t>(out.begin() + std::ptrdiff_t(first), out.end()));
}

// Reference: after every merge, rescan all adjacent pairs for the lowest rank (leftmost on ties).
std::vector<int32_t> BpeModel::encode_word_reference(std::string_view word) const {
  std::vector<int32_t> ids;
  if (word.empty()) return ids;
  if (options_.ignore_merges)
    if (const auto id = token_to_id(word)) return {*id};
  for (const Symbol& s : initial_symbols(word)) ids.push_back(s.id);
  for (;;) {
    size_t best = ids.size();
    const Merge* best_merge = nullptr;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      const Merge* m = find_merge(ids[i], ids[i + 1]);
      if (m && (!best_merge || m->rank < best_merge->rank)) best = i, best_merge = m;
    }
    if (!best_merge) break;
    ids[best] = best_merge->result;
    ids.erase(ids.begin() + std::ptrdiff_t(best) + 1);
  }
  return ids;
}

}  // namespace attnscope
