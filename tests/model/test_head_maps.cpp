// Tests of long inputs (issue 38 item 6, model/head_maps.h): the forward pass that keeps q and k instead of the
// attention stack, each head's map recomputed on demand (bit for bit the stack's, on every softmax family), its
// memory, its limits, and the pooled overview (against a plain loop; the sink column and a window's band stay
// visible under max pooling).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/core/rng.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/head_maps.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::model_fixture;

namespace {

ForwardOptions on_demand() {
  ForwardOptions o;
  o.keep = AttentionKeep::on_demand;
  return o;
}

// The softmax families beside checkpoint_fixtures(): gpt-oss's sinks, DeepSeek's MLA (+MoE), the MoE families.
std::vector<std::string> softmax_fixtures() {
  std::vector<std::string> names = test::checkpoint_fixtures();
  for (const char* n : {"gpt_oss_dequantized_bf16", "gpt_oss_mxfp4_bf16", "deepseek_v2_mla_moe_bf16",
                        "deepseek_v3_mla_noaux_f32_sharded", "deepseek_v2_grouped_f16", "qwen3_moe_sparse_step_f32",
                        "olmoe_1b_7b_bf16", "granitemoe_31_1b_bf16", "granite_dense_f16"})
    names.push_back(n);
  return names;
}

// Σ over layers of the q [T, H·D] and k [T, G·D] floats (MLA: G = H), + H sink logits, in bytes: from the shapes.
int64_t kept_from_shapes(const ModelConfig& c, int T) {
  int64_t floats = 0;
  for (int l = 0; l < c.layers; ++l)
    floats += int64_t(T) * c.heads * c.head_dim + int64_t(T) * (c.is_mla() ? c.heads : c.kv_heads) * c.head_dim +
              (c.attention_sinks ? c.heads : 0);
  return floats * 4;
}

bool same_bits(const float* a, const float* b, int64_t n) { return std::memcmp(a, b, size_t(n) * sizeof(float)) == 0; }

std::vector<int32_t> random_ids(int T, int vocab, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> ids(static_cast<size_t>(T));
  for (int32_t& id : ids) id = int32_t(rng.next_u64() % uint64_t(vocab));
  return ids;
}

// The plain loop pool_map is checked against.
PooledMap plain_pool(const Mat& map, const MapMask& mask, Pooling pooling, int b) {
  const int T = int(map.rows()), n = (T + b - 1) / b;
  PooledMap p;
  p.block = b, p.rows = p.cols = n, p.tokens = T;
  p.values = Mat::Zero(n, n);
  p.masked.assign(size_t(n) * n, 1);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      double sum = 0, best = -1e30;
      int seen = 0;
      for (int i = r * b; i < std::min(T, (r + 1) * b); ++i)
        for (int j = c * b; j < std::min(T, (c + 1) * b); ++j)
          if (!mask.masked(i, j)) sum += map(i, j), best = std::max(best, double(map(i, j))), ++seen;
      if (seen == 0) continue;
      p.masked[size_t(r) * n + c] = 0;
      p.values(r, c) = float(pooling == Pooling::max ? best : sum / seen);
    }
  return p;
}

}  // namespace

TEST_CASE("long inputs: every softmax family's heads recomputed on demand are bit for bit the stack's") {
  for (const std::string& name : softmax_fixtures()) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const auto ids = test::fixture_ids(name);
    const int T = int(ids.size());
    const ForwardResult stack = forward(*m, ids);
    const ForwardResult kept = forward(*m, ids, on_demand());
    REQUIRE(kept.head_maps);
    CHECK(kept.attentions.empty());
    const HeadMaps& maps = *kept.head_maps;
    REQUIRE(maps.layer_count() == m->config.layers);
    CHECK(maps.tokens == T);
    // The pass itself is unchanged: the same logits, bit for bit.
    CHECK(same_bits(kept.logits.data(), stack.logits.data(), kept.logits.size()));
    int differing = 0;
    for (int l = 0; l < stack.layers; ++l)
      for (int h = 0; h < maps.heads(l); ++h)
        if (!same_bits(maps.head(l, h).data(), stack.attention(l, h).data(), int64_t(T) * T)) ++differing;
    CHECK(differing == 0);
    CHECK(maps.kept_bytes() == kept_from_shapes(m->config, T));
    CHECK(on_demand_kept_bytes(m->config, T) == maps.kept_bytes());
  }
}

