// test_token_set.cpp — token sets (analysis/token_set.h, export.h ExportRequest::token_set): the reduced row
// and column against the plain sums, the parsing and range checks with their messages, the figure's extra
// row or column (labelled, on colour ranges that include it, kept by a token range), the CSV's, the scene
// JSON of a set, and the pictures' strips (the window draws them beside each head, as the figure does).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/analysis/token_set.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/export.h"
#include "attnscope/scene/scene_json.h"
#include "check.h"

using namespace attnscope;
using attnscope::test::contains;
using attnscope::test::error_of;

namespace {

Analysis heads_analysis() {
  Scene s;
  s.input.text = "The cat sat on the mat because it was tired.";
  s.model.kind = AttentionKind::gqa;
  s.model.heads = 4;
  s.model.groups = 2;
  s.model.causal = true;
  return analyse(s);
}

TokenSet set_of(TokenSetAxis axis, std::vector<int> tokens, SetReduce reduce = SetReduce::sum) {
  TokenSet t;
  t.axis = axis;
  t.tokens = std::move(tokens);
  t.reduce = reduce;
  return t;
}

}  // namespace

TEST_CASE("token set: the reduced row and column are the sums (means) of the selected rows and columns") {
  const Analysis a = heads_analysis();
  const Mat& m = a.attention->result.probs[1];
  const int T = int(m.rows());
  for (const SetReduce reduce : {SetReduce::sum, SetReduce::mean}) {
    const double n = reduce == SetReduce::mean ? 3.0 : 1.0;
    const std::vector<float> row = reduce_token_set(m, set_of(TokenSetAxis::queries, {1, 4, 7}, reduce));
    const std::vector<float> col = reduce_token_set(m, set_of(TokenSetAxis::keys, {0, 2, 3}, reduce));
    REQUIRE(row.size() == size_t(T));
    REQUIRE(col.size() == size_t(T));
    for (int k = 0; k < T; ++k) {
      CHECK(row[size_t(k)] == doctest::Approx((double(m(1, k)) + m(4, k) + m(7, k)) / n).epsilon(1e-6));
      CHECK(col[size_t(k)] == doctest::Approx((double(m(k, 0)) + m(k, 2) + m(k, 3)) / n).epsilon(1e-6));
    }
  }
  // A probability row sums to 1: the summed rows of three queries sum to 3, their mean to 1.
  const std::vector<float> sum = reduce_token_set(m, set_of(TokenSetAxis::queries, {1, 4, 7}));
  double total = 0;
  for (const float v : sum) total += v;
  CHECK(total == doctest::Approx(3.0).epsilon(1e-5));
  CHECK(reduce_token_set(m, TokenSet{}).empty());
  // Scores: a key masked for one selected query is masked (−inf) in the sum.
  const Mat& s = a.attention->result.scores[1];
  const std::vector<float> scores = reduce_token_set(s, set_of(TokenSetAxis::queries, {1, 4}));
  CHECK(std::isfinite(scores[1]));
  CHECK(std::isinf(scores[2]));  // key 2 comes after query 1
}

TEST_CASE("token set: parsing and range checks name the flag, the form and the valid tokens") {
  CHECK(parse_token_list("7,3, 5,3", "--query-set") == std::vector<int>{3, 5, 7});
  for (const char* bad : {"", "1,,2", "-1", "a", "1.5", "2,", "1-3"})
    CHECK(contains(error_of([&] { parse_token_list(bad, "--key-set"); }), "--key-set takes token numbers from 0"));
  CHECK(contains(error_of([&] { check_token_set(set_of(TokenSetAxis::queries, {2, 9}), 7, "--query-set"); }),
                 "--query-set: token 9 is outside this input of 7 tokens: valid tokens 0-6"));
  CHECK(contains(error_of([&] { check_token_set(set_of(TokenSetAxis::keys, {1}), 1, "--key-set"); }),
                 "the valid token is 0"));
  CHECK(error_of([&] { check_token_set(set_of(TokenSetAxis::keys, {0, 6}), 7, "--key-set"); }).empty());
  CHECK(parse_set_reduce("mean") == SetReduce::mean);
  CHECK(contains(error_of([&] { parse_set_reduce("max"); }), "valid: sum, mean"));
  CHECK(std::string(token_set_label_key(set_of(TokenSetAxis::queries, {1, 2}))) == "Σ of %d queries");
  CHECK(std::string(token_set_label_key(set_of(TokenSetAxis::queries, {1}))) == "Σ of %d query");
  CHECK(std::string(token_set_label_key(set_of(TokenSetAxis::keys, {1, 5}, SetReduce::mean))) == "mean of %d keys");
  CHECK(std::string(token_set_label_key(set_of(TokenSetAxis::keys, {1}, SetReduce::mean))) == "mean of %d key");
  CHECK(token_set_list(set_of(TokenSetAxis::keys, {1, 2, 3, 4}), 2) == "1, 2, …");
}

