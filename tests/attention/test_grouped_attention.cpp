// Grouped attention: the hand-worked case, the invariants of SPEC, and fast path vs reference.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attnscope/analysis/analysis.h"
#include "attnscope/text/embeddings.h"
#include "attnscope/core/error.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/core/rng.h"
#include "check.h"

using namespace attnscope;
using attnscope::test::check_close;
using attnscope::test::check_close3;

namespace {

Mat random_matrix(int rows, int cols, uint64_t seed, float scale = 1.0f) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = rng.uniform(-scale, scale);
  return m;
}

Vec random_vector(int n, uint64_t seed) { return random_matrix(n, 1, seed).col(0); }

// Random biases for every projection, from seeds first … first + 3.
void add_random_biases(AttentionWeights& w, const AttentionShape& shape, uint64_t first) {
  const int dk = shape.head_dim();
  w.bq = random_vector(shape.heads * dk, first), w.bk = random_vector(shape.groups * dk, first + 1);
  w.bv = random_vector(shape.groups * dk, first + 2), w.bo = random_vector(shape.d_model, first + 3);
}

// The fast path against the plain-loop reference, every intermediate to 1e-5; returns the fast result.
AttentionResult check_against_reference(const Mat& x, const AttentionWeights& w, const AttentionShape& shape,
                                        const AttentionOptions& opt) {
  AttentionResult fast = grouped_attention(x, w, shape, opt);
  const AttentionResult ref = grouped_attention_reference(x, w, shape, opt);
  check_close3(fast.q, ref.q, 1e-5, "q");
  check_close3(fast.k, ref.k, 1e-5, "k");
  check_close3(fast.v, ref.v, 1e-5, "v");
  check_close3(fast.scores, ref.scores, 1e-5, "scores");
  check_close3(fast.probs, ref.probs, 1e-5, "probs");
  check_close3(fast.head_out, ref.head_out, 1e-5, "head_out");
  check_close(fast.concat, ref.concat, 1e-5, "concat");
  check_close(fast.output, ref.output, 1e-5, "output");
  return fast;
}

// Random weights (with biases from seed `bias_seed` when `bias`) and a random X [T, C], seeded from `pick`,
// through check_against_reference.
AttentionResult check_random_case(Rng& pick, int T, int C, int H, int G, bool causal, bool bias, uint64_t bias_seed) {
  const AttentionShape shape{C, H, G};
  AttentionWeights w = random_weights(shape, pick.next_u64());
  if (bias) add_random_biases(w, shape, bias_seed);
  const Mat x = random_matrix(T, C, pick.next_u64(), 2.0f);
  return check_against_reference(x, w, shape, AttentionOptions{.causal = causal});
}

// The tiny case worked by hand: T = 3, C = 2, one head, W_Q = W_K = W_V = I.
//   X = [[1,0],[0,1],[1,1]],  S = X·Xᵀ/√2 = [[.7071,0,.7071],[0,.7071,.7071],[.7071,.7071,1.4142]]
//   row 0: e^.7071 = 2.02811, e^0 = 1 → sum 5.05622 → P = [0.401112, 0.197776, 0.401112]
//   row 2: e^1.4142 = 4.11325 → sum 8.16947 → P = [0.248255, 0.248255, 0.503490]
//   O = P·V; W_O swaps the two columns and b_O = [0.5, −0.5].
struct TinyCase {
  Mat x{3, 2};
  AttentionWeights w;
  AttentionShape shape{2, 1, 1};
  TinyCase() {
    x << 1, 0, 0, 1, 1, 1;
    w.wq = Mat::Identity(2, 2);
    w.wk = Mat::Identity(2, 2);
    w.wv = Mat::Identity(2, 2);
    w.wo.resize(2, 2);
    w.wo << 0, 1, 1, 0;
    w.bo.resize(2);
    w.bo << 0.5f, -0.5f;
  }
};

}  // namespace

