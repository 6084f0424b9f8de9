// Tests of the lazy packing of the matrices read in place (packed_matrix.h "Packed lazily", model.h
// WeightPacking): the packed copy gives the in-place product's result bitwise, each matrix is packed once
// (also when two forwards start at once), by its second product, only when used, so that a one-shot
// forward (`attnscope compute`) packs nothing, and open()'s memory check counts the copies. Speed is
// bench/'s (compare_model_torch.py), not a test's.
//
// Agreement with and without packing: the packed copy holds W's values exactly (BF16 and F16 widened to
// float32 exactly), and the in-place product widens each panel into the packed copy's order and runs the
// same panel kernel: every product, hence every forward, is bitwise the same in place and packed (the
// window packs, the command line does not; tests/gui test_pipeline_worker compares them exactly). The
// packed forward meets the PyTorch contract (attentions 1e-5, logits 1e-4).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "attnscope/core/rng.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/packed_matrix.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::random_mat;

namespace {

// A float's BF16 (its top 16 bits) and F16 (Eigen's rounding) patterns: any values serve here.
uint16_t bf16_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return uint16_t(bits >> 16);
}
uint16_t f16_bits(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::half(f)); }

Mat product(const PackedMatrix& w, const Mat& x) {
  Mat out(x.rows(), w.rows());
  linear_forward_packed(out.data(), x.data(), w, nullptr, int(x.rows()));
  return out;
}

// max |a − b| / max(1, max |b|) over the flat arrays.
double relative_gap(const float* a, const float* b, size_t n) {
  double worst = 0, scale = 1;
  for (size_t i = 0; i < n; ++i) {
    scale = std::max(scale, std::abs(double(b[i])));
    worst = std::max(worst, std::isfinite(a[i]) ? std::abs(double(a[i]) - double(b[i])) : INFINITY);
  }
  return worst / scale;
}

double absolute_gap(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < b.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

// Every family: the dense fixtures, MoE, MLA, the hybrids, gpt-oss's dequantised experts.
std::vector<std::string> all_families() {
  std::vector<std::string> names = test::checkpoint_fixtures();
  for (const char* n : {"qwen3_moe_30b_a3b_bf16", "qwen3_moe_sparse_step_f32", "olmoe_1b_7b_bf16", "granitemoe_31_1b_bf16",
                        "deepseek_v2_mla_moe_bf16", "deepseek_v3_mla_noaux_f32_sharded", "deepseek_v2_grouped_f16",
                        "qwen3_next_f32", "qwen3_next_bf16_sharded", "granite_hybrid_f32", "granite_dense_f16",
                        "gpt_oss_dequantized_bf16"})
    names.push_back(n);
  return names;
}

}  // namespace

