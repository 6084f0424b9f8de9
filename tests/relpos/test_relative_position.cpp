// Relative-position attention: the SPEC formula evaluated directly, the α limits, the v·r expansion,
// the factorised fast path against the plain-loop oracle, presets, validation, and the analysis
// (grid, sentence, mixed mode, padding, cancel).
//
// Sections: helpers · formula · limits · expansion · fast path · presets · validation · analysis
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "attnscope/analysis/analysis.h"
#include "attnscope/core/error.h"
#include "attnscope/relpos/relative_position.h"
#include "attnscope/core/rng.h"
#include "check.h"

using namespace attnscope;
using attnscope::test::check_close;
using attnscope::test::check_close3;

namespace {

// ---- helpers ------------------------------------------------------------------------------------

using attnscope::test::contains;
using attnscope::test::error_of;

Mat random_matrix(int rows, int cols, uint64_t seed) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = rng.uniform(-1.0f, 1.0f);
  return m;
}

// Random heads: α in [0, 4] (sometimes exactly 0), Δ in [−3, 3] not on the integer lattice.
std::vector<RelposHead> random_heads(Rng& rng, int count, int dims) {
  std::vector<RelposHead> heads(count);
  for (RelposHead& h : heads) {
    h.alpha = rng.uniform01() < 0.15f ? 0.0 : 4.0 * rng.uniform01();
    h.delta = {dims == 2 ? double(rng.uniform(-3, 3)) : 0.0, double(rng.uniform(-3, 3))};
  }
  return heads;
}

// The SPEC formula, written out for one (head, query) over every key of the padded rectangle:
// P[k] = exp(−α‖(p_k − p_q) − Δ‖²) / Σ_k' exp(−α‖(p_k' − p_q) − Δ‖²), returned for the real keys.
std::vector<double> formula_row(const RelposHead& h, int rows, int cols, int pad_rows, int pad_cols, int query) {
  const int qr = query / cols, qc = query % cols;
  double total = 0;
  std::vector<double> real(size_t(rows) * cols);
  // Shift by the exponent at the best key only to stay finite; it cancels in the ratio.
  double best = std::numeric_limits<double>::infinity();
  for (int r = -pad_rows; r < rows + pad_rows; ++r)
    for (int c = -pad_cols; c < cols + pad_cols; ++c) {
      const double dr = (r - qr) - h.delta[0], dc = (c - qc) - h.delta[1];
      best = std::min(best, h.alpha * (dr * dr + dc * dc));
    }
  for (int r = -pad_rows; r < rows + pad_rows; ++r)
    for (int c = -pad_cols; c < cols + pad_cols; ++c) {
      const double dr = (r - qr) - h.delta[0], dc = (c - qc) - h.delta[1];
      const double w = std::exp(-(h.alpha * (dr * dr + dc * dc) - best));
      total += w;
      if (r >= 0 && r < rows && c >= 0 && c < cols) real[size_t(r) * cols + c] = w;
    }
  for (double& v : real) v /= total;
  return real;
}

Scene grid_scene(const std::string& pattern, int rows, int cols) {
  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.pattern = pattern;
  s.input.grid.rows = rows;
  s.input.grid.cols = cols;
  return s;
}

}  // namespace

// ---- formula ------------------------------------------------------------------------------------

