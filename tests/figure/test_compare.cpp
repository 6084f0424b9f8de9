// test_compare.cpp — compare A/B in the engine (figure/compare.h): the per-head Jensen–Shannon drift, the
// difference B − A, the one locked range, the side-by-side panels against A's and B's own exports, and the
// refusal of A and B with different heads or tokens, and a setting only one side's run has named in the caption.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/compare.h"

using namespace attnscope;

namespace {

Scene base_scene() {
  Scene s;
  s.input.text = "The cat sat on the mat because it was tired.";
  s.model.kind = AttentionKind::mha;
  s.model.heads = 4;
  s.model.groups = 4;
  return s;
}

Analysis mqa_of(Scene s) {
  s.model.kind = AttentionKind::mqa;
  s.model.groups = 1;
  return analyse(s);
}

// JS(p‖q) of two rows written out (natural log), for a check independent of head_stats.cpp.
double js_row(const float* p, const float* q, int n) {
  double js = 0;
  for (int k = 0; k < n; ++k) {
    const double m = 0.5 * (double(p[k]) + double(q[k]));
    if (p[k] > 0) js += 0.5 * double(p[k]) * std::log(double(p[k]) / m);
    if (q[k] > 0) js += 0.5 * double(q[k]) * std::log(double(q[k]) / m);
  }
  return js;
}

}  // namespace

TEST_CASE("compare A/B: the drift of each head is the mean over query rows of JS(A row, B row)") {
  const Analysis a = analyse(base_scene());
  const Analysis b = mqa_of(base_scene());
  const AbComparison c = compare_analyses(a, b);
  REQUIRE(c.heads == 4);
  REQUIRE(c.drift.size() == 4);
  const Tensor3& pa = a.attention->result.probs;
  const Tensor3& pb = b.attention->result.probs;
  double largest = 0;
  for (int h = 0; h < 4; ++h) {
    const int t = int(pa[size_t(h)].rows());
    double sum = 0;
    for (int i = 0; i < t; ++i) sum += js_row(pa[size_t(h)].row(i).data(), pb[size_t(h)].row(i).data(), t);
    CHECK(c.drift[size_t(h)] == doctest::Approx(sum / t).epsilon(1e-6));
    CHECK(c.drift[size_t(h)] <= std::log(2.0) + 1e-9);
    largest = std::max(largest, c.drift[size_t(h)]);
  }
  CHECK(largest > 1e-3);  // MHA → MQA moves the heads
  // A against itself: no drift at all.
  for (double d : compare_analyses(a, a).drift) CHECK(d == doctest::Approx(0.0).epsilon(1e-12));
}

TEST_CASE("compare A/B: a side without a softmax drifts by its weight distribution |M| per row, as a signed map") {
  Scene s = base_scene();
  s.model.causal = true;
  const Analysis a = analyse(s);
  s.model.kind = AttentionKind::gated_deltanet;
  const Analysis b = analyse(s);
  const AbComparison c = compare_analyses(a, b);
  REQUIRE(c.drift.size() == 4);
  const Tensor3 pa = a.attention->result.probs, mb = weight_distribution(b.attention->result.probs);
  for (int h = 0; h < 4; ++h) {
    CAPTURE(h);
    const int t = int(pa[size_t(h)].rows());
    double sum = 0;
    for (int i = 0; i < t; ++i) sum += js_row(pa[size_t(h)].row(i).data(), mb[size_t(h)].row(i).data(), t);
    CHECK(std::isfinite(c.drift[size_t(h)]));
    CHECK(c.drift[size_t(h)] == doctest::Approx(sum / t).epsilon(1e-6));
  }
}

