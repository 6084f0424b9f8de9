// Attention rollout and attention flow (analysis/rollout.h):
//   - capacities, rollout and flows against tests/fixtures/rollout/rollout_cases.json (numpy's rollout and
//     networkx's maximum_flow_value on the same graphs: make_rollout_fixtures.py), every layer and position;
//   - rollout against the 0.5·Ā + 0.5·I product computed here with plain loops, multiplied in the other order;
//   - a model whose every head attends to itself: rollout is the identity, and each token's flow stays on it;
//   - masked keys (causal, windows): every rollout and flow entry with no unmasked path is exactly 0;
//   - flow never exceeds a cut's capacity (the source-side and sink-side cuts listed at flow_cuts);
//   - real checkpoints' attentions (a windowed model, a Gated DeltaNet hybrid, a Mamba-2 hybrid, sinks):
//     rows sum to 1, the causal triangle is 0, linear layers are flagged;
//   - progress, cancel and bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>

#include "attnscope/analysis/rollout.h"
#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/forward.h"
#include "model/checkpoint_fixtures.h"
#include "test_paths.h"

using namespace attnscope;

namespace {

struct FixtureCase {
  std::string name;
  model::AttentionStack stack;
  std::vector<int> windows;
  std::vector<float> capacities, rollout, flows;  // [L, T, T] each; flows[l][i][j]
};

std::vector<FixtureCase> fixture_cases() {
  const auto path = std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/rollout/rollout_cases.json";
  const auto j = nlohmann::json::parse(read_file(path, 1 << 24));
  std::vector<FixtureCase> out;
  for (const auto& c : j.at("cases")) {
    FixtureCase f;
    f.name = c.at("name").get<std::string>();
    model::AttentionStack& s = f.stack;
    s.layers = c.at("layers").get<int>();
    s.heads = s.kv_heads = c.at("heads").get<int>();
    s.tokens = c.at("tokens").get<int>();
    s.causal = c.at("causal").get<bool>();
    s.attentions = c.at("attentions").get<std::vector<float>>();
    f.windows = c.at("windows").get<std::vector<int>>();
    const auto kinds = c.at("layer_kind").get<std::vector<std::string>>();
    if (std::any_of(kinds.begin(), kinds.end(), [](const std::string& k) { return !k.empty(); })) {
      s.layer_kind = kinds;
      s.linear_maps = c.at("linear_maps").get<std::vector<std::vector<float>>>();
    }
    f.capacities = c.at("capacities").get<std::vector<float>>();
    f.rollout = c.at("rollout").get<std::vector<float>>();
    f.flows = c.at("flows").get<std::vector<float>>();
    out.push_back(std::move(f));
  }
  return out;
}

// Largest |a − b| over two flat tensors, with where.
struct Diff {
  double diff = 0;
  size_t at = 0;
};
Diff max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  Diff d;
  for (size_t k = 0; k < a.size(); ++k)
    if (std::abs(double(a[k]) - b[k]) > d.diff) d = {std::abs(double(a[k]) - b[k]), k};
  return d;
}

// A random causal stack [L, H, T, T]: rows softmax of N(0, 2²) logits over keys i − window < j ≤ i (window 0:
// every key ≤ i), masked keys exactly 0.
model::AttentionStack random_stack(int L, int H, int T, int window, uint64_t seed) {
  Rng rng(seed);
  model::AttentionStack s;
  s.layers = L, s.heads = s.kv_heads = H, s.tokens = T, s.causal = true;
  s.attentions.assign(size_t(L) * H * T * T, 0.0f);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i) {
        float* row = s.attentions.data() + ((size_t(l) * H + h) * T + i) * T;
        const int first = window > 0 ? std::max(0, i - window + 1) : 0;
        double sum = 0;
        for (int j = first; j <= i; ++j) sum += row[j] = std::exp(2.0f * (rng.uniform01() * 2 - 1) * 1.7f);
        for (int j = first; j <= i; ++j) row[j] = float(row[j] / sum);
      }
  return s;
}

