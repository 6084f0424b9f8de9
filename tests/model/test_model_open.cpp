// Tests of model::open on the fixture checkpoints: every family variant loads with the right shapes,
// and every malformed folder of issue 13 item 8 is refused with a message naming the file and problem.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::copy_fixture;
using attnscope::test::error_of;
using attnscope::test::model_fixture;
using attnscope::test::rewrite_header;
namespace fs = std::filesystem;

using attnscope::test::open_error;
using attnscope::test::edit_config;
namespace {

// Overwrites the first value of tensor `name` (F32) with `value`.
void poke_f32(const fs::path& file, const std::string& name, float value) {
  const SafetensorsFile f(file);
  const uint64_t at = f.header().data_start + f.header().find(name)->begin;
  std::string bytes = read_file(file, 1 << 26);
  std::memcpy(bytes.data() + at, &value, 4);
  write_file_atomic(file, bytes);
}

}  // namespace

TEST_CASE("model open: every fixture loads with the shapes of its config, and progress reaches 1") {
  for (const std::string& name : test::checkpoint_fixtures()) {
    CAPTURE(name);
    std::vector<double> progress;
    const auto m = model::open(model_fixture(name), [&](double f) { progress.push_back(f); });
    const ModelConfig& c = m->config;
    REQUIRE(m->weights->layers.size() == size_t(c.layers));
    CHECK(m->name == name);
    CHECK(m->weights->token_embedding.rows() == c.vocab);
    CHECK(m->weights->output_embedding().cols() == c.d_model);
    const LayerWeights& l = m->weights->layers[0];
    CHECK(l.wq.rows() == c.heads * c.head_dim);
    CHECK(l.kv.wk.rows() == c.kv_heads * c.head_dim);
    CHECK(l.wo.cols() == c.heads * c.head_dim);
    CHECK(l.w_down.rows() == c.d_model);
    CHECK(m->original_kv_heads == c.kv_heads);
    REQUIRE(!progress.empty());
    CHECK(progress.back() == 1.0);
    CHECK(std::is_sorted(progress.begin(), progress.end()));
    CHECK(progress.front() > 0);
  }
}

TEST_CASE("model open: the files' dtypes are reported, and GPT-2's Conv1D weights are transposed") {
  CHECK(model::open(model_fixture("llama_gqa_bf16_sharded"))->source_dtypes == "BF16");
  CHECK(model::open(model_fixture("gpt2_noprefix_f16_untied"))->source_dtypes == "F16");
  const auto m = model::open(model_fixture("gpt2_prefix_f32"));
  const SafetensorsFile f(model_fixture("gpt2_prefix_f32") / "model.safetensors");
  const SafetensorsTensor& t = *f.header().find("transformer.h.1.attn.c_attn.weight");  // [C, 3C]
  std::vector<float> raw(size_t(t.count()));
  f.read_float32(t, raw.data(), false);
  const int C = m->config.d_model;
  const LayerWeights& l = m->weights->layers[1];
  // nn.Linear layout: W_Q[out, in] = c_attn[in, out], K and V from the next column blocks.
  for (int o = 0; o < C; ++o)
    for (int i = 0; i < C; ++i) {
      REQUIRE(l.wq(o, i) == raw[size_t(i * 3 * C + o)]);
      REQUIRE(l.kv.wk(o, i) == raw[size_t(i * 3 * C + C + o)]);
      REQUIRE(l.kv.wv(o, i) == raw[size_t(i * 3 * C + 2 * C + o)]);
    }
}

TEST_CASE("model open: cancelling stops between tensors") {
  std::atomic<bool> cancel{true};
  CHECK_THROWS_AS((void)model::open(model_fixture("qwen2_gqa"), {}, &cancel), Cancelled);
}