TEST_CASE("compare A/B: the difference is B − A cell by cell, masked only where both are masked") {
  Scene causal = base_scene();
  causal.model.causal = true;
  const Analysis a = analyse(causal);
  const Analysis b = analyse(base_scene());  // not causal
  const AbComparison c = compare_analyses(a, b);
  const int t = c.tokens;
  float largest = 0;
  for (int h = 0; h < c.heads; ++h)
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < t; ++j) {
        const float want = b.attention->result.probs[size_t(h)](i, j) - a.attention->result.probs[size_t(h)](i, j);
        CHECK(c.difference[size_t(h)](i, j) == want);  // b is not causal: no cell is masked in both
        largest = std::max(largest, std::abs(want));
      }
  CHECK(c.difference_range.hi == largest);
  CHECK(c.difference_range.lo == -largest);
  // Both causal: the cells after the query are masked in the difference; the others are B − A.
  Scene causal_mqa = causal;
  causal_mqa.model.kind = AttentionKind::mqa;
  causal_mqa.model.groups = 1;
  const Analysis b2 = analyse(causal_mqa);
  const AbComparison c2 = compare_analyses(a, b2);
  CHECK(std::isinf(c2.difference[0](0, 1)));
  CHECK(c2.difference[0](1, 0) == b2.attention->result.probs[0](1, 0) - a.attention->result.probs[0](1, 0));
  // Side by side, the one bar shows the masked swatch when either side is causal.
  CHECK(compare_figure(a, b, c, {}).colorbars.at(0).show_masked);
  const Analysis plain = analyse(base_scene());
  CHECK_FALSE(compare_figure(plain, b, compare_analyses(plain, b), {}).colorbars.at(0).show_masked);
}

TEST_CASE("compare A/B: side by side, every cell has the colour of A's and B's own export on the same locked range") {
  const Analysis a = analyse(base_scene());
  Scene seed = base_scene();
  seed.model.seed = 7;  // two seeds
  const Analysis b = analyse(seed);
  CompareRequest r;
  r.colormap = Colormap::magma;
  const AbComparison c = compare_analyses(a, b, r.color_scale);
  // The lock is the union of each side's shared range.
  ExportRequest shared;
  shared.colormap = Colormap::magma;
  const ValueRange ra = export_figure(a, shared).colorbars[0].range, rb = export_figure(b, shared).colorbars[0].range;
  CHECK(c.locked.lo == std::min(ra.lo, rb.lo));
  CHECK(c.locked.hi == std::max(ra.hi, rb.hi));
  const FigureSpec f = compare_figure(a, b, c, r);
  REQUIRE(f.panels.size() == 8);
  ExportRequest locked = shared;
  locked.color_scale = {ScaleMode::locked, c.locked};
  const FigureSpec fa = export_figure(a, locked), fb = export_figure(b, locked);
  for (int h = 0; h < 4; ++h) {
    CHECK(panel_colors(f, size_t(2 * h)) == panel_colors(fa, size_t(h)));
    CHECK(panel_colors(f, size_t(2 * h + 1)) == panel_colors(fb, size_t(h)));
    CHECK(f.panels[size_t(2 * h)].title == "A · head " + std::to_string(h));
    CHECK(f.panels[size_t(2 * h + 1)].title.rfind("B · head " + std::to_string(h) + " · JS ", 0) == 0);
  }
  CHECK(f.caption.rfind("A → B: seed 42 → seed 7 · one scale for A and B: ", 0) == 0);  // only what differs
  // Pieces only one side has are marked + and −; the rest pair up.
  Scene mqa_causal = base_scene();
  mqa_causal.model.kind = AttentionKind::mqa;
  mqa_causal.model.groups = 1;
  mqa_causal.model.causal = true;
  const Analysis b2 = analyse(mqa_causal);
  const std::string c2 = compare_figure(a, b2, compare_analyses(a, b2), r).caption;
  CHECK(c2.rfind("A → B: MHA → MQA · G=4 → G=1 · not causal → causal · ", 0) == 0);
  // A fixed 0–1 or a locked scale chosen in the view is kept.
  CHECK(compare_analyses(a, b, {ScaleMode::fixed}).locked.hi == 1.0f);
  const ValueRange mine{0.1f, 0.3f};
  CHECK(compare_analyses(a, b, {ScaleMode::locked, mine}).locked.hi == 0.3f);
}