TEST_CASE("grouped attention: hand-worked T = 3, C = 2 case") {
  TinyCase c;
  const AttentionResult r = grouped_attention(c.x, c.w, c.shape, {});
  Mat probs(3, 3), output(3, 2);
  probs << 0.401112f, 0.197776f, 0.401112f,  //
      0.197776f, 0.401112f, 0.401112f,       //
      0.248255f, 0.248255f, 0.503490f;
  // head output rows [0.802224, 0.598888], [0.598888, 0.802224], [0.751745, 0.751745], swapped + bias
  output << 0.598888f + 0.5f, 0.802224f - 0.5f,  //
      0.802224f + 0.5f, 0.598888f - 0.5f,        //
      0.751745f + 0.5f, 0.751745f - 0.5f;
  check_close(r.probs[0], probs, 2e-6, "probs");
  check_close(r.output, output, 2e-6, "output");
  CHECK(r.scores[0](0, 1) == 0.0f);
  CHECK(r.scores[0](2, 2) == doctest::Approx(std::sqrt(2.0)).epsilon(1e-6));
}

TEST_CASE("grouped attention: hand-worked case with the causal mask") {
  TinyCase c;
  const AttentionResult r = grouped_attention(c.x, c.w, c.shape, {.causal = true});
  Mat probs(3, 3);
  probs << 1, 0, 0,  //
      0.330238f, 0.669762f, 0,  //
      0.248255f, 0.248255f, 0.503490f;
  check_close(r.probs[0], probs, 2e-6, "causal probs");
  CHECK(std::isinf(r.scores[0](0, 1)));
  CHECK(r.scores[0](0, 1) < 0);
}