TEST_CASE("model open: a missing folder, config or weights file is named") {
  CHECK(contains(open_error(model_fixture("no_such_model")), "checkpoint folder '"));
  CHECK(contains(open_error(model_fixture("no_such_model")), "does not exist"));
  CHECK(contains(open_error(model_fixture("qwen2_gqa") / "config.json"), "is a file; give the checkpoint folder"));
  fs::path dir = copy_fixture("qwen2_gqa", "no_config");
  fs::remove(dir / "config.json");
  CHECK(contains(open_error(dir), "has no config.json"));
  dir = copy_fixture("qwen2_gqa", "no_weights");
  fs::rename(dir / "model.safetensors", dir / "pytorch_model.bin");
  const std::string e = open_error(dir);
  CHECK(contains(e, "has neither model.safetensors nor model.safetensors.index.json"));
  CHECK(contains(e, "it has pytorch_model.bin"));
}

TEST_CASE("model open: truncated files and lying header lengths are refused") {
  fs::path dir = copy_fixture("qwen2_gqa", "truncated");
  std::string bytes = read_file(dir / "model.safetensors", 1 << 26);
  write_file_atomic(dir / "model.safetensors", bytes.substr(0, bytes.size() - 100));
  std::string e = open_error(dir);
  CHECK(contains(e, "model.safetensors' is not a valid safetensors file"));
  CHECK(contains(e, "past the end of the data area"));
  write_file_atomic(dir / "model.safetensors", bytes.substr(0, 5));
  CHECK(contains(open_error(dir), "truncated"));

  bytes[6] = '\x10';  // header length × 2^48
  write_file_atomic(dir / "model.safetensors", bytes);
  CHECK(contains(open_error(dir), "runs past the end of the file"));

  bytes = read_file(model_fixture("qwen2_gqa") / "model.safetensors", 1 << 26);
  bytes[8] = 'X';
  write_file_atomic(dir / "model.safetensors", bytes);
  CHECK(contains(open_error(dir), "does not start with '{'"));
  bytes[8] = '{';
  bytes[20] = '\x01';
  write_file_atomic(dir / "model.safetensors", bytes);
  CHECK(contains(open_error(dir), "not valid JSON"));
}

TEST_CASE("model open: overlapping, gapped and out-of-range offsets are refused naming the tensor") {
  const fs::path dir = copy_fixture("mistral_mha_f32", "offsets");
  const fs::path file = dir / "model.safetensors";
  const std::string original = read_file(file, 1 << 26);
  auto shift = [&](const std::string& tensor, int64_t begin_delta, int64_t end_delta) {
    write_file_atomic(file, original);
    rewrite_header(file, [&](nlohmann::json& h) {
      auto& o = h[tensor]["data_offsets"];
      o[0] = o[0].get<int64_t>() + begin_delta;
      o[1] = o[1].get<int64_t>() + end_delta;
    });
    return open_error(dir);
  };
  // The last tensor in the data area, and the first.
  const SafetensorsFile f(file);
  const std::string last = f.header().tensors.back().name, first = f.header().tensors.front().name;
  CHECK(contains(shift(last, -4, -4), "overlaps tensor"));
  CHECK(contains(shift(last, 4, 4), "past the end of the data area"));
  CHECK(contains(shift(first, 4, 4), "gap of 4 bytes before tensor '" + first + "'"));
  std::string e = shift(last, 0, -4);
  CHECK(contains(e, "tensor '" + last + "' has shape"));
  CHECK(contains(e, "needs"));
  // A gap inside the file: 4 more bytes, and the last tensor starts 4 bytes later.
  write_file_atomic(file, original + std::string(4, '\0'));
  rewrite_header(file, [&](nlohmann::json& h) {
    auto& o = h[last]["data_offsets"];
    o[0] = o[0].get<int64_t>() + 4;
    o[1] = o[1].get<int64_t>() + 4;
  });
  CHECK(contains(open_error(dir), "gap of 4 bytes before tensor '" + last + "'"));
}

