// test_long_worker.cpp — the window's worker on a long input (issue 38 item 6; core/long_heads.h): past the stack's
// limit it runs the forward pass on demand and delivers the layer's heads pooled as `export --long` pools and colours
// them; the layer, the pooling, the pixels and the zoom rerun no forward pass; the zoom's cells are the engine's exact
// map; an input whose stack fits keeps the stack's path.
#include <doctest/doctest.h>

#include "attnscope/core/limits.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/pooled_figure.h"
#include "attnscope/model/forward.h"
#include "core/compute_worker.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::gui;
using namespace attnscope::test;

namespace {

std::string long_input(int T) {
  std::string input = "ids:";
  for (int t = 0; t < T; ++t) input += " " + std::to_string((t * 7 + t / 13) % 64);
  return input;
}

ComputeResult settled(ComputeWorker& worker, const ModelSource& source) {
  worker.submit(Scene{}, source);
  worker.wait_until_idle();
  std::optional<ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  return std::move(*r);
}

}  // namespace

TEST_CASE("long worker: past the stack's limit, the layer's heads pooled as the export pools and colours them") {
  const auto m = model::open(model_fixture("gpt_oss_dequantized_bf16"));
  const int T = limits::max_tokens + 20;
  REQUIRE_FALSE(model::stack_fits(m->config, T));
  std::vector<int32_t> ids;
  for (int t = 0; t < T; ++t) ids.push_back(int32_t((t * 7 + t / 13) % 64));
  model::ForwardOptions o;
  o.keep = model::AttentionKeep::on_demand;
  const model::ForwardResult f = model::forward(*m, ids, o);

  ComputeWorker worker([] {});
  ModelSource source{m, long_input(T), 1};
  source.pixels = 96;
  const ComputeResult r = settled(worker, source);
  REQUIRE_MESSAGE(r.long_heads, r.error);
  CHECK(r.error.empty());
  CHECK_FALSE(r.analysis);  // no stack, no layer analysis
  const LongHeads& l = *r.long_heads;
  CHECK(l.tokens == T);
  CHECK(l.layer == 1);
  CHECK(l.kept_bytes == f.head_maps->kept_bytes());
  REQUIRE(int(l.heads.size()) == m->config.heads);
  for (int h = 0; h < m->config.heads; ++h) {
    CAPTURE(h);
    const model::PooledMap p = model::pool_head(*f.head_maps, 1, h, model::Pooling::max, 96);
    CHECK(l.heads[size_t(h)].block == p.block);
    CHECK(l.heads[size_t(h)].values == p.values);
    CHECK(l.heads[size_t(h)].masked == p.masked);
    const FigureSpec fig = pooled_figure(PooledFigureInput{&p, 1, h, m->name}, long_export_request(Colormap::viridis));
    const std::vector<Rgba> colours = panel_colors(fig, 0);
    CHECK(l.pictures[size_t(h)].pixels.size() == colours.size());
    int differing = 0;
    for (size_t i = 0; i < colours.size(); ++i) {
      const Rgba a = l.pictures[size_t(h)].pixels[i], b = colours[i];
      differing += a.r != b.r || a.g != b.g || a.b != b.b || a.a != b.a;
    }
    CHECK(differing == 0);
  }
  CHECK(r.head_patterns_error.find(std::to_string(limits::max_tokens)) != std::string::npos);  // says why
  const int forwards = worker.forward_passes();
  CHECK(forwards == 1);

  // Another layer, the mean, other pixels, a zoom: no forward pass again.
  source.layer = 0;
  source.pooling = model::Pooling::mean;
  source.pixels = 64;
  source.long_zoom = long_zoom_around(T, 2, T - 10, T - 30);
  const ComputeResult z = settled(worker, source);
  REQUIRE_MESSAGE(z.long_heads, z.error);
  CHECK(worker.forward_passes() == forwards);
  CHECK(z.long_heads->layer == 0);
  const model::PooledMap mean = model::pool_head(*f.head_maps, 0, 3, model::Pooling::mean, 64);
  CHECK(z.long_heads->heads[3].values == mean.values);
  REQUIRE(z.long_heads->zoom.has_value());
  const LongZoom zoom = *z.long_heads->zoom;
  CHECK(zoom.size == long_zoom_cells);
  CHECK(zoom.row0 + zoom.size == T);  // moved inside the map
  const Mat exact = f.head_maps->head(0, 2);
  CHECK(z.long_heads->zoom_values == exact.block(zoom.row0, zoom.col0, zoom.size, zoom.size));

  // A zoom outside the input (of a longer one) is dropped, not an error.
  source.long_zoom = LongZoom{2, T, 0, long_zoom_cells};
  const ComputeResult dropped = settled(worker, source);
  REQUIRE(dropped.long_heads);
  CHECK(dropped.error.empty());
  CHECK_FALSE(dropped.long_heads->zoom.has_value());

  // An input whose stack fits: the stack's path (an analysis, no pooled heads).
  const ComputeResult short_input = settled(worker, ModelSource{m, long_input(40), 1});
  CHECK(short_input.analysis);
  CHECK_FALSE(short_input.long_heads);
}

TEST_CASE("long worker: past the on-demand limit, the engine's message") {
  const auto m = model::open(model_fixture("gpt_oss_dequantized_bf16"));
  ComputeWorker worker([] {});
  const ComputeResult r = settled(worker, ModelSource{m, long_input(model::max_on_demand_tokens + 1), 0});
  CHECK_FALSE(r.long_heads);
  CHECK(r.error.find(std::to_string(model::max_on_demand_tokens)) != std::string::npos);
}
