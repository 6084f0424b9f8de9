// model.cpp — opening a checkpoint folder: config.json, then each family's tensors by name, then the
// K/V-head conversion.
//
// Sections: the load plan (one list of name → shape → destination per family) · open · convert
#include "attnscope/model/model.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "checkpoint.h"

namespace attnscope::model {

namespace fs = std::filesystem;

// ---- the load plan -------------------------------------------------------------------------------
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// One tensor to read: its Hugging Face name, the shape config.json implies, and where it goes:
// straight into `dst` (vectors, learned positions), into the linear weights `packed` (a fused
// tensor's row blocks, top to bottom, into several matrices; `transposed`: GPT-2's Conv1D Wᵀ [in, out]
// whose column blocks are the matrices), or through a staging buffer into `scatter`. Linear weights
// are read in place from the mapped file where the layout and the build allow (packed_matrix.h: no
// copy at all), else packed row chunk by row chunk (never a second full float32 copy). `layout`
// explains a fused tensor's rows in the message when its shape is wrong.
struct Load {
  std::string name;
  std::vector<int64_t> shape;
  float* dst = nullptr;
  std::vector<std::pair<PackedMatrix*, int64_t>> packed;  // (matrix, its rows)
  std::function<void(const float* staged)> scatter;
  std::string layout;
  bool transposed = false;
};

void plan_matrix(std::vector<Load>& plan, const std::string& name, Mat& m, int64_t rows, int64_t cols) {
  m.resize(rows, cols);
  plan.push_back({name, {rows, cols}, m.data(), {}, {}, {}});
}

void plan_packed(std::vector<Load>& plan, const std::string& name, PackedMatrix& m, int64_t rows, int64_t cols) {
  plan.push_back({name, {rows, cols}, nullptr, {{&m, rows}}, {}, {}});
}

// A fused nn.Linear weight [Σ rows_i, cols] whose row blocks are separate matrices (Phi-3's qkv_proj
// = [W_Q; W_K; W_V], gate_up_proj = [W_gate; W_up]).
void plan_fused(std::vector<Load>& plan, const std::string& name, std::vector<std::pair<PackedMatrix*, int64_t>> blocks,
                int64_t cols, std::string layout) {
  int64_t rows = 0;
  for (auto& [m, n] : blocks) rows += n;
  plan.push_back({name, {rows, cols}, nullptr, std::move(blocks), {}, std::move(layout)});
}

void plan_vector(std::vector<Load>& plan, const std::string& name, Vec& v, int64_t size) {
  v.resize(size);
  plan.push_back({name, {size}, v.data(), {}, {}, {}});
}

// GPT-2's Conv1D weight, stored [in, out] = Wᵀ, split along `out` into nn.Linear-layout blocks
// [out_i, in] (c_attn's [Q | K | V] → three matrices; the other Conv1D weights → one).
void plan_conv1d(std::vector<Load>& plan, const std::string& name, int64_t in, std::vector<std::pair<PackedMatrix*, int64_t>> blocks) {
  int64_t out = 0;
  for (auto& [m, rows] : blocks) out += rows;
  // Staged (F16/BF16 files): each block packed from its columns of Wᵀ.
  plan.push_back({name, {in, out}, nullptr, blocks, [blocks, in, out](const float* staged) {
                    std::vector<float> part;
                    int64_t at = 0;
                    for (auto& [m, rows] : blocks) {
                      *m = PackedMatrix(rows, in);
                      if (blocks.size() == 1) {
                        m->set_from_transposed(staged);
                      } else {  // the block's columns of Wᵀ, as their own [in, rows] matrix
                        part.resize(size_t(in * rows));
                        for (int64_t k = 0; k < in; ++k)
                          std::copy(staged + k * out + at, staged + k * out + at + rows, part.data() + k * rows);
                        m->set_from_transposed(part.data());
                      }
                      at += rows;
                    }
                  }, {}, true});
}

// c_attn's bias [3C] split into the q, k and v biases.
void plan_split_vector(std::vector<Load>& plan, const std::string& name, std::vector<Vec*> parts, int64_t each) {
  for (Vec* p : parts) p->resize(each);
  plan.push_back({name, {each * int64_t(parts.size())}, nullptr, {}, [parts, each](const float* staged) {
                    for (size_t i = 0; i < parts.size(); ++i)
                      *parts[i] = Eigen::Map<const Vec>(staged + int64_t(i) * each, each);
                  }, {}});
}

// GPT-2: names with or without the "transformer." prefix; c_attn = [Q | K | V] is split into three
// nn.Linear-layout matrices; attn.bias / attn.masked_bias (causal-mask buffers) are never read.
std::vector<Load> plan_gpt2(const ModelConfig& c, const detail::Checkpoint& ckpt, ModelWeights& w) {
  std::string p;
  if (ckpt.has("transformer.wte.weight")) p = "transformer.";
  else
    require(ckpt.has("wte.weight"), "missing tensor 'wte.weight' (nor 'transformer.wte.weight') in " +
                                        ckpt.description() + ": this is not a GPT-2 checkpoint");
  const int64_t C = c.d_model, F = c.ffn_dim;
  std::vector<Load> plan;
  plan_packed(plan, p + "wte.weight", w.token_embedding, c.vocab, C);
  plan_matrix(plan, p + "wpe.weight", w.position_embedding, c.max_positions, C);
  w.layers.resize(size_t(c.layers));
  for (int i = 0; i < c.layers; ++i) {
    LayerWeights& l = w.layers[size_t(i)];
    const std::string h = p + "h." + std::to_string(i) + ".";
    plan_vector(plan, h + "ln_1.weight", l.norm1_weight, C);
    plan_vector(plan, h + "ln_1.bias", l.norm1_bias, C);
    plan_conv1d(plan, h + "attn.c_attn.weight", C, {{&l.wq, C}, {&l.kv.wk, C}, {&l.kv.wv, C}});
    plan_split_vector(plan, h + "attn.c_attn.bias", {&l.bq, &l.kv.bk, &l.kv.bv}, C);
    plan_conv1d(plan, h + "attn.c_proj.weight", C, {{&l.wo, C}});
    plan_vector(plan, h + "attn.c_proj.bias", l.bo, C);
    plan_vector(plan, h + "ln_2.weight", l.norm2_weight, C);
    plan_vector(plan, h + "ln_2.bias", l.norm2_bias, C);
    plan_conv1d(plan, h + "mlp.c_fc.weight", C, {{&l.w_up, F}});
    plan_vector(plan, h + "mlp.c_fc.bias", l.b_up, F);
    plan_conv1d(plan, h + "mlp.c_proj.weight", F, {{&l.w_down, C}});
    plan_vector(plan, h + "mlp.c_proj.bias", l.b_down, C);
  }
  plan_vector(plan, p + "ln_f.weight", w.final_norm_weight, C);
  plan_vector(plan, p + "ln_f.bias", w.final_norm_bias, C);
  if (!c.tied_embeddings) plan_packed(plan, "lm_head.weight", w.lm_head, c.vocab, C);
  return plan;
}

// Llama, Mistral, Qwen2, Qwen3, Phi-3, SmolLM3: model.layers.N.self_attn.{q,k,v,o}_proj,
// mlp.{gate,up,down}_proj, RMSNorms; Qwen3's and Gemma 3's self_attn.{q,k}_norm [D]; Phi-3's fused
// self_attn.qkv_proj and mlp.gate_up_proj; Gemma 2/3's four norms of a block (input_layernorm,
// post_attention_layernorm, pre_feedforward_layernorm, post_feedforward_layernorm).
std::vector<Load> plan_llama(const ModelConfig& c, ModelWeights& w) {
  const int64_t C = c.d_model, F = c.ffn_dim, D = c.head_dim, Q = int64_t(c.heads) * D, KV = int64_t(c.kv_heads) * D;
  const bool fused = c.model_type == "phi3";
  std::vector<Load> plan;
  plan_packed(plan, "model.embed_tokens.weight", w.token_embedding, c.vocab, C);
  w.layers.resize(size_t(c.layers));
  for (int i = 0; i < c.layers; ++i) {
    LayerWeights& l = w.layers[size_t(i)];
    const std::string h = "model.layers." + std::to_string(i) + ".";
    plan_vector(plan, h + "input_layernorm.weight", l.norm1_weight, C);
    if (fused) {
      plan_fused(plan, h + "self_attn.qkv_proj.weight", {{&l.wq, Q}, {&l.kv.wk, KV}, {&l.kv.wv, KV}}, C,
                 "the rows of q (" + std::to_string(c.heads) + " heads × " + std::to_string(D) + "), then k and v (" +
                     std::to_string(c.kv_heads) + " heads × " + std::to_string(D) + " each)");
    } else {
      plan_packed(plan, h + "self_attn.q_proj.weight", l.wq, Q, C);
      plan_packed(plan, h + "self_attn.k_proj.weight", l.kv.wk, KV, C);
      plan_packed(plan, h + "self_attn.v_proj.weight", l.kv.wv, KV, C);
    }
    if (c.qkv_bias) {
      plan_vector(plan, h + "self_attn.q_proj.bias", l.bq, Q);
      plan_vector(plan, h + "self_attn.k_proj.bias", l.kv.bk, KV);
      plan_vector(plan, h + "self_attn.v_proj.bias", l.kv.bv, KV);
    }
    if (c.qk_norm) {
      plan_vector(plan, h + "self_attn.q_norm.weight", l.q_norm, D);
      plan_vector(plan, h + "self_attn.k_norm.weight", l.k_norm, D);
    }
    plan_packed(plan, h + "self_attn.o_proj.weight", l.wo, C, Q);
    if (c.o_bias) plan_vector(plan, h + "self_attn.o_proj.bias", l.bo, C);
    if (c.sandwich_norms) {
      plan_vector(plan, h + "post_attention_layernorm.weight", l.post_attn_norm, C);
      plan_vector(plan, h + "pre_feedforward_layernorm.weight", l.norm2_weight, C);
      plan_vector(plan, h + "post_feedforward_layernorm.weight", l.post_mlp_norm, C);
    } else {
      plan_vector(plan, h + "post_attention_layernorm.weight", l.norm2_weight, C);
    }
    if (fused) {
      plan_fused(plan, h + "mlp.gate_up_proj.weight", {{&l.w_gate, F}, {&l.w_up, F}}, C,
                 "the rows of gate, then up (intermediate_size " + std::to_string(F) + " each)");
    } else {
      plan_packed(plan, h + "mlp.gate_proj.weight", l.w_gate, F, C);
      plan_packed(plan, h + "mlp.up_proj.weight", l.w_up, F, C);
    }
    plan_packed(plan, h + "mlp.down_proj.weight", l.w_down, C, F);
  }
  plan_vector(plan, "model.norm.weight", w.final_norm_weight, C);
  if (!c.tied_embeddings) plan_packed(plan, "lm_head.weight", w.lm_head, c.vocab, C);
  return plan;
}

// DeepSeek-V2/V3: MLA's self_attn.{q_proj | q_a_proj, q_a_layernorm, q_b_proj}, kv_a_proj_with_mqa,
// kv_a_layernorm, kv_b_proj, o_proj; the dense mlp.{gate,up,down}_proj in the first
// first_k_dense_replace layers, then mlp.gate (+ V3's e_score_correction_bias), mlp.experts.N.* and
// mlp.shared_experts.*.
void plan_swiglu(std::vector<Load>& plan, const std::string& prefix, SwigluWeights& m, int64_t C, int64_t F) {
  plan_packed(plan, prefix + "gate_proj.weight", m.gate, F, C);
  plan_packed(plan, prefix + "up_proj.weight", m.up, F, C);
  plan_packed(plan, prefix + "down_proj.weight", m.down, C, F);
}

std::vector<Load> plan_deepseek(const ModelConfig& c, ModelWeights& w) {
  const MlaConfig& m = c.mla;
  const MoeConfig& e = c.moe;
  const int64_t C = c.d_model, H = c.heads, QK = int64_t(c.heads) * c.head_dim;
  std::vector<Load> plan;
  plan_packed(plan, "model.embed_tokens.weight", w.token_embedding, c.vocab, C);
  w.layers.resize(size_t(c.layers));
  for (int i = 0; i < c.layers; ++i) {
    LayerWeights& l = w.layers[size_t(i)];
    const std::string h = "model.layers." + std::to_string(i) + ".";
    plan_vector(plan, h + "input_layernorm.weight", l.norm1_weight, C);
    if (m.q_lora_rank) {
      plan_packed(plan, h + "self_attn.q_a_proj.weight", l.mla.q_a, m.q_lora_rank, C);
      plan_vector(plan, h + "self_attn.q_a_layernorm.weight", l.mla.q_a_norm, m.q_lora_rank);
      plan_packed(plan, h + "self_attn.q_b_proj.weight", l.mla.q_b, QK, m.q_lora_rank);
    } else {
      plan_packed(plan, h + "self_attn.q_proj.weight", l.wq, QK, C);
    }
    plan_fused(plan, h + "self_attn.kv_a_proj_with_mqa.weight", {{&l.mla.kv_a, m.kv_lora_rank + m.rope_dim}}, C,
               "the rows of the latent c_KV (kv_lora_rank " + std::to_string(m.kv_lora_rank) +
                   "), then of the shared rotary key (qk_rope_head_dim " + std::to_string(m.rope_dim) + ")");
    plan_vector(plan, h + "self_attn.kv_a_layernorm.weight", l.mla.kv_a_norm, m.kv_lora_rank);
    plan_fused(plan, h + "self_attn.kv_b_proj.weight", {{&l.mla.kv_b, H * (m.nope_dim + m.v_dim)}}, m.kv_lora_rank,
               std::to_string(H) + " heads × (qk_nope_head_dim " + std::to_string(m.nope_dim) + " + v_head_dim " +
                   std::to_string(m.v_dim) + ") rows over the kv_lora_rank " + std::to_string(m.kv_lora_rank) +
                   " latent columns: each head's key part, then its value,");
    plan_packed(plan, h + "self_attn.o_proj.weight", l.wo, C, H * m.v_dim);
    plan_vector(plan, h + "post_attention_layernorm.weight", l.norm2_weight, C);
    if (!e.is_moe_layer(i)) {
      plan_packed(plan, h + "mlp.gate_proj.weight", l.w_gate, c.ffn_dim, C);
      plan_packed(plan, h + "mlp.up_proj.weight", l.w_up, c.ffn_dim, C);
      plan_packed(plan, h + "mlp.down_proj.weight", l.w_down, C, c.ffn_dim);
      continue;
    }
    plan_fused(plan, h + "mlp.gate.weight", {{&l.moe.router, e.experts}}, C,
               "the router's rows, one per routed expert (n_routed_experts " + std::to_string(e.experts) + "),");
    if (e.correction_bias) plan_vector(plan, h + "mlp.gate.e_score_correction_bias", l.moe.correction_bias, e.experts);
    l.moe.experts.resize(size_t(e.experts));
    for (int x = 0; x < e.experts; ++x)
      plan_swiglu(plan, h + "mlp.experts." + std::to_string(x) + ".", l.moe.experts[size_t(x)], C, e.expert_ffn);
    if (e.shared > 0) plan_swiglu(plan, h + "mlp.shared_experts.", l.moe.shared, C, int64_t(e.expert_ffn) * e.shared);
  }
  plan_vector(plan, "model.norm.weight", w.final_norm_weight, C);
  if (!c.tied_embeddings) plan_packed(plan, "lm_head.weight", w.lm_head, c.vocab, C);
  return plan;
}

// gpt-oss (transformers 5.x models/gpt_oss/modeling_gpt_oss.py): Llama's attention tensors with biases
// and self_attn.sinks [H]; mlp.router.{weight [E, C], bias [E]}; mlp.experts.{gate_up_proj_bias [E, 2F],
// down_proj_bias [E, C]} and the experts' matrices: MXFP4 gate_up_proj_{blocks,scales} and
// down_proj_{blocks,scales} (integrations/mxfp4.py; read after the plan, plan_gpt_oss_mxfp4), or the
// dequantised gate_up_proj [E, C, 2F] and down_proj [E, F, C] (GptOssExperts: x @ W, so each expert's
// matrix is stored [in, out]) packed per expert here.
std::vector<Load> plan_gpt_oss(const ModelConfig& c, ModelWeights& w) {
  const int64_t C = c.d_model, F = c.ffn_dim, E = c.oss.experts, D = c.head_dim;
  const int64_t Q = int64_t(c.heads) * D, KV = int64_t(c.kv_heads) * D;
  std::vector<Load> plan;
  plan_packed(plan, "model.embed_tokens.weight", w.token_embedding, c.vocab, C);
  w.layers.resize(size_t(c.layers));
  for (int i = 0; i < c.layers; ++i) {
    LayerWeights& l = w.layers[size_t(i)];
    const std::string h = "model.layers." + std::to_string(i) + ".";
    plan_vector(plan, h + "input_layernorm.weight", l.norm1_weight, C);
    plan_packed(plan, h + "self_attn.q_proj.weight", l.wq, Q, C);
    plan_packed(plan, h + "self_attn.k_proj.weight", l.kv.wk, KV, C);
    plan_packed(plan, h + "self_attn.v_proj.weight", l.kv.wv, KV, C);
    plan_packed(plan, h + "self_attn.o_proj.weight", l.wo, C, Q);
    if (c.qkv_bias) {
      plan_vector(plan, h + "self_attn.q_proj.bias", l.bq, Q);
      plan_vector(plan, h + "self_attn.k_proj.bias", l.kv.bk, KV);
      plan_vector(plan, h + "self_attn.v_proj.bias", l.kv.bv, KV);
    }
    if (c.o_bias) plan_vector(plan, h + "self_attn.o_proj.bias", l.bo, C);
    plan_vector(plan, h + "self_attn.sinks", l.sinks, c.heads);
    plan_vector(plan, h + "post_attention_layernorm.weight", l.norm2_weight, C);
    GptOssMoeWeights& m = l.oss;
    plan_fused(plan, h + "mlp.router.weight", {{&m.router, E}}, C,
               "the router's rows, one per expert (num_local_experts " + std::to_string(E) + "),");
    plan_vector(plan, h + "mlp.router.bias", m.router_bias, E);
    plan_matrix(plan, h + "mlp.experts.gate_up_proj_bias", m.gate_up_bias, E, 2 * F);
    plan_matrix(plan, h + "mlp.experts.down_proj_bias", m.down_bias, E, C);
    m.gate_up.resize(size_t(E));
    m.down.resize(size_t(E));
    if (c.oss.mxfp4) continue;
    // [E, in, out] → per expert the nn.Linear matrix [out, in], packed from its transpose.
    auto experts = [&plan, E](const std::string& name, std::vector<ExpertMatrix>& dst, int64_t in, int64_t out) {
      std::vector<ExpertMatrix>* d = &dst;
      plan.push_back({name, {E, in, out}, nullptr, {}, [d, E, in, out](const float* staged) {
                        for (int64_t e = 0; e < E; ++e) {
                          (*d)[size_t(e)].dense = PackedMatrix(out, in);
                          (*d)[size_t(e)].dense.set_from_transposed(staged + e * in * out);
                        }
                      }, {}});
    };
    experts(h + "mlp.experts.gate_up_proj", m.gate_up, C, 2 * F);
    experts(h + "mlp.experts.down_proj", m.down, F, C);
  }
  plan_vector(plan, "model.norm.weight", w.final_norm_weight, C);
  if (!c.tied_embeddings) plan_packed(plan, "lm_head.weight", w.lm_head, c.vocab, C);
  return plan;
}

// gpt-oss's MXFP4 experts in place (mxfp4.h checks the dtypes, the shapes and the exponents).
void load_gpt_oss_mxfp4(const ModelConfig& c, const std::shared_ptr<const detail::Checkpoint>& ckpt, ModelWeights& w) {
  const int64_t C = c.d_model, F = c.ffn_dim, E = c.oss.experts;
  for (int i = 0; i < c.layers; ++i) {
    GptOssMoeWeights& m = w.layers[size_t(i)].oss;
    const std::string h = "model.layers." + std::to_string(i) + ".mlp.experts.";
    auto load = [&](const std::string& name, std::vector<ExpertMatrix>& dst, int64_t rows, int64_t cols) {
      const detail::Checkpoint::Raw blocks = ckpt->raw(name + "_blocks"), scales = ckpt->raw(name + "_scales");
      const std::vector<Mxfp4Matrix> mats = mxfp4_experts(blocks.file, name, *blocks.tensor, blocks.data, *scales.tensor,
                                                          scales.data, E, rows, cols, ckpt);
      for (int64_t e = 0; e < E; ++e) dst[size_t(e)].mxfp4 = mats[size_t(e)];
    };
    load(h + "gate_up_proj", m.gate_up, 2 * F, C);
    load(h + "down_proj", m.down, C, F);
  }
}

// Refuses a model whose weights would not fit in this machine's memory, before allocating: the matrices
// read in place from the mapped files at their own width (16-bit stays 16-bit), the rest as float32.
void check_memory(const ModelConfig& c, const detail::Checkpoint& ckpt, const fs::path& dir) {
  const bool gpt2 = c.family == Family::gpt2;
  const double need = ckpt.memory_needed([gpt2](TensorDtype d) {
    // as open() below: GPT-2's F32 Conv1D weights, and F32/BF16/F16 nn.Linear weights with the fast kernel
    return d == TensorDtype::f32 ? gpt2 || PackedMatrix::fast_in_place
                                 : !gpt2 && PackedMatrix::fast_in_place && (d == TensorDtype::bf16 || d == TensorDtype::f16);
  });
  const double have = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
  char need_gb[32], have_gb[32];
  std::snprintf(need_gb, sizeof need_gb, "%.1f", need / 1e9);
  std::snprintf(have_gb, sizeof have_gb, "%.1f", have / 1e9);
  require(have <= 0 || weights_fit({need - ckpt.u8_bytes(), ckpt.u8_bytes()}, have),
          "'" + dir.string() + "': this model's weights need " + need_gb + " GB of memory, but this machine has " +
              have_gb + " GB; compute its attentions where it fits (transformers, output_attentions=True) "
              "and open the attentions file instead (docs/real-models.md, \"Attentions computed elsewhere\")");
}

// Gemma's RMSNorm computes x̂·(1 + w) in float32: adding 1 to w here, in float32, gives the same
// float32 factor, so the forward pass's plain RMSNorm serves.
void add_one_to_norms(ModelWeights& w) {
  auto plus_one = [](Vec& v) { v.array() += 1.0f; };
  for (LayerWeights& l : w.layers)
    for (Vec* v : {&l.norm1_weight, &l.post_attn_norm, &l.norm2_weight, &l.post_mlp_norm, &l.q_norm, &l.k_norm})
      plus_one(*v);
  plus_one(w.final_norm_weight);
}


}  // namespace