TEST_CASE("model open: an unknown dtype, a shape disagreeing with config.json and a missing tensor are named") {
  fs::path dir = copy_fixture("mistral_mha_f32", "dtype");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) { h["model.norm.weight"]["dtype"] = "Q8"; });
  CHECK(contains(open_error(dir), "tensor 'model.norm.weight' has an unknown dtype 'Q8'"));

  dir = copy_fixture("mistral_mha_f32", "int_dtype");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) { h["model.norm.weight"]["dtype"] = "I32"; });
  CHECK(contains(open_error(dir), "tensor 'model.norm.weight' has dtype I32, which attnscope cannot read as weights"));

  dir = copy_fixture("llama_gqa_bf16_sharded", "shape");
  edit_config(dir, [](nlohmann::json& j) { j["intermediate_size"] = 41; });
  std::string e = open_error(dir);
  CHECK(contains(e, "tensor 'model.layers.0.mlp.gate_proj.weight' has shape [40, 24], but config.json implies [41, 24]"));
  CHECK(contains(e, ".safetensors'"));

  dir = copy_fixture("mistral_mha_f32", "missing");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.norm.weights"] = h["model.norm.weight"];
    h.erase("model.norm.weight");
  });
  e = open_error(dir);
  CHECK(contains(e, "missing tensor 'model.norm.weight'"));
  CHECK(contains(e, "model.safetensors'"));

  dir = copy_fixture("qwen2_gqa", "untied_missing_head");  // tied: its file has no lm_head
  edit_config(dir, [](nlohmann::json& j) { j["tie_word_embeddings"] = false; });
  CHECK(contains(open_error(dir), "missing tensor 'lm_head.weight'"));

  dir = copy_fixture("gpt2_prefix_f32", "not_gpt2");
  edit_config(dir, [](nlohmann::json& j) { j = {{"model_type", "gpt2"}, {"n_layer", 2}, {"n_embd", 16}, {"n_head", 4},
                                                {"vocab_size", 64}, {"n_positions", 32}}; });
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["x.wte.weight"] = h["transformer.wte.weight"];
    h.erase("transformer.wte.weight");
  });
  CHECK(contains(open_error(dir), "missing tensor 'wte.weight' (nor 'transformer.wte.weight')"));
}

TEST_CASE("model open: Gemma's and SmolLM3's own tensors and fields are checked like the others") {
  for (const char* tensor : {"model.layers.1.post_feedforward_layernorm.weight", "model.layers.0.pre_feedforward_layernorm.weight",
                             "model.layers.1.post_attention_layernorm.weight"}) {
    CAPTURE(tensor);
    const fs::path dir = copy_fixture("gemma2_softcap_f32", "gemma_missing_norm");
    rewrite_header(dir / "model.safetensors", [&](nlohmann::json& h) {
      h[std::string(tensor) + "s"] = h[tensor];
      h.erase(tensor);
    });
    const std::string e = open_error(dir);
    CHECK(contains(e, "missing tensor '" + std::string(tensor) + "'"));
    CHECK(contains(e, "model.safetensors'"));
  }
  fs::path dir = copy_fixture("gemma3_local_global_bf16", "gemma3_missing_q_norm");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.2.self_attn.q_norms.weight"] = h["model.layers.2.self_attn.q_norm.weight"];
    h.erase("model.layers.2.self_attn.q_norm.weight");
  });
  CHECK(contains(open_error(dir), "missing tensor 'model.layers.2.self_attn.q_norm.weight'"));
  dir = copy_fixture("gemma3_local_global_bf16", "gemma3_k_norm_shape");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) { h["model.layers.0.self_attn.k_norm.weight"]["shape"] = {8}; });
  CHECK(contains(open_error(dir), "tensor 'model.layers.0.self_attn.k_norm.weight'"));
  dir = copy_fixture("gemma3_local_global_bf16", "gemma3_pattern");
  edit_config(dir, [](nlohmann::json& j) {
    j["layer_types"] = {"sliding_attention", "full_attention"};  // 2 entries for 3 layers
  });
  CHECK(contains(open_error(dir), "\"layer_types\" lists 2 layers but \"num_hidden_layers\" is 3"));
  dir = copy_fixture("smollm3_nope_bf16", "smollm3_nope_list");
  edit_config(dir, [](nlohmann::json& j) { j["no_rope_layers"] = {1, 1, 1, 0, 1}; });
  CHECK(contains(open_error(dir), "\"no_rope_layers\" lists 5 layers but \"num_hidden_layers\" is 4"));
  dir = copy_fixture("gemma2_softcap_f32", "gemma2_softcap");
  edit_config(dir, [](nlohmann::json& j) { j["attn_logit_softcapping"] = 0; });
  CHECK(contains(open_error(dir), "\"attn_logit_softcapping\" = 0 must be above 0"));
  dir = copy_fixture("gemma2_softcap_f32", "gemma2_nan_norm");
  poke_f32(dir / "model.safetensors", "model.layers.0.post_feedforward_layernorm.weight", NAN);
  CHECK(contains(open_error(dir), "tensor 'model.layers.0.post_feedforward_layernorm.weight' holds NaN"));
  // Llama files called gemma2 miss Gemma's extra norms.
  dir = copy_fixture("llama_mqa_headdim_tied_f32", "llama_as_gemma");
  edit_config(dir, [](nlohmann::json& j) {
    j["model_type"] = "gemma2";
    j["head_dim"] = 8;
    j["hidden_act"] = "gelu_pytorch_tanh";
  });
  const std::string e = open_error(dir);
  CHECK(contains(e, "missing tensor 'model.layers.0.pre_feedforward_layernorm.weight'"));
}

