// model.cpp — opening a checkpoint folder: config.json, then each family's tensors by name, then the
// K/V-head conversion.
//
// Sections: the load plan (one list of name → shape → destination per family) · open · convert
#include "attnscope/model/model.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>

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

void plan_swiglu(std::vector<Load>& plan, const std::string& prefix, SwigluWeights& m, int64_t C, int64_t F);

// The experts of a Llama-like mixture layer `h` ("model.layers.N."), as the published files name them:
//   qwen3_moe, olmoe  mlp.gate.weight [E, C], mlp.experts.X.{gate,up,down}_proj.weight (one tensor each;
//                     transformers 5 fuses them into mlp.experts.gate_up_proj at load, conversion_mapping.py,
//                     and writes them back per expert)
//   granitemoe        block_sparse_moe.router.layer.weight [E, C], block_sparse_moe.input_linear.weight
//                     [E, 2F, C] (expert X's rows: gate, then up), block_sparse_moe.output_linear.weight [E, C, F]
void plan_experts(std::vector<Load>& plan, const ModelConfig& c, const std::string& h, MoeWeights& m) {
  const MoeConfig& e = c.moe;
  const int64_t C = c.d_model, F = e.expert_ffn, E = e.experts;
  m.experts.resize(size_t(E));
  if (c.model_type != "granitemoe" && c.model_type != "granitemoehybrid") {
    plan_fused(plan, h + "mlp.gate.weight", {{&m.router, E}}, C,
               "the router's rows, one per expert (num_experts " + std::to_string(E) + "),");
    for (int x = 0; x < E; ++x) plan_swiglu(plan, h + "mlp.experts." + std::to_string(x) + ".", m.experts[size_t(x)], C, F);
    if (e.shared_gate) {  // Qwen3-Next: mlp.shared_expert.{gate,up,down}_proj and mlp.shared_expert_gate [1, C]
      plan_swiglu(plan, h + "mlp.shared_expert.", m.shared, C, e.shared_ffn);
      plan_packed(plan, h + "mlp.shared_expert_gate.weight", m.shared_gate, 1, C);
    }
    return;
  }
  const std::string p = h + "block_sparse_moe.";
  plan_fused(plan, p + "router.layer.weight", {{&m.router, E}}, C,
             "the router's rows, one per expert (num_local_experts " + std::to_string(E) + "),");
  std::vector<std::pair<PackedMatrix*, int64_t>> in, out;
  for (SwigluWeights& x : m.experts) {
    in.push_back({&x.gate, F});
    in.push_back({&x.up, F});
    out.push_back({&x.down, C});
  }
  plan_fused(plan, p + "input_linear.weight", std::move(in), C,
             "num_local_experts " + std::to_string(E) + " × (gate, then up: intermediate_size " + std::to_string(F) +
                 " rows each) over hidden_size " + std::to_string(C) + " columns,");
  plan.back().shape = {E, 2 * F, C};
  plan_fused(plan, p + "output_linear.weight", std::move(out), F,
             "num_local_experts " + std::to_string(E) + " × hidden_size " + std::to_string(C) +
                 " rows over intermediate_size " + std::to_string(F) + " columns,");
  plan.back().shape = {E, C, F};
}

