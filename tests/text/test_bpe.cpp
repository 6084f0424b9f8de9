// BPE model (bpe.h): merge order, the fast path against the plain loop, fallbacks, bad vocabularies.
#include <doctest/doctest.h>

#include <random>
#include <set>

#include "attnscope/core/error.h"
#include "attnscope/text/bpe.h"

using namespace attnscope;

namespace {

using Vocab = std::vector<std::pair<std::string, int64_t>>;
using Merges = std::vector<std::pair<std::string, std::string>>;

std::vector<std::string> pieces(const BpeModel& m, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(*m.id_to_token(id));
  return out;
}

std::vector<std::string> encode(const BpeModel& m, std::string_view word) {
  std::vector<int32_t> ids;
  m.encode_word(word, ids);
  return pieces(m, ids);
}

}  // namespace

TEST_CASE("bpe: the lowest-ranked pair merges first, the leftmost on ties") {
  const Vocab vocab{{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}, {"aa", 6}};
  // Rank 0 joins b+c, so "abc" goes a|bc, and a+bc is not a merge: it stays two tokens.
  BpeModel bc_first(vocab, Merges{{"b", "c"}, {"a", "b"}, {"ab", "c"}}, {}, "test");
  CHECK(encode(bc_first, "abc") == std::vector<std::string>{"a", "bc"});
  // With a+b first, ab+c follows.
  BpeModel ab_first(vocab, Merges{{"a", "b"}, {"b", "c"}, {"ab", "c"}}, {}, "test");
  CHECK(encode(ab_first, "abc") == std::vector<std::string>{"abc"});
  // "aaa": both pairs have the same rank; the leftmost merges, the last a is left over.
  BpeModel aa(vocab, Merges{{"a", "a"}}, {}, "test");
  CHECK(encode(aa, "aaa") == std::vector<std::string>{"aa", "a"});
  CHECK(encode(aa, "aaaa") == std::vector<std::string>{"aa", "aa"});
  // A pair listed twice keeps its last rank (as the tokenizers library's map does): b+c moves behind a+b.
  BpeModel repeated(vocab, Merges{{"b", "c"}, {"a", "b"}, {"ab", "c"}, {"b", "c"}}, {}, "test");
  CHECK(encode(repeated, "abc") == std::vector<std::string>{"abc"});
}

TEST_CASE("bpe: the priority queue gives what the plain rescanning loop gives") {
  // A vocabulary grown by random merges over a 5-letter alphabet, then random words (many ties).
  std::mt19937 rng(7);
  Vocab vocab;
  std::vector<std::string> tokens{"a", "b", "c", "d", "e"};
  for (size_t i = 0; i < tokens.size(); ++i) vocab.emplace_back(tokens[i], int64_t(i));
  Merges merges;
  std::set<std::string> seen(tokens.begin(), tokens.end());
  while (merges.size() < 300) {
    const std::string l = tokens[rng() % tokens.size()];
    const std::string r = tokens[rng() % tokens.size()];
    if (l.size() + r.size() > 8) continue;
    merges.emplace_back(l, r);
    if (seen.insert(l + r).second) {
      tokens.push_back(l + r);
      vocab.emplace_back(l + r, int64_t(vocab.size()));
    }
  }
  const BpeModel model(vocab, merges, {}, "random");
  int differing_from_characters = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string word;
    const int length = 1 + int(rng() % 40);
    for (int i = 0; i < length; ++i) word += char('a' + rng() % 5);
    std::vector<int32_t> fast;
    model.encode_word(word, fast);
    const std::vector<int32_t> reference = model.encode_word_reference(word);
    REQUIRE_MESSAGE(fast == reference, "word " << word);
    differing_from_characters += fast.size() < word.size();
    // The pieces always spell the word.
    std::string joined;
    for (const auto& p : pieces(model, fast)) joined += p;
    CHECK(joined == word);
  }
  CHECK(differing_from_characters > 1000);  // the merges really fired
}