TEST_CASE("model open: Gemma's norms hold 1 + w, as float32 sums of the file's w") {
  const auto m = model::open(model_fixture("gemma2_softcap_f32"));
  const SafetensorsFile f(model_fixture("gemma2_softcap_f32") / "model.safetensors");
  for (const std::string name : {"model.layers.0.input_layernorm.weight", "model.layers.1.post_feedforward_layernorm.weight",
                                 "model.norm.weight"}) {
    CAPTURE(name);
    const SafetensorsTensor* t = f.header().find(name);
    REQUIRE(t);
    std::vector<float> w(size_t(t->count()));
    f.read_float32(*t, w.data(), false);
    const Vec& loaded = name == "model.norm.weight" ? m->weights->final_norm_weight
                        : name.find("input") != std::string::npos ? m->weights->layers[0].norm1_weight
                                                                  : m->weights->layers[1].post_mlp_norm;
    REQUIRE(loaded.size() == Eigen::Index(w.size()));
    for (size_t i = 0; i < w.size(); ++i) CHECK(loaded[Eigen::Index(i)] == 1.0f + w[i]);
  }
}

TEST_CASE("model open: NaN or infinity in the weights is refused naming the tensor") {
  fs::path dir = copy_fixture("llama_mqa_headdim_tied_f32", "nan");
  poke_f32(dir / "model.safetensors", "model.layers.1.self_attn.k_proj.weight", NAN);
  CHECK(contains(open_error(dir), "tensor 'model.layers.1.self_attn.k_proj.weight' holds NaN at flat index 0"));
  dir = copy_fixture("llama_mqa_headdim_tied_f32", "inf");
  poke_f32(dir / "model.safetensors", "model.embed_tokens.weight", -INFINITY);
  CHECK(contains(open_error(dir), "tensor 'model.embed_tokens.weight' holds infinity"));
}