TEST_CASE("weight packing: the lazy copy is W exactly, and in place or packed the product is bitwise the same") {
  const Mat x = random_mat(40, 70, 1);
  const Mat wt = random_mat(70, 100, 2);  // Wᵀ [in, out]: 100 outputs, a partial last panel
  {
    auto state = std::make_shared<PackingState>();
    PackedMatrix w = PackedMatrix::in_place_transposed(wt.data(), 100, 70, 100, nullptr);
    w.pack_lazily(state);
    const Mat in_place = product(w, x);  // the first product reads in place
    CHECK(!w.packed_copy_made());
    const Mat packed = product(w, x);  // the second packs, then reads the copy
    CHECK(w.packed_copy_made());
    CHECK(state->matrices == 1);
    CHECK(state->bytes == w.packed_bytes());
    CHECK(packed == in_place);  // the same panel kernel over the same values: bitwise
    CHECK(packed == product(PackedMatrix::from(w.to_mat()), x));
  }
  // W in place [out, in]: out = 37 and 70 (partial last panels), in = 70 and 16 (a partial and a whole block
  // of 16 values of k), ld > in.
  for (const WeightStorage storage : {WeightStorage::f32, WeightStorage::bf16, WeightStorage::f16})
    for (const std::pair<int, int> shape : {std::pair{37, 70}, std::pair{70, 16}, std::pair{64, 33}}) {
      const int out = shape.first, in = shape.second;  // plain names: CAPTURE cannot take a structured binding (clang)
      CAPTURE(int(storage));
      CAPTURE(out);
      CAPTURE(in);
      const int ld = in + 5;
      const Mat xs = random_mat(13, in, 6);
      const Mat source = random_mat(out, ld, 3);
      std::vector<float> f32(size_t(out) * ld);
      std::vector<uint16_t> half(f32.size());
      for (int r = 0; r < out; ++r)
        for (int c = 0; c < ld; ++c) {
          const size_t i = size_t(r) * ld + size_t(c);
          f32[i] = source(r, c);
          half[i] = storage == WeightStorage::bf16 ? bf16_bits(f32[i]) : f16_bits(f32[i]);
        }
      const void* data = storage == WeightStorage::f32 ? static_cast<const void*>(f32.data()) : half.data();
      auto state = std::make_shared<PackingState>();
      PackedMatrix w = PackedMatrix::in_place_rows(data, storage, out, in, ld, nullptr);
      w.pack_lazily(state);
      const Mat in_place = product(w, xs);
      CHECK(state->matrices == 0);
      const Mat packed = product(w, xs), again = product(w, xs);
      CHECK(state->matrices == 1);
      CHECK(packed == again);
      CHECK(packed == in_place);  // bitwise: the in-place product sums in the packed order
      // The copy holds exactly W's widened values: the product equals a matrix packed from them, bitwise.
      CHECK(packed == product(PackedMatrix::from(w.to_mat()), xs));
      // and both are the product (the oracle sums in double)
      Mat oracle(xs.rows(), out);
      linear_forward_packed_reference(oracle.data(), xs.data(), w, nullptr, int(xs.rows()));
      CHECK(relative_gap(in_place.data(), oracle.data(), size_t(oracle.size())) <= 1e-5);
      CHECK(PackedMatrix(w).packed_copy_made());  // a copy shares the packed copy
    }
}

TEST_CASE("weight packing: a matrix is packed once, by its second product, also when many threads start at once") {
  const Mat x = random_mat(9, 64, 4), w_values = random_mat(96, 64, 5);
  {
    auto state = std::make_shared<PackingState>();
    PackedMatrix w = PackedMatrix::in_place_rows(w_values.data(), WeightStorage::f32, 96, 64, 64, nullptr);
    w.pack_lazily(state);
    CHECK(state->matrices == 0);
    state->enabled = false;  // products with packing off do not count
    (void)product(w, x);
    (void)product(w, x);
    state->enabled = true;
    (void)product(w, x);
    CHECK(state->matrices == 0);  // the first use: read in place
    CHECK(!w.packed_copy_made());
    (void)product(w, x);
    CHECK(state->matrices == 1);
    for (int i = 0; i < 5; ++i) (void)product(w, x);
    CHECK(state->matrices == 1);
    CHECK(state->bytes == 96 * 64 * 4);
    state->enabled = false;  // turned off: read in place again, the copy kept
    CHECK(w.panels_for_product() == nullptr);
    CHECK(w.packed_copy_made());
  }
  for (int round = 0; round < 20; ++round) {
    auto state = std::make_shared<PackingState>();
    PackedMatrix w = PackedMatrix::in_place_rows(w_values.data(), WeightStorage::f32, 96, 64, 64, nullptr);
    w.pack_lazily(state);
    const Mat expected = product(PackedMatrix::from(w_values), x);
    std::vector<Mat> results(8);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < results.size(); ++t) threads.emplace_back([&, t] { results[t] = product(w, x); });
    for (std::thread& t : threads) t.join();
    CHECK(state->matrices == 1);
    for (const Mat& r : results) CHECK(r == expected);
  }
  {  // a packed matrix has no lazy copy to make; a null state stops the packing
    PackedMatrix p = PackedMatrix::from(w_values);
    p.pack_lazily(std::make_shared<PackingState>());
    CHECK(!p.packs_lazily());
    PackedMatrix w = PackedMatrix::in_place_rows(w_values.data(), WeightStorage::f32, 96, 64, 64, nullptr);
    w.pack_lazily(nullptr);
    for (int i = 0; i < 3; ++i) CHECK(w.panels_for_product() == nullptr);
  }
}