TEST_CASE("bpe: characters outside the vocabulary become bytes, the unknown token, or nothing") {
  const Vocab vocab{{"<unk>", 0}, {"a", 1}, {"b", 2}, {"<0xC3>", 3}, {"<0xA9>", 4}, {"ab", 5}};
  const Merges merges{{"a", "b"}};
  // é = C3 A9: both byte tokens exist, so byte fallback spells it.
  BpeModel fallback(vocab, merges, BpeOptions{"<unk>", false, true, false}, "test");
  CHECK(encode(fallback, "abé") == std::vector<std::string>{"ab", "<0xC3>", "<0xA9>"});
  // ü = C3 BC: <0xBC> is missing, so the unknown token stands for it.
  CHECK(encode(fallback, "üa") == std::vector<std::string>{"<unk>", "a"});
  // Without byte fallback: one <unk> per character, or one for a run with fuse_unk.
  BpeModel unk(vocab, merges, BpeOptions{"<unk>", false, false, false}, "test");
  CHECK(encode(unk, "éé") == std::vector<std::string>{"<unk>", "<unk>"});
  BpeModel fused(vocab, merges, BpeOptions{"<unk>", true, false, false}, "test");
  CHECK(encode(fused, "ééab") == std::vector<std::string>{"<unk>", "ab"});
  // No unknown token: the tokenizers library drops the character, and its neighbours may then merge.
  BpeModel drop(vocab, merges, BpeOptions{}, "test");
  CHECK(encode(drop, "aéb") == std::vector<std::string>{"ab"});
  // ignore_merges: a word in the vocabulary is taken whole even if the merges would not build it.
  BpeModel whole(Vocab{{"a", 0}, {"b", 1}, {"c", 2}, {"abc", 3}}, Merges{}, BpeOptions{std::nullopt, false, false, true}, "t");
  CHECK(encode(whole, "abc") == std::vector<std::string>{"abc"});
  BpeModel merged_only(Vocab{{"a", 0}, {"b", 1}, {"c", 2}, {"abc", 3}}, Merges{}, BpeOptions{}, "t");
  CHECK(encode(merged_only, "abc") == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("bpe: an unknown token missing from the vocabulary fails only when it is needed") {
  BpeModel model(Vocab{{"a", 0}}, Merges{}, BpeOptions{"<unk>", false, false, false}, "test");
  CHECK(encode(model, "aa") == std::vector<std::string>{"a", "a"});
  CHECK_THROWS_WITH_AS(encode(model, "ab"), doctest::Contains("the unknown token '<unk>' is not in the vocabulary"),
                       InputError);
}

TEST_CASE("bpe: bad vocabularies and merges are refused with the file and the entry") {
  CHECK_THROWS_WITH_AS(BpeModel(Vocab{{"a", 0}, {"b", 1}}, Merges{{"a", "c"}}, {}, "'m.txt'"),
                       doctest::Contains("'m.txt': merge 0 ('a' + 'c') names 'c', which is not in the vocabulary"),
                       InputError);
  CHECK_THROWS_WITH_AS(BpeModel(Vocab{{"a", 0}, {"b", 1}}, Merges{{"a", "b"}}, {}, "v"),
                       doctest::Contains("merge 0 ('a' + 'b') makes 'ab', which is not in the vocabulary"), InputError);
  CHECK_THROWS_WITH_AS(BpeModel(Vocab{{"a", 0}, {"b", 0}}, Merges{}, {}, "v"),
                       doctest::Contains("id 0 is given to both 'a' and 'b'"), InputError);
  CHECK_THROWS_WITH_AS(BpeModel(Vocab{{"a", 0}, {"a", 1}}, Merges{}, {}, "v"),
                       doctest::Contains("the vocabulary lists 'a' twice"), InputError);
  CHECK_THROWS_WITH_AS(BpeModel(Vocab{{"a", -3}}, Merges{}, {}, "v"), doctest::Contains("the id of 'a' is -3, outside 0"),
                       InputError);
  CHECK_THROWS_WITH_AS(BpeModel(Vocab{{"a", int64_t(1) << 40}}, Merges{}, {}, "v"),
                       doctest::Contains("outside 0 … 4194303"), InputError);
}

TEST_CASE("bpe: ids may leave holes; id_to_token answers for the ids that exist") {
  const BpeModel model(Vocab{{"a", 0}, {"b", 5}}, Merges{}, {}, "v");
  CHECK(model.id_limit() == 6);
  CHECK(*model.id_to_token(5) == "b");
  CHECK(model.id_to_token(3) == nullptr);
  CHECK(model.id_to_token(-1) == nullptr);
  CHECK(model.id_to_token(6) == nullptr);
}