// Which input tokens j have a path of positive capacities to position i after layer l: [L][T][T] flags.
std::vector<std::vector<std::vector<char>>> paths(const Rollout& r) {
  const int L = r.layers, T = r.tokens;
  std::vector<std::vector<std::vector<char>>> reach(size_t(L), std::vector<std::vector<char>>(size_t(T), std::vector<char>(size_t(T), 0)));
  for (int l = 0; l < L; ++l)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        if (l == 0) {
          reach[0][size_t(i)][size_t(j)] = r.capacity(0)(i, j) > 0;
          continue;
        }
        for (int m = 0; m < T && !reach[size_t(l)][size_t(i)][size_t(j)]; ++m)
          reach[size_t(l)][size_t(i)][size_t(j)] = r.capacity(l)(i, m) > 0 && reach[size_t(l - 1)][size_t(m)][size_t(j)];
      }
  return reach;
}

// The smallest capacity of the cuts checked between input token j and position i after layer l:
//   source side  S = the nodes at levels ≤ k reachable from j: every edge leaving S goes from level k to k + 1
//                (a reachable node's successors are reachable), capacity Σ_{t ∈ R_k} Σ_f Â_k[f, t]  (k = 0 … l;
//                k = 0 is the capacity out of the source);
//   sink side    the nodes at levels ≥ k + 1 that reach i: every edge entering it comes from level k, capacity
//                Σ_{f ∈ Q_{k+1}} Σ_t Â_k[f, t]  (k = l is the capacity into the sink).
double flow_cuts(const Rollout& r, int layer, int position, int source) {
  const int T = r.tokens;
  double least = 1e300;
  std::vector<char> reached(size_t(T), 0);
  reached[size_t(source)] = 1;
  for (int k = 0; k <= layer; ++k) {
    double cut = 0;
    std::vector<char> next(size_t(T), 0);
    for (int t = 0; t < T; ++t) {
      if (!reached[size_t(t)]) continue;
      for (int f = 0; f < T; ++f) {
        cut += r.capacity(k)(f, t);
        if (r.capacity(k)(f, t) > 0) next[size_t(f)] = 1;
      }
    }
    least = std::min(least, cut);
    reached = next;
  }
  std::vector<char> reaching(size_t(T), 0);
  reaching[size_t(position)] = 1;
  for (int k = layer; k >= 0; --k) {
    double cut = 0;
    std::vector<char> below(size_t(T), 0);
    for (int f = 0; f < T; ++f) {
      if (!reaching[size_t(f)]) continue;
      for (int t = 0; t < T; ++t) {
        cut += r.capacity(k)(f, t);
        if (r.capacity(k)(f, t) > 0) below[size_t(t)] = 1;
      }
    }
    least = std::min(least, cut);
    reaching = below;
  }
  return least;
}

model::AttentionStack stack_of(const model::ForwardResult& f) {
  model::AttentionStack s;
  s.layers = f.layers, s.heads = f.heads, s.kv_heads = f.kv_heads, s.tokens = f.tokens, s.causal = true;
  s.attentions = f.attentions;
  bool linear = false;
  for (const model::LayerMaps& m : f.layer_maps) linear = linear || m.signed_weights;
  if (linear) {
    for (const model::LayerMaps& m : f.layer_maps) s.layer_kind.push_back(m.signed_weights ? m.kind : "");
    s.linear_maps = f.linear_maps;
  }
  return s;
}

}  // namespace

TEST_CASE("rollout: capacities and rollout equal the paper's code (numpy) on the fixtures") {
  for (const FixtureCase& f : fixture_cases()) {
    CAPTURE(f.name);
    const Rollout r = attention_rollout(f.stack);
    REQUIRE(r.layers == f.stack.layers);
    REQUIRE(r.tokens == f.stack.tokens);
    const Diff dc = max_diff(r.capacities, f.capacities);
    CAPTURE(dc.at);
    CHECK(dc.diff <= 1e-6);
    const Diff dr = max_diff(r.joint, f.rollout);
    CAPTURE(dr.at);
    CHECK(dr.diff <= 1e-6);
    for (int l = 0; l < r.layers; ++l) CHECK(r.absolute_layers[size_t(l)] == f.stack.linear_layer(l));
  }
}

