// Exported heads with windows and sinks: masked keys outside the window but for the sink keys, and
// with learned sinks a first column "sink" holding the sink's share (its logit in the scores view).
#include <doctest/doctest.h>

#include <cmath>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/compare.h"
#include "attnscope/figure/export.h"

using namespace attnscope;

TEST_CASE("export sinks: the heads figure masks keys outside the window but keeps the sink keys") {
  Scene s;
  s.model.window = 2;
  s.model.sinks = 1;
  s.model.positions = PositionScheme::rope;
  s.model.rope_scaling = RopeScaling::yarn;
  s.model.rope_factor = 4;
  const Analysis a = analyse(s);
  ExportRequest r;
  const FigureSpec f = export_figure(a, r);
  REQUIRE(f.panels.size() == 8);
  const PanelSpec& p = f.panels[0];
  const int T = p.rows;
  REQUIRE(p.cols == T);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      const bool visible = j <= i && (j > i - 2 || j < 1);
      CHECK(std::isfinite(p.values[size_t(i * T + j)]) == visible);
    }
  CHECK(f.colorbars[0].show_masked);
  CHECK(export_caption(a, r).find("window 2") != std::string::npos);
  CHECK(export_caption(a, r).find("sink tokens: 1") != std::string::npos);
  CHECK(export_caption(a, r).find(" · causal · ") != std::string::npos);  // a window implies the causal mask
  CHECK(export_caption(a, r).find("positions RoPE yarn×4") != std::string::npos);
}

TEST_CASE("export sinks: learned sinks add a first column titled sink with the sink's share or logit") {
  Scene s;
  s.model.causal = true;
  s.model.sink_logits = true;
  const Analysis a = analyse(s);
  const AttentionResult& res = a.attention->result;
  ExportRequest r;
  const FigureSpec f = export_figure(a, r);
  const int T = int(res.probs[0].rows());
  for (int h = 0; h < 8; ++h) {
    const PanelSpec& p = f.panels[size_t(h)];
    REQUIRE(p.cols == T + 1);
    REQUIRE(p.col_labels.size() == size_t(T + 1));
    CHECK(p.col_labels[0] == "sink");
    CHECK(p.col_labels[1] == a.attention->labels[0]);
    for (int i = 0; i < T; ++i) {
      CHECK(p.values[size_t(i * (T + 1))] == res.sink_share(h, i));
      CHECK(p.values[size_t(i * (T + 1) + 1)] == res.probs[size_t(h)](i, 0));
    }
  }
  ExportRequest without = r;
  without.sink_column = false;  // the window's live heads: the tokens' cells only
  CHECK(export_figure(a, without).panels[0].cols == T);
  r.scores = true;
  r.what = ExportWhat::head;
  r.head = 3;
  r.token_first = 2;
  r.token_last = 4;
  const FigureSpec scores = export_figure(a, r);
  REQUIRE(scores.panels.size() == 1);
  const PanelSpec& p = scores.panels[0];
  CHECK(p.cols == 4);
  CHECK(p.col_labels[0] == "sink");
  CHECK(p.values[0] == float(a.attention->options.sink_logits[3]));
  CHECK(p.values[1] == res.scores[3](2, 2));
  CHECK(std::isinf(p.values[2]));  // key 3 after query 2
}

TEST_CASE("export sinks: compare A/B goes token by token when one side has learned sinks and a window") {
  Scene plain;
  Scene sinks = plain;
  sinks.model.window = 3;
  sinks.model.sinks = 1;
  sinks.model.sink_logits = true;
  const Analysis a = analyse(plain), b = analyse(sinks);
  const AbComparison cmp = compare_analyses(a, b);
  for (CompareView view : {CompareView::side_by_side, CompareView::difference}) {
    CompareRequest r;
    r.view = view;
    const FigureSpec f = compare_figure(a, b, cmp, r);
    for (const PanelSpec& p : f.panels) {
      CHECK(p.cols == p.rows);
      CHECK(p.values.size() == size_t(p.rows) * size_t(p.cols));
    }
    CHECK(f.colorbars[0].show_masked == (view == CompareView::side_by_side));  // only B masks keys
  }
}