TEST_CASE("long inputs: a K/V-converted model's heads on demand are the stack's, with the pooled G") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  const auto pooled = convert_kv_heads(*m, 1);
  const auto ids = test::fixture_ids("llama_gqa_bf16_sharded");
  const ForwardResult stack = forward(*pooled, ids), kept = forward(*pooled, ids, on_demand());
  CHECK(kept.head_maps->layers[0].kv_heads == 1);
  for (int l = 0; l < stack.layers; ++l)
    for (int h = 0; h < stack.heads; ++h) {
      CAPTURE(l);
      CAPTURE(h);
      CHECK(same_bits(kept.head_maps->head(l, h).data(), stack.attention(l, h).data(), int64_t(stack.tokens) * stack.tokens));
    }
}

TEST_CASE("long inputs: linear/mixer layers, layer detail and over-long inputs are refused by name") {
  for (const char* name : {"qwen3_next_f32", "granite_hybrid_f32", "attnscope_linear_gated_deltanet"}) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const std::string e = error_of([&] { (void)forward(*m, test::fixture_ids(name), on_demand()); });
    CHECK(contains(e, "long inputs (attention computed per head on demand) need softmax layers"));
    CHECK((contains(e, "Gated DeltaNet") || contains(e, "Mamba-2") || contains(e, "attnscope-trained linear")));
    CHECK(on_demand_kept_bytes(m->config, 8) == 0);
  }
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  ForwardOptions detail = on_demand();
  detail.detail_layer = 0;
  CHECK(contains(error_of([&] { (void)forward(*m, test::fixture_ids("llama_gqa_bf16_sharded"), detail); }),
                 "keep no layer's detail"));
  ModelConfig c = m->config;
  c.max_positions = 1 << 20;
  CHECK(contains(error_of([&] { check_forward_input(c, std::vector<int32_t>(max_on_demand_tokens + 1, 1), AttentionKeep::on_demand); }),
                 std::to_string(max_on_demand_tokens + 1) + " tokens; attnscope's limit for long inputs is " +
                     std::to_string(max_on_demand_tokens)));
  CHECK_NOTHROW(check_forward_input(c, std::vector<int32_t>(max_on_demand_tokens, 1), AttentionKeep::on_demand));
  // The stack's limit still holds without the mode.
  CHECK(contains(error_of([&] { check_forward_input(c, std::vector<int32_t>(limits::max_tokens + 1, 1)); }),
                 "attnscope's limit is " + std::to_string(limits::max_tokens)));
  // Too many bytes of q and k: the message names what is needed and the limit.
  c.layers = 4000;
  c.layer_window.assign(size_t(c.layers), 0);
  c.layer_linear.clear();
  const std::string e = error_of([&] { check_forward_input(c, std::vector<int32_t>(max_on_demand_tokens, 1), AttentionKeep::on_demand); });
  CHECK(contains(e, byte_size_text(on_demand_kept_bytes(c, max_on_demand_tokens))));
  CHECK(contains(e, "above attnscope's limit of " + byte_size_text(max_on_demand_bytes)));
  // The window's head request out of range.
  const ForwardResult r = forward(*m, test::fixture_ids("llama_gqa_bf16_sharded"), on_demand());
  CHECK(contains(error_of([&] { (void)r.head_maps->head(m->config.layers, 0); }), "layers 0 to"));
  CHECK(contains(error_of([&] { (void)r.head_maps->head(0, m->config.heads); }), "heads 0 to"));
}

TEST_CASE("long inputs: a set cancel flag stops the on-demand pass between layers") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  std::atomic<bool> cancel{true};
  ForwardOptions o = on_demand();
  o.cancel = &cancel;
  CHECK_THROWS_AS((void)forward(*m, test::fixture_ids("llama_gqa_bf16_sharded"), o), Cancelled);
}

