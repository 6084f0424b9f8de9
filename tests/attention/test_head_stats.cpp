// Head statistics: hand-checkable cases for entropy, distance, the attention sink and JS divergence,
// the row sampling of large JS matrices, and what analyse() fills in.
#include <doctest/doctest.h>

#include <cmath>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/core/rng.h"
#include "check.h"
#include "analysis_helpers.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

Mat uniform(int t) { return Mat::Constant(t, t, 1.0f / float(t)); }

// Row i puts all its mass on key target(i).
template <class Target>
Mat one_hot(int t, Target target) {
  Mat p = Mat::Zero(t, t);
  for (int i = 0; i < t; ++i) p(i, target(i)) = 1;
  return p;
}

}  // namespace

TEST_CASE("head stats: uniform rows have entropy log T, normalised 1, and the hand-computed distance") {
  const HeadStats s = head_stats({uniform(4)}, false);
  CHECK(s.entropy[0] == doctest::Approx(std::log(4.0)));
  CHECK(s.normalised_entropy[0] == doctest::Approx(1.0));
  // Rows 0 … 3: (0+1+2+3)/4, (1+0+1+2)/4, (2+1+0+1)/4, (3+2+1+0)/4 → 1.5, 1, 1, 1.5; mean 1.25.
  CHECK(s.mean_distance[0] == doctest::Approx((1.5 + 1 + 1 + 1.5) / 4));
  CHECK(s.attention_sink[0] == doctest::Approx(0.25));  // rows 1 … 3 each give token 0 a quarter
}

TEST_CASE("head stats: one-hot rows have entropy 0; distance counts how far the mass sits") {
  const int t = 6;
  const Mat self = one_hot(t, [](int i) { return i; });
  const Mat previous = one_hot(t, [](int i) { return i > 0 ? i - 1 : 0; });
  const Mat first = one_hot(t, [](int) { return 0; });
  const HeadStats s = head_stats({self, previous, first}, false);
  for (int h = 0; h < 3; ++h) {
    CHECK(s.entropy[h] == 0);
    CHECK(s.normalised_entropy[h] == 0);
  }
  CHECK(s.mean_distance[0] == 0);
  CHECK(s.mean_distance[1] == doctest::Approx(double(t - 1) / t));  // every row but the first is 1 away
  CHECK(s.mean_distance[2] == doctest::Approx((0 + 1 + 2 + 3 + 4 + 5) / double(t)));
  // The sink counts rows 1 … t − 1 only: self never looks at token 0 there, previous only from row 1.
  CHECK(s.attention_sink[0] == 0);
  CHECK(s.attention_sink[1] == doctest::Approx(1.0 / (t - 1)));
  CHECK(s.attention_sink[2] == doctest::Approx(1.0));
}

TEST_CASE("head stats: the attention sink leaves out row 0, which a causal mask forces onto token 0") {
  // Causal uniform rows: row i gives token 0 the share 1/(i + 1). Row 0's forced 1 is not counted.
  const int t = 5;
  Mat causal = Mat::Zero(t, t);
  double want = 0;
  for (int i = 0; i < t; ++i) {
    for (int j = 0; j <= i; ++j) causal(i, j) = 1.0f / float(i + 1);
    if (i >= 1) want += 1.0 / (i + 1);
  }
  want /= t - 1;
  const HeadStats s = head_stats({causal}, true);
  CHECK(s.attention_sink[0] == doctest::Approx(want));
  CHECK(s.attention_sink[0] == attention_sink(causal));  // one function behind the statistic
  CHECK(s.attention_sink[0] < double(causal.col(0).cast<double>().mean()));  // the all-rows mean is inflated
  // One token has no row after the first: NaN, which the windows draw as "—".
  const HeadStats one = head_stats({Mat::Ones(1, 1)}, true);
  CHECK(std::isnan(one.attention_sink[0]));
  CHECK(std::isnan(attention_sink(Mat::Ones(1, 1))));
}