TEST_CASE("weight packing: a one-shot forward packs nothing; every family's forwards are bitwise the same in place and packed") {
  for (const std::string& name : all_families()) {
    CAPTURE(name);
    const auto m = model::open(test::model_fixture(name));
    const WeightPacking& packing = m->weights->packing;
    if (!packing.state) {  // nothing read in place (a build without AVX-512 packs at load)
      CHECK(!PackedMatrix::fast_in_place);
      continue;
    }
    CHECK(packing.fits);
    const std::vector<int32_t> ids = test::fixture_ids(name);
    const ForwardResult one_shot = forward(*m, ids);  // what `attnscope compute` runs: in place, no copy
    CHECK(packing.state->matrices == 0);
    CHECK(packing.state->bytes == 0);
    const ForwardResult packing_pass = forward(*m, ids);  // the window's second forward packs, each matrix as it comes
    CHECK(packing.state->matrices > 0);
    const int64_t packed = packing.state->matrices;
    const ForwardResult repeated = forward(*m, ids);
    CHECK(packing.state->matrices == packed);  // once
    CHECK(packing.state->failed == 0);
    for (const ForwardResult* r : {&packing_pass, &repeated}) {
      CHECK(r->attentions == one_shot.attentions);
      CHECK(r->logits == one_shot.logits);
      REQUIRE(r->linear_maps.size() == one_shot.linear_maps.size());
      for (size_t l = 0; l < r->linear_maps.size(); ++l) CHECK(r->linear_maps[l] == one_shot.linear_maps[l]);
    }
    // The packed forward keeps the PyTorch contract (attentions 1e-5, logits 1e-4 relative).
    const auto logits = test::fixture_reference(name, "logits"), attentions = test::fixture_reference(name, "attentions");
    REQUIRE(logits.values.size() == size_t(repeated.logits.size()));
    CHECK(relative_gap(repeated.logits.data(), logits.values.data(), logits.values.size()) <= 1e-4);
    if (attentions.values.size() == repeated.attentions.size())
      CHECK(absolute_gap(repeated.attentions, attentions.values) <= 1e-5);
  }
}

TEST_CASE("weight packing: the command line's one-shot request packs nothing; the window's repeated requests pack, with the same numbers") {
  const auto m = model::open(test::model_fixture("llama_gqa_bf16_sharded"));
  const WeightPacking& packing = m->weights->packing;
  if (!packing.state) {
    CHECK(!PackedMatrix::fast_in_place);
    return;
  }
  pipeline::Request request;  // as `compute --checkpoint --layer 1` asks
  request.model = m;
  request.input.form = pipeline::TokenInput::Form::ids;
  request.input.ids = test::fixture_ids("llama_gqa_bf16_sharded");
  request.layer = 1;
  request.keep_logits = true;
  request.steps = {pipeline::Step::head_patterns};
  const pipeline::Result once = pipeline::run(request);
  CHECK(once.counters.forwards == 1);
  CHECK(packing.state->matrices == 0);  // one forward: every matrix read in place, no copy made
  CHECK(packing.state->bytes == 0);
  const pipeline::Result second = pipeline::run(request), third = pipeline::run(request);  // the window's slider changes
  CHECK(packing.state->matrices == int64_t(m->config.layers) * 7 + 1);  // q, k, v, o, gate, up, down; lm_head
  CHECK(packing.state->bytes == int64_t(packing.bytes));
  for (const pipeline::Result* r : {&second, &third}) {
    CHECK(*r->logits == *once.logits);
    REQUIRE(r->layer_maps.size() == once.layer_maps.size());
    CHECK(r->run->stack->attentions == once.run->stack->attentions);
  }
}

// Every routed expert's three matrices of a layer, visited.
template <class F>
void each_expert(const ModelWeights& w, F f) {
  for (const LayerWeights& l : w.layers)
    for (const SwigluWeights& e : l.moe.experts) f(e);
}