TEST_CASE("long inputs: a fixture model at T = 4096 keeps what its shapes say, under the stated ceiling, and matches the "
          "reference at a smaller T") {
  // Two tiny models made to take 4,096 positions: Llama (GQA) and gpt-oss (sinks, a window of 8 on layer 0).
  // The ceiling: 2 MiB of kept q and k (Llama: 2 layers × 4096 × (4 + 2) heads × 6 × 4 bytes = 1.125 MiB; gpt-oss:
  // 2 × 4096 × (4 + 2) × 16 × 4 = 3 MiB, its ceiling 4 MiB) — a long page costs megabytes, not the stack's gigabytes.
  struct Case {
    const char* name;
    int64_t ceiling;
  };
  for (const Case& k : {Case{"llama_gqa_bf16_sharded", int64_t(2) << 20}, Case{"gpt_oss_dequantized_bf16", int64_t(4) << 20}}) {
    CAPTURE(k.name);
    const auto opened = model::open(model_fixture(k.name));
    Model m = *opened;
    m.config.max_positions = std::max(m.config.max_positions, 4096);
    const int T = 4096;
    const std::vector<int32_t> ids = random_ids(T, m.config.vocab, 38);
    CHECK_THROWS_AS((void)forward(m, ids), InputError);  // the stack refuses this T
    const ForwardResult r = forward(m, ids, on_demand());
    REQUIRE(r.head_maps);
    const HeadMaps& maps = *r.head_maps;
    CHECK(maps.tokens == T);
    CHECK(maps.kept_bytes() == kept_from_shapes(m.config, T));
    CHECK(on_demand_kept_bytes(m.config, T) == maps.kept_bytes());
    CHECK(maps.kept_bytes() <= k.ceiling);
    CHECK(on_demand_bytes(m.config, T, 2) == maps.kept_bytes() + 2 * int64_t(T) * T * 4);
    // The first 40 queries and keys of each head at T = 4096 are the plain-loop reference's at T = 40 (causal: a
    // query sees no later token), to 1e-5 as the fast pass and the reference agree.
    const int t = 40;
    const std::vector<int32_t> first(ids.begin(), ids.begin() + t);
    const ForwardResult ref = forward_reference(m, first);
    for (int l = 0; l < m.config.layers; ++l)
      for (int h = 0; h < maps.heads(l); ++h) {
        CAPTURE(l);
        CAPTURE(h);
        const Mat head = maps.head(l, h);
        CHECK((head.topLeftCorner(t, t) - ref.attention(l, h)).cwiseAbs().maxCoeff() <= 1e-5);
        // rows sum to 1 (gpt-oss: 1 minus the sink's share, so at most 1), the upper triangle exactly 0
        CHECK(head.row(T - 1).sum() <= 1.0f + 1e-4f);
        CHECK(head.topRightCorner(T - 1, T - 1).triangularView<Eigen::Upper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0f);
      }
  }
}

TEST_CASE("long inputs: pooling against a plain loop, max and mean, with causal and window masks") {
  Rng rng(7);
  for (const int T : {1, 5, 37, 64}) {
    Mat map(T, T);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) map(i, j) = rng.uniform01();
    for (const int window : {0, 3, 9})
      for (const int pixels : {1, 4, 7, 8, 64, 100})
        for (const Pooling pooling : {Pooling::max, Pooling::mean}) {
          CAPTURE(T);
          CAPTURE(window);
          CAPTURE(pixels);
          const MapMask mask{window};
          const PooledMap p = pool_map(map, mask, pooling, pixels);
          const int b = (T + pixels - 1) / pixels;
          CHECK(p.block == std::max(1, b));
          CHECK(p.rows <= pixels);
          const PooledMap q = plain_pool(map, mask, pooling, p.block);
          REQUIRE(p.rows == q.rows);
          CHECK(p.masked == q.masked);
          CHECK((p.values - q.values).cwiseAbs().maxCoeff() <= 1e-6f);
          if (pixels >= T) {  // exact cells
            CHECK(p.label() == "exact cells");
            for (int i = 0; i < T; ++i)
              for (int j = 0; j < T; ++j) {
                CHECK(p.is_masked(i, j) == mask.masked(i, j));
                if (!mask.masked(i, j)) CHECK(p.values(i, j) == map(i, j));
              }
          }
        }
  }
  Mat m = Mat::Ones(8, 8);
  CHECK(pool_map(m, {}, Pooling::max, 2).label() == "max-pooled 4\u00d74");
  CHECK(pool_map(m, {}, Pooling::mean, 3).label() == "mean-pooled 3\u00d73");
  CHECK(contains(error_of([&] { (void)pool_map(m, {}, Pooling::max, 0); }), "at least 1 pixel"));
  CHECK(contains(error_of([&] { (void)parse_pooling("median", "--pool"); }), "--pool takes max or mean, got 'median'"));
}