TEST_CASE("relative position: probabilities equal the SPEC formula for random alpha, delta, sizes and queries") {
  Rng rng(2024);
  for (int trial = 0; trial < 40; ++trial) {
    const int dims = trial % 4 == 0 ? 1 : 2;
    const int rows = dims == 1 ? 1 : 1 + int(rng.uniform01() * 9);
    const int cols = 1 + int(rng.uniform01() * (dims == 1 ? 20 : 9));
    const bool pad = trial % 2 == 1;
    const std::vector<RelposHead> heads = random_heads(rng, 1 + int(rng.uniform01() * 5), dims);
    const RelposGeometry g = relpos_geometry(dims, rows, cols, heads, pad);
    CAPTURE(trial);
    CAPTURE(rows);
    CAPTURE(cols);
    CAPTURE(pad);
    const Tensor3 full = relpos_probs(heads, g);
    const Tensor3 reference = relpos_probs_reference(heads, g);
    check_close3(full, reference, 1e-6, "fast full probs vs plain-loop reference");
    for (int draw = 0; draw < 3; ++draw) {
      const int query = int(rng.uniform01() * g.cells());
      const Mat pq = relpos_probs_query(heads, g, query);
      const std::vector<double> pad_mass = relpos_padding_mass(heads, g, query);
      for (size_t h = 0; h < heads.size(); ++h) {
        const std::vector<double> expected = formula_row(heads[h], rows, cols, g.pad_rows, g.pad_cols, query);
        const Mat expected_row = Eigen::Map<const MatD>(expected.data(), 1, g.cells()).cast<float>();
        check_close(pq.row(h), expected_row, 1e-6, "probs_query vs formula");
        check_close(full[h].row(query), expected_row, 1e-6, "full probs vs formula");
        double real_sum = 0;
        for (double v : expected) real_sum += v;
        CHECK(pad_mass[h] == doctest::Approx(1.0 - real_sum).epsilon(1e-9));
        if (!pad) CHECK(pad_mass[h] == 0.0);
      }
    }
  }
}

// ---- limits -------------------------------------------------------------------------------------

TEST_CASE("relative position: alpha = 0 gives uniform rows over every key") {
  for (bool pad : {false, true}) {
    std::vector<RelposHead> heads{{0.0, {1.5, -2.0}}, {0.0, {0.0, 0.0}}};
    const RelposGeometry g = relpos_geometry(2, 5, 7, heads, pad);
    const double keys = double(g.key_rows()) * g.key_cols();
    const Tensor3 probs = relpos_probs(heads, g);
    for (const Mat& p : probs) check_close(p, Mat::Constant(35, 35, float(1.0 / keys)), 1e-7, "uniform");
    const std::vector<RelposHead> one{{0.0, {0.0, 3.0}}};
    const RelposGeometry line = relpos_geometry(1, 1, 9, one, pad);
    check_close(relpos_probs(one, line)[0], Mat::Constant(9, 9, float(1.0 / line.key_cols())), 1e-7,
                "uniform on a sentence");
  }
}

TEST_CASE("relative position: alpha = 1000 gives one-hot rows at q + delta, or at the nearest cell when it is outside") {
  const int rows = 7, cols = 6;
  std::vector<RelposHead> heads;
  for (const auto& d : delta_preset("conv5x5", 25, 2, 0)) heads.push_back({1000.0, d});
  const RelposGeometry g = relpos_geometry(2, rows, cols, heads, false);
  const Tensor3 probs = relpos_probs(heads, g);
  int inside = 0, outside = 0;
  for (size_t h = 0; h < heads.size(); ++h)
    for (int q = 0; q < g.cells(); ++q) {
      const int tr = q / cols + int(heads[h].delta[0]), tc = q % cols + int(heads[h].delta[1]);
      const bool exists = tr >= 0 && tr < rows && tc >= 0 && tc < cols;
      (exists ? inside : outside)++;
      // Outside the grid the window's mass goes to the nearest existing key: clamp each coordinate.
      const int target = std::clamp(tr, 0, rows - 1) * cols + std::clamp(tc, 0, cols - 1);
      Mat expected = Mat::Zero(1, g.cells());
      expected(0, target) = 1;
      check_close(probs[h].row(q), expected, 1e-6, "one-hot row");
    }
  CHECK(inside > 0);
  CHECK(outside > 0);
}

