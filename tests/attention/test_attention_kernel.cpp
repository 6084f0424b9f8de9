// The fused attention kernel (engine/src/attention/attention_kernel.h) and the packed projections, through
// grouped attention and both MLA forms, against the plain-loop references: token counts that are not a
// multiple of the strip, the key panel or the row block; head and value widths that are not a multiple of
// the vector width (padded values); causal and not; windows with sinks; sink logits; ALiBi and RoPE.
#include <doctest/doctest.h>

#include <string>
#include <tuple>

#include "attention/attention_kernel.h"
#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/attention/latent_attention.h"
#include "attnscope/core/rng.h"
#include "check.h"

using namespace attnscope;
using namespace attnscope::test;

TEST_CASE("packed weights: x·Wᵀ by panels equals the plain loop for sizes off the panel and vector widths") {
  const int width = detail::key_panel_width();
  for (const std::tuple<int, int, int>& shape :
       {std::tuple{1, 1, 1}, {13, width + 3, 17}, {25, 2 * width, 64}, {40, 5, 3 * width + 1}}) {
    const int rows = std::get<0>(shape), out = std::get<1>(shape), in = std::get<2>(shape);  // CAPTURE takes no bindings
    CAPTURE(rows);
    CAPTURE(out);
    CAPTURE(in);
    const Mat x = random_x(rows, in, 3), w = random_x(out, in, 4);
    detail::PackedWeights packed;
    packed.resize(w);
    packed.pack(w, 0, packed.count());
    Mat product(rows, Eigen::Index(packed.count()) * width);
    detail::project_rows(x.data(), x.cols(), rows, packed, 0, packed.count(), product.data(), product.cols());
    Mat expected(rows, out);
    for (int r = 0; r < rows; ++r)
      for (int o = 0; o < out; ++o) {
        double sum = 0;
        for (int k = 0; k < in; ++k) sum += double(x(r, k)) * double(w(o, k));
        expected(r, o) = float(sum);
      }
    check_close(Mat(product.leftCols(out)), expected, 1e-5, "x·Wᵀ");
    // A range of panels lands at the start of the output.
    if (packed.count() > 1) {
      Mat tail(rows, Eigen::Index(packed.count() - 1) * width);
      detail::project_rows(x.data(), x.cols(), rows, packed, 1, packed.count(), tail.data(), tail.cols());
      check_close(Mat(tail.leftCols(out - width)), Mat(expected.rightCols(out - width)), 1e-5, "panels from 1");
    }
  }
}

