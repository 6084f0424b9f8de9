// model.h — a Hugging Face checkpoint folder opened once, shared immutable.
//
//   DIR/config.json                                 → ModelConfig (config.h)
//   DIR/model.safetensors                           one file, or
//   DIR/model.safetensors.index.json + shards       "weight_map": tensor name → shard file
// Every tensor the family needs is looked up by its Hugging Face name, checked against the shape
// config.json implies and refused when it holds NaN or ±inf. The linear weights are read in place
// from the mapped files (packed_matrix.h: F32, BF16 and F16 stay as stored and are widened to float32
// inside the product, exactly; the mapping lives as long as the weights), so opening copies nothing;
// a build without AVX-512 packs them into float32 panels instead. Vectors are float32 copies.
// GPT-2's Conv1D weights ([in, out]) are read as the transpose of the nn.Linear layout [out, in], and
// Phi-3's fused qkv_proj [(H+2G)·D, C] and gate_up_proj [2F, C] are split by rows into W_Q, W_K, W_V
// and W_gate, W_up, GPT-NeoX's per-head query_key_value [H·3·D, C] by each head's q, k, v rows, so one
// forward pass (forward.h) serves every family. A multimodal container (gemma3, mistral3, ministral3)
// opens its text tower (language_model.model.* or model.language_model.*) and leaves the vision tower unread. DeepSeek's MLA and experts
// load into LayerWeights::mla and ::moe (their own tensors; W_Q is q_proj when q_lora_rank is null).
// gpt-oss's sinks and experts load into LayerWeights::sinks and ::oss: MXFP4 experts stay at 4 bits in
// the mapped file (mxfp4.h), the dequantised layout's [E, C, 2F] / [E, F, C] tensors are packed per expert.
//
// Legend: L layers, C d_model, H query heads, G kv heads, D head width, F MLP width, V vocabulary,
// P learned positions.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/core/types.h"
#include "attnscope/model/config.h"
#include "attnscope/model/mxfp4.h"
#include "attnscope/model/packed_matrix.h"