TEST_CASE("rollout: equals the product of 0.5·Ā + 0.5·I, renormalised, computed with plain loops the other way round") {
  for (const auto& sizes : {std::pair{9, 0}, std::pair{13, 4}}) {
    const int T = sizes.first, window = sizes.second;  // not a structured binding: clang cannot capture one
    CAPTURE(T);
    const int L = 4, H = 3;
    model::AttentionStack s = random_stack(L, H, T, window, 17 + uint64_t(T));
    // Sinks take a share of layer 2's rows (gpt-oss): renormalising must hand it to the residual.
    for (size_t k = size_t(2) * H * T * T; k < size_t(3) * H * T * T; ++k) s.attentions[k] *= 0.75f;
    const Rollout r = attention_rollout(s);
    // Â_k with loops: 0.5·mean + 0.5·δ, each row over its sum.
    std::vector<MatD> a(size_t(L), MatD::Zero(T, T));
    for (int k = 0; k < L; ++k) {
      for (int i = 0; i < T; ++i) {
        double sum = 0;
        for (int j = 0; j < T; ++j) {
          double mean = 0;
          for (int h = 0; h < H; ++h) mean += s.attentions[((size_t(k) * H + h) * T + i) * T + j];
          a[size_t(k)](i, j) = 0.5 * mean / H + (i == j ? 0.5 : 0.0);
          sum += a[size_t(k)](i, j);
        }
        for (int j = 0; j < T; ++j) a[size_t(k)](i, j) /= sum;
      }
    }
    // Ã_l = Â_l ··· Â_0, multiplied from the right end: ((Â_l · Â_{l−1}) · Â_{l−2}) ···
    for (int l = 0; l < L; ++l) {
      MatD product = a[size_t(l)];
      for (int k = l - 1; k >= 0; --k) {
        MatD next = MatD::Zero(T, T);
        for (int i = 0; i < T; ++i)
          for (int m = 0; m < T; ++m)
            for (int j = 0; j < T; ++j) next(i, j) += product(i, m) * a[size_t(k)](m, j);
        product = next;
      }
      double worst = 0, worst_capacity = 0;
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
          worst = std::max(worst, std::abs(product(i, j) - r.rollout(l)(i, j)));
          worst_capacity = std::max(worst_capacity, std::abs(a[size_t(l)](i, j) - r.capacity(l)(i, j)));
        }
      CAPTURE(l);
      CHECK(worst <= 1e-6);
      CHECK(worst_capacity <= 1e-6);
      for (int i = 0; i < T; ++i) CHECK(r.rollout(l).row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
    }
  }
}

TEST_CASE("rollout: a model whose every head attends to itself has the identity as rollout, and flow stays on each token") {
  const int L = 5, H = 2, T = 7;
  model::AttentionStack s;
  s.layers = L, s.heads = s.kv_heads = H, s.tokens = T, s.causal = true;
  s.attentions.assign(size_t(L) * H * T * T, 0.0f);
  for (int lh = 0; lh < L * H; ++lh)
    for (int i = 0; i < T; ++i) s.attentions[(size_t(lh) * T + i) * T + i] = 1.0f;
  const Rollout r = attention_rollout(s);
  for (int l = 0; l < L; ++l) {
    CHECK(r.capacity(l) == Mat::Identity(T, T));
    CHECK(r.rollout(l) == Mat::Identity(T, T));
  }
  const AttentionFlow f = attention_flow(r);
  REQUIRE(f.layers.size() == size_t(L));
  REQUIRE(f.positions.size() == size_t(T));
  for (int a = 0; a < L; ++a)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        CHECK(f.flows(a, i)(j) == doctest::Approx(i == j ? 1.0 : 0.0));
        CHECK(f.shares(a, i)(j) == doctest::Approx(i == j ? 1.0 : 0.0));
      }
}