TEST_CASE("fused attention kernel: grouped attention equals the reference at odd sizes, masks, windows, sinks and positions") {
  struct Case {
    int T, C, H, G;
    bool causal;
    int window, sinks;
    bool sink_logits;
    PositionScheme scheme;
  };
  // d_k = C / H: 12 and 40 (padded values), 16, 32 and 64 (values read in place).
  const Case cases[] = {{1, 24, 2, 1, false, 0, 0, false, PositionScheme::nope},
                        {5, 24, 2, 2, true, 0, 0, false, PositionScheme::nope},
                        {23, 80, 2, 1, false, 0, 0, true, PositionScheme::nope},
                        {25, 64, 4, 2, true, 0, 0, false, PositionScheme::rope},
                        {47, 128, 4, 4, false, 0, 0, false, PositionScheme::alibi},
                        {33, 128, 2, 1, true, 7, 2, true, PositionScheme::nope},
                        {attention_row_block + 29, 96, 6, 3, true, 40, 3, false, PositionScheme::rope},
                        {attention_row_block + 29, 96, 3, 1, false, 0, 0, false, PositionScheme::nope},
                        {2 * attention_row_block + 5, 64, 4, 1, true, 0, 0, true, PositionScheme::alibi}};
  Rng pick(71);
  for (const Case& c : cases) {
    CAPTURE(c.T);
    CAPTURE(c.C);
    CAPTURE(c.H);
    CAPTURE(c.G);
    CAPTURE(c.causal);
    CAPTURE(c.window);
    const AttentionShape shape{c.C, c.H, c.G};
    AttentionWeights w = random_weights(shape, pick.next_u64());
    w.bq = random_x(1, c.H * shape.head_dim(), pick.next_u64()).row(0).transpose();
    w.bo = random_x(1, c.C, pick.next_u64()).row(0).transpose();
    const Mat x = random_x(c.T, c.C, pick.next_u64());
    AttentionOptions o;
    o.causal = c.causal;
    o.window = c.window;
    o.sinks = c.sinks;
    if (c.sink_logits) o.sink_logits = seeded_sink_logits(c.H, 3);
    ModelSettings m;
    m.heads = c.H;
    m.positions = c.scheme;
    o.positions = position_encoding(m, RelposSettings{}, c.H, shape.head_dim());
    const AttentionResult fast = grouped_attention(x, w, shape, o), ref = grouped_attention_reference(x, w, shape, o);
    check_close3(fast.k, ref.k, 1e-5, "k");
    check_close3(fast.scores, ref.scores, 1e-5, "scores");
    check_close3(fast.probs, ref.probs, 1e-5, "probs");
    check_close3(fast.head_out, ref.head_out, 1e-5, "head_out");
    check_close(fast.output, ref.output, 1e-5, "output");
    if (c.sink_logits) check_close(fast.sink_share, ref.sink_share, 1e-5, "sink share");
    for (const Mat& p : fast.probs)  // every masked key exactly 0
      for (int i = 0; i < c.T; ++i)
        for (int j = 0; j < c.T; ++j)
          if (!key_visible(i, j, o)) REQUIRE(p(i, j) == 0.0f);
  }
}

TEST_CASE("fused attention kernel: both MLA forms equal the reference at odd sizes and unpadded or padded widths") {
  struct Case {
    LatentShape shape;
    int T;
    bool causal;
  };
  // d_N + d_R = 20 + 4 and r_kv = 12 (padded values); d_N = 32, r_kv = 16 (in place); T across strips and blocks.
  const Case cases[] = {{{40, 2, 12, 0, 4}, 7, true},
                        {{40, 2, 12, 16, 4}, 31, false},
                        {{128, 4, 16, 24, 8}, attention_row_block + 3, true},
                        {{128, 4, 32, 0, 0}, 50, false}};
  for (const Case& c : cases) {
    CAPTURE(c.T);
    CAPTURE(c.shape.kv_rank);
    CAPTURE(c.causal);
    const LatentWeights w = random_latent_weights(c.shape, 5);
    const Mat x = random_x(c.T, c.shape.d_model, 6);
    AttentionOptions o;
    o.causal = c.causal;
    const AttentionResult ref = latent_attention_reference(x, w, c.shape, {}, o);
    const AttentionResult naive = latent_attention(x, w, c.shape, {}, o);
    const AttentionResult absorbed = latent_attention_absorbed(x, w, c.shape, {}, o);
    for (const AttentionResult* r : {&naive, &absorbed}) {
      check_close3(r->scores, ref.scores, 1e-5, "scores");
      check_close3(r->probs, ref.probs, 1e-5, "probs");
      check_close(r->output, ref.output, 1e-5, "output");
    }
    check_close3(naive.head_out, ref.head_out, 1e-5, "head_out");
  }
}

TEST_CASE("fused attention kernel: MLA inputs whose projections overflow float32 are refused by name in both forms") {
  const LatentShape shape{40, 2, 12, 16, 4};
  const LatentWeights w = random_latent_weights(shape, 5);
  Mat x = random_x(attention_row_block + 7, 40, 6);
  x.row(attention_row_block + 3) *= 3e38f;  // one row of a later block overflows
  CHECK_THROWS_WITH_AS(latent_attention(x, w, shape, {}, {}), doctest::Contains("overflow float32"), InputError);
  CHECK_THROWS_WITH_AS(latent_attention_absorbed(x, w, shape, {}, {}), doctest::Contains("overflow float32"), InputError);
}