TEST_CASE("compare A/B: the difference view draws B − A on the diverging map over the symmetric range") {
  Scene unscaled = base_scene();
  unscaled.model.scale_scores = false;  // √d_k off
  const Analysis a = analyse(base_scene());
  const Analysis b = analyse(unscaled);
  CompareRequest r;
  r.view = CompareView::difference;
  const AbComparison c = compare_analyses(a, b);
  const FigureSpec f = compare_figure(a, b, c, r);
  REQUIRE(f.panels.size() == 4);
  REQUIRE(f.colorbars.size() == 1);
  CHECK(f.colorbars[0].colormap == Colormap::diverging);
  const Mat& d = c.difference[2];
  const std::vector<Rgba> colors = panel_colors(f, 2);
  const int t = c.tokens;
  for (int i = 0; i < t; ++i)
    for (int j = 0; j < t; ++j)
      CHECK(colors[size_t(i * t + j)] == colormap_lookup(Colormap::diverging, normalise(d(i, j), c.difference_range)));
}

TEST_CASE("compare A/B: a token range i-j keeps those queries and keys of the whole figure, in both views") {
  Scene causal = base_scene();
  causal.model.causal = true;
  const Analysis a = analyse(causal);
  const Analysis b = mqa_of(causal);
  const AbComparison c = compare_analyses(a, b);
  const int t = c.tokens, lo = 2, hi = 6, n = hi - lo + 1;
  REQUIRE(t > hi);
  for (const CompareView view : {CompareView::side_by_side, CompareView::difference}) {
    CAPTURE(to_string(view));
    CompareRequest whole_request;
    whole_request.view = view;
    CompareRequest part_request = whole_request;
    part_request.token_first = lo;
    part_request.token_last = hi;
    const FigureSpec whole = compare_figure(a, b, c, whole_request);
    const FigureSpec part = compare_figure(a, b, c, part_request);
    REQUIRE(part.panels.size() == whole.panels.size());
    CHECK(part.colorbars[0].range.lo == whole.colorbars[0].range.lo);  // the whole input's scale
    CHECK(part.colorbars[0].range.hi == whole.colorbars[0].range.hi);
    for (size_t p = 0; p < part.panels.size(); ++p) {
      REQUIRE(part.panels[p].rows == n);
      REQUIRE(part.panels[p].cols == n);
      CHECK(part.panels[p].col_labels.front() == whole.panels[p].col_labels[size_t(lo)]);
      const std::vector<Rgba> pc = panel_colors(part, p), wc = panel_colors(whole, p);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const float x = part.panels[p].values[size_t(i * n + j)], y = whole.panels[p].values[size_t((lo + i) * t + lo + j)];
          CHECK((x == y || (std::isnan(x) && std::isnan(y)) || (std::isinf(x) && std::isinf(y))));
          CHECK(pc[size_t(i * n + j)] == wc[size_t((lo + i) * t + lo + j)]);
        }
    }
  }
  CompareRequest beyond;
  beyond.token_first = 0;
  beyond.token_last = t;
  CHECK_THROWS_AS(compare_figure(a, b, c, beyond), InputError);
}

TEST_CASE("compare A/B: A and B with different heads or tokens are refused, naming both") {
  const Analysis a = analyse(base_scene());
  Scene eight = base_scene();
  eight.model.heads = 8;
  eight.model.groups = 8;
  const Analysis b = analyse(eight);
  try {
    compare_analyses(a, b);
    FAIL("compared 4 heads with 8");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "A has 4 heads and 11 tokens, B has 8 heads and 11 tokens: compare A/B needs the same heads and tokens");
  }
  Scene shorter = base_scene();
  shorter.input.text = "The cat sat.";
  CHECK_THROWS_AS(compare_analyses(a, analyse(shorter)), InputError);
  CHECK(compare_mismatch(compare_shapes(*a.attention, *a.attention)).empty());
  CHECK_THROWS_AS(parse_compare_view("both"), InputError);
}