TEST_CASE("long inputs: mean pooling averages only unmasked cells; a wholly masked block stays masked") {
  // 4 tokens, block 2: the top-left block has 3 unmasked cells (0,0) (1,0) (1,1); the top-right none.
  Mat map(4, 4);
  map << 1, 9, 9, 9,  //
      0.5f, 0.5f, 9, 9,  //
      0.1f, 0.2f, 0.3f, 9,  //
      0.1f, 0.1f, 0.1f, 0.7f;
  const PooledMap p = pool_map(map, {}, Pooling::mean, 2);
  CHECK(p.values(0, 0) == doctest::Approx((1 + 0.5 + 0.5) / 3.0));
  CHECK(p.is_masked(0, 1));
  CHECK(p.values(0, 1) == 0.0f);
  CHECK(p.values(1, 0) == doctest::Approx((0.1 + 0.2 + 0.1 + 0.1) / 4.0));
  CHECK(p.values(1, 1) == doctest::Approx((0.3 + 0.1 + 0.7) / 3.0));
}

TEST_CASE("long inputs: max pooling keeps the sink column and a window's band visible at 4096 tokens") {
  const int T = 4096, pixels = 256, W = 128;
  // A global head: half of every row on key 0 (an attention sink), the rest spread over the keys it sees.
  Mat sink = Mat::Zero(T, T);
  for (int i = 0; i < T; ++i) {
    sink(i, 0) = i == 0 ? 1.0f : 0.5f;
    for (int j = 1; j <= i; ++j) sink(i, j) = 0.5f / float(i);
  }
  const PooledMap mx = pool_map(sink, {}, Pooling::max, pixels), mean = pool_map(sink, {}, Pooling::mean, pixels);
  REQUIRE(mx.rows == pixels);
  float smallest_sink = 1, largest_other = 0;
  for (int r = 0; r < mx.rows; ++r) {
    smallest_sink = std::min(smallest_sink, mx.values(r, 0));
    for (int c = 1; c <= r; ++c) largest_other = std::max(largest_other, mx.values(r, c));
  }
  CHECK(smallest_sink == 0.5f);              // the sink's own value in every row of pixels
  CHECK(largest_other < smallest_sink / 10);  // far above the rest: the column stands out
  CHECK(mean.values(pixels - 1, 0) < smallest_sink / 10);  // mean pooling dilutes it (why max is the default)
  // A sliding-window head (W = 128): the band along the diagonal is unmasked and > 0, the blocks wholly beyond
  // the window and above the diagonal are masked.
  const MapMask window{W};
  Mat band = Mat::Zero(T, T);
  for (int i = 0; i < T; ++i)
    for (int j = std::max(0, i - W + 1); j <= i; ++j) band(i, j) = 1.0f / float(std::min(i + 1, W));
  const PooledMap b = pool_map(band, window, Pooling::max, pixels);
  const int blk = b.block;
  int band_cells = 0, wrong = 0;
  for (int r = 0; r < b.rows; ++r)
    for (int c = 0; c < b.cols; ++c) {
      const bool any_visible = !(c * blk > r * blk + blk - 1) && (c * blk + blk - 1 > r * blk - W);
      if (any_visible) {
        ++band_cells;
        if (b.is_masked(r, c) || !(b.values(r, c) > 0)) ++wrong;
      } else if (!b.is_masked(r, c)) {
        ++wrong;
      }
    }
  CHECK(wrong == 0);
  CHECK(band_cells < b.rows * b.cols / 8);  // a narrow band, not the whole triangle
}

TEST_CASE("long inputs: a windowed fixture's pooled heads show the band, the sinks model's rows keep their share") {
  const auto opened = model::open(model_fixture("gpt_oss_dequantized_bf16"));  // layer 0 slides over 8 keys
  const int T = 512;
  const ForwardResult r = forward(*opened, random_ids(T, opened->config.vocab, 5), on_demand());
  const HeadMaps& maps = *r.head_maps;
  REQUIRE(maps.mask(0).window == 8);
  for (int h = 0; h < maps.heads(0); ++h) {
    CAPTURE(h);
    const PooledMap p = pool_head(maps, 0, h, Pooling::max, 64);  // block 8
    REQUIRE(p.block == 8);
    for (int r = 0; r < p.rows; ++r)
      for (int c = 0; c < p.cols; ++c) {
        const bool band = c == r || c == r - 1;  // a window of 8 reaches at most one block back
        CHECK(p.is_masked(r, c) == !band);
        if (c == r) CHECK(p.values(r, c) > 0);
      }
    // The exact cells of the same head at full resolution: the map itself.
    const PooledMap exact = pool_head(maps, 0, h, Pooling::mean, T);
    CHECK(exact.label() == "exact cells");
    CHECK(exact.values == maps.head(0, h));
  }
}
