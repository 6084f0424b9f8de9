// bpe.h — byte-pair encoding of one pre-tokenized word (Sennrich et al. 2016), with the rules of
// Hugging Face's tokenizers `BPE` model.
//
// A word is split into characters; each character is looked up in the vocabulary (missing ones become
// <0xNN> byte tokens when byte_fallback is on and they exist, else the unknown token, fused into one
// when fuse_unk is on, else dropped). Then merges are applied: repeatedly the adjacent pair with the
// lowest merge rank is joined, the leftmost first when ranks tie, until no adjacent pair has a merge.
// With ignore_merges a word that is itself in the vocabulary is taken whole.
//
// encode_word() keeps the candidate pairs in a priority queue (rank, position) over a linked list of
// symbols, O(n log n) for n characters; encode_word_reference() is the plain loop that rescans every
// pair after every merge, O(n²), kept as the oracle the fast path is tested against.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnscope {

struct BpeOptions {
  std::optional<std::string> unk_token;  // no unknown token: characters outside the vocabulary are dropped
  bool fuse_unk = false;                 // consecutive unknown characters give one unknown token
  bool byte_fallback = false;            // characters outside the vocabulary become <0xNN> tokens
  bool ignore_merges = false;            // a word found whole in the vocabulary skips the merges
};

// Word → ids, for words shorter than 256 bytes (long words rarely repeat). One per encode call.
using BpeCache = std::unordered_map<std::string, std::vector<int32_t>>;

class BpeModel {
 public:
  // vocab: (token, id) pairs; merges: (left, right) in priority order, rank = index (a pair listed
  // twice keeps its last rank, as the tokenizers library does). `source` names the file for messages.
  // Throws InputError when an id is negative, ≥ limits::max_vocab_tokens or given twice, a token is
  // listed twice, a merge names a token (or produces a join) that is not in the vocabulary, or the
  // unknown token is not in the vocabulary.
  BpeModel(std::vector<std::pair<std::string, int64_t>> vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
           const std::string& source);

  // Appends the ids of `word` (one pre-token, valid UTF-8) to `out`. Uses and fills `cache` when given.
  void encode_word(std::string_view word, std::vector<int32_t>& out, BpeCache* cache = nullptr) const;
  // The same result by the plain O(n²) loop (the oracle for tests).
  std::vector<int32_t> encode_word_reference(std::string_view word) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  const std::string* id_to_token(int32_t id) const;  // nullptr when no token has this id
  int32_t id_limit() const { return int32_t(tokens_.size()); }  // largest id + 1
  size_t size() const { return token_count_; }
  size_t merge_count() const { return merge_count_; }
  const BpeOptions& options() const { return options_; }

 private:
  struct Symbol {
    int32_t id;
    int32_t bytes;  // length of the text it covers (only for fused unknowns)
  };
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t left, int32_t right) { return (uint64_t(uint32_t(left)) << 32) | uint32_t(right); }
  const Merge* find_merge(int32_t left, int32_t right) const;
  std::vector<Symbol> initial_symbols(std::string_view word) const;
  void merge_symbols(std::vector<Symbol>& symbols) const;

  void insert_merge(uint64_t key, Merge merge);

  // Both tables are open addressing with linear probing over a power-of-two array: loading Qwen's
  // 151k tokens and merges makes 450k lookups, and node-based maps spent most of the load in cache
  // misses: building Qwen's tables took 290 ms with std::unordered_map, 100 ms with these.
  struct TokenSlot {
    uint32_t tag;  // high bits of the hash, so most mismatches need no string compare
    int32_t id;    // −1: empty
  };
  struct MergeSlot {
    uint64_t key;  // pair_key(left, right); kNoKey: empty
    Merge merge;
  };
  static constexpr uint64_t kNoKey = ~uint64_t(0);

  BpeOptions options_;
  std::vector<std::string> tokens_;  // by id
  std::vector<uint8_t> has_token_;   // ids may leave holes
  std::vector<TokenSlot> token_slots_;
  std::vector<MergeSlot> merge_slots_;
  size_t token_count_ = 0, merge_count_ = 0;
  std::optional<int32_t> unk_id_;
  std::array<int32_t, 256> byte_ids_{};  // id of <0xNN>, −1 when absent
};

}  // namespace attnscope
