// test_color_scale.cpp — color_scale.h and the scale modes of export.h: the range each mode gives every
// panel, the colours that follow (fixed: p at p; locked: clamped at the ends), the colour bars' titles,
// the scene JSON of the mode, and the refusals (fixed for scores, a bad locked range, conv).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/color_scale.h"
#include "attnscope/figure/export.h"
#include "attnscope/scene/scene_json.h"

using namespace attnscope;

namespace {

Analysis heads_analysis(bool causal) {
  Scene s;
  s.input.text = "The cat sat on the mat because it was tired.";
  s.model.kind = AttentionKind::gqa;
  s.model.heads = 4;
  s.model.groups = 2;
  s.model.causal = causal;
  return analyse(s);
}

// The finite min/max of head h's shown cells (masked cells are left out, as the figure masks them).
ValueRange own_range(const Analysis& a, int h, bool scores) {
  const Mat& m = (scores ? a.attention->result.scores : a.attention->result.probs)[size_t(h)];
  ValueRange r{INFINITY, -INFINITY};
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      if (a.scene.model.causal && j > i) continue;
      if (!std::isfinite(m(i, j))) continue;
      r = {std::min(r.lo, m(i, j)), std::max(r.hi, m(i, j))};
    }
  return r;
}

FigureSpec heads_figure_with(const Analysis& a, ColorScale scale, bool scores = false) {
  ExportRequest r;
  r.color_scale = scale;
  r.scores = scores;
  return export_figure(a, r);
}

}  // namespace

TEST_CASE("color scale: shared spans every panel, per head keeps each its own, fixed is 0-1, locked is as given") {
  const std::vector<ValueRange> own = {{0.1f, 0.4f}, {0.0f, 0.9f}, {0.3f, 0.35f}};
  const auto shared = scale_ranges({ScaleMode::shared}, own);
  const auto per_head = scale_ranges({ScaleMode::per_head}, own);
  const auto fixed = scale_ranges({ScaleMode::fixed}, own);
  const auto locked = scale_ranges({ScaleMode::locked, {0.02f, 0.61f}}, own);
  REQUIRE(shared.size() == 3);
  for (size_t i = 0; i < own.size(); ++i) {
    CHECK(shared[i].lo == 0.0f);
    CHECK(shared[i].hi == 0.9f);
    CHECK(per_head[i].lo == own[i].lo);
    CHECK(per_head[i].hi == own[i].hi);
    CHECK(fixed[i].lo == 0.0f);
    CHECK(fixed[i].hi == 1.0f);
    CHECK(locked[i].lo == 0.02f);
    CHECK(locked[i].hi == 0.61f);
  }
  CHECK(scale_ranges({ScaleMode::shared}, {}).empty());
}

TEST_CASE("color scale: the heads figure's bars follow the mode") {
  const Analysis a = heads_analysis(true);
  const int heads = 4;
  ValueRange all = own_range(a, 0, false);
  for (int h = 1; h < heads; ++h) {
    const ValueRange r = own_range(a, h, false);
    all = {std::min(all.lo, r.lo), std::max(all.hi, r.hi)};
  }
  const FigureSpec shared = heads_figure_with(a, {ScaleMode::shared});
  REQUIRE(shared.colorbars.size() == 1);
  CHECK(shared.colorbars[0].range.lo == doctest::Approx(all.lo));
  CHECK(shared.colorbars[0].range.hi == doctest::Approx(all.hi));

  const FigureSpec per_head = heads_figure_with(a, {ScaleMode::per_head});
  REQUIRE(per_head.colorbars.size() == size_t(heads));
  for (int h = 0; h < heads; ++h) {
    const ValueRange bar = per_head.colorbars[size_t(per_head.panels[size_t(h)].colorbar)].range;
    CHECK(bar.lo == doctest::Approx(own_range(a, h, false).lo));
    CHECK(bar.hi == doctest::Approx(own_range(a, h, false).hi));
  }
  // The heads' ranges differ, so per head is not the shared range under another name (causal: every
  // head's first row is a 1, so the lows tell them apart).
  CHECK(per_head.colorbars[0].range.lo != per_head.colorbars[1].range.lo);

  const FigureSpec fixed = heads_figure_with(a, {ScaleMode::fixed});
  REQUIRE(fixed.colorbars.size() == 1);
  CHECK(fixed.colorbars[0].range.lo == 0.0f);
  CHECK(fixed.colorbars[0].range.hi == 1.0f);

  const FigureSpec locked = heads_figure_with(a, {ScaleMode::locked, {0.05f, 0.3f}});
  REQUIRE(locked.colorbars.size() == 1);
  CHECK(locked.colorbars[0].range.lo == 0.05f);
  CHECK(locked.colorbars[0].range.hi == 0.3f);
  // Scores may be locked too (any range with lo < hi).
  const FigureSpec scores = heads_figure_with(a, {ScaleMode::locked, {-2.0f, 3.5f}}, true);
  CHECK(scores.colorbars[0].range.lo == -2.0f);
  CHECK(scores.colorbars[0].range.hi == 3.5f);
}