TEST_CASE("grouped attention: every probability row sums to 1, causal upper triangle exactly 0") {
  const AttentionShape shape{32, 8, 2};
  const Mat x = random_matrix(11, 32, 5);
  const AttentionWeights w = random_weights(shape, 3);
  for (bool causal : {false, true}) {
    const AttentionResult r = grouped_attention(x, w, shape, {.causal = causal});
    REQUIRE(r.probs.size() == 8);
    for (const Mat& p : r.probs) {
      for (int i = 0; i < p.rows(); ++i) {
        CHECK(p.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
        if (causal)
          for (int j = i + 1; j < p.cols(); ++j) CHECK(p(i, j) == 0.0f);
      }
    }
  }
}

TEST_CASE("grouped attention: shapes of every intermediate tensor") {
  const AttentionShape shape{48, 6, 3};
  const AttentionResult r = grouped_attention(random_matrix(5, 48, 1), random_weights(shape, 1), shape, {});
  CHECK(r.q.size() == 6);
  CHECK(r.k.size() == 3);
  CHECK(r.v.size() == 3);
  CHECK(r.q[0].rows() == 5);
  CHECK(r.q[0].cols() == 8);
  CHECK(r.k[2].cols() == 8);
  CHECK(r.scores.size() == 6);
  CHECK(r.scores[0].rows() == 5);
  CHECK(r.scores[0].cols() == 5);
  CHECK(r.head_out[5].cols() == 8);
  CHECK(r.concat.cols() == 48);
  CHECK(r.output.rows() == 5);
  CHECK(r.output.cols() == 48);
}

TEST_CASE("grouped attention: G = H equals MHA and G = 1 equals MQA (kind resolution)") {
  Scene s;
  s.input.text = "Heads share keys and values in groups.";
  s.model.heads = 8;
  s.model.kind = AttentionKind::gqa;
  s.model.groups = 8;
  const Analysis gqa_as_mha = analyse(s);
  s.model.kind = AttentionKind::mha;
  const Analysis mha = analyse(s);
  check_close3(gqa_as_mha.attention->result.probs, mha.attention->result.probs, 0, "GQA(G=H) vs MHA");
  check_close(gqa_as_mha.attention->result.output, mha.attention->result.output, 0, "output");

  s.model.kind = AttentionKind::gqa;
  s.model.groups = 1;
  const Analysis gqa_as_mqa = analyse(s);
  s.model.kind = AttentionKind::mqa;
  s.model.groups = 5;  // ignored: MQA means one group
  const Analysis mqa = analyse(s);
  CHECK(mqa.attention->shape.groups == 1);
  check_close3(gqa_as_mqa.attention->result.probs, mqa.attention->result.probs, 0, "GQA(G=1) vs MQA");
}

TEST_CASE("grouped attention: MHA with H = 1 equals single-head (scale 1/sqrt(C))") {
  Scene s;
  s.input.text = "One head sees everything.";
  s.model.kind = AttentionKind::mha;
  s.model.heads = 1;
  const Analysis mha1 = analyse(s);
  s.model.kind = AttentionKind::single;
  s.model.heads = 8;  // ignored for single
  const Analysis single = analyse(s);
  CHECK(single.attention->shape.heads == 1);
  CHECK(single.attention->shape.head_dim() == 64);
  check_close3(mha1.attention->result.scores, single.attention->result.scores, 0, "scores");
  // The scale is 1/√C for a single head: recompute one score by hand.
  const auto& a = *single.attention;
  const double dot = a.result.q[0].row(1).cast<double>().dot(a.result.k[0].row(2).cast<double>());
  CHECK(a.result.scores[0](1, 2) == doctest::Approx(dot / 8.0).epsilon(1e-5));
}

TEST_CASE("grouped attention: heads of one group share K and V bit for bit") {
  const AttentionShape shape{64, 8, 2};
  const Mat x = random_matrix(9, 64, 2);
  const AttentionResult r = grouped_attention(x, random_weights(shape, 4), shape, {});
  // Heads 0–3 use group 0, heads 4–7 group 1: their outputs are P_h·V_g with the same V_g, so
  // recomputing O_h from P_h and V_{g(h)} must match exactly what the head produced.
  for (int h = 0; h < 8; ++h) {
    const int g = kv_group_of_head(h, 8, 2);
    CHECK(g == h / 4);
    const Mat expected = r.probs[h] * r.v[g];
    check_close(r.head_out[h], expected, 1e-6, "head " + std::to_string(h));
  }
  CHECK(kv_group_of_head(5, 8, 4) == 2);
  CHECK(kv_group_of_head(7, 8, 1) == 0);
  CHECK(kv_group_of_head(7, 8, 8) == 7);
}

TEST_CASE("grouped attention: fast path matches the plain-loop reference on random shapes") {
  Rng pick(11);
  struct Case { int T, C, H, G; bool causal, bias; };
  const Case cases[] = {{1, 4, 1, 1, false, false}, {7, 12, 3, 1, true, true},  {16, 32, 4, 2, false, true},
                        {13, 48, 6, 3, true, false}, {33, 64, 8, 8, false, true}, {20, 64, 16, 4, true, true}};
  for (const Case& c : cases) {
    CAPTURE(c.T);
    CAPTURE(c.H);
    CAPTURE(c.G);
    check_random_case(pick, c.T, c.C, c.H, c.G, c.causal, c.bias, 1);
  }
}

TEST_CASE("grouped attention: scores as large as 1e30 give no NaN") {
  Mat s(2, 4);
  s << 1e30f, -1e30f, 0, 1e30f,  //
      3e38f, 3e38f, -std::numeric_limits<float>::infinity(), 1;
  softmax_rows(s);
  CHECK(s.allFinite());
  CHECK(s(0, 0) == doctest::Approx(0.5));
  CHECK(s(0, 3) == doctest::Approx(0.5));
  CHECK(s(1, 2) == 0.0f);
  CHECK(s.row(1).sum() == doctest::Approx(1.0));

  Mat overflow(1, 3);
  const float inf = std::numeric_limits<float>::infinity();
  overflow << inf, 5, inf;
  softmax_rows(overflow);
  CHECK(overflow(0, 0) == 0.5f);
  CHECK(overflow(0, 1) == 0.0f);

  // Through the whole routine: huge inputs make huge (even overflowing) scores.
  const AttentionShape shape{8, 2, 1};
  const AttentionResult r = grouped_attention(random_matrix(5, 8, 3, 1e15f), random_weights(shape, 1), shape, {});
  for (const Mat& p : r.probs) {
    CHECK(p.allFinite());
    for (int i = 0; i < p.rows(); ++i) CHECK(p.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
  }
}

TEST_CASE("grouped attention: results survive scaling inputs by 1e-6 and 1e6") {
  const AttentionShape shape{16, 4, 2};
  const AttentionWeights w = random_weights(shape, 8);
  const Mat x = random_matrix(6, 16, 9);
  for (float scale : {1e-6f, 1e6f}) {
    const AttentionResult r = grouped_attention(x * scale, w, shape, {.causal = true});
    for (const Mat& p : r.probs) {
      CHECK(p.allFinite());
      for (int i = 0; i < p.rows(); ++i) CHECK(p.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
    }
    CHECK(r.output.allFinite());
  }
  // Tiny inputs give nearly uniform rows over the allowed keys.
  const AttentionResult tiny = grouped_attention(x * 1e-6f, w, shape, {});
  CHECK(tiny.probs[0](3, 1) == doctest::Approx(1.0 / 6).epsilon(1e-4));
}

TEST_CASE("grouped attention: the scale toggle divides scores by sqrt(d_k) or not") {
  const AttentionShape shape{16, 4, 4};
  const AttentionWeights w = random_weights(shape, 2);
  const Mat x = random_matrix(4, 16, 1);
  const AttentionResult scaled = grouped_attention(x, w, shape, {});
  const AttentionResult raw = grouped_attention(x, w, shape, {.scale_scores = false});
  check_close(Mat(raw.scores[1] / 2.0f), scaled.scores[1], 1e-6, "raw / sqrt(4) = scaled");
}

TEST_CASE("grouped attention: invalid shapes raise InputError with what is valid") {
  const Mat x = random_matrix(3, 64, 1);
  AttentionWeights w = random_weights({64, 8, 8}, 1);
  CHECK_THROWS_WITH_AS(grouped_attention(x, w, {64, 6, 6}, {}), doctest::Contains("valid heads for d_model 64"),
                       InputError);
  CHECK_THROWS_WITH_AS(grouped_attention(x, w, {64, 8, 3}, {}), doctest::Contains("valid groups for 8 heads: 1, 2, 4, 8"),
                       InputError);
  CHECK_THROWS_AS(grouped_attention(x, w, {64, 0, 1}, {}), InputError);
  CHECK_THROWS_AS(grouped_attention(x, w, {0, 1, 1}, {}), InputError);
  CHECK_THROWS_AS(grouped_attention(x, w, {64, 8, -2}, {}), InputError);
  CHECK_THROWS_WITH_AS(grouped_attention(x, w, {64, 8, 2}, {}), doctest::Contains("W_K has shape [64, 64] but [16, 64]"),
                       InputError);
  CHECK_THROWS_WITH_AS(grouped_attention(random_matrix(3, 32, 1), w, {64, 8, 8}, {}),
                       doctest::Contains("width 32 but d_model is 64"), InputError);
  w.bo = random_vector(3, 1);
  CHECK_THROWS_WITH_AS(grouped_attention(x, w, {64, 8, 8}, {}), doctest::Contains("b_O has 3 values but 64"), InputError);
}

TEST_CASE("grouped attention: inputs scaled by 1e-20 and 1e20 keep exact, finite probabilities") {
  const AttentionShape shape{16, 4, 2};
  const AttentionWeights w = random_weights(shape, 21);
  const Mat x = random_matrix(7, 16, 22);
  for (float scale : {1e-20f, 1e20f}) {
    CAPTURE(scale);
    const Mat xs = x * scale;
    for (bool causal : {false, true}) {
      const AttentionResult fast = grouped_attention(xs, w, shape, {.causal = causal});
      const AttentionResult ref = grouped_attention_reference(xs, w, shape, {.causal = causal});
      for (const Mat& p : fast.probs) {
        CHECK(p.allFinite());
        for (int i = 0; i < p.rows(); ++i) CHECK(p.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
      }
      check_close3(fast.probs, ref.probs, 1e-5, "probs vs double reference");
    }
  }
  // At 1e20 the scores overflow float32: rows are one-hot on the largest double-precision score.
  const AttentionResult huge = grouped_attention(x * 1e20f, w, shape, {});
  CHECK(std::isinf(huge.scores[0].cwiseAbs().maxCoeff()));
  CHECK(huge.probs[0].maxCoeff() == 1.0f);
  // Values whose projections overflow float32 are refused with a message, not turned into NaN.
  CHECK_THROWS_WITH_AS(grouped_attention(x * 3e38f, w, shape, {}), doctest::Contains("overflow float32"), InputError);
}

TEST_CASE("grouped attention: all-equal scores give uniform rows; one allowed key gets all the mass") {
  const AttentionShape shape{8, 2, 2};
  AttentionWeights w = random_weights(shape, 1);
  w.wq.setZero();  // every score is 0
  const AttentionResult r = grouped_attention(random_matrix(5, 8, 2), w, shape, {.causal = true});
  for (const Mat& p : r.probs)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) CHECK(p(i, j) == doctest::Approx(j <= i ? 1.0 / (i + 1) : 0.0));
  // Row 0 of a causal map has every key but one masked: probability exactly 1 on key 0.
  CHECK(r.probs[0](0, 0) == 1.0f);
}

TEST_CASE("grouped attention: a set cancel flag stops it (short and long inputs), an unset one changes nothing") {
  for (int t : {16, 256}) {
    const AttentionShape shape{32, 4, 2};
    const AttentionWeights w = random_weights(shape, 5);
    const Mat x = random_matrix(t, 32, 9);
    std::atomic<bool> cancel{true};
    CHECK_THROWS_AS(grouped_attention(x, w, shape, {false, true, &cancel}), Cancelled);
    cancel = false;
    const AttentionResult with_flag = grouped_attention(x, w, shape, {false, true, &cancel});
    const AttentionResult without = grouped_attention(x, w, shape, {});
    check_close3(with_flag.probs, without.probs, 0, "probs");
    check_close(with_flag.output, without.output, 0, "output");
  }
}

TEST_CASE("grouped attention: blocks of query rows match the reference on sizes that cross block edges") {
  // The fast path cuts every step into blocks of attention_row_block query rows, and with the causal
  // mask a block multiplies only the keys its last row sees: sizes just below, at and past the
  // edges, several H/G pairs, causal and not, with and without biases.
  const int b = attention_row_block;
  Rng pick(29);
  struct Case { int T, C, H, G; bool causal, bias; };
  const Case cases[] = {{b - 1, 24, 3, 1, true, false}, {b, 16, 2, 2, true, true},   {b + 1, 24, 6, 3, true, true},
                        {b + 1, 24, 6, 2, false, false}, {2 * b + 37, 32, 4, 2, true, false},
                        {2 * b + 37, 16, 4, 4, false, true}, {3 * b - 5, 12, 2, 1, true, true}};
  for (const Case& c : cases) {
    CAPTURE(c.T);
    CAPTURE(c.H);
    CAPTURE(c.G);
    CAPTURE(c.causal);
    const AttentionResult fast = check_random_case(pick, c.T, c.C, c.H, c.G, c.causal, c.bias, 5);
    if (c.causal)  // masked keys: scores −inf and probabilities exactly 0, in every block
      for (const Mat& p : fast.probs)
        for (int i = 0; i + 1 < c.T; ++i) CHECK(p.row(i).tail(c.T - 1 - i).cwiseAbs().maxCoeff() == 0.0f);
  }
}

TEST_CASE("grouped attention: overflowing scores in a later block of rows are redone exactly") {
  // Rows past the first block whose float32 scores overflow go through the double-precision rescore
  // with their own row index (the causal mask included).
  const int T = attention_row_block + 9;
  const AttentionShape shape{16, 4, 2};
  const AttentionWeights w = random_weights(shape, 31);
  Mat x = random_matrix(T, 16, 32);
  x.bottomRows(5) *= 1e20f;  // the last rows' queries and keys are huge
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    const AttentionResult fast = grouped_attention(x, w, shape, {.causal = causal});
    const AttentionResult ref = grouped_attention_reference(x, w, shape, {.causal = causal});
    // The last row sees every key in both modes; its float32 scores overflow.
    CHECK(std::isinf(fast.scores[0].row(T - 1).cwiseAbs().maxCoeff()));
    for (const Mat& p : fast.probs) CHECK(p.allFinite());
    check_close3(fast.probs, ref.probs, 1e-5, "probs");  // scores near 1e40 differ by float rounding
    check_close(fast.output, ref.output, 1e-5 * x.cwiseAbs().maxCoeff(), "output");
  }
}