TEST_CASE("model open: NaN or infinity in BF16 and F16 weights read in place is refused naming the tensor") {
  // The last value of a tensor: past the vectorised blocks, in the scalar tail.
  auto poke_last = [](const fs::path& file, const std::string& name, uint16_t bits) {
    const SafetensorsFile f(file);
    const SafetensorsTensor& t = *f.header().find(name);
    const uint64_t at = f.header().data_start + t.end - 2;
    std::string bytes = read_file(file, 1 << 26);
    std::memcpy(bytes.data() + at, &bits, 2);
    write_file_atomic(file, bytes);
    return t.count() - 1;
  };
  fs::path dir = copy_fixture("qwen3_gqa_bf16_tied", "nan_bf16");
  int64_t last = poke_last(dir / "model.safetensors", "model.layers.0.mlp.down_proj.weight", 0x7FC1);
  CHECK(contains(open_error(dir), "tensor 'model.layers.0.mlp.down_proj.weight' holds NaN at flat index " +
                                      std::to_string(last)));
  dir = copy_fixture("qwen3_gqa_bf16_tied", "inf_bf16");
  last = poke_last(dir / "model.safetensors", "model.embed_tokens.weight", 0xFF80);
  CHECK(contains(open_error(dir), "tensor 'model.embed_tokens.weight' holds infinity at flat index " + std::to_string(last)));
  dir = copy_fixture("gpt2_noprefix_f16_untied", "inf_f16");
  last = poke_last(dir / "model.safetensors", "lm_head.weight", 0x7C00);
  CHECK(contains(open_error(dir), "tensor 'lm_head.weight' holds infinity at flat index " + std::to_string(last)));
}

TEST_CASE("model open: linear weights are read in place from the file where the layout allows, values unchanged") {
  // GPT-2 F32: every Conv1D weight in place (its transpose), the embedding in place (rows).
  const auto g = model::open(model_fixture("gpt2_prefix_f32"));
  const LayerWeights& l = g->weights->layers[0];
  for (const PackedMatrix* m : {&l.wq, &l.kv.wk, &l.kv.wv, &l.wo, &l.w_up, &l.w_down})
    CHECK(m->layout() == PackedMatrix::Layout::transposed);
  if (PackedMatrix::fast_in_place) {
    CHECK(g->weights->token_embedding.layout() == PackedMatrix::Layout::rows);
    // BF16 nn.Linear weights stay 16-bit, each value the file's, widened.
    const fs::path dir = model_fixture("qwen3_gqa_bf16_tied");
    const auto q = model::open(dir);
    const PackedMatrix& w = q->weights->layers[1].w_gate;
    CHECK(w.layout() == PackedMatrix::Layout::rows);
    CHECK(w.storage() == WeightStorage::bf16);
    const SafetensorsFile f(dir / "model.safetensors");
    const SafetensorsTensor& t = *f.header().find("model.layers.1.mlp.gate_proj.weight");
    std::vector<float> raw(size_t(t.count()));
    f.read_float32(t, raw.data(), false);
    for (int64_t r = 0; r < w.rows(); ++r)
      for (int64_t c = 0; c < w.cols(); ++c) REQUIRE(w(r, c) == raw[size_t(r * w.cols() + c)]);
  }
}

TEST_CASE("model open: a refused config.json stops before the weights are read") {
  fs::path dir = copy_fixture("qwen2_gqa", "config");
  edit_config(dir, [](nlohmann::json& j) { j["model_type"] = "gemma"; });
  std::string e = open_error(dir);
  CHECK(contains(e, "\"model_type\" = \"gemma\" is not supported (supported: " + std::string(supported_model_types()) + ")"));
  CHECK(contains(e, "config.json'"));
  edit_config(dir, [](nlohmann::json& j) {
    j["model_type"] = "qwen2";
    j.erase("num_hidden_layers");
  });
  CHECK(contains(open_error(dir), "config.json has no \"num_hidden_layers\""));
  write_file_atomic(dir / "config.json", "{\"model_type\": \"qwen2\",");
  CHECK(contains(open_error(dir), "config.json is not valid JSON"));
}