// Qwen3-Next's Gated DeltaNet tensors under `a` ("model.layers.N.linear_attn."), transformers 5.x
// modeling_qwen3_next.py Qwen3NextGatedDeltaNet: the fused projections split by key-head group
// (fix_query_key_value_ordering), conv1d.weight [conv_dim, 1, K], dt_bias and A_log [Hv], norm.weight [dv],
// out_proj.weight [C, Hv·dv].
void plan_deltanet(std::vector<Load>& plan, const ModelConfig& c, const std::string& a, GatedDeltaNetWeights& g) {
  const LinearAttentionConfig& la = c.linear;
  const int64_t C = c.d_model, Hk = la.key_heads, Hv = la.value_heads, dk = la.key_dim, dv = la.value_dim;
  const int64_t r = Hv / Hk, group = 2 * dk + 2 * r * dv;
  GatedDeltaNetWeights* w = &g;
  plan.push_back({a + "in_proj_qkvz.weight", {Hk * group, C}, nullptr, {},
                  [w, Hk, Hv, dk, dv, r, group, C](const float* s) {
                    w->wq = PackedMatrix(Hk * dk, C), w->wk = PackedMatrix(Hk * dk, C);
                    w->wv = PackedMatrix(Hv * dv, C), w->wz = PackedMatrix(Hv * dv, C);
                    for (int64_t k = 0; k < Hk; ++k) {
                      const float* rows = s + k * group * C;
                      w->wq.set_rows(k * dk, dk, rows);
                      w->wk.set_rows(k * dk, dk, rows + dk * C);
                      w->wv.set_rows(k * r * dv, r * dv, rows + 2 * dk * C);
                      w->wz.set_rows(k * r * dv, r * dv, rows + (2 * dk + r * dv) * C);
                    }
                  },
                  "per key head (linear_num_key_heads " + std::to_string(Hk) + "), its q and k rows (linear_key_head_dim " +
                      std::to_string(dk) + " each), then the v and z rows of its " + std::to_string(r) +
                      " value heads (linear_value_head_dim " + std::to_string(dv) + " each), the key heads"});
  plan.push_back({a + "in_proj_ba.weight", {2 * Hv, C}, nullptr, {},
                  [w, Hk, Hv, r, C](const float* s) {
                    w->wb = PackedMatrix(Hv, C), w->wa = PackedMatrix(Hv, C);
                    for (int64_t k = 0; k < Hk; ++k) {
                      w->wb.set_rows(k * r, r, s + k * 2 * r * C);
                      w->wa.set_rows(k * r, r, s + (k * 2 + 1) * r * C);
                    }
                  },
                  "per key head (linear_num_key_heads " + std::to_string(Hk) + "), the b rows then the a rows of its " +
                      std::to_string(r) + " value heads (linear_num_value_heads " + std::to_string(Hv) + "), the key heads"});
  g.conv.resize(la.conv_dim(), la.conv_kernel);
  plan.push_back({a + "conv1d.weight", {la.conv_dim(), 1, la.conv_kernel}, g.conv.data(), {}, {},
                  "2·linear_num_key_heads·linear_key_head_dim + linear_num_value_heads·linear_value_head_dim = " +
                      std::to_string(la.conv_dim()) + " channels (q, k, v), 1, linear_conv_kernel_dim " +
                      std::to_string(la.conv_kernel) + ":"});
  plan_vector(plan, a + "dt_bias", g.dt_bias, Hv);
  plan_vector(plan, a + "A_log", g.a_log, Hv);
  plan_vector(plan, a + "norm.weight", g.norm, dv);
  plan_packed(plan, a + "out_proj.weight", g.out, C, Hv * dv);
}