TEST_CASE("weight packing: only the matrices used are packed; a dense model's copies are exactly what open() counted") {
  {  // dense: every matrix read in place is used, so all of them get packed, and their bytes are the budget's
    const auto m = model::open(test::model_fixture("llama_gqa_bf16_sharded"));
    const WeightPacking& packing = m->weights->packing;
    if (PackedMatrix::fast_in_place) {
      REQUIRE(packing.state);
      const std::vector<int32_t> ids = test::fixture_ids("llama_gqa_bf16_sharded");
      (void)forward(*m, ids);
      CHECK(packing.state->matrices == 0);  // the first forward reads in place
      (void)forward(*m, ids);
      CHECK(packing.state->bytes == int64_t(packing.bytes));
      // L layers × (q, k, v, o, gate, up, down) + lm_head; the untied token embedding is only looked up by rows
      CHECK(packing.state->matrices == int64_t(m->config.layers) * 7 + 1);
      REQUIRE(!m->weights->lm_head.empty());
      CHECK(m->weights->lm_head.packed_copy_made());
      CHECK(!m->weights->token_embedding.packs_lazily());
    }
  }
  {  // MoE: an expert is packed only when tokens are routed to it; its three matrices together
    const auto m = model::open(test::model_fixture("olmoe_1b_7b_bf16"));
    const WeightPacking& packing = m->weights->packing;
    if (PackedMatrix::fast_in_place) {
      REQUIRE(packing.state);
      const std::vector<int32_t> ids(size_t(1), test::fixture_ids("olmoe_1b_7b_bf16")[0]);  // one token: top-k experts
      for (int i = 0; i < 2; ++i) (void)forward(*m, ids);
      int experts = 0, packed = 0;
      each_expert(*m->weights, [&](const SwigluWeights& e) {
        ++experts;
        packed += e.gate.packed_copy_made() ? 1 : 0;
        CHECK(e.gate.packed_copy_made() == e.up.packed_copy_made());
        CHECK(e.gate.packed_copy_made() == e.down.packed_copy_made());
      });
      CHECK(packed == m->config.layers * m->config.moe.top_k);  // one token: top_k experts per layer
      CHECK(packed < experts);
      CHECK(packing.state->bytes < int64_t(packing.bytes));
    }
  }
}

TEST_CASE("weight packing: open()'s memory check counts the packed copies, and says when they do not fit") {
  const WeightMemory opened{3e9, 1e9};
  const double copies = 4e9, memory = 16e9;  // 3 + 4 ≤ 0.8 × 16, 3 + 4 + 1 ≤ 0.9 × 16
  CHECK(weights_fit(opened, memory));
  CHECK(packing_fits(opened, copies, memory));
  CHECK(!packing_fits(opened, copies, 8.7e9));  // 7 > 0.8 × 8.7 = 6.96, though the weights alone fit
  CHECK(weights_fit(opened, 8.7e9));
  CHECK(!packing_fits(opened, 6e9, 10e9));  // 9 + 1 > 0.9 × 10
  WeightPacking p;
  p.bytes = 9.1e9, p.fits = false;
  CHECK(test::contains(packing_text(p), "would not fit in memory"));
  CHECK(test::contains(packing_text(p), "9.1 GB"));
  p.bytes = 476e6, p.fits = true;
  CHECK(test::contains(packing_text(p), "476 MB"));
  CHECK(test::contains(packing_text(p), "made by the second forward"));
  p.bytes = 71680;
  CHECK(packing_size(p) == "72 kB");
  p.bytes = 0;
  CHECK(packing_text(p) == "float32 copies made at load");
  // An opened model: the budget is the float32 panels of the matrices read in place, 4 bytes a value with
  // each matrix's rows rounded up to the 32-row panel (GPT-2 fixture: its Conv1D Wᵀ and the tied embedding).
  const auto m = model::open(test::model_fixture("gpt2_prefix_f32"));
  const ModelConfig& c = m->config;
  auto panel_rows = [](int64_t rows) { return (rows + 31) / 32 * 32; };
  const int64_t C = c.d_model, F = c.ffn_dim;
  int64_t values = panel_rows(c.vocab) * C;  // wte [V, C] (F32 rows; with AVX-512)
  if (!PackedMatrix::fast_in_place) values = 0;
  values += int64_t(c.layers) * (3 * panel_rows(C) * C + panel_rows(C) * C + panel_rows(F) * C + panel_rows(C) * F);
  CHECK(m->weights->packing.bytes == double(values) * 4);
}
