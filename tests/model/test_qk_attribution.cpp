// Tests of model/qk_attribution.h: on every checkpoint fixture the query-part × key-part table sums to the score
// the forward pass computed (its own q and k, before Gemma 2's soft-cap); a head's part is what switching that
// head off removes from the stream, and a part's row and column of the table are that part through the
// layer's chain written out here (frozen norm, projection, RoPE) dotted with the forward's own k_j (q_i);
// bad cells and linear layers are refused with the valid range or the layer's kind.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "attnscope/core/error.h"
#include "attnscope/model/qk_attribution.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::fixture_ids;
using attnscope::test::model_fixture;

namespace {

// Every checkpoint folder of tests/fixtures/models (precomputed/ is not a checkpoint).
std::vector<std::string> every_checkpoint() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(model_fixture("")))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "config.json") &&
        std::filesystem::exists(entry.path() / "ids.json"))
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The first key query i sees in `layer` (its sliding window's start, else 0).
int first_key(const ModelConfig& c, int layer, int i) {
  const int w = c.layer_window[size_t(layer)];
  return w > 0 ? std::max(0, i - w + 1) : 0;
}

}  // namespace

TEST_CASE("QK attribution: the parts sum to the forward's score on every checkpoint fixture and softmax layer") {
  int fixtures = 0, cells = 0, capped = 0, mla = 0, refused_layers = 0;
  for (const std::string& name : every_checkpoint()) {
    INFO(name);
    const auto model = model::open(model_fixture(name));
    const ModelConfig& c = model->config;
    const auto ids = fixture_ids(name);
    const int T = int(ids.size());
    ++fixtures;
    for (int l = 0; l < c.layers; ++l) {
      INFO("layer " << l);
      const ForwardResult r = forward(*model, ids, qk_forward_options(l));
      if (c.is_linear_layer(l)) {
        const std::string e = error_of([&] { (void)qk_attribution(*model, r, {l, 0, T - 1, T - 1}); });
        CHECK(contains(e, "layer " + std::to_string(l) + " is a " + r.layer_maps[size_t(l)].kind + " layer"));
        CHECK(contains(e, "no softmax scores"));
        ++refused_layers;
        continue;
      }
      const LayerDetail& d = *r.detail;
      for (const int h : {0, c.heads - 1})
        for (const std::pair<int, int> cell : std::vector<std::pair<int, int>>{{T - 1, T - 1}, {T - 1, first_key(c, l, T - 1)},
                                                                               {T / 2, first_key(c, l, T / 2)}, {T / 2, T / 2 - 1}}) {
          const int i = cell.first, j = cell.second;  // plain names: INFO cannot take a structured binding (clang)
          INFO("head " << h << " query " << i << " key " << j);
          const QkAttribution a = qk_attribution(*model, r, {l, h, i, j});
          REQUIRE(a.table.rows() == int64_t(a.query_parts.size()));
          REQUIRE(a.table.cols() == int64_t(a.key_parts.size()));
          // the drawn score is the forward's (LayerDetail: after the soft-cap where the model has one)
          CHECK(std::abs(a.drawn - d.scores[size_t(h)](i, j)) <= 1e-5 * std::max(1.0, std::abs(double(a.drawn))));
          CHECK(a.before_softcap == (c.attn_softcap > 0));
          // the table sums to the score before the cap, ≤ 1e-4 relative (a score near 0: relative to a tenth of the
          // table's largest entry, the float rounding of its terms)
          double size = 0;
          for (int64_t p = 0; p < a.table.rows(); ++p)
            for (int64_t q = 0; q < a.table.cols(); ++q) size = std::max(size, std::abs(double(a.table(p, q))));
          INFO("sum " << a.sum() << " score " << a.score << " largest entry " << size);
          CHECK(std::abs(a.sum() - a.score) <= 1e-4 * std::max(std::abs(double(a.score)), 0.1 * size));
          // the marginals are the table's rows and columns
          double qm = 0, km = 0;
          for (double v : a.query_marginal()) qm += v;
          for (double v : a.key_marginal()) km += v;
          CHECK(std::abs(qm - a.sum()) <= 1e-9 + 1e-9 * std::abs(a.sum()));
          CHECK(std::abs(km - a.sum()) <= 1e-9 + 1e-9 * std::abs(a.sum()));
          // one part per earlier softmax head, one per earlier mixer, one MLP per earlier layer
          int heads = 0, mixers = 0, mlps = 0;
          for (const QkPart& p : a.query_parts)
            heads += p.kind == QkPartKind::head, mixers += p.kind == QkPartKind::mixer, mlps += p.kind == QkPartKind::mlp;
          int linear = 0;
          for (int e = 0; e < l; ++e) linear += c.is_linear_layer(e);
          CHECK(heads == (l - linear) * c.heads);
          CHECK(mixers == linear);
          CHECK(mlps == l);
          CHECK(a.query_parts.front().kind == QkPartKind::embedding);
          ++cells;
          capped += a.before_softcap;
          mla += c.is_mla();
        }
    }
  }
  CHECK(fixtures >= 40);
  CHECK(capped > 0);         // Gemma 2
  CHECK(mla > 0);            // DeepSeek
  CHECK(refused_layers > 0);  // Qwen3-Next, Granite 4.0-H, the trained linear model
  MESSAGE(cells << " cells of " << fixtures << " fixtures");
}