bool weights_fit(const WeightMemory& m, double memory_bytes) {
  return m.resident <= 0.8 * memory_bytes && m.resident + m.routed <= 0.9 * memory_bytes;
}

// ---- open ----------------------------------------------------------------------------------------
std::shared_ptr<const Model> open(const fs::path& dir, const Progress& progress, const std::atomic<bool>* cancel) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  require(fs::exists(dir, ec), "checkpoint folder '" + dir.string() + "' does not exist");
  require(fs::is_directory(dir, ec), "'" + dir.string() + "' is a file; give the checkpoint folder (the one holding "
                                                             "config.json and model.safetensors)");
  const fs::path config_path = dir / "config.json";
  require(fs::exists(config_path, ec), "checkpoint folder '" + dir.string() + "' has no config.json");
  auto model = std::make_shared<Model>();
  model->dir = dir;
  model->name = fs::absolute(dir, ec).lexically_normal().filename().string();
  if (model->name.empty()) model->name = fs::absolute(dir, ec).lexically_normal().parent_path().filename().string();
  model->config = parse_model_config(read_file(config_path, int64_t(16) << 20), config_path.string());
  const ModelConfig& c = model->config;
  const auto shared_ckpt = std::make_shared<const detail::Checkpoint>(dir);
  const detail::Checkpoint& ckpt = *shared_ckpt;
  check_memory(c, ckpt, dir);
  auto weights = std::make_shared<ModelWeights>();
  ModelWeights& w = *weights;
  const std::vector<Load> plan = c.family == Family::gpt2 ? plan_gpt2(c, ckpt, w)
                                : c.is_mla()              ? plan_deepseek(c, w)
                                : c.oss.active()          ? plan_gpt_oss(c, w)
                                                          : plan_llama(c, w);

  // Check every name and shape before reading anything, so a wrong file fails fast.
  double total = 0;
  for (const Load& l : plan) {
    const SafetensorsTensor& t = ckpt.tensor(l.name);
    if (!l.layout.empty() && t.shape != l.shape)
      throw InputError(ckpt.description() + ": tensor '" + l.name + "' has shape " + shape_text(t.shape) +
                       ", but config.json implies " + shape_text(l.shape) + ": " + l.layout + " stacked");
    total += double(t.end - t.begin);
  }
  double done = 0;
  std::vector<float> staging;
  for (const Load& l : plan) {
    check_cancel(cancel);
    const TensorDtype dtype = ckpt.tensor(l.name).dtype;
    if (l.dst) {
      ckpt.read(l.name, l.shape, l.dst);
    } else if (l.transposed && dtype == TensorDtype::f32) {
      // GPT-2's Conv1D Wᵀ [in, out] in place: block i is columns [at, at + rows_i), row stride out.
      const auto* t = static_cast<const float*>(ckpt.in_place(l.name, l.shape).data);
      int64_t at = 0;
      for (const auto& [m, rows] : l.packed) {
        *m = PackedMatrix::in_place_transposed(t + at, rows, l.shape[0], l.shape[1], shared_ckpt);
        at += rows;
      }
    } else if (!l.packed.empty() && !l.transposed && PackedMatrix::fast_in_place &&
               (dtype == TensorDtype::f32 || dtype == TensorDtype::bf16 || dtype == TensorDtype::f16)) {
      // nn.Linear W [rows, cols] in place, each block of rows its own matrix.
      const detail::Checkpoint::InPlace src = ckpt.in_place(l.name, l.shape);
      const WeightStorage storage = dtype == TensorDtype::f32    ? WeightStorage::f32
                                    : dtype == TensorDtype::bf16 ? WeightStorage::bf16
                                                                 : WeightStorage::f16;
      const int64_t cols = l.shape[1], bytes = dtype == TensorDtype::f32 ? 4 : 2;
      int64_t first = 0;
      for (const auto& [m, rows] : l.packed) {
        *m = PackedMatrix::in_place_rows(static_cast<const char*>(src.data) + first * cols * bytes, storage, rows, cols,
                                         cols, shared_ckpt);
        first += rows;
      }
    } else if (!l.packed.empty() && !l.transposed) {
      // Row chunks of about 4 MB through one staging buffer; each chunk's rows go to the blocks they
      // fall in (one block unless the tensor is fused).
      const int64_t rows = l.shape[0], cols = l.shape[1];
      for (const auto& [m, block_rows] : l.packed) *m = PackedMatrix(block_rows, cols);
      const int64_t step = std::max<int64_t>(PackedMatrix::panel, (int64_t(1) << 20) / cols / PackedMatrix::panel * PackedMatrix::panel);
      staging.resize(size_t(std::min(rows, step) * cols));
      for (int64_t r = 0; r < rows; r += step) {
        const int64_t n = std::min(step, rows - r);
        ckpt.read_rows(l.name, l.shape, r, n, staging.data());
        int64_t block_start = 0;
        for (const auto& [m, block_rows] : l.packed) {
          const int64_t from = std::max(r, block_start), to = std::min(r + n, block_start + block_rows);
          if (from < to) m->set_rows(from - block_start, to - from, staging.data() + (from - r) * cols);
          block_start += block_rows;
        }
      }
    } else {
      int64_t count = 1;
      for (int64_t d : l.shape) count *= d;
      staging.resize(size_t(count));
      ckpt.read(l.name, l.shape, staging.data());
      l.scatter(staging.data());
    }
    done += double(ckpt.tensor(l.name).end - ckpt.tensor(l.name).begin);
    if (progress) progress(total > 0 ? std::min(1.0, done / total) : 1.0);
  }
  if (c.oss.active() && c.oss.mxfp4) {
    check_cancel(cancel);
    load_gpt_oss_mxfp4(c, shared_ckpt, w);
  }
  if (c.norm_plus_one) add_one_to_norms(w);
  // Gemma's √hidden_size stays the float32 of config.cpp whatever the file's dtype: a float32-loaded
  // transformers model casts it to float32, not to the file's BF16 (the float32 contract, config.h).
  model->weights = std::move(weights);
  model->original_kv_heads = c.kv_heads;
  model->source_dtypes = ckpt.dtypes_read();
  if (c.oss.mxfp4) {  // the U8 tensors are gpt-oss's MXFP4 experts: say so in the Checkpoint window
    const size_t at = model->source_dtypes.find("U8");
    if (at != std::string::npos) model->source_dtypes.replace(at, 2, "MXFP4 (U8)");
  }
  model->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) progress(1.0);
  return model;
}