TEST_CASE("token set: the figure's extra row or column, labelled, on ranges that include it; CSV carries it") {
  const Analysis a = heads_analysis();
  const int T = int(a.attention->labels.size());
  ExportRequest r;
  r.token_set = set_of(TokenSetAxis::queries, {2, 5, 8});
  FigureSpec f = export_figure(a, r);
  REQUIRE(f.panels.size() == 4);
  for (size_t h = 0; h < 4; ++h) {
    const PanelSpec& p = f.panels[h];
    REQUIRE(p.rows == T + 1);
    REQUIRE(p.cols == T);
    CHECK(p.row_labels.back() == "Σ of 3 queries");
    const std::vector<float> row = reduce_token_set(a.attention->result.probs[h], r.token_set);
    for (int j = 0; j < T; ++j) CHECK(p.values[size_t(T) * size_t(T) + size_t(j)] == row[size_t(j)]);
    // the shared bar covers the strip's sums (up to 3), not only the heads' probabilities
    CHECK(f.colorbars[size_t(p.colorbar)].range.hi >= *std::max_element(row.begin(), row.end()));
  }
  CHECK(contains(export_caption(a, r), "Σ of 3 queries: 2, 5, 8"));
  // keys, with a token range: the kept cells, then the strip's cells of the kept rows
  r.token_set = set_of(TokenSetAxis::keys, {0, 1}, SetReduce::mean);
  r.token_first = 3, r.token_last = 6;
  f = export_figure(a, r);
  const PanelSpec& p = f.panels[2];
  REQUIRE(p.rows == 4);
  REQUIRE(p.cols == 5);
  CHECK(p.col_labels.back() == "mean of 2 keys");
  CHECK(p.row_labels.front() == a.attention->labels[3]);
  const std::vector<float> col = reduce_token_set(a.attention->result.probs[2], r.token_set);
  for (int i = 0; i < 4; ++i) CHECK(p.values[size_t(i) * 5 + 4] == col[size_t(3 + i)]);
  // CSV/npy array: [H, T, T+1], the strip last
  r.token_first = r.token_last = -1;
  const ExportArray arr = export_array(a, r);
  REQUIRE(arr.shape == std::vector<int64_t>{4, T, T + 1});
  CHECK(arr.col_labels.back() == "mean of 2 keys (0, 1)");
  for (int i = 0; i < T; ++i) CHECK(arr.values[size_t((2 * T + i) * (T + 1) + T)] == col[size_t(i)]);
  CHECK(contains(export_csv(arr), "mean of 2 keys (0, 1)"));
  // out of range: refused naming the valid tokens; on relpos: refused
  r.token_set = set_of(TokenSetAxis::queries, {T});
  CHECK(contains(error_of([&] { export_figure(a, r); }), "valid tokens 0-" + std::to_string(T - 1)));
}

TEST_CASE("token set: a scene file keeps the set; the view's export request carries it") {
  Scene s;
  s.view.token_set = set_of(TokenSetAxis::keys, {1, 4}, SetReduce::mean);
  const nlohmann::json j = scene_to_json(s);
  CHECK(j["view"]["token_set"]["axis"] == "keys");
  CHECK(j["view"]["token_set"]["reduce"] == "mean");
  const Scene back = scene_from_json(j);
  CHECK(back.view.token_set == s.view.token_set);
  CHECK(back == s);
  nlohmann::json bad = j;
  bad["view"]["token_set"]["tokens"] = {1, -2};
  CHECK(contains(error_of([&] { scene_from_json(bad); }), "view.token_set.tokens"));
  bad = j;
  bad["view"]["token_set"]["axis"] = "rows";
  CHECK(contains(error_of([&] { scene_from_json(bad); }), "none, queries or keys"));
  CHECK(export_request_for_view(s.view).token_set == s.view.token_set);
  s.view.view = View::relpos1d;  // the relpos figure has no token set
  CHECK(!export_request_for_view(s.view).token_set.active());
}