TEST_CASE("relative position: huge alpha (1e6) stays finite and rows sum to 1, ties split evenly") {
  std::vector<RelposHead> heads{{1e6, {0.5, 0.0}}, {1e6, {-0.3, 2.7}}, {1e6, {40.0, -40.0}}, {1e12, {0.25, 0.5}}};
  for (bool pad : {false, true}) {
    const RelposGeometry g = relpos_geometry(2, 6, 5, heads, pad);
    const Tensor3 probs = relpos_probs(heads, g);
    const Tensor3 out = relpos_outputs(heads, g, random_matrix(30, 2, 5));
    for (size_t h = 0; h < heads.size(); ++h) {
      CHECK(probs[h].allFinite());
      CHECK(out[h].allFinite());
      if (!pad) {
        const Eigen::VectorXf sums = probs[h].rowwise().sum();
        CHECK((sums.array() - 1.0f).abs().maxCoeff() < 1e-6f);
      }
    }
    // Δ_row = 0.5 lies exactly between two rows: each gets half the mass.
    if (!pad) {
      const int q = 2 * 5 + 1;
      CHECK(probs[0](q, q) == doctest::Approx(0.5));
      CHECK(probs[0](q, q + 5) == doctest::Approx(0.5));
    }
  }
  // The sentence path too.
  const std::vector<RelposHead> line{{1e6, {0.0, 0.5}}, {1e6, {0.0, -7.2}}};
  const RelposGeometry g1 = relpos_geometry(1, 1, 8, line, false);
  const Tensor3 p1 = relpos_probs(line, g1);
  CHECK(p1[0](3, 3) == doctest::Approx(0.5));
  CHECK(p1[0](3, 4) == doctest::Approx(0.5));
  CHECK(p1[1](3, 0) == doctest::Approx(1.0));
}

// ---- expansion ----------------------------------------------------------------------------------

TEST_CASE("relative position: score = v.r = -alpha |delta - Delta|^2 + alpha |Delta|^2, and softmax of scores = probs") {
  const RelposHead head{0.7, {1.25, -2.0}};
  const RelposPairTerms t = relpos_pair_terms(head, {3.0, -1.0}, 2);
  // r = (‖δ‖², δr, δc) = (10, 3, −1), v = −α(1, −2Δr, −2Δc) = (−0.7, 1.75, −2.8)
  REQUIRE(t.r.size() == 3);
  CHECK(t.r[0] == 10.0);
  CHECK(t.r[1] == 3.0);
  CHECK(t.r[2] == -1.0);
  CHECK(t.v[0] == doctest::Approx(-0.7));
  CHECK(t.v[1] == doctest::Approx(1.75));
  CHECK(t.v[2] == doctest::Approx(-2.8));
  CHECK(t.score == doctest::Approx(-7.0 + 5.25 + 2.8));
  CHECK(t.distance_term == doctest::Approx(-0.7 * (1.75 * 1.75 + 1.0)));
  CHECK(t.constant_term == doctest::Approx(0.7 * (1.25 * 1.25 + 4.0)));
  CHECK(t.distance_term + t.constant_term == doctest::Approx(t.score));

  const RelposPairTerms t1 = relpos_pair_terms(RelposHead{2.0, {0.0, -1.5}}, {0.0, 2.0}, 1);
  REQUIRE(t1.r.size() == 2);
  CHECK(t1.r[0] == 4.0);
  CHECK(t1.r[1] == 2.0);
  CHECK(t1.v[0] == -2.0);
  CHECK(t1.v[1] == -6.0);
  CHECK(t1.score == doctest::Approx(-8.0 - 12.0));
  CHECK(t1.distance_term + t1.constant_term == doctest::Approx(t1.score));

  // The scores of a whole query row are the same numbers, and their softmax is the probability row.
  Rng rng(5);
  const std::vector<RelposHead> heads = random_heads(rng, 4, 2);
  const RelposGeometry g = relpos_geometry(2, 5, 6, heads, false);
  const int query = 13;
  const Mat scores = relpos_scores_query(heads, g, query);
  const Mat probs = relpos_probs_query(heads, g, query);
  for (int h = 0; h < 4; ++h) {
    for (int k = 0; k < g.cells(); k += 7)
      CHECK(scores(h, k) == doctest::Approx(relpos_pair_terms(heads[h], g, query, k).score).epsilon(1e-6));
    Mat soft = scores.row(h);
    softmax_rows(soft);
    check_close(soft, probs.row(h), 1e-6, "softmax(v.r) == probs");
  }
}