TEST_CASE("rollout: masked keys (causal, windows) stay exactly 0 in the rollout and the flow") {
  for (int window : {0, 3}) {
    CAPTURE(window);
    const int L = 4, T = 11;
    const Rollout r = attention_rollout(random_stack(L, 2, T, window, 5 + uint64_t(window)));
    const auto reach = paths(r);
    const AttentionFlow f = attention_flow(r);
    int zeros = 0;
    for (int l = 0; l < L; ++l)
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
          const bool path = reach[size_t(l)][size_t(i)][size_t(j)];
          // No path: the causal triangle, and (window 3) j ≤ i − (l + 1)·2 − 1: each layer reaches 2 further back.
          CHECK(path == (j <= i && (window == 0 || i - j <= (l + 1) * (window - 1))));
          if (!path) {
            ++zeros;
            CHECK(r.rollout(l)(i, j) == 0.0f);
            CHECK(f.flows(l, i)(j) == 0.0f);
          } else {
            CHECK(r.rollout(l)(i, j) > 0.0f);
            CHECK(f.flows(l, i)(j) > 0.0f);
          }
        }
    CHECK(zeros > 0);
  }
  // The fixtures' windowed, local/global and linear cases: the same rule on stacks made elsewhere.
  for (const FixtureCase& fc : fixture_cases()) {
    CAPTURE(fc.name);
    const Rollout r = attention_rollout(fc.stack);
    const auto reach = paths(r);
    for (int l = 0; l < r.layers; ++l)
      for (int i = 0; i < r.tokens; ++i)
        for (int j = 0; j < r.tokens; ++j)
          if (!reach[size_t(l)][size_t(i)][size_t(j)]) CHECK(r.rollout(l)(i, j) == 0.0f);
  }
}

TEST_CASE("flow: equals networkx's maximum_flow_value on the fixtures' graphs, every layer and position") {
  for (const FixtureCase& fc : fixture_cases()) {
    CAPTURE(fc.name);
    const Rollout r = attention_rollout(fc.stack);
    const AttentionFlow f = attention_flow(r);
    const int L = r.layers, T = r.tokens;
    REQUIRE(f.flow.size() == size_t(L) * T * T);
    const Diff d = max_diff(f.flow, fc.flows);
    CAPTURE(d.at);
    CHECK(d.diff <= 1e-6);
    int positive = 0;
    for (float v : fc.flows) positive += v > 0;
    CHECK(positive > L * T);  // the references are not mostly zeros
    // One layer and one position alone give the same values as "every".
    const int l = L - 1, i = T - 2;
    FlowOptions one;
    one.layer = l;
    one.position = i;
    const AttentionFlow single = attention_flow(r, one);
    REQUIRE(single.layers == std::vector<int>{l});
    REQUIRE(single.positions == std::vector<int>{i});
    for (int j = 0; j < T; ++j) CHECK(single.flows(0, 0)(j) == doctest::Approx(f.flows(l, i)(j)).epsilon(1e-6));
    double shares = 0;
    for (int j = 0; j < T; ++j) shares += single.shares(0, 0)(j);
    CHECK(shares == doctest::Approx(1.0).epsilon(1e-5));
  }
}

TEST_CASE("flow: never exceeds a cut's capacity; a chain's flow is its narrowest edge") {
  const int L = 5, T = 14;
  const Rollout r = attention_rollout(random_stack(L, 3, T, 5, 99));
  const AttentionFlow f = attention_flow(r);
  int tight = 0;
  for (int l = 0; l < L; ++l)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        const double flow = f.flows(l, i)(j), cut = flow_cuts(r, l, i, j);
        CHECK(flow >= 0.0);
        CHECK(flow <= cut + 1e-6);
        CHECK(flow <= 1.0 + 1e-6);  // the capacity into the sink: Â_l's row i sums to 1
        tight += std::abs(flow - cut) <= 1e-6;
      }
  CHECK(tight > 0);  // some of these cuts are minimal (flow = cut), so the bound is not vacuous
  // One layer, two tokens: Â_0 = [[1, 0], [c, 1 − c]] with c = 0.5·a/(0.5·a + 0.5·(1 − a) + 0.5) for
  // P = [[1, 0], [a, 1 − a]]; the only path from token 0 to position 1 is that edge.
  model::AttentionStack s;
  s.layers = 1, s.heads = s.kv_heads = 1, s.tokens = 2, s.causal = true;
  s.attentions = {1.0f, 0.0f, 0.3f, 0.7f};
  const AttentionFlow chain = attention_flow(attention_rollout(s));
  CHECK(chain.flows(0, 1)(0) == doctest::Approx(0.15));
  CHECK(chain.flows(0, 1)(1) == doctest::Approx(0.85));
  CHECK(chain.flows(0, 0)(1) == 0.0f);
}