// Granite 4.0-H's Mamba-2 tensors under `m` ("model.layers.N.mamba."), transformers 5.x
// modeling_granitemoehybrid.py GraniteMoeHybridMambaLayer: in_proj.weight [I + conv_dim + heads, C] (the rows of
// the gate z, then xBC, then dt: torch_forward's split), conv1d.weight [conv_dim, 1, K] and conv1d.bias
// [conv_dim] (mamba_conv_bias), dt_bias, A_log and D [heads], norm.weight [I], out_proj.weight [C, I].
void plan_mamba(std::vector<Load>& plan, const ModelConfig& c, const std::string& m, Mamba2Weights& w) {
  const Mamba2Config& mc = c.mamba;
  const int64_t C = c.d_model, I = mc.inner(), CD = mc.conv_dim(), Hm = mc.heads;
  plan_fused(plan, m + "in_proj.weight", {{&w.wz, I}, {&w.wxbc, CD}, {&w.wdt, Hm}}, C,
             "the rows of the gate z (mamba_n_heads × mamba_d_head = " + std::to_string(I) + "), then x, B and C (" +
                 std::to_string(I) + " + 2 × mamba_n_groups × mamba_d_state = " + std::to_string(CD) +
                 "), then dt (mamba_n_heads " + std::to_string(Hm) + "),");
  w.conv.resize(CD, mc.conv_kernel);
  plan.push_back({m + "conv1d.weight", {CD, 1, mc.conv_kernel}, w.conv.data(), {}, {},
                  "mamba_n_heads × mamba_d_head + 2 × mamba_n_groups × mamba_d_state = " + std::to_string(CD) +
                      " channels (x, B, C), 1, mamba_d_conv " + std::to_string(mc.conv_kernel) + ":"});
  if (mc.conv_bias) plan_vector(plan, m + "conv1d.bias", w.conv_bias, CD);
  plan_vector(plan, m + "dt_bias", w.dt_bias, Hm);
  plan_vector(plan, m + "A_log", w.a_log, Hm);
  plan_vector(plan, m + "D", w.d_skip, Hm);
  plan_vector(plan, m + "norm.weight", w.norm, I);
  plan_packed(plan, m + "out_proj.weight", w.out, C, I);
}

// GraniteMoeHybridMLP (shared_mlp): input_linear [2F, C] chunked into the SiLU half (gate) and the linear half
// (up), output_linear [C, F] (down).
void plan_shared_mlp(std::vector<Load>& plan, const std::string& p, PackedMatrix& gate, PackedMatrix& up,
                     PackedMatrix& down, int64_t C, int64_t F) {
  plan_fused(plan, p + "input_linear.weight", {{&gate, F}, {&up, F}}, C,
             "the rows of the SiLU half, then the linear half (shared_intermediate_size " + std::to_string(F) + " each),");
  plan_packed(plan, p + "output_linear.weight", down, C, F);
}

// A mixture layer's expert count in config.json must be the files' (the router's rows, and for
// per-expert tensors no expert numbered E or above): refused naming config.json, the key and the count
// the files hold.
void check_expert_count(const ModelConfig& c, const detail::Checkpoint& ckpt, const fs::path& config_path) {
  const MoeConfig& e = c.moe;
  const bool granite = c.model_type == "granitemoe" || c.model_type == "granitemoehybrid";
  const bool deepseek = c.is_mla();
  const std::string key = granite ? "num_local_experts" : deepseek ? "n_routed_experts" : "num_experts";
  for (int i = 0; i < c.layers; ++i) {
    if (!e.is_moe_layer(i)) continue;
    const std::string h = "model.layers." + std::to_string(i) + ".";
    const std::string router = h + (granite ? "block_sparse_moe.router.layer.weight" : "mlp.gate.weight");
    if (!ckpt.has(router)) continue;  // named as a missing tensor by the load plan
    int64_t held = ckpt.tensor(router).shape.empty() ? 0 : ckpt.tensor(router).shape[0];
    if (!granite)  // per-expert tensors beyond the router's rows count too
      while (ckpt.has(h + "mlp.experts." + std::to_string(std::max<int64_t>(held, e.experts)) + ".gate_proj.weight") &&
             held < (int64_t(1) << 16))
        held = std::max<int64_t>(held, e.experts) + 1;
    if (held != e.experts)
      throw InputError("'" + config_path.string() + "': \"" + key + "\" = " + std::to_string(e.experts) + ", but " +
                       ckpt.description() + " holds " + std::to_string(held) + " experts in layer " + std::to_string(i) +
                       " (router '" + router + "' has shape " + shape_text(ckpt.tensor(router).shape) +
                       "); valid: \"" + key + "\": " + std::to_string(held));
  }
}