TEST_CASE("model open: a sharded checkpoint's index is checked against its shards") {
  fs::path dir = copy_fixture("llama_gqa_bf16_sharded", "index_missing_shard");
  fs::remove(dir / "model-00002-of-00003.safetensors");
  CHECK(contains(open_error(dir), "lists shard 'model-00002-of-00003.safetensors'"));

  auto edit_index = [](const fs::path& d, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(read_file(d / "model.safetensors.index.json", 1 << 20));
    edit(j);
    write_file_atomic(d / "model.safetensors.index.json", j.dump());
  };
  dir = copy_fixture("llama_gqa_bf16_sharded", "index_wrong_shard");
  edit_index(dir, [](nlohmann::json& j) { j["weight_map"]["model.norm.weight"] = "model-00001-of-00003.safetensors"; });
  CHECK(contains(open_error(dir), "places tensor 'model.norm.weight' in 'model-00001-of-00003.safetensors', but that file does not hold it"));

  dir = copy_fixture("llama_gqa_bf16_sharded", "index_escape");
  edit_index(dir, [](nlohmann::json& j) { j["weight_map"]["model.norm.weight"] = "../qwen2_gqa/model.safetensors"; });
  CHECK(contains(open_error(dir), "must be a plain file name in the checkpoint folder"));

  dir = copy_fixture("llama_gqa_bf16_sharded", "index_no_map");
  edit_index(dir, [](nlohmann::json& j) { j.erase("weight_map"); });
  CHECK(contains(open_error(dir), "has no \"weight_map\" object"));

  dir = copy_fixture("llama_gqa_bf16_sharded", "index_missing_tensor");
  edit_index(dir, [](nlohmann::json& j) { j["weight_map"].erase("model.layers.1.mlp.up_proj.weight"); });
  const std::string e = open_error(dir);
  CHECK(contains(e, "missing tensor 'model.layers.1.mlp.up_proj.weight'"));
  CHECK(contains(e, "shards listed in"));
}

TEST_CASE("model convert: pooling K/V shares every other weight and averages the groups' heads") {
  const auto m = model::open(model_fixture("qwen2_gqa"));  // H = 4, G = 2, q/k/v biases
  const auto same = convert_kv_heads(*m, 2);
  CHECK(same->weights == m->weights);
  CHECK(same->pooled_kv.empty());
  const auto mqa = convert_kv_heads(*m, 1);
  CHECK(mqa->weights == m->weights);  // shared, not copied
  CHECK(mqa->config.kv_heads == 1);
  CHECK(mqa->original_kv_heads == 2);
  const int D = m->config.head_dim;
  for (int l = 0; l < m->config.layers; ++l) {
    const Mat ak = m->kv(l).wk.to_mat(), av = m->kv(l).wv.to_mat();
    const KvWeights& b = mqa->kv(l);
    REQUIRE(b.wk.rows() == D);
    const Mat expected_k = (ak.topRows(D) + ak.bottomRows(D)) / 2;
    const Mat expected_v = (av.topRows(D) + av.bottomRows(D)) / 2;
    test::check_close(b.wk.to_mat(), expected_k, 1e-7, "pooled W_K");
    test::check_close(b.wv.to_mat(), expected_v, 1e-7, "pooled W_V");
    const Vec expected_bk = (m->kv(l).bk.head(D) + m->kv(l).bk.tail(D)) / 2;
    CHECK((b.bk - expected_bk).cwiseAbs().maxCoeff() <= 1e-7);
  }
  // Pooling a converted model starts again from the checkpoint's own K/V.
  CHECK(convert_kv_heads(*mqa, 2)->pooled_kv.empty());
  CHECK(contains(error_of([&] { (void)convert_kv_heads(*m, 3); }), "must divide the 4 query heads"));
  CHECK(contains(error_of([&] { (void)convert_kv_heads(*m, 4); }), "it can be pooled to a divisor of that, not to 4"));
  // The parameter count follows the pooled shape.
  CHECK(mqa->parameter_count() < m->parameter_count());
}

