// Per-head pattern scores (analysis/head_patterns.h) against hand-made stacks: a head that parks on the
// first token, a previous-token head and an induction head score 1 on their own pattern and little on
// the others; the induction score is train::induction_scores' on the same probabilities; the repeat is
// found with and without a leading token; top heads come out highest first.
#include <doctest/doctest.h>

#include <set>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/core/error.h"
#include "attnscope/train/tasks.h"

using namespace attnscope;

namespace {

// A causal stack [L, H, T, T] whose every head is `rule(layer, head, i)` → the key query i looks at
// (all its mass), or −1 for uniform over keys 0 … i.
template <class Rule>
model::AttentionStack one_hot_stack(int L, int H, std::vector<int32_t> ids, Rule rule) {
  model::AttentionStack s;
  s.layers = L, s.heads = H, s.kv_heads = H, s.tokens = int(ids.size());
  const int T = s.tokens;
  s.ids = std::move(ids);
  s.causal = true;
  s.attentions.assign(size_t(L) * H * T * T, 0.0f);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i) {
        float* row = s.attentions.data() + ((size_t(l) * H + h) * T + i) * T;
        const int key = rule(l, h, i);
        if (key < 0) {
          for (int j = 0; j <= i; ++j) row[j] = 1.0f / float(i + 1);
        } else {
          row[key] = 1.0f;
        }
      }
  return s;
}

const std::vector<int32_t> repeated = {7, 3, 9, 4, 1, 7, 3, 9, 4, 1};  // p = 5

}  // namespace

TEST_CASE("head patterns: sink, previous-token and induction heads each score 1 on their own pattern") {
  // Layer 0: head 0 sink, head 1 previous token, head 2 uniform. Layer 1: head 0 induction
  // (second copy → the token after the earlier occurrence; elsewhere itself), heads 1, 2 sink.
  const model::AttentionStack s = one_hot_stack(2, 3, repeated, [](int l, int h, int i) {
    if (l == 0) return h == 0 ? 0 : h == 1 ? std::max(0, i - 1) : -1;
    if (h == 0) return i >= 6 ? i - 5 + 1 : i;
    return 0;
  });
  const HeadPatternScores sc = head_pattern_scores(s);
  REQUIRE(sc.repeat.has_value());
  CHECK(sc.repeat->start == 0);
  CHECK(sc.repeat->period == 5);
  CHECK(sc.at(HeadPattern::sink, 0, 0) == doctest::Approx(1.0));
  CHECK(sc.at(HeadPattern::previous, 0, 0) == doctest::Approx(1.0 / 9));  // only query 1 looks at 0 = 1 − 1
  CHECK(sc.at(HeadPattern::previous, 0, 1) == doctest::Approx(1.0));
  CHECK(sc.at(HeadPattern::sink, 0, 1) == doctest::Approx(1.0 / 9));
  CHECK(sc.at(HeadPattern::induction, 1, 0) == doctest::Approx(1.0));
  CHECK(sc.at(HeadPattern::induction, 0, 1) == doctest::Approx(0.0));
  CHECK(sc.at(HeadPattern::previous, 1, 0) == doctest::Approx(0.0));
  // Uniform rows: P[i, 0] = P[i, i − 1] = 1 / (i + 1), averaged over i = 1 … 9.
  double harmonic = 0;
  for (int i = 1; i < 10; ++i) harmonic += 1.0 / (i + 1);
  CHECK(sc.at(HeadPattern::sink, 0, 2) == doctest::Approx(harmonic / 9));
  CHECK(sc.at(HeadPattern::previous, 0, 2) == doctest::Approx(harmonic / 9));
  CHECK(sc.at(HeadPattern::induction, 0, 2) == doctest::Approx((1.0 / 7 + 1.0 / 8 + 1.0 / 9 + 1.0 / 10) / 4));

  const std::vector<TopHead> sink = top_heads(sc, HeadPattern::sink, 3);
  REQUIRE(sink.size() == 3);
  CHECK(sink[0].layer == 0);
  CHECK(sink[0].head == 0);
  CHECK(sink[1].layer == 1);  // ties keep the lower layer and head first
  CHECK(sink[1].head == 1);
  CHECK(sink[2].head == 2);
  const std::vector<TopHead> induction = top_heads(sc, HeadPattern::induction, 1);
  REQUIRE(induction.size() == 1);
  CHECK(induction[0].layer == 1);
  CHECK(induction[0].head == 0);
  CHECK(induction[0].score == doctest::Approx(1.0));
  CHECK(top_heads(sc, HeadPattern::previous, 100).size() == 6);
}