// ---- fast path ----------------------------------------------------------------------------------

TEST_CASE("relative position fast path: outputs equal the direct N^2 reference to 1e-5") {
  Rng rng(77);
  for (int trial = 0; trial < 30; ++trial) {
    const int dims = trial % 5 == 0 ? 1 : 2;
    const int rows = dims == 1 ? 1 : 1 + int(rng.uniform01() * 12);
    const int cols = 1 + int(rng.uniform01() * (dims == 1 ? 30 : 12));
    const int channels = 1 + trial % 3;
    const bool pad = trial % 2 == 0;
    const std::vector<RelposHead> heads = random_heads(rng, 1 + int(rng.uniform01() * 6), dims);
    const RelposGeometry g = relpos_geometry(dims, rows, cols, heads, pad);
    const Mat x = random_matrix(g.cells(), channels, 1000 + trial);
    CAPTURE(trial);
    check_close3(relpos_outputs(heads, g, x), relpos_outputs_reference(heads, g, x), 1e-5, "outputs");
    check_close(relpos_head_output(heads[0], g, x), relpos_outputs_reference({heads[0]}, g, x)[0], 1e-5, "one head");
  }
}

TEST_CASE("relative position fast path: integer-offset heads at large alpha shift the grid") {
  // α = 200, Δ = (1, −2): O[q] = X[q + Δ] wherever that cell exists.
  const std::vector<RelposHead> heads{{200.0, {1.0, -2.0}}};
  const RelposGeometry g = relpos_geometry(2, 6, 7, heads, false);
  const Mat x = random_matrix(42, 2, 3);
  const Mat out = relpos_outputs(heads, g, x)[0];
  for (int r = 0; r < 5; ++r)
    for (int c = 2; c < 7; ++c) check_close(out.row(r * 7 + c), x.row((r + 1) * 7 + c - 2), 1e-6, "shifted cell");
}

// ---- presets ------------------------------------------------------------------------------------

TEST_CASE("delta presets: conv3x3/conv5x5 enumerate the kernel offsets row-major, line is centred") {
  const auto c3 = delta_preset("conv3x3", 9, 2, 0);
  REQUIRE(c3.size() == 9);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      CHECK(c3[size_t(i * 3 + j)][0] == i - 1);
      CHECK(c3[size_t(i * 3 + j)][1] == j - 1);
    }
  const auto c5 = delta_preset("conv5x5", 25, 2, 0);
  REQUIRE(c5.size() == 25);
  CHECK(c5.front() == std::array<double, 2>{-2, -2});
  CHECK(c5[7] == std::array<double, 2>{-1, 0});
  CHECK(c5.back() == std::array<double, 2>{2, 2});

  const auto line5 = delta_preset("line", 5, 1, 0);
  std::vector<double> cols;
  for (const auto& d : line5) {
    CHECK(d[0] == 0);
    cols.push_back(d[1]);
  }
  CHECK(cols == std::vector<double>{-2, -1, 0, 1, 2});
  const auto line4 = delta_preset("line", 4, 2, 0);
  CHECK(line4.front()[1] == -2);
  CHECK(line4.back()[1] == 1);
}

TEST_CASE("delta presets: random is reproducible per seed, differs across seeds, and stays in [-3, 3]") {
  const auto a = delta_preset("random", 6, 2, 11), b = delta_preset("random", 6, 2, 11), c = delta_preset("random", 6, 2, 12);
  CHECK(a == b);
  CHECK(a != c);
  bool non_integer = false;
  for (const auto& d : a)
    for (double v : d) {
      CHECK(std::abs(v) <= 3.0);
      non_integer |= v != std::round(v);
    }
  CHECK(non_integer);
  for (const auto& d : delta_preset("random", 6, 1, 11)) CHECK(d[0] == 0);
}

// ---- validation ---------------------------------------------------------------------------------