namespace attnscope::model {

// The key and value projections: what an MHA → GQA/MQA conversion changes.
// Linear weights are PackedMatrix (packed_matrix.h): the nn.Linear [out, in] matrix in the order the
// forward pass's product reads it; operator()(r, c) and to_mat() give the plain values.
struct KvWeights {
  PackedMatrix wk, wv;           // [G·D, C]
  Vec bk, bv;                    // [G·D] when config.qkv_bias, else empty
};

// A SwiGLU MLP's three matrices: down(silu(gate x) ⊙ up x).  gate, up [F, C], down [C, F]
struct SwigluWeights {
  PackedMatrix gate, up, down;
};

// DeepSeek's mixture of experts (config.moe): router [E, C], V3's correction bias [E] (choosing only),
// E routed experts and the shared experts as one MLP of width expert_ffn·shared (absent when 0).
struct MoeWeights {
  PackedMatrix router;
  Vec correction_bias;
  std::vector<SwigluWeights> experts;
  SwigluWeights shared;
  PackedMatrix shared_gate;  // [1, C] Qwen3-Next's shared_expert_gate (config.moe.shared_gate)
};

// Qwen3-Next's Gated DeltaNet layer (config.linear, config.h LinearAttentionConfig). Legend: Hk, Hv key and
// value heads, dk, dv their widths, K the convolution's width. in_proj_qkvz [2·Hk·dk + 2·Hv·dv, C] holds per
// key head its q rows, k rows, then the v and z rows of its Hv/Hk value heads (the grouping
// fix_query_key_value_ordering undoes), in_proj_ba [2·Hv, C] per key head its b rows then its a rows; both
// are split at load into the matrices below, in head order.
struct GatedDeltaNetWeights {
  PackedMatrix wq, wk;   // [Hk·dk, C]
  PackedMatrix wv, wz;   // [Hv·dv, C]
  PackedMatrix wb, wa;   // [Hv, C]
  Mat conv;              // [2·Hk·dk + Hv·dv, K] conv1d.weight [channels, 1, K]; channels q, k, v in head order
  Vec dt_bias, a_log;    // [Hv]
  Vec norm;              // [dv] the gated RMSNorm's weight (as stored: this norm has no 1 +)
  PackedMatrix out;      // [C, Hv·dv] out_proj
};

// A Granite 4.0-H Mamba-2 layer's tensors (mamba.*), in_proj split at load into its three parts.
struct Mamba2Weights {
  PackedMatrix wz, wxbc, wdt;  // [I, C], [conv_dim, C], [heads, C]: in_proj's rows gate, xBC, dt
  Mat conv;                    // [conv_dim, K] conv1d.weight [conv_dim, 1, K]; channels x, B, C
  Vec conv_bias;               // [conv_dim] (empty without mamba_conv_bias)
  Vec dt_bias, a_log, d_skip;  // [heads] dt_bias, A_log, D
  Vec norm;                    // [I] the gated RMSNorm's weight
  PackedMatrix out;            // [C, I] out_proj
};

// The gates of a layer attnscope trained without a softmax (config.trained; train/model.h's legend), as the
// kind has them (the others empty): b_proj [H, C] (deltanet, gated-deltanet), step_proj [H, C] (Mamba-2's
// dt_proj or Gated DeltaNet's a_proj), dt_bias and A_log [H] (mamba2, gated-deltanet), D [H] (mamba2).
struct TrainedLinearWeights {
  Mat b_proj, step_proj;
  Vec dt_bias, a_log, d_skip;
};

// One gpt-oss expert matrix in nn.Linear layout [out, in]: MXFP4 in place, or packed float32 (the
// dequantised layout, stored [in, out] per expert).
struct ExpertMatrix {
  Mxfp4Matrix mxfp4;
  PackedMatrix dense;
  int64_t rows() const { return mxfp4.empty() ? dense.rows() : mxfp4.rows(); }
  int64_t cols() const { return mxfp4.empty() ? dense.cols() : mxfp4.cols(); }
  float operator()(int64_t r, int64_t c) const { return mxfp4.empty() ? dense(r, c) : mxfp4(r, c); }
};

// gpt-oss's mixture of experts (config.oss): the router with its bias, and per expert the fused
// gate_up [2F, C] (rows gate, up, gate, up, …) and down [C, F] with their biases.
struct GptOssMoeWeights {
  PackedMatrix router;             // [E, C]
  Vec router_bias;                 // [E]
  std::vector<ExpertMatrix> gate_up, down;  // [E]
  Mat gate_up_bias;                // [E, 2F]
  Mat down_bias;                   // [E, C]
};

// DeepSeek's multi-head latent attention (config.mla). Legend: r kv_lora_rank, rq q_lora_rank, R rope
// dim, N nope dim, Dv v dim.
struct MlaWeights {
  PackedMatrix q_a;      // [rq, C]  when q_lora_rank (else LayerWeights::wq [H·(N+R), C] is q_proj)
  Vec q_a_norm;          // [rq]
  PackedMatrix q_b;      // [H·(N+R), rq]
  PackedMatrix kv_a;     // [r + R, C]  kv_a_proj_with_mqa: the latent c_KV, then the shared rotary key
  Vec kv_a_norm;         // [r]
  PackedMatrix kv_b;     // [H·(N+Dv), r]  per head: its key's nope part, then its value
};

struct LayerWeights {
  Vec norm1_weight, norm1_bias;  // [C]; the bias is empty for RMSNorm
  PackedMatrix wq;               // [H·D, C]
  Vec bq;                        // [H·D] when config.qkv_bias, else empty
  KvWeights kv;                  // the checkpoint's own K/V
  PackedMatrix wo;               // [C, H·D]
  Vec bo;                        // [C] when config.o_bias
  Vec q_norm, k_norm;            // [D] when config.qk_norm (Gemma: with the 1 of (1 + w) added); [H·D], [G·D]
                                 // when config.qk_norm_whole (OLMo 2)
  Vec post_attn_norm;            // [C] when config.sandwich_norms: Gemma's post_attention_layernorm
  Vec norm2_weight, norm2_bias;  // [C] the norm before the MLP (Gemma: pre_feedforward_layernorm)
  Vec post_mlp_norm;             // [C] when config.sandwich_norms: post_feedforward_layernorm
  PackedMatrix w_gate;           // [F, C] SwiGLU and GeGLU only
  PackedMatrix w_up;             // [F, C] (GPT-2: c_fc)
  PackedMatrix w_down;           // [C, F] (GPT-2: c_proj of the MLP)
  Vec b_up, b_down;              // [F], [C] when config.mlp_bias
  MlaWeights mla;                // config.is_mla(); wo is then [C, H·Dv]
  MoeWeights moe;                // config.moe.is_moe_layer(layer) (the dense w_gate/w_up/w_down are empty)
  Vec sinks;                     // [H] config.attention_sinks: each head's learned sink logit (gpt-oss)
  GptOssMoeWeights oss;          // config.oss.active() (the dense MLP matrices are empty)
  PackedMatrix attn_gate;        // [H·D, C] config.attn_output_gate: q_proj's gate rows (wq holds its query rows)
  GatedDeltaNetWeights deltanet; // config.is_linear_layer(layer) (the attention matrices are empty)
  Mamba2Weights mamba;           // config.is_linear_layer(layer) of a granitemoehybrid model
  TrainedLinearWeights trained;  // config.trained.active: the gates (q/k/v/o are wq, kv and wo above)
};

// The lazy packing of the matrices read in place (packed_matrix.h "Packed lazily"), decided by open()'s
// memory check: their float32 copies (`bytes`: every such matrix, an MoE's experts all counted though
// only those used twice get packed) on top of what open() holds must pass weights_fit (model.h below);
// else `fits` is false, `state` null, and every product keeps reading in place.
struct WeightPacking {
  std::shared_ptr<PackingState> state;  // shared by the matrices; null when nothing is packed lazily
  double bytes = 0;                     // the copies' bytes, were every matrix packed
  bool fits = true;
};

struct ModelWeights {
  WeightPacking packing;
  PackedMatrix token_embedding;  // [V, C] (rows looked up by id; also the output when tied)
  Mat position_embedding;        // [P, C] learned positions only
  std::vector<LayerWeights> layers;  // [L]
  Vec final_norm_weight, final_norm_bias;  // [C]
  PackedMatrix lm_head;          // [V, C]; empty when tied to token_embedding
  const PackedMatrix& output_embedding() const { return lm_head.empty() ? token_embedding : lm_head; }
};

struct Model {
  std::filesystem::path dir;     // the checkpoint folder
  std::string name;              // its folder name ("gpt2", "Qwen2.5-0.5B")
  ModelConfig config;            // after a conversion, kv_heads is the pooled G
  // The checkpoint's weights, shared (never copied) by a model and its K/V conversions.
  std::shared_ptr<const ModelWeights> weights;
  std::vector<KvWeights> pooled_kv;  // [L] after convert_kv_heads, else empty
  std::string source_dtypes;     // what the files held, e.g. "BF16" or "F16, F32"
  double load_seconds = 0;       // wall time of open()
  int original_kv_heads = 0;     // G of the checkpoint itself
  // A multimodal container (config.container): the tensors of its files left unread (the vision tower and
  // its projector), said in the Checkpoint window and by `attnscope compute`; 0 otherwise.
  int skipped_tensors = 0;
  int64_t parameter_count() const { return config.parameter_count(); }
  // Layer `layer`'s K/V projections: the pooled ones after a conversion, else the checkpoint's.
  const KvWeights& kv(int layer) const {
    return pooled_kv.empty() ? weights->layers[size_t(layer)].kv : pooled_kv[size_t(layer)];
  }
};

// The memory check of open(): the bytes the opened weights hold resident (float32 copies, and the dense
// matrices read in place from the mapped files at their width) within 80 % of the machine's memory, and
// with the MXFP4 experts' bytes (`routed`: mapped at 4.25 bits a value, clean file pages read only for the
// experts a token is routed to, which the kernel may drop and read again) within 90 %. gpt-oss-20b's
// files (about 13.8 GB, 10.2 GB of them experts) so open on a 16 GB machine.
struct WeightMemory {
  double resident = 0, routed = 0;  // bytes
};
bool weights_fit(const WeightMemory& m, double memory_bytes);
// Whether the lazily packed float32 copies (`packed_bytes`) fit beside the opened weights `opened`:
// weights_fit with them added to the resident bytes (the file's pages they are read from stay counted).
bool packing_fits(const WeightMemory& opened, double packed_bytes, double memory_bytes);
// What `compute` says of it in model.json ("weights_in_memory"), e.g. "read in place; float32
// copies (476 MB) made by the second forward (a one-shot forward reads in place)", "read in place: float32
// copies (9.1 GB) would not fit in memory", "float32 copies made at load" (nothing read in place); packing_size the "476 MB" part.
std::string packing_size(const WeightPacking& p);
std::string packing_text(const WeightPacking& p);

// progress(fraction) is called from the opening thread as the weights load (0 < fraction ≤ 1,
// increasing; the last call is 1). It must not throw.
using Progress = std::function<void(double fraction)>;

// Opens a checkpoint folder. Throws InputError naming the file and the problem (missing folder or
// file, malformed safetensors or index, config.json refused, a tensor missing or of the wrong shape,
// NaN/inf weights, not enough memory for the float32 weights) and Cancelled when *cancel becomes true
// between tensors. Suited to a worker thread; the result is immutable and may be shared freely.
std::shared_ptr<const Model> open(const std::filesystem::path& dir, const Progress& progress = {},
                                  const std::atomic<bool>* cancel = nullptr);

// The MHA → GQA/MQA conversion of SPEC (Ainslie et al. 2023) on every layer of a loaded model: the
// K and V heads of the query heads in each new group are mean-pooled, W_K^(g) = mean over the old
// kv heads g' that query heads of group g read, same for W_V and the biases; W_Q and W_O unchanged.
// Pooling always starts from the checkpoint's own K/V: `kv_heads` must divide its G (a GQA model pools
// further, it cannot un-pool); kv_heads == that G gives the checkpoint back. Only the K/V matrices
// are new: every other weight is shared with `model`.
std::shared_ptr<const Model> convert_kv_heads(const Model& model, int kv_heads);

}  // namespace attnscope::model