TEST_CASE("head stats: identical heads have JS 0, disjoint one-hot heads ln 2, and the matrix is symmetric") {
  const int t = 5;
  const Mat self = one_hot(t, [](int i) { return i; });
  const Mat next = one_hot(t, [&](int i) { return (i + 1) % t; });
  const HeadStats s = head_stats({self, self, next}, false);
  CHECK(s.js_divergence(0, 1) == 0);
  CHECK(s.js_divergence(0, 2) == doctest::Approx(std::log(2.0)));
  CHECK(s.js_divergence(2, 1) == doctest::Approx(std::log(2.0)));
  CHECK(s.js_divergence == s.js_divergence.transpose());
  for (int h = 0; h < 3; ++h) CHECK(s.js_divergence(h, h) == 0);
  CHECK(s.js_rows == t);

  // A hand-worked pair: p = (1, 0), q = (½, ½), m = (¾, ¼).
  const float p[] = {1, 0}, q[] = {0.5f, 0.5f};
  const double expected = 0.5 * std::log(4.0 / 3) + 0.25 * std::log(2.0 / 3) + 0.25 * std::log(2.0);
  CHECK(js_divergence(p, q, 2) == doctest::Approx(expected));
  CHECK(js_divergence(q, p, 2) == doctest::Approx(expected));
  CHECK(row_entropy(q, 2) == doctest::Approx(std::log(2.0)));
}

TEST_CASE("head stats: JS stays within [0, ln 2] on random maps; a causal map normalises by its prefix") {
  Rng rng(5);
  Tensor3 probs;
  for (int h = 0; h < 4; ++h) {
    Mat p(7, 7);
    for (int i = 0; i < 7; ++i) {
      for (int j = 0; j < 7; ++j) p(i, j) = rng.uniform01() * rng.uniform01();
      p.row(i) /= p.row(i).sum();
    }
    probs.push_back(p);
  }
  const HeadStats s = head_stats(probs, false);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      CHECK(s.js_divergence(a, b) >= 0);
      CHECK(s.js_divergence(a, b) <= std::log(2.0));
      if (a != b) CHECK(s.js_divergence(a, b) > 0);
    }
  // Causal and uniform over the allowed keys: row i holds 1/(i+1) on keys 0 … i.
  Mat prefix = Mat::Zero(5, 5);
  double mean_entropy = 0;
  for (int i = 0; i < 5; ++i) {
    prefix.row(i).head(i + 1).setConstant(1.0f / float(i + 1));
    mean_entropy += std::log(double(i + 1)) / 5;
  }
  const HeadStats c = head_stats({prefix}, true);
  CHECK(c.normalised_entropy[0] == doctest::Approx(1.0));  // row 0 (one key) is left out
  CHECK(c.entropy[0] == doctest::Approx(mean_entropy));
  CHECK(head_stats({prefix}, false).normalised_entropy[0] < 0.8);  // the same map judged as non-causal
}

TEST_CASE("head stats: a large JS matrix averages evenly spaced rows within the budget, exactly for row-alike heads") {
  const int heads = 64, t = 256;
  const Mat self = one_hot(t, [](int i) { return i; });
  const Mat next = one_hot(t, [&](int i) { return (i + 1) % t; });
  Tensor3 probs;
  for (int h = 0; h < heads; ++h) probs.push_back(h % 2 ? next : self);
  const HeadStats s = head_stats(probs, false);
  const long long pairs = heads * (heads - 1) / 2;
  CHECK(s.js_rows == int(head_stats_js_budget / (pairs * t)));
  CHECK(s.js_rows < t);
  CHECK(s.js_divergence(0, 2) == 0);
  CHECK(s.js_divergence(0, 1) == doctest::Approx(std::log(2.0)));
  CHECK(s.js_divergence(63, 1) == 0);
}