TEST_CASE("QK attribution: a part's row and column are that part through the layer's frozen chain") {
  // For the last layer ℓ: the last head of layer ℓ − 1 is what switching it off removes from the stream (two
  // forward passes), and the embedding is the token's embedding row. Each through the chain written out here
  // — x the stream after layer ℓ − 1 (the trace's residual), LayerNorm (v − mean v)·w/σ or RMSNorm v·w/rms,
  // W_Q,h (W_K,g) of the head, RoPE at the position — dotted with the forward's own k_j (q_i) × scale, is the
  // part's row (column) sum of the table.
  for (const std::string& name : std::vector<std::string>{"gpt2_prefix_f32", "qwen2_gqa", "mistral_mha_f32", "llama_gqa_bf16_sharded"}) {
    INFO(name);
    const auto model = model::open(model_fixture(name));
    const ModelConfig& c = model->config;
    const ModelWeights& w = *model->weights;
    const auto ids = fixture_ids(name);
    const int T = int(ids.size()), l = c.layers - 1, C = c.d_model, D = c.head_dim;
    ForwardOptions options = qk_forward_options(l);
    options.taps.residual = true;
    const ForwardResult r = forward(*model, ids, options);
    const LayerDetail& d = *r.detail;
    const int h = c.heads - 1, g = h / (c.heads / c.kv_heads), i = T - 1, j = 2;
    const QkAttribution a = qk_attribution(*model, r, {l, h, i, j});
    HeadAblation off{AblationMode::zero, {{l - 1, h}}};
    ForwardOptions ablated_options = options;
    ablated_options.ablation = &off;
    const ForwardResult ablated = forward(*model, ids, ablated_options);
    const Mat removed = r.trace.block[size_t(l - 1)] - ablated.trace.block[size_t(l - 1)];
    int head_part = -1;
    for (size_t p = 0; p < a.query_parts.size(); ++p)
      if (a.query_parts[p].kind == QkPartKind::head && a.query_parts[p].layer == l - 1 && a.query_parts[p].head == h)
        head_part = int(p);
    REQUIRE(head_part >= 0);
    CHECK(qk_part_label(a.query_parts[size_t(head_part)], true) == "L" + std::to_string(l - 1) + ".H" + std::to_string(h) + " attn");
    const auto through = [&](Eigen::VectorXd v, int t, bool query) {  // the chain at position t
      const Eigen::VectorXd x = r.trace.residual[size_t(l - 1)].row(t).transpose().cast<double>();
      const bool ln = c.norm == NormKind::layernorm;
      const double mean = ln ? x.mean() : 0.0;
      const double sigma = std::sqrt((x.array() - mean).square().mean() + c.norm_eps);
      if (ln) v.array() -= v.mean();
      for (int e = 0; e < C; ++e) v[e] *= double(w.layers[size_t(l)].norm1_weight[e]) / sigma;
      const PackedMatrix& W = query ? w.layers[size_t(l)].wq : w.layers[size_t(l)].kv.wk;
      const int row0 = (query ? h : g) * D;
      Eigen::VectorXd y(D);
      for (int e = 0; e < D; ++e) {
        double s = 0;
        for (int k = 0; k < C; ++k) s += double(W(row0 + e, k)) * v[k];
        y[e] = s;
      }
      if (c.positions == PositionKind::rotary) {
        const RopeFrequencies f = c.layer_rope(l, T);
        const int half = int(f.inv_freq.size());
        const Eigen::VectorXd u = y;
        for (int k = 0; k < half; ++k) {
          const double angle = double(float(t) * f.inv_freq[size_t(k)]);
          y[k] = (u[k] * std::cos(angle) - u[k + half] * std::sin(angle)) * f.attention_factor;
          y[k + half] = (u[k + half] * std::cos(angle) + u[k] * std::sin(angle)) * f.attention_factor;
        }
      }
      return y;
    };
    const Eigen::VectorXd qi = d.q[size_t(h)].row(i).transpose().cast<double>();
    const Eigen::VectorXd kj = d.k[size_t(g)].row(j).transpose().cast<double>();
    const std::vector<double> rows = a.query_marginal(), cols = a.key_marginal();
    const auto check_part = [&](int p, const Eigen::VectorXd& at_i, const Eigen::VectorXd& at_j) {
      const double row = through(at_i, i, true).dot(kj) * c.attn_scale;
      const double col = qi.dot(through(at_j, j, false)) * c.attn_scale;
      INFO("part " << qk_part_label(a.query_parts[size_t(p)], true) << ": row " << rows[size_t(p)] << " vs " << row
                   << ", column " << cols[size_t(p)] << " vs " << col);
      CHECK(std::abs(rows[size_t(p)] - row) <= 1e-4 * std::max(1e-2, std::abs(row)));
      CHECK(std::abs(cols[size_t(p)] - col) <= 1e-4 * std::max(1e-2, std::abs(col)));
    };
    check_part(head_part, removed.row(i).transpose().cast<double>(), removed.row(j).transpose().cast<double>());
    std::vector<float> e(static_cast<size_t>(C));
    const auto embedding_row = [&](int t) {
      w.token_embedding.row(ids[size_t(t)], e.data());
      return Eigen::Map<const Eigen::VectorXf>(e.data(), C).cast<double>().eval();
    };
    CHECK(qk_part_label(a.query_parts[0], true) == "embedding");
    check_part(0, embedding_row(i), embedding_row(j));
    // the residual-space rows are the parts themselves
    CHECK((a.query_vectors.row(head_part) - removed.row(i)).cwiseAbs().maxCoeff() <= 1e-5);
    CHECK((a.key_vectors.row(0).transpose().cast<double>() - embedding_row(j)).cwiseAbs().maxCoeff() <= 1e-6);
  }
}