TEST_CASE("compare A/B: a setting only one side's run has (heads switched off) is named in the caption's A → B") {
  const Analysis a = analyse(base_scene());
  const AbComparison c = compare_analyses(a, a);
  CompareRequest r;
  CHECK(compare_figure(a, a, c, r).caption.find("A and B have the same settings") != std::string::npos);
  r.b_setting = "heads switched off: 1.2 (set to 0)";
  const std::string only_b = compare_figure(a, a, c, r).caption;
  CHECK(only_b.find("A → B: + heads switched off: 1.2 (set to 0)") != std::string::npos);
  CHECK(only_b.find("the same settings") == std::string::npos);
  r.a_setting = "heads switched off: 0.1 (set to 0)";
  CHECK(compare_figure(a, a, c, r).caption.find("A → B: heads switched off: 0.1 (set to 0) → heads switched off: 1.2 (set to 0)") !=
        std::string::npos);
  r.b_setting = r.a_setting;  // the same heads off on both sides: nothing differs
  CHECK(compare_figure(a, a, c, r).caption.find("A and B have the same settings") != std::string::npos);
}

TEST_CASE("compare A/B: a token set adds A's and B's reduced rows (columns) on the locked range, and B's minus A's") {
  Scene unscaled = base_scene();
  unscaled.model.scale_scores = false;  // √d_k off: B's rows are sharper
  const Analysis a = analyse(base_scene());
  const Analysis b = analyse(unscaled);
  const int t = int(a.attention->labels.size());
  for (const TokenSetAxis axis : {TokenSetAxis::queries, TokenSetAxis::keys})
    for (const SetReduce reduce : {SetReduce::sum, SetReduce::mean}) {
      CAPTURE(int(axis));
      CAPTURE(int(reduce));
      const TokenSet set{axis, {2, 5, 7}, reduce};
      const bool queries = axis == TokenSetAxis::queries;
      const double n = reduce == SetReduce::mean ? 3.0 : 1.0;
      const AbComparison c = compare_analyses(a, b, {}, set);
      REQUIRE(c.set_difference.size() == 4);
      CompareRequest r;
      r.token_set = set;
      const FigureSpec side = compare_figure(a, b, c, r);
      r.view = CompareView::difference;
      const FigureSpec diff = compare_figure(a, b, c, r);
      REQUIRE(side.panels.size() == 8);
      REQUIRE(diff.panels.size() == 4);
      float top = 0;  // the largest reduced value of A and B: the locked range reaches it
      int compared = 0;
      for (int h = 0; h < 4; ++h) {
        const Mat& pa = a.attention->result.probs[size_t(h)];
        const Mat& pb = b.attention->result.probs[size_t(h)];
        const PanelSpec& A = side.panels[size_t(2 * h)];
        const PanelSpec& B = side.panels[size_t(2 * h + 1)];
        const PanelSpec& D = diff.panels[size_t(h)];
        for (const PanelSpec* p : {&A, &B, &D}) {
          CHECK(p->rows == (queries ? t + 1 : t));
          CHECK(p->cols == (queries ? t : t + 1));
        }
        for (int k = 0; k < t; ++k, ++compared) {
          // a plain sum over the probabilities
          double sa = 0, sb = 0;
          for (const int s : set.tokens) {
            sa += double(queries ? pa(s, k) : pa(k, s));
            sb += double(queries ? pb(s, k) : pb(k, s));
          }
          const size_t at = queries ? size_t(t) * size_t(t) + size_t(k) : size_t(k) * size_t(t + 1) + size_t(t);
          CHECK(A.values[at] == doctest::Approx(sa / n).epsilon(1e-5));
          CHECK(B.values[at] == doctest::Approx(sb / n).epsilon(1e-5));
          CHECK(D.values[at] == doctest::Approx((sb - sa) / n).epsilon(1e-5));
          CHECK(std::abs(D.values[at]) <= c.difference_range.hi);
          top = std::max({top, float(sa / n), float(sb / n)});
        }
        // The difference's token cells stay B − A.
        const size_t cols = size_t(D.cols);
        CHECK(D.values[1 * cols + 0] == c.difference[size_t(h)](1, 0));
      }
      CHECK(compared == 4 * t);
      CHECK(c.locked.hi >= top);
      // The caption names the set.
      CHECK(side.caption.find(queries ? "of 3 queries: 2, 5, 7" : "of 3 keys: 2, 5, 7") != std::string::npos);
    }
  // A set past the tokens is refused, naming the valid ones.
  CHECK_THROWS_WITH_AS(compare_analyses(a, b, {}, TokenSet{TokenSetAxis::keys, {40}}),
                       doctest::Contains("valid tokens 0-"), InputError);
}