TEST_CASE("head stats: analyse() fills them, and drift from MHA only when K/V were pooled from an MHA base") {
  Scene s;
  s.model.d_model = 32;
  s.model.heads = 4;
  const Analysis mha = analyse(s);
  const HeadStats& st = stats_of(mha);
  REQUIRE(st.entropy.size() == 4);
  CHECK(st.js_divergence.rows() == 4);
  CHECK(st.drift_from_mha.empty());
  const HeadStats direct = head_stats(mha.attention->result.probs, false);
  CHECK(direct.entropy == st.entropy);
  CHECK(direct.js_divergence == st.js_divergence);

  s.model.kind = AttentionKind::gqa;
  s.model.groups = 2;
  const Analysis gqa = analyse(s);
  REQUIRE(stats_of(gqa).drift_from_mha.size() == 4);
  attnscope::test::check_close3(mha_probs_of(gqa), mha.attention->result.probs, 0, "MHA base");
  for (int h = 0; h < 4; ++h) {
    CHECK(stats_of(gqa).drift_from_mha[h] > 0);
    CHECK(stats_of(gqa).drift_from_mha[h] ==
          doctest::Approx(mean_js_divergence(gqa.attention->result.probs[h], mha.attention->result.probs[h])));
  }
  s.model.weights = WeightSource::independent;  // no MHA base to compare with
  CHECK(stats_of(analyse(s)).drift_from_mha.empty());
}

TEST_CASE("head stats: an analysis carries none; attention_statistics() gives them and the MHA base's maps") {
  Scene s;
  s.model.d_model = 32;
  s.model.heads = 4;
  s.model.kind = AttentionKind::gqa;
  s.model.groups = 2;
  const Analysis a = analyse(s);
  Tensor3 mha_probs;
  const HeadStats later = attention_statistics(*a.attention, a.scene.model, nullptr, &mha_probs);
  const HeadStats direct = head_stats(a.attention->result.probs, false);
  CHECK(later.entropy == direct.entropy);
  CHECK(later.normalised_entropy == direct.normalised_entropy);
  CHECK(later.mean_distance == direct.mean_distance);
  CHECK(later.attention_sink == direct.attention_sink);
  CHECK(later.js_divergence == direct.js_divergence);
  CHECK(later.js_rows == direct.js_rows);
  // The MHA base is the same query heads with their own K/V: the scene with G = H.
  s.model.kind = AttentionKind::mha;
  s.model.groups = 4;
  const Analysis mha = analyse(s);
  attnscope::test::check_close3(mha_probs, mha.attention->result.probs, 0, "MHA base");
  REQUIRE(later.drift_from_mha.size() == 4);
  for (int h = 0; h < 4; ++h)
    CHECK(later.drift_from_mha[size_t(h)] == doctest::Approx(mean_js_divergence(a.attention->result.probs[size_t(h)],
                                                                                  mha.attention->result.probs[size_t(h)])));
}

TEST_CASE("head stats: a set cancel flag stops head_stats, head_drift and attention_statistics") {
  Scene s;
  s.model.d_model = 64;
  s.model.heads = 8;
  s.model.kind = AttentionKind::mqa;
  s.input.text = "the cat sat on the mat because it was tired and the dog was not";
  const Analysis a = analyse(s);
  std::atomic<bool> cancel{true};
  CHECK_THROWS_AS(head_stats(a.attention->result.probs, false, &cancel), Cancelled);
  CHECK_THROWS_AS(head_drift(a.attention->result.probs, a.attention->result.probs, &cancel), Cancelled);
  CHECK_THROWS_AS(attention_statistics(*a.attention, a.scene.model, &cancel), Cancelled);
  cancel = false;
  CHECK(head_stats(a.attention->result.probs, false, &cancel).entropy.size() == 8);
  CHECK(attention_statistics(*a.attention, a.scene.model, &cancel).drift_from_mha.size() == 8);
}