TEST_CASE("QK attribution: bias parts are named; the largest entries come first") {
  const auto model = model::open(model_fixture("gpt2_prefix_f32"));
  const auto ids = fixture_ids("gpt2_prefix_f32");
  const int T = int(ids.size());
  const ForwardResult r = forward(*model, ids, qk_forward_options(1));
  const QkAttribution a = qk_attribution(*model, r, {1, 0, T - 1, 3});
  std::vector<std::string> q, k;
  for (const QkPart& p : a.query_parts) q.push_back(qk_part_label(p, true));
  for (const QkPart& p : a.key_parts) k.push_back(qk_part_label(p, false));
  // GPT-2: embedding, positions, layer 0's heads, its W_O bias and MLP; layer 1's LayerNorm β and q/k bias
  REQUIRE(q.size() == size_t(2 + model->config.heads + 2 + 2));
  CHECK(q[0] == "embedding");
  CHECK(q[1] == "positions");
  CHECK(q[2] == "L0.H0 attn");
  CHECK(q[q.size() - 4] == "L0 attn bias");
  CHECK(q[q.size() - 3] == "L0 MLP");
  CHECK(q[q.size() - 2] == "norm bias");
  CHECK(q.back() == "q bias");
  CHECK(k.back() == "k bias");
  const std::vector<QkEntry> top = largest_entries(a, 5);
  REQUIRE(top.size() == 5);
  for (size_t n = 1; n < top.size(); ++n) CHECK(std::abs(top[n - 1].value) >= std::abs(top[n].value));
  double largest = 0;
  for (int64_t p = 0; p < a.table.rows(); ++p)
    for (int64_t s = 0; s < a.table.cols(); ++s) largest = std::max(largest, std::abs(double(a.table(p, s))));
  CHECK(std::abs(top[0].value) == largest);
  CHECK(top[0].value == double(a.table(top[0].query_part, top[0].key_part)));
}

TEST_CASE("QK attribution: bad cells are refused with the valid range") {
  const auto model = model::open(model_fixture("gemma2_softcap_f32"));
  const ModelConfig& c = model->config;
  const auto ids = fixture_ids("gemma2_softcap_f32");
  const int T = int(ids.size());
  const ForwardResult r = forward(*model, ids, qk_forward_options(0));
  const auto refusal = [&](QkCell cell) { return error_of([&] { check_qk_cell(c, r.layer_maps, T, cell); }); };
  CHECK(contains(refusal({c.layers, 0, 0, 0}), "layer " + std::to_string(c.layers) + " is outside the model: its layers are 0 to " +
                                                   std::to_string(c.layers - 1)));
  CHECK(contains(refusal({0, -1, 0, 0}), "its heads are 0 to " + std::to_string(c.heads - 1)));
  CHECK(contains(refusal({0, 0, T, 0}), "query " + std::to_string(T) + " is outside the input: its positions are 0 to " +
                                            std::to_string(T - 1)));
  CHECK(contains(refusal({0, 0, 2, 3}), "key 3 is not seen by query 2 in layer 0: it sees keys 0 to 2"));
  // a sliding-window layer: the keys before the window are refused with the window named
  int sliding = -1;
  for (int l = 0; l < c.layers; ++l)
    if (c.layer_window[size_t(l)] > 0 && c.layer_window[size_t(l)] < T) sliding = l;
  REQUIRE(sliding >= 0);
  const int window = c.layer_window[size_t(sliding)];
  CHECK(contains(refusal({sliding, 0, T - 1, 0}), "it sees keys " + std::to_string(T - window) + " to " + std::to_string(T - 1) +
                                                       " (a sliding window of " + std::to_string(window) + ")"));
  CHECK(refusal({sliding, 0, T - 1, T - window}).empty());
  // the attribution needs the parts and the layer's detail
  const ForwardResult plain = forward(*model, ids);
  CHECK(contains(error_of([&] { (void)qk_attribution(*model, plain, {0, 0, 1, 0}); }), "qk_forward_options"));
  CHECK(contains(error_of([&] { (void)qk_attribution(*model, r, {1, 0, 1, 0}); }), "layer 1's detail"));
}