// ---- convert -------------------------------------------------------------------------------------
namespace {

// Mean of the row blocks [D rows each] of the old kv heads that make each new kv head.
// w [G_old·D, …] → [G_new·D, …]
template <class M>
M pool_heads(const M& w, int old_heads, int new_heads, int head_dim) {
  if (w.size() == 0) return w;
  const int merge = old_heads / new_heads;
  M out = M::Zero(Eigen::Index(new_heads) * head_dim, w.cols());
  for (int g = 0; g < new_heads; ++g)
    for (int k = 0; k < merge; ++k)
      out.middleRows(Eigen::Index(g) * head_dim, head_dim) +=
          w.middleRows((Eigen::Index(g) * merge + k) * head_dim, head_dim);
  out /= float(merge);
  return out;
}

PackedMatrix pool_heads(const PackedMatrix& w, int old_heads, int new_heads, int head_dim) {
  return PackedMatrix::from(pool_heads(w.to_mat(), old_heads, new_heads, head_dim));
}

}  // namespace

std::shared_ptr<const Model> convert_kv_heads(const Model& model, int kv_heads) {
  const ModelConfig& c = model.config;
  const int original = model.original_kv_heads;
  require(!c.is_mla(), c.model_type + " uses multi-head latent attention: it has no K/V heads to pool, every head's "
                       "keys and values are made from one shared latent, and that latent is what it caches");
  require(kv_heads >= 1 && kv_heads <= c.heads && c.heads % kv_heads == 0,
          "kv heads must divide the " + std::to_string(c.heads) + " query heads, got " + std::to_string(kv_heads));
  require(original % kv_heads == 0, "this checkpoint has " + std::to_string(original) +
                                        " kv heads; it can be pooled to a divisor of that, not to " +
                                        std::to_string(kv_heads));
  auto out = std::make_shared<Model>();
  out->dir = model.dir;
  out->name = model.name;
  out->config = c;
  out->config.kv_heads = kv_heads;
  out->weights = model.weights;  // shared, not copied
  out->source_dtypes = model.source_dtypes;
  out->load_seconds = model.load_seconds;
  out->original_kv_heads = original;
  if (kv_heads == original) return out;
  out->pooled_kv.resize(model.weights->layers.size());
  for (size_t i = 0; i < out->pooled_kv.size(); ++i) {
    const KvWeights& from = model.weights->layers[i].kv;
    KvWeights& to = out->pooled_kv[i];
    to.wk = pool_heads(from.wk, original, kv_heads, c.head_dim);
    to.wv = pool_heads(from.wv, original, kv_heads, c.head_dim);
    to.bk = pool_heads(from.bk, original, kv_heads, c.head_dim);
    to.bv = pool_heads(from.bv, original, kv_heads, c.head_dim);
  }
  return out;
}

}  // namespace attnscope::model