TEST_CASE("relative position: invalid settings raise InputError saying what is valid") {
  RelposSettings s;
  s.heads = 9;
  s.delta_preset = "conv3x3";
  auto with = [&](auto change) {
    RelposSettings t = s;
    change(t);
    return error_of([&] { resolve_relpos_heads(t, 2); });
  };
  CHECK(error_of([&] { resolve_relpos_heads(s, 2); }).empty());
  CHECK(contains(with([](RelposSettings& t) { t.alpha = -1; }), ">= 0"));
  CHECK(contains(with([](RelposSettings& t) { t.alpha = std::nan(""); }), "finite"));
  CHECK(contains(with([](RelposSettings& t) { t.alpha = INFINITY; }), "finite"));
  CHECK(contains(with([](RelposSettings& t) { t.alphas = {1, 2, 3}; }), "3 alphas were given for 9 heads"));
  CHECK(contains(with([](RelposSettings& t) {
                   t.alphas.assign(9, 1.0);
                   t.alphas[4] = -0.5;
                 }),
                 "head 4"));
  CHECK(contains(with([](RelposSettings& t) { t.deltas = {{0, 0}, {1, 1}}; }), "2 offsets (Delta) were given for 9 heads"));
  CHECK(contains(with([](RelposSettings& t) {
                   t.heads = 2;
                   t.deltas = {{0, std::nan("")}, {1, 1}};
                 }),
                 "finite"));
  CHECK(contains(with([](RelposSettings& t) { t.heads = 8; }), "needs heads = 9"));
  CHECK(contains(with([](RelposSettings& t) { t.heads = 0; }), "1 to 64"));
  CHECK(contains(with([](RelposSettings& t) { t.heads = 65; }), "1 to 64"));
  const std::string unknown = with([](RelposSettings& t) { t.delta_preset = "diagonal"; });
  CHECK(contains(unknown, "diagonal"));
  CHECK(contains(unknown, "conv3x3, conv5x5, line, random"));
  CHECK(contains(error_of([&] { resolve_relpos_heads(s, 1); }), "needs a 2D grid"));
  CHECK(contains(error_of([&] { relpos_geometry(2, 0, 4, {{1.0, {0, 0}}}, false); }), "empty"));
  const RelposGeometry g = relpos_geometry(2, 3, 3, {{1.0, {0, 0}}}, false);
  CHECK(contains(error_of([&] { relpos_probs_query({{1.0, {0, 0}}}, g, 9); }), "outside"));
}

// ---- analysis -----------------------------------------------------------------------------------