// Llama, Mistral, Qwen2, Qwen3, Phi-3, SmolLM3: model.layers.N.self_attn.{q,k,v,o}_proj,
// mlp.{gate,up,down}_proj, RMSNorms; Qwen3's and Gemma 3's self_attn.{q,k}_norm [D]; Phi-3's fused
// self_attn.qkv_proj and mlp.gate_up_proj; Gemma 2/3's four norms of a block (input_layernorm,
// post_attention_layernorm, pre_feedforward_layernorm, post_feedforward_layernorm).
// `p` is where the text model's tensors live ("model.", or a multimodal container's text tower prefix) and
// `head` the untied output's name. OLMo 2 (!pre_norms): no input_layernorm, q_norm [H·D] and k_norm [G·D]
// over the whole projections, post_attention_layernorm and post_feedforward_layernorm on the outputs.
std::vector<Load> plan_llama(const ModelConfig& c, ModelWeights& w, const std::string& p = "model.",
                             const std::string& head = "lm_head.weight") {
  const int64_t C = c.d_model, F = c.ffn_dim, D = c.head_dim, Q = int64_t(c.heads) * D, KV = int64_t(c.kv_heads) * D;
  const bool fused = c.model_type == "phi3";
  std::vector<Load> plan;
  plan_packed(plan, p + "embed_tokens.weight", w.token_embedding, c.vocab, C);
  w.layers.resize(size_t(c.layers));
  for (int i = 0; i < c.layers; ++i) {
    LayerWeights& l = w.layers[size_t(i)];
    const std::string h = p + "layers." + std::to_string(i) + ".";
    if (c.pre_norms) plan_vector(plan, h + "input_layernorm.weight", l.norm1_weight, C);
    if (c.is_linear_layer(i) && c.mamba.active()) {
      plan_mamba(plan, c, h + "mamba.", l.mamba);
    } else if (c.is_linear_layer(i) && !c.trained.active) {
      plan_deltanet(plan, c, h + "linear_attn.", l.deltanet);
    } else if (c.attn_output_gate) {
      // Qwen3NextAttention: q_proj [H·2D, C] viewed [H, 2D] and chunked: head h's query rows, then its gate rows.
      PackedMatrix *wq = &l.wq, *gate = &l.attn_gate;
      plan.push_back({h + "self_attn.q_proj.weight", {2 * Q, C}, nullptr, {},
                      [wq, gate, H = int64_t(c.heads), D, C](const float* staged) {
                        *wq = PackedMatrix(H * D, C), *gate = PackedMatrix(H * D, C);
                        for (int64_t head = 0; head < H; ++head) {
                          wq->set_rows(head * D, D, staged + head * 2 * D * C);
                          gate->set_rows(head * D, D, staged + (head * 2 + 1) * D * C);
                        }
                      },
                      "per head (" + std::to_string(c.heads) + " heads), its query rows then its gate rows (head_dim " +
                          std::to_string(D) + " each), the heads"});
      plan_packed(plan, h + "self_attn.k_proj.weight", l.kv.wk, KV, C);
      plan_packed(plan, h + "self_attn.v_proj.weight", l.kv.wv, KV, C);
    } else if (fused) {
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
    if ((c.qk_norm || c.qk_norm_whole) && !c.is_linear_layer(i)) {  // per head [D] (Qwen3), or the whole
      // projection [H·D], [G·D] (OLMo 2, OLMoE)
      plan_vector(plan, h + "self_attn.q_norm.weight", l.q_norm, c.qk_norm_whole ? Q : D);
      plan_vector(plan, h + "self_attn.k_norm.weight", l.k_norm, c.qk_norm_whole ? KV : D);
    }
    if (!c.is_linear_layer(i) || c.trained.active) plan_packed(plan, h + "self_attn.o_proj.weight", l.wo, C, Q);
    if (c.trained.active && c.is_linear_layer(i)) {  // the kind's gates (train/model.h)
      const LinearLayerKind k = c.trained.kind_of(i);
      const int64_t H = c.heads;
      TrainedLinearWeights& g = l.trained;
      if (k == LinearLayerKind::deltanet || k == LinearLayerKind::gated_deltanet)
        plan_matrix(plan, h + "self_attn.b_proj.weight", g.b_proj, H, C);
      if (k == LinearLayerKind::mamba2) plan_matrix(plan, h + "self_attn.dt_proj.weight", g.step_proj, H, C);
      if (k == LinearLayerKind::gated_deltanet) plan_matrix(plan, h + "self_attn.a_proj.weight", g.step_proj, H, C);
      if (k == LinearLayerKind::mamba2 || k == LinearLayerKind::gated_deltanet) {
        plan_vector(plan, h + "self_attn.dt_bias", g.dt_bias, H);
        plan_vector(plan, h + "self_attn.A_log", g.a_log, H);
      }
      if (k == LinearLayerKind::mamba2) plan_vector(plan, h + "self_attn.D", g.d_skip, H);
    }
    if (c.o_bias) plan_vector(plan, h + "self_attn.o_proj.bias", l.bo, C);
    if (c.sandwich_norms) {
      plan_vector(plan, h + "post_attention_layernorm.weight", l.post_attn_norm, C);
      if (c.pre_norms) plan_vector(plan, h + "pre_feedforward_layernorm.weight", l.norm2_weight, C);
      plan_vector(plan, h + "post_feedforward_layernorm.weight", l.post_mlp_norm, C);
    } else {
      plan_vector(plan, h + "post_attention_layernorm.weight", l.norm2_weight, C);
    }
    if (c.model_type == "granitemoehybrid") {  // block_sparse_moe (when it has experts) + shared_mlp
      if (c.moe.is_moe_layer(i)) {
        plan_experts(plan, c, h, l.moe);
        plan_shared_mlp(plan, h + "shared_mlp.", l.moe.shared.gate, l.moe.shared.up, l.moe.shared.down, C,
                        c.moe.shared_ffn);
      } else {
        plan_shared_mlp(plan, h + "shared_mlp.", l.w_gate, l.w_up, l.w_down, C, F);
      }
      continue;
    }
    if (c.moe.is_moe_layer(i)) {
      plan_experts(plan, c, h, l.moe);
    } else if (fused) {
      plan_fused(plan, h + "mlp.gate_up_proj.weight", {{&l.w_gate, F}, {&l.w_up, F}}, C,
                 "the rows of gate, then up (intermediate_size " + std::to_string(F) + " each)");
    } else {
      plan_packed(plan, h + "mlp.gate_proj.weight", l.w_gate, F, C);
      plan_packed(plan, h + "mlp.up_proj.weight", l.w_up, F, C);
    }
    if (!c.moe.is_moe_layer(i)) plan_packed(plan, h + "mlp.down_proj.weight", l.w_down, C, F);
  }
  plan_vector(plan, p + "norm.weight", w.final_norm_weight, C);
  if (!c.tied_embeddings) plan_packed(plan, head, w.lm_head, c.vocab, C);
  return plan;
}

// GPT-NeoX (Pythia), transformers 5.x models/gpt_neox/modeling_gpt_neox.py: gpt_neox.embed_in,
// gpt_neox.layers.N.{input_layernorm, post_attention_layernorm} (LayerNorms with biases),
// attention.query_key_value [3C, C] and its bias [3C], attention.dense, mlp.dense_h_to_4h, mlp.dense_4h_to_h
// (with biases), gpt_neox.final_layer_norm and the untied embed_out. query_key_value's rows are per head:
// GPTNeoXAttention views the projection as [T, H, 3·D] and splits each head's 3·D values into its q, k and
// v, so head h's query is rows [3hD, 3hD + D), its key the next D rows and its value the D after.
std::vector<Load> plan_gpt_neox(const ModelConfig& c, ModelWeights& w) {
  const int64_t C = c.d_model, F = c.ffn_dim, D = c.head_dim, H = c.heads;
  const std::string p = "gpt_neox.";
  std::vector<Load> plan;
  plan_packed(plan, p + "embed_in.weight", w.token_embedding, c.vocab, C);
  w.layers.resize(size_t(c.layers));
  for (int i = 0; i < c.layers; ++i) {
    LayerWeights& l = w.layers[size_t(i)];
    const std::string h = p + "layers." + std::to_string(i) + ".";
    plan_vector(plan, h + "input_layernorm.weight", l.norm1_weight, C);
    plan_vector(plan, h + "input_layernorm.bias", l.norm1_bias, C);
    plan_vector(plan, h + "post_attention_layernorm.weight", l.norm2_weight, C);
    plan_vector(plan, h + "post_attention_layernorm.bias", l.norm2_bias, C);
    PackedMatrix *wq = &l.wq, *wk = &l.kv.wk, *wv = &l.kv.wv;
    plan.push_back({h + "attention.query_key_value.weight", {3 * C, C}, nullptr, {},
                    [wq, wk, wv, H, D, C](const float* staged) {
                      *wq = PackedMatrix(H * D, C), *wk = PackedMatrix(H * D, C), *wv = PackedMatrix(H * D, C);
                      for (int64_t head = 0; head < H; ++head) {
                        const float* rows = staged + head * 3 * D * C;
                        wq->set_rows(head * D, D, rows);
                        wk->set_rows(head * D, D, rows + D * C);
                        wv->set_rows(head * D, D, rows + 2 * D * C);
                      }
                    },
                    "per head (" + std::to_string(H) + " heads), its q, k and v rows (head_dim " + std::to_string(D) +
                        " each), the heads"});
    if (c.qkv_bias) {
      Vec *bq = &l.bq, *bk = &l.kv.bk, *bv = &l.kv.bv;
      plan.push_back({h + "attention.query_key_value.bias", {3 * C}, nullptr, {},
                      [bq, bk, bv, H, D](const float* staged) {
                        bq->resize(H * D), bk->resize(H * D), bv->resize(H * D);
                        for (int64_t head = 0; head < H; ++head)
                          for (int64_t d = 0; d < D; ++d) {
                            (*bq)[head * D + d] = staged[head * 3 * D + d];
                            (*bk)[head * D + d] = staged[head * 3 * D + D + d];
                            (*bv)[head * D + d] = staged[head * 3 * D + 2 * D + d];
                          }
                      },
                      {}});
    }
    plan_packed(plan, h + "attention.dense.weight", l.wo, C, C);
    if (c.o_bias) plan_vector(plan, h + "attention.dense.bias", l.bo, C);
    plan_packed(plan, h + "mlp.dense_h_to_4h.weight", l.w_up, F, C);
    plan_vector(plan, h + "mlp.dense_h_to_4h.bias", l.b_up, F);
    plan_packed(plan, h + "mlp.dense_4h_to_h.weight", l.w_down, C, F);
    plan_vector(plan, h + "mlp.dense_4h_to_h.bias", l.b_down, C);
  }
  plan_vector(plan, p + "final_layer_norm.weight", w.final_norm_weight, C);
  plan_vector(plan, p + "final_layer_norm.bias", w.final_norm_bias, C);
  if (!c.tied_embeddings) plan_packed(plan, "embed_out.weight", w.lm_head, c.vocab, C);
  return plan;
}

// A multimodal container's text tower: the prefix its files use. transformers 5.x saves
// model.language_model.* and lm_head.weight; checkpoints saved before (Gemma 3, Mistral Small 3.1) hold
// language_model.model.* and language_model.lm_head.weight (the _checkpoint_conversion_mapping of
// Gemma3ForConditionalGeneration and Mistral3ForConditionalGeneration renames the one to the other).
struct TextTower {
  std::string prefix, head;
};

TextTower find_text_tower(const ModelConfig& c, const detail::Checkpoint& ckpt) {
  if (ckpt.has("language_model.model.embed_tokens.weight")) return {"language_model.model.", "language_model.lm_head.weight"};
  if (ckpt.has("model.language_model.embed_tokens.weight")) return {"model.language_model.", "lm_head.weight"};
  throw InputError(ckpt.description() + ": config.json says \"model_type\" = \"" + c.container +
                   "\", a multimodal container, but its files hold no text tower: neither "
                   "'language_model.model.embed_tokens.weight' nor 'model.language_model.embed_tokens.weight' "
                   "(valid: the language model's weights under language_model.model.* or model.language_model.*; "
                   "the vision tower alone has no text attention to draw)");
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
// `prefix` (a container's text tower) limits the count to the tensors under it and its output.
// Returns what the opened weights hold (resident, routed) and the machine's memory (0 when unknown).
std::pair<WeightMemory, double> check_memory(const ModelConfig& c, const detail::Checkpoint& ckpt, const fs::path& dir,
                                             const TextTower& tower) {
  const bool gpt2 = c.family == Family::gpt2;
  const double need = ckpt.memory_needed([gpt2](TensorDtype d) {
    // as open() below: GPT-2's F32 Conv1D weights, and F32/BF16/F16 nn.Linear weights with the fast kernel
    return d == TensorDtype::f32 ? gpt2 || PackedMatrix::fast_in_place
                                 : !gpt2 && PackedMatrix::fast_in_place && (d == TensorDtype::bf16 || d == TensorDtype::f16);
  }, [&tower](const std::string& name) {
    return tower.prefix.empty() || name.rfind(tower.prefix, 0) == 0 || name == tower.head;
  });
  const double have = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
  char need_gb[32], have_gb[32];
  std::snprintf(need_gb, sizeof need_gb, "%.1f", need / 1e9);
  std::snprintf(have_gb, sizeof have_gb, "%.1f", have / 1e9);
  require(have <= 0 || weights_fit({need - ckpt.u8_bytes(), ckpt.u8_bytes()}, have),
          "'" + dir.string() + "': this model's weights need " + need_gb + " GB of memory, but this machine has " +
              have_gb + " GB; compute its attentions where it fits (transformers, output_attentions=True) "
              "and open the attentions file instead (docs/real-models.md, \"Attentions computed elsewhere\")");
  return {{need - ckpt.u8_bytes(), ckpt.u8_bytes()}, have};
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

bool packing_fits(const WeightMemory& opened, double packed_bytes, double memory_bytes) {
  return weights_fit({opened.resident + packed_bytes, opened.routed}, memory_bytes);
}

std::string packing_size(const WeightPacking& p) {
  char size[32];
  if (p.bytes >= 1e9) std::snprintf(size, sizeof size, "%.1f GB", p.bytes / 1e9);
  else if (p.bytes >= 1e6) std::snprintf(size, sizeof size, "%.0f MB", p.bytes / 1e6);
  else std::snprintf(size, sizeof size, "%.0f kB", p.bytes / 1e3);
  return size;
}

std::string packing_text(const WeightPacking& p) {
  if (p.bytes <= 0) return "float32 copies made at load";
  if (!p.fits) return "read in place: float32 copies (" + packing_size(p) + ") would not fit in memory";
  return "read in place; float32 copies (" + packing_size(p) + ") made by the second forward (a one-shot forward reads in place)";
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
  const TextTower tower = c.container.empty() ? TextTower{} : find_text_tower(c, ckpt);
  const auto [opened_memory, machine_memory] = check_memory(c, ckpt, dir, tower);
  check_expert_count(c, ckpt, config_path);
  auto weights = std::make_shared<ModelWeights>();
  ModelWeights& w = *weights;
  const std::vector<Load> plan = c.family == Family::gpt2       ? plan_gpt2(c, ckpt, w)
                                : c.is_mla()                    ? plan_deepseek(c, w)
                                : c.oss.active()                ? plan_gpt_oss(c, w)
                                : c.model_type == "gpt_neox"    ? plan_gpt_neox(c, w)
                                : !tower.prefix.empty()         ? plan_llama(c, w, tower.prefix, tower.head)
                                                                : plan_llama(c, w);
  if (!c.container.empty()) {  // the vision tower (and projector) stay unread: counted for the Checkpoint window
    std::set<std::string> read;
    for (const Load& l : plan) read.insert(l.name);
    for (const std::string& name : ckpt.names()) model->skipped_tensors += read.count(name) ? 0 : 1;
  }

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
  std::vector<PackedMatrix*> in_place;  // the matrices read in place: packed lazily if their copies fit
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
        in_place.push_back(m);
        at += rows;
      }
    } else if (!l.packed.empty() && !l.transposed && PackedMatrix::fast_in_place &&
               (dtype == TensorDtype::f32 || dtype == TensorDtype::bf16 || dtype == TensorDtype::f16)) {
      // nn.Linear W [rows, cols] in place, each block of rows its own matrix (a 3D [E, rows, cols]
      // stack of experts: its E·rows rows in order).
      const detail::Checkpoint::InPlace src = ckpt.in_place(l.name, l.shape);
      const WeightStorage storage = dtype == TensorDtype::f32    ? WeightStorage::f32
                                    : dtype == TensorDtype::bf16 ? WeightStorage::bf16
                                                                 : WeightStorage::f16;
      const int64_t cols = l.shape.back(), bytes = dtype == TensorDtype::f32 ? 4 : 2;
      int64_t first = 0;
      for (const auto& [m, rows] : l.packed) {
        *m = PackedMatrix::in_place_rows(static_cast<const char*>(src.data) + first * cols * bytes, storage, rows, cols,
                                         cols, shared_ckpt);
        in_place.push_back(m);
        first += rows;
      }
    } else if (!l.packed.empty() && !l.transposed) {
      // Row chunks of about 4 MB through one staging buffer; each chunk's rows go to the blocks they
      // fall in (one block unless the tensor is fused).
      const int64_t cols = l.shape.back();
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < l.shape.size(); ++d) rows *= l.shape[d];
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
  // The lazy packing (packed_matrix.h), within the memory check: the copies of every matrix read in place
  // that enters a product (an untied model's token embedding is only looked up by rows: never packed).
  if (!w.lm_head.empty()) std::erase(in_place, &w.token_embedding);
  for (const PackedMatrix* m : in_place) w.packing.bytes += double(m->packed_bytes());
  w.packing.fits = machine_memory <= 0 || packing_fits(opened_memory, w.packing.bytes, machine_memory);
  if (w.packing.fits && !in_place.empty()) {
    w.packing.state = std::make_shared<PackingState>();
    for (PackedMatrix* m : in_place) m->pack_lazily(w.packing.state);
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
  require(!c.trained.active || kv_heads == original,
          (c.trained.layer_kinds.empty()
               ? "a model without a softmax (attnscope_linear) has no KV cache to share: each head keeps its own state of "
                 "keys and values, so it opens with its own "
               : "a trained hybrid (attnscope_linear with layer_types) is not converted: its layers without a softmax "
                 "keep a state per head, not a cache to share, so it opens with its own ") +
              std::to_string(original) + " heads only");
  require(kv_heads >= 1 && kv_heads <= c.heads && c.heads % kv_heads == 0,
          "kv heads must divide the " + std::to_string(c.heads) + " query heads, got " + std::to_string(kv_heads));
  require(!c.qk_norm_whole || kv_heads == original,
          c.model_type + " normalises its keys over all " + std::to_string(original) +
              " key heads together (k_norm over the whole k projection): pooled heads would change what that norm "
              "divides by, so it opens with its own " + std::to_string(original) + " kv heads only");
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
  out->skipped_tensors = model.skipped_tensors;
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