TEST_CASE("model open: Phi-3's fused qkv_proj and gate_up_proj are split by the config's sizes, in order") {
  const auto m = model::open(model_fixture("phi3_mha_long_f32"));
  const ModelConfig& c = m->config;
  const SafetensorsFile f(model_fixture("phi3_mha_long_f32") / "model.safetensors");
  auto raw = [&](const std::string& name) {
    const SafetensorsTensor& t = *f.header().find(name);
    std::vector<float> v(size_t(t.count()));
    f.read_float32(t, v.data(), false);
    return v;
  };
  const int C = c.d_model, Q = c.heads * c.head_dim, KV = c.kv_heads * c.head_dim, F = c.ffn_dim;
  const auto qkv = raw("model.layers.2.self_attn.qkv_proj.weight"), gate_up = raw("model.layers.2.mlp.gate_up_proj.weight");
  const LayerWeights& l = m->weights->layers[2];
  REQUIRE(l.wq.rows() == Q);
  REQUIRE(l.kv.wk.rows() == KV);
  REQUIRE(l.w_gate.rows() == F);
  for (int i = 0; i < C; ++i) {
    for (int r = 0; r < Q; ++r) REQUIRE(l.wq(r, i) == qkv[size_t(r * C + i)]);
    for (int r = 0; r < KV; ++r) {
      REQUIRE(l.kv.wk(r, i) == qkv[size_t((Q + r) * C + i)]);
      REQUIRE(l.kv.wv(r, i) == qkv[size_t((Q + KV + r) * C + i)]);
    }
    for (int r = 0; r < F; ++r) {
      REQUIRE(l.w_gate(r, i) == gate_up[size_t(r * C + i)]);
      REQUIRE(l.w_up(r, i) == gate_up[size_t((F + r) * C + i)]);
    }
  }
  CHECK(model::open(model_fixture("phi3_gqa_f16_sharded"))->source_dtypes == "F16");
  const auto q3 = model::open(model_fixture("qwen3_gqa_bf16_tied"));
  CHECK(q3->source_dtypes == "BF16");
  CHECK(q3->weights->layers[1].q_norm.size() == q3->config.head_dim);
  CHECK(q3->weights->layers[1].k_norm.size() == q3->config.head_dim);
  CHECK(q3->weights->lm_head.empty());  // tied
}

TEST_CASE("model open: a Qwen3 checkpoint without q_norm / k_norm, or with one of the wrong length, is named") {
  fs::path dir = copy_fixture("qwen3_gqa_bf16_tied", "qwen3_no_q_norm");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.1.self_attn.q_norms.weight"] = h["model.layers.1.self_attn.q_norm.weight"];
    h.erase("model.layers.1.self_attn.q_norm.weight");
  });
  std::string e = open_error(dir);
  CHECK(contains(e, "missing tensor 'model.layers.1.self_attn.q_norm.weight'"));
  CHECK(contains(e, "model.safetensors'"));

  dir = copy_fixture("qwen3_gqa_bf16_tied", "qwen3_no_k_norm");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.0.self_attn.k_norm"] = h["model.layers.0.self_attn.k_norm.weight"];
    h.erase("model.layers.0.self_attn.k_norm.weight");
  });
  CHECK(contains(open_error(dir), "missing tensor 'model.layers.0.self_attn.k_norm.weight'"));

  dir = copy_fixture("qwen3_gqa_bf16_tied", "qwen3_q_norm_shape");  // [12] → [6, 2]: the same bytes
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.0.self_attn.q_norm.weight"]["shape"] = {6, 2};
  });
  CHECK(contains(open_error(dir), "tensor 'model.layers.0.self_attn.q_norm.weight' has shape [6, 2], but config.json implies [12]"));

  dir = copy_fixture("qwen3_gqa_bf16_tied", "qwen3_head_dim");  // head_dim 12 → 8: every q/k/v/norm shape changes
  edit_config(dir, [](nlohmann::json& j) { j["head_dim"] = 8; });
  CHECK(contains(open_error(dir), "tensor 'model.layers.0.self_attn.q_proj.weight' has shape [48, 32], but config.json implies [32, 32]"));

  dir = copy_fixture("qwen3_gqa_bf16_tied", "qwen3_untied");  // tied: its file has no lm_head
  edit_config(dir, [](nlohmann::json& j) { j["tie_word_embeddings"] = false; });
  CHECK(contains(open_error(dir), "missing tensor 'lm_head.weight'"));

  dir = copy_fixture("qwen3_gqa_bf16_tied", "qwen3_rope_scaling");
  edit_config(dir, [](nlohmann::json& j) { j["rope_scaling"] = {{"rope_type", "yarn"}, {"beta_fast", 4.0}}; });
  e = open_error(dir);
  CHECK(contains(e, "\"rope_scaling\" of rope type \"yarn\" has no \"factor\""));
  CHECK(contains(e, "config.json'"));
}