TEST_CASE("rollout and flow: real checkpoints' attentions (windows, Gated DeltaNet, Mamba-2, sinks) give rows that sum to 1") {
  for (const char* name : {"gemma3_local_global_bf16", "qwen3_next_f32", "granite_hybrid_f32", "gpt_oss_dequantized_bf16",
                           "mistral_mha_f32"}) {
    CAPTURE(name);
    const auto m = model::open(test::model_fixture(name));
    const model::ForwardResult forward = model::forward(*m, test::fixture_ids(name));
    const model::AttentionStack s = stack_of(forward);
    const Rollout r = attention_rollout(s);
    const int L = r.layers, T = r.tokens;
    REQUIRE(L == m->config.layers);
    REQUIRE(T >= 4);
    bool any_linear = false, any_window = false;
    for (int l = 0; l < L; ++l) {
      CAPTURE(l);
      CHECK(r.absolute_layers[size_t(l)] == s.linear_layer(l));
      any_linear = any_linear || s.linear_layer(l);
      const int window = m->config.layer_window.empty() ? 0 : m->config.layer_window[size_t(l)];
      any_window = any_window || (window > 0 && window < T);
      for (int i = 0; i < T; ++i) {
        CHECK(r.capacity(l).row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
        CHECK(r.rollout(l).row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
        for (int j = i + 1; j < T; ++j) CHECK(r.rollout(l)(i, j) == 0.0f);  // causal
        // A windowed softmax layer's own capacities: keys outside i − W < j ≤ i exactly 0.
        if (window > 0 && !s.linear_layer(l))
          for (int j = 0; j <= i - window; ++j) CHECK(r.capacity(l)(i, j) == 0.0f);
      }
    }
    const std::string n = name;
    CHECK(any_linear == (n == "qwen3_next_f32" || n == "granite_hybrid_f32"));
    if (n == "gemma3_local_global_bf16") CHECK(any_window);  // its window (4) is shorter than its input
    FlowOptions last;
    last.layer = L - 1;
    last.position = T - 1;
    const AttentionFlow f = attention_flow(r, last);
    double shares = 0;
    for (int j = 0; j < T; ++j) {
      CHECK(f.flows(0, 0)(j) >= 0.0f);
      CHECK(f.flows(0, 0)(j) <= flow_cuts(r, L - 1, T - 1, j) + 1e-6);
      shares += f.shares(0, 0)(j);
    }
    CHECK(shares == doctest::Approx(1.0).epsilon(1e-5));
  }
}

TEST_CASE("flow: progress rises to 1, a set cancel flag stops it, and bad layers, positions and stacks are refused") {
  const Rollout r = attention_rollout(random_stack(3, 2, 20, 0, 3));
  std::vector<double> seen;
  FlowOptions o;
  o.progress = [&](double x) { seen.push_back(x); };
  attention_flow(r, o);
  REQUIRE(seen.size() >= 2);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  CHECK(seen.back() == 1.0);
  std::atomic<bool> cancel{true};
  o.cancel = &cancel;
  CHECK_THROWS_AS(attention_flow(r, o), Cancelled);
  RolloutOptions ro;
  ro.cancel = &cancel;
  CHECK_THROWS_AS(attention_rollout(random_stack(2, 1, 4, 0, 1), ro), Cancelled);

  FlowOptions bad;
  bad.layer = 3;
  CHECK_THROWS_WITH_AS(attention_flow(r, bad), doctest::Contains("layer 3 does not exist: this model has 3 layers"), InputError);
  bad.layer = 0;
  bad.position = 20;
  CHECK_THROWS_WITH_AS(attention_flow(r, bad), doctest::Contains("position 20 does not exist: the input has 20 tokens"),
                       InputError);
  model::AttentionStack short_stack = random_stack(2, 2, 5, 0, 1);
  short_stack.attentions.pop_back();
  CHECK_THROWS_WITH_AS(attention_rollout(short_stack), doctest::Contains("not L·H·T·T"), InputError);
  CHECK_THROWS_AS(attention_rollout(model::AttentionStack{}), InputError);
}
