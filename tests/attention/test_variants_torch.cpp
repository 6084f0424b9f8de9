// MLA and differential attention against PyTorch (tests/fixtures/make_mla_fixtures.py: DeepSeek's model.py
// and the differential-attention authors' code, in float64 from the same float32 weights): the engine's
// fast path, its absorbed form and the plain-loop references all within 1e-5 of the references' outputs.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "attnscope/attention/differential_attention.h"
#include "attnscope/attention/latent_attention.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

const fs::path fixtures = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "variants";

nlohmann::json config_of(const fs::path& dir) { return nlohmann::json::parse(read_file(dir / "config.json", 1 << 16)); }

Tensor3 read_tensor3(const fs::path& path) {
  const NpyArray a = read_npy(path);
  REQUIRE(a.shape.size() == 3);
  Tensor3 t(size_t(a.shape[0]), Mat(a.shape[1], a.shape[2]));
  for (size_t i = 0; i < t.size(); ++i)
    std::copy_n(a.data.data() + i * size_t(a.shape[1] * a.shape[2]), size_t(a.shape[1] * a.shape[2]), t[i].data());
  return t;
}

constexpr double tol = 1e-5;

void check_mla_case(const std::string& name) {
  const fs::path dir = fixtures / name;
  const auto c = config_of(dir);
  const LatentShape shape{c["d_model"], c["heads"], c["kv_rank"], c["q_rank"], c["rope_dim"]};
  const LatentRope rope{c["rope_base"], c["interleaved"]};
  LatentWeights w;
  if (shape.q_rank > 0) {
    w.wdq = read_npy_matrix(dir / "wdq.npy");
    w.q_norm = read_npy_vector(dir / "q_norm.npy");
  }
  // d_R = 0: W_QR and W_KR have no rows (.npy files of zero length are refused by the reader).
  w.wuq = read_npy_matrix(dir / "wuq.npy");
  w.wqr = shape.rope_dim > 0 ? read_npy_matrix(dir / "wqr.npy") : Mat(0, shape.query_in());
  w.wdkv = read_npy_matrix(dir / "wdkv.npy"), w.kv_norm = read_npy_vector(dir / "kv_norm.npy");
  w.wkr = shape.rope_dim > 0 ? read_npy_matrix(dir / "wkr.npy") : Mat(0, shape.d_model);
  w.wuk = read_npy_matrix(dir / "wuk.npy"), w.wuv = read_npy_matrix(dir / "wuv.npy"), w.wo = read_npy_matrix(dir / "wo.npy");
  const Mat x = read_npy_matrix(dir / "x.npy");
  const AttentionOptions options{bool(c["causal"]), true};
  const Tensor3 probs = read_tensor3(dir / "probs.npy");
  const Mat output = read_npy_matrix(dir / "output.npy"), c_kv = read_npy_matrix(dir / "c_kv.npy");

  const AttentionResult naive = latent_attention(x, w, shape, rope, options);
  const AttentionResult absorbed = latent_attention_absorbed(x, w, shape, rope, options);
  const AttentionResult reference = latent_attention_reference(x, w, shape, rope, options);
  for (const auto* r : {&naive, &absorbed, &reference}) {
    const std::string form = r == &naive ? "naive" : r == &absorbed ? "absorbed" : "reference";
    check_close3(r->probs, probs, tol, name + " " + form + " probs");
    check_close(r->output, output, tol, name + " " + form + " output");
    check_close(r->c_kv, c_kv, tol, name + " " + form + " c_kv");
    if (shape.rope_dim > 0) check_close(r->k_rope, read_npy_matrix(dir / "k_rope.npy"), tol, name + " " + form + " k_rope");
    if (shape.q_rank > 0) check_close(r->c_q, read_npy_matrix(dir / "c_q.npy"), tol, name + " " + form + " c_q");
  }
  // DeepSeek's own absorbed computation gives the same output (a check of the fixture itself).
  check_close(read_npy_matrix(dir / "output_absorbed.npy"), output, tol, name + " torch naive = torch absorbed");
}

void check_differential_case(const std::string& name) {
  const fs::path dir = fixtures / name;
  const auto c = config_of(dir);
  const AttentionShape shape{c["d_model"], c["heads"], c["groups"]};
  AttentionWeights w;
  w.wq = read_npy_matrix(dir / "wq.npy"), w.wk = read_npy_matrix(dir / "wk.npy");
  w.wv = read_npy_matrix(dir / "wv.npy"), w.wo = read_npy_matrix(dir / "wo.npy");
  if (c["bias"]) {
    w.bq = read_npy_vector(dir / "bq.npy"), w.bk = read_npy_vector(dir / "bk.npy");
    w.bv = read_npy_vector(dir / "bv.npy"), w.bo = read_npy_vector(dir / "bo.npy");
  }
  DifferentialParams p;
  p.lambda_q1 = read_npy_vector(dir / "lambda_q1.npy"), p.lambda_k1 = read_npy_vector(dir / "lambda_k1.npy");
  p.lambda_q2 = read_npy_vector(dir / "lambda_q2.npy"), p.lambda_k2 = read_npy_vector(dir / "lambda_k2.npy");
  p.norm = read_npy_vector(dir / "norm.npy");
  p.layer = c["layer"];
  const Mat x = read_npy_matrix(dir / "x.npy");
  const AttentionOptions options{bool(c["causal"]), true};
  const AttentionResult fast = differential_attention(x, w, p, shape, options);
  const AttentionResult reference = differential_attention_reference(x, w, p, shape, options);
  for (const auto* r : {&fast, &reference}) {
    const std::string form = r == &fast ? "fast" : "reference";
    CHECK(r->lambda == doctest::Approx(double(c["lambda"])).epsilon(1e-6));
    check_close3(r->probs, read_tensor3(dir / "probs.npy"), tol, name + " " + form + " A");
    check_close3(r->probs_1, read_tensor3(dir / "probs_1.npy"), tol, name + " " + form + " probs_1");
    check_close3(r->probs_2, read_tensor3(dir / "probs_2.npy"), tol, name + " " + form + " probs_2");
    check_close(r->output, read_npy_matrix(dir / "output.npy"), tol, name + " " + form + " output");
  }
}

}  // namespace

TEST_CASE("latent attention: naive, absorbed and reference equal DeepSeek's MLA in PyTorch") {
  check_mla_case("mla_half");                  // rotate-half RoPE, no query latent
  check_mla_case("mla_q_interleaved_causal");  // interleaved RoPE (DeepSeek's), c_Q, causal, d_R = d_N
  check_mla_case("mla_no_rope");               // d_R = 0
}

TEST_CASE("differential attention: fast path and reference equal the authors' code in PyTorch") {
  check_differential_case("diff_mha_causal");  // G = H, causal
  check_differential_case("diff_gqa_bias");    // G = 2 of H = 6, biases
  check_differential_case("diff_mqa_layer2");  // G = 1, λ_init of layer 2
}