TEST_CASE("model open: a Phi-3 checkpoint whose fused tensors disagree with config.json is named, with the layout") {
  fs::path dir = copy_fixture("phi3_gqa_f16_sharded", "phi3_qkv_rows");  // G 2 → 4: q 32 + k, v 32 each rows
  edit_config(dir, [](nlohmann::json& j) { j["num_key_value_heads"] = 4; });
  std::string e = open_error(dir);
  CHECK(contains(e, "tensor 'model.layers.0.self_attn.qkv_proj.weight' has shape [64, 32], but config.json implies [96, 32]"));
  CHECK(contains(e, "the rows of q (4 heads × 8), then k and v (4 heads × 8 each) stacked"));

  dir = copy_fixture("phi3_gqa_f16_sharded", "phi3_gate_up_odd");  // [80, 32] → [5, 512]: same bytes, odd rows
  rewrite_header(dir / "model-00001-of-00002.safetensors", [](nlohmann::json& h) {
    h["model.layers.0.mlp.gate_up_proj.weight"]["shape"] = {5, 512};
  });
  e = open_error(dir);
  CHECK(contains(e, "tensor 'model.layers.0.mlp.gate_up_proj.weight' has shape [5, 512], but config.json implies [80, 32]"));
  CHECK(contains(e, "the rows of gate, then up (intermediate_size 40 each) stacked"));

  dir = copy_fixture("phi3_gqa_f16_sharded", "phi3_ffn");
  edit_config(dir, [](nlohmann::json& j) { j["intermediate_size"] = 41; });
  CHECK(contains(open_error(dir), "has shape [80, 32], but config.json implies [82, 32]"));

  dir = copy_fixture("phi3_gqa_f16_sharded", "phi3_no_qkv");
  auto edit_index = [](const fs::path& d, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(read_file(d / "model.safetensors.index.json", 1 << 20));
    edit(j);
    write_file_atomic(d / "model.safetensors.index.json", j.dump());
  };
  edit_index(dir, [](nlohmann::json& j) { j["weight_map"].erase("model.layers.1.self_attn.qkv_proj.weight"); });
  CHECK(contains(open_error(dir), "missing tensor 'model.layers.1.self_attn.qkv_proj.weight'"));

  dir = copy_fixture("phi3_mha_long_f32", "phi3_nan");
  poke_f32(dir / "model.safetensors", "model.layers.1.mlp.gate_up_proj.weight", NAN);
  CHECK(contains(open_error(dir), "tensor 'model.layers.1.mlp.gate_up_proj.weight' holds NaN at flat index 0"));

  dir = copy_fixture("phi3_mha_long_f32", "phi3_longrope");
  edit_config(dir, [](nlohmann::json& j) {
    j["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 1.0}}, {"long_factor", {1.0, 2.0}}};
  });
  e = open_error(dir);  // head_dim 24 / 4 = 6: three pairs
  CHECK(contains(e, "\"rope_scaling\": \"short_factor\" lists 2 factors; it must list one per rotated pair, rotary width / 2 = 3"));
  edit_config(dir, [](nlohmann::json& j) {
    j["rope_scaling"] = nullptr;
    j["partial_rotary_factor"] = 0.5;
  });
  CHECK(contains(open_error(dir), "\"partial_rotary_factor\" = 0.5 rotates 3 of the head's 6 values; rotary positions "
                                  "need an even width of 2 or more"));
}