TEST_CASE("color scale: fixed 0-1 puts a probability p at p on the colormap; locked clamps beyond its ends") {
  const Analysis a = heads_analysis(false);
  const Mat& p0 = a.attention->result.probs[0];
  for (Colormap map : {Colormap::viridis, Colormap::magma}) {
    ExportRequest r;
    r.colormap = map;
    r.color_scale = {ScaleMode::fixed};
    const FigureSpec f = export_figure(a, r);
    const std::vector<Rgba> colors = panel_colors(f, 0);
    int differs_from_shared = 0;
    ExportRequest own_range_request;
    own_range_request.colormap = map;
    const FigureSpec shared = export_figure(a, own_range_request);
    const std::vector<Rgba> shared_colors = panel_colors(shared, 0);
    for (Eigen::Index i = 0; i < p0.rows(); ++i)
      for (Eigen::Index j = 0; j < p0.cols(); ++j) {
        const size_t k = size_t(i * p0.cols() + j);
        CHECK(colors[k] == colormap_lookup(map, p0(i, j)));
        differs_from_shared += colors[k] != shared_colors[k];
      }
    CHECK(differs_from_shared > 0);  // the check above tells fixed from the data's own range
  }
  ExportRequest r;
  r.color_scale = {ScaleMode::locked, {0.1f, 0.2f}};
  const FigureSpec f = export_figure(a, r);
  const std::vector<Rgba> colors = panel_colors(f, 0);
  int below = 0, above = 0, inside = 0;
  for (Eigen::Index i = 0; i < p0.rows(); ++i)
    for (Eigen::Index j = 0; j < p0.cols(); ++j) {
      const float v = p0(i, j);
      const Rgba c = colors[size_t(i * p0.cols() + j)];
      if (v <= 0.1f) {
        CHECK(c == colormap_lookup(Colormap::viridis, 0.0f));
        ++below;
      } else if (v >= 0.2f) {
        CHECK(c == colormap_lookup(Colormap::viridis, 1.0f));
        ++above;
      } else {
        CHECK(c == value_to_color(v, {0.1f, 0.2f}, Colormap::viridis));
        ++inside;
      }
    }
  CHECK(below > 0);
  CHECK(above > 0);
  CHECK(inside > 0);
}

TEST_CASE("color scale: relpos starts data ranges at 0 but keeps fixed and locked ranges as given") {
  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.rows = s.input.grid.cols = 8;
  s.view.view = View::relpos2d;
  const Analysis a = analyse(s);
  REQUIRE(a.relpos);
  ExportRequest r;
  r.what = ExportWhat::relpos;
  r.color_scale = {ScaleMode::per_head};
  const FigureSpec per_head = export_figure(a, r);
  CHECK(per_head.colorbars.size() == per_head.panels.size());
  for (const ColorBarSpec& bar : per_head.colorbars) CHECK(bar.range.lo == 0.0f);
  r.color_scale = {ScaleMode::locked, {0.01f, 0.2f}};
  const FigureSpec locked = export_figure(a, r);
  REQUIRE(locked.colorbars.size() == 1);
  CHECK(locked.colorbars[0].range.lo == 0.01f);
  CHECK(locked.colorbars[0].range.hi == 0.2f);
}

TEST_CASE("color scale: the colour bar's title says the mode, in the figure's language") {
  const Analysis a = heads_analysis(false);
  CHECK(heads_figure_with(a, {ScaleMode::shared}).colorbars[0].title == "probability");
  CHECK(heads_figure_with(a, {ScaleMode::per_head}).colorbars[0].title == "probability · per head");
  CHECK(heads_figure_with(a, {ScaleMode::fixed}).colorbars[0].title == "probability · fixed 0–1");
  CHECK(heads_figure_with(a, {ScaleMode::locked, {0.02f, 0.61f}}).colorbars[0].title == "probability · locked 0.02–0.61");
  CHECK(heads_figure_with(a, {ScaleMode::locked, {-2.0f, 3.5f}}, true).colorbars[0].title == "score · locked -2–3.5");
  FigureWords zh;
  zh.strings = {{"probability", "概率"}, {"locked %s", "锁定 %s"}, {"scale locked at %s", "刻度锁定在 %s"}};
  CHECK(scale_bar_title("概率", {ScaleMode::locked, {0.02f, 0.61f}}, zh) == "概率 · 锁定 0.02–0.61");
  ExportRequest r;
  r.words = zh;
  r.color_scale = {ScaleMode::locked, {0.02f, 0.61f}};
  CHECK(export_caption(a, r).find("刻度锁定在 0.02–0.61") != std::string::npos);
}