TEST_CASE("head patterns: the induction score is the trainer's on the same probabilities") {
  // Any probabilities will do: every head uniform, plus a head mixing induction and sink.
  model::AttentionStack s = one_hot_stack(1, 2, repeated, [](int, int, int) { return -1; });
  const int T = s.tokens;
  for (int i = 0; i < T; ++i) {
    float* row = s.attentions.data() + (size_t(T) + i) * T;  // head 1
    std::fill(row, row + T, 0.0f);
    row[0] = 0.4f;
    row[i >= 6 ? i - 4 : i] += 0.6f;
  }
  const HeadPatternScores sc = head_pattern_scores(s);
  const std::vector<float> trainer = train::induction_scores(s.attentions.data(), 2, T, 5);
  CHECK(sc.at(HeadPattern::induction, 0, 0) == doctest::Approx(trainer[0]));
  CHECK(sc.at(HeadPattern::induction, 0, 1) == doctest::Approx(trainer[1]));
  CHECK(trainer[1] == doctest::Approx(0.6));
}

TEST_CASE("head patterns: the repeat is found after one leading token, or given; none on other ids") {
  std::vector<int32_t> with_bos = repeated;
  with_bos.insert(with_bos.begin(), 50256);
  const std::optional<RepeatedSpan> r = find_repeat(with_bos);
  REQUIRE(r.has_value());
  CHECK(r->start == 1);
  CHECK(r->period == 5);
  // An induction head shifted by the leading token still scores 1.
  const model::AttentionStack s = one_hot_stack(1, 1, with_bos, [](int, int, int i) { return i >= 7 ? i - 4 : i; });
  CHECK(head_pattern_scores(s).at(HeadPattern::induction, 0, 0) == doctest::Approx(1.0));

  CHECK_FALSE(find_repeat({1, 2, 3, 1, 2, 4}).has_value());
  CHECK_FALSE(find_repeat({1, 2, 1}).has_value());  // a half of one token
  CHECK_FALSE(find_repeat({}).has_value());
  model::AttentionStack other = one_hot_stack(1, 1, {1, 2, 3, 4, 5, 6}, [](int, int, int i) { return i; });
  const HeadPatternScores none = head_pattern_scores(other);
  CHECK(none.induction.empty());
  CHECK(top_heads(none, HeadPattern::induction, 3).empty());
  // A given period takes the last 2p tokens as the copies, whatever the ids.
  const HeadPatternScores given = head_pattern_scores(other, 2);
  REQUIRE(given.repeat.has_value());
  CHECK(given.repeat->start == 2);
  CHECK(given.induction.size() == 1);
  CHECK_THROWS_AS(head_pattern_scores(other, 4), InputError);
  CHECK_THROWS_AS(head_pattern_scores(one_hot_stack(1, 1, {1}, [](int, int, int) { return 0; })), InputError);
}

TEST_CASE("head patterns: a repeated random sequence is two copies of n ids from the vocabulary, fixed by the seed") {
  const std::vector<int32_t> a = repeated_random_ids(20, 50257, 7);
  REQUIRE(a.size() == 40);
  CHECK(std::equal(a.begin(), a.begin() + 20, a.begin() + 20));
  std::set<int32_t> distinct(a.begin(), a.end());
  CHECK(distinct.size() > 15);
  for (int32_t id : a) CHECK((id >= 0 && id < 50257));
  CHECK(a == repeated_random_ids(20, 50257, 7));
  CHECK(a != repeated_random_ids(20, 50257, 8));
  const std::optional<RepeatedSpan> r = find_repeat(a);
  REQUIRE(r.has_value());
  CHECK(r->period == 20);
  for (int32_t id : repeated_random_ids(50, 32, 1)) CHECK((id >= 0 && id < 32));
  CHECK_THROWS_AS(repeated_random_ids(1, 32, 1), InputError);
  CHECK_THROWS_AS(repeated_random_ids(10, 1, 1), InputError);
}