TEST_CASE("relpos analysis: a grid scene gives settings, probabilities and outputs that agree") {
  Scene s = grid_scene("rings", 12, 10);
  s.relpos.alpha = 1.5;
  s.relpos.query_row = 3;
  s.relpos.query_col = 9;
  const RelposAnalysis ra = analyse_relpos(s, nullptr);
  CHECK(ra.dims == 2);
  CHECK(ra.rows == 12);
  CHECK(ra.cols == 10);
  CHECK(ra.query == 3 * 10 + 9);
  REQUIRE(ra.heads.size() == 9);
  CHECK(ra.heads[0].delta == std::array<double, 2>{-1, -1});
  CHECK(ra.heads[0].alpha == 1.5);
  CHECK(ra.x.rows() == 120);
  CHECK(ra.x.cols() == 1);
  REQUIRE(ra.probs.size() == 9);
  REQUIRE(ra.outputs.size() == 9);
  for (int h = 0; h < 9; ++h) {
    check_close(ra.probs_query.row(h), ra.probs[h].row(ra.query), 1e-7, "probs_query is a row of probs");
    check_close(ra.outputs[h], ra.probs[h] * ra.x, 1e-5, "outputs = P.X");
  }
  CHECK(ra.combined.rows() == 12);
  CHECK(ra.combined.cols() == 10);
  CHECK(ra.combined.sum() == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(ra.combined(3, 9) == doctest::Approx(ra.probs_query.col(ra.query).mean()));
  CHECK(contains(ra.input_note, "rings"));
}

TEST_CASE("relpos analysis: defaults to the centre query, refuses one outside, keeps full probs only up to 1024 cells") {
  Scene s = grid_scene("checkerboard", 9, 16);
  const RelposAnalysis centre = analyse_relpos(s, nullptr);
  CHECK(centre.query_row == 4);
  CHECK(centre.query_col == 8);
  s.relpos.query_row = 9;
  CHECK(contains(error_of([&] { analyse_relpos(s, nullptr); }), "query row 9 is outside the 9x16 grid"));
  s.relpos.query_row = 0;
  s.relpos.query_col = 16;
  CHECK(contains(error_of([&] { analyse_relpos(s, nullptr); }), "query column 16"));
  Scene big = grid_scene("noise", 40, 40);
  const RelposAnalysis ra = analyse_relpos(big, nullptr);
  CHECK(ra.probs.empty());
  CHECK(ra.probs_query.cols() == 1600);
  CHECK(ra.outputs.size() == 9);
}

TEST_CASE("relpos analysis: with padding keys, real probabilities plus padding mass make 1") {
  Scene s = grid_scene("gradient", 8, 8);
  s.relpos.pad_keys = true;
  s.relpos.alpha = 0.3;
  s.relpos.query_row = 0;
  s.relpos.query_col = 0;
  const RelposAnalysis ra = analyse_relpos(s, nullptr);
  CHECK(ra.geometry.pad_rows == 1 + relpos_pad_margin);
  CHECK(ra.geometry.pad_cols == 1 + relpos_pad_margin);
  for (int h = 0; h < 9; ++h) {
    CHECK(ra.padding_mass[size_t(h)] > 0.1);  // a corner query with a wide window reaches the padding
    CHECK(ra.probs_query.row(h).sum() + ra.padding_mass[size_t(h)] == doctest::Approx(1.0).epsilon(1e-6));
  }
}

TEST_CASE("relpos analysis: a sentence uses token positions, and mixed mode slides from content to position") {
  Scene s;
  s.input.text = "the quick brown fox jumps over the lazy dog";
  s.model.heads = 4;
  s.model.groups = 4;
  s.relpos.heads = 4;
  s.relpos.delta_preset = "line";
  s.relpos.query_index = 4;
  s.view.view = View::relpos1d;
  s.relpos.alpha = 1000;
  const Analysis pure = analyse(s);
  REQUIRE(pure.relpos);
  CHECK(pure.relpos->dims == 1);
  CHECK(pure.relpos->cols == 9);
  CHECK(pure.relpos->labels[4] == "jumps");
  // Line offsets −2, −1, 0, 1: one-hot at token 4 + Δ.
  for (int h = 0; h < 4; ++h) CHECK(pure.relpos->probs_query(h, 4 + h - 2) == doctest::Approx(1.0));

  s.relpos.mixed = true;
  s.relpos.lambda = 0;
  const Analysis content = analyse(s);
  for (int h = 0; h < 4; ++h)
    check_close(content.relpos->probs_query.row(h), content.attention->result.probs[size_t(h)].row(4), 1e-6,
                "lambda = 0 is the content attention");
  s.relpos.lambda = 10;
  const Analysis position = analyse(s);
  check_close(position.relpos->probs_query, pure.relpos->probs_query, 1e-5, "large lambda is the positional attention");
  s.relpos.lambda = 1e-4;
  s.relpos.alpha = 1;
  const Analysis between = analyse(s);
  const double gap_content = (between.relpos->probs_query.row(0) - content.relpos->probs_query.row(0)).cwiseAbs().maxCoeff();
  CHECK(gap_content > 0);
  CHECK(gap_content < 0.01);

  s.relpos.heads = 3;
  s.relpos.lambda = 1;
  CHECK(contains(error_of([&] { analyse(s); }), "must equal the model's heads (4)"));
  s.relpos.heads = 4;
  s.relpos.pad_keys = true;
  CHECK(contains(error_of([&] { analyse(s); }), "padding keys do not combine with mixed mode"));
  Scene g = grid_scene("rings", 8, 8);
  g.relpos.mixed = true;
  CHECK(contains(error_of([&] { analyse(g); }), "works on sentences"));
}

TEST_CASE("analyse: a grid scene fills relpos, conv only in the conv view, and stops when cancelled") {
  Scene s = grid_scene("glyph", 16, 16);
  const Analysis a = analyse(s);
  CHECK(a.relpos);
  CHECK(!a.conv);
  CHECK(!a.attention);
  s.view.view = View::conv;
  const Analysis c = analyse(s);
  REQUIRE(c.conv);
  CHECK(c.conv->curve.size() == 25);
  std::atomic<bool> cancel{true};
  CHECK_THROWS_AS(analyse(s, &cancel), Cancelled);
  CHECK_THROWS_AS(analyse_relpos(s, nullptr, &cancel), Cancelled);
  CHECK_THROWS_AS(analyse_conv(s, &cancel), Cancelled);
  // A text scene outside the relpos views does not compute it.
  Scene text;
  CHECK(!analyse(text).relpos);
}

TEST_CASE("analysis request: the view decides what is computed, in request_for only") {
  Scene s;  // a sentence in the heads view
  CHECK(request_for(s) == AnalysisRequest{.attention = true, .relpos = false, .conv = false});
  s.view.view = View::shapes;
  CHECK(request_for(s) == AnalysisRequest{.attention = true, .relpos = false, .conv = false});
  s.view.view = View::relpos1d;
  CHECK(request_for(s) == AnalysisRequest{.attention = true, .relpos = true, .conv = false});
  s.view.view = View::heads;
  s.relpos.mixed = true;  // mixed mode changes the heads' scores: relpos is needed in every view
  CHECK(request_for(s) == AnalysisRequest{.attention = true, .relpos = true, .conv = false});
  Scene g = grid_scene("rings", 8, 8);
  CHECK(request_for(g) == AnalysisRequest{.attention = false, .relpos = true, .conv = false});
  g.view.view = View::conv;
  CHECK(request_for(g) == AnalysisRequest{.attention = false, .relpos = true, .conv = true});
  // analyse() computes exactly what the request names.
  const Analysis conv_only = analyse(g, AnalysisRequest{.attention = false, .relpos = false, .conv = true});
  CHECK(conv_only.conv);
  CHECK(!conv_only.relpos);
  Scene text;
  const Analysis heads = analyse(text, AnalysisRequest{.attention = true, .relpos = false, .conv = true});
  CHECK(heads.attention);
  CHECK(!heads.relpos);
  CHECK(!heads.conv);  // conv is for grids
}

TEST_CASE("analyse with relpos only: grids, pure positional sentences with any head count, and mixed mode") {
  const AnalysisRequest positional{.attention = false, .relpos = true};
  auto analyse_relpos_only = [&](const Scene& scene) { return *analyse(scene, positional).relpos; };
  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.rows = s.input.grid.cols = 8;
  s.relpos.heads = 9;
  s.relpos.delta_preset = "conv3x3";
  const RelposAnalysis grid = analyse_relpos_only(s);
  CHECK(grid.dims == 2);
  check_close(grid.probs_query, analyse_relpos(s, nullptr).probs_query, 0, "grid");

  s.input.source = InputSource::text;
  s.input.text = "The cat sat on the mat.";
  s.model.d_model = 64;
  s.relpos.heads = 3;  // 64 is not divisible by 3: no attention weights are made, so this works
  s.relpos.delta_preset = "line";
  const RelposAnalysis sentence = analyse_relpos_only(s);
  CHECK(sentence.dims == 1);
  CHECK(sentence.cols == 7);
  CHECK(sentence.heads.size() == 3);
  CHECK(!analyse(s, positional).attention);

  s.relpos.mixed = true;  // content scores come from the model's attention: heads must match
  s.model.heads = 4;
  s.relpos.heads = 4;
  s.view.view = View::relpos1d;
  const RelposAnalysis mixed = analyse_relpos_only(s);
  check_close(mixed.probs_query, analyse(s).relpos->probs_query, 0, "mixed");

  s.relpos.mixed = false;
  s.model.d_model = 0;
  CHECK_THROWS_WITH_AS(analyse_relpos_only(s), doctest::Contains("d_model must be between 1 and 4096, got 0"), InputError);
}