// issue 40: Compare A/B locks its scale to the shown range, whose low end is a masked probability such as
// 1.05e-41: the title read "locked 1.05e-41–1". Round numbers, as the colour bar's ticks.
TEST_CASE("color scale: a range is written in round numbers, as the colour bar's ticks") {
  CHECK(range_text({1.05e-41f, 1.0f}) == "0–1");
  CHECK(range_text({9.7e-8f, 0.4617f}) == "0–0.46");
  CHECK(range_text({0.02f, 0.61f}) == "0.02–0.61");
  CHECK(range_text({0.05f, 0.4f}) == "0.05–0.4");
  CHECK(range_text({-0.5f, 0.5f}) == "-0.5–0.5");
  CHECK(range_text({-2.0f, 3.5f}) == "-2–3.5");
  CHECK(range_text({0.0f, 1.0f}) == "0–1");
  CHECK(range_text({1.0e-6f, 5.0e-6f}) == "1.0e-06–5.0e-06");  // a tiny range keeps its digits
  CHECK(range_text({0.5f, 0.2f}) == "0.5–0.2");                // no range: as given, for the refusal
}

TEST_CASE("color scale: fixed for scores, bad locked ranges, conv and the model view's per head are refused") {
  const Analysis a = heads_analysis(false);
  ExportRequest r;
  r.scores = true;
  r.color_scale = {ScaleMode::fixed};
  CHECK_THROWS_WITH_AS(validate_export(a, r), doctest::Contains("valid here: shared, per-head, locked"), InputError);
  r.scores = false;
  CHECK_NOTHROW(validate_export(a, r));
  r.color_scale = {ScaleMode::locked, {0.5f, 0.5f}};
  CHECK_THROWS_WITH_AS(validate_export(a, r), doctest::Contains("LO < HI"), InputError);
  r.color_scale = {ScaleMode::locked, {0.5f, NAN}};
  CHECK_THROWS_AS(validate_export(a, r), InputError);

  CHECK(parse_scale_mode("per-head") == ScaleMode::per_head);
  CHECK_THROWS_WITH_AS(parse_scale_mode("auto"), doctest::Contains("valid: shared, per-head, fixed, locked"), InputError);
  const ValueRange ok = parse_scale_range("0.02,0.61");
  CHECK(ok.lo == 0.02f);
  CHECK(ok.hi == 0.61f);
  for (const char* bad : {"0.5", "0.6,0.1", "1,1", "a,b", "0,1,2", ""})
    CHECK_THROWS_WITH_AS(parse_scale_range(bad), doctest::Contains("LO < HI"), InputError);

  Scene grid;
  grid.input.source = InputSource::grid;
  grid.input.grid.rows = grid.input.grid.cols = 8;
  grid.view.view = View::conv;
  const Analysis conv = analyse(grid);
  ExportRequest c;
  c.what = ExportWhat::conv;
  c.color_scale = {ScaleMode::fixed};
  CHECK_THROWS_WITH_AS(validate_export(conv, c), doctest::Contains("scales of its own"), InputError);
  // The window's conv view keeps its own scales whatever mode the heads have.
  grid.view.scale = ScaleMode::locked;
  CHECK(export_request_for_view(grid.view).color_scale.mode == ScaleMode::shared);
  // Scores on screen while fixed is chosen are drawn on the shared scale.
  ViewSettings scores;
  scores.show_scores = true;
  scores.scale = ScaleMode::fixed;
  CHECK(export_request_for_view(scores).color_scale.mode == ScaleMode::shared);
}

TEST_CASE("color scale: locking a range without spread widens it to take in 0 and 1") {
  CHECK(lockable_range({0.2f, 0.5f}).lo == 0.2f);
  CHECK(lockable_range({0.2f, 0.5f}).hi == 0.5f);
  const ValueRange one = lockable_range({1.0f, 1.0f});  // one token: every probability is 1
  CHECK(one.lo == 0.0f);
  CHECK(one.hi == 1.0f);
  const ValueRange neg = lockable_range({-3.0f, -3.0f});
  CHECK(neg.lo < neg.hi);
  CHECK(neg.lo == -3.0f);
}

TEST_CASE("scene json: the scale mode and locked range round-trip; an old shared_scale false reads as per head") {
  Scene s;
  s.view.scale = ScaleMode::locked;
  s.view.locked_lo = 0.02;
  s.view.locked_hi = 0.61;
  const nlohmann::json j = scene_to_json(s);
  CHECK(j["view"]["scale"] == "locked");
  std::vector<std::string> warnings;
  const Scene back = scene_from_json(j, &warnings);
  CHECK(back == s);
  CHECK(warnings.empty());

  nlohmann::json old = scene_to_json(Scene{});
  old["view"].erase("scale");
  old["view"]["shared_scale"] = false;
  warnings.clear();
  CHECK(scene_from_json(old, &warnings).view.scale == ScaleMode::per_head);
  CHECK(warnings.empty());
  old["view"]["shared_scale"] = true;
  CHECK(scene_from_json(old).view.scale == ScaleMode::shared);
  nlohmann::json bad = scene_to_json(Scene{});
  bad["view"]["scale"] = "auto";
  CHECK_THROWS_WITH_AS(scene_from_json(bad), doctest::Contains("valid: shared, per-head, fixed, locked"), InputError);
}
