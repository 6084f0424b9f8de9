// config.h — a checkpoint's config.json, read into the few numbers and switches the forward pass needs.
//
// Families (SPEC "Real checkpoints"):
//   gpt2   model_type gpt2: learned positions, LayerNorm(layer_norm_epsilon), gelu_new MLP, Conv1D
//          weights, output tied to wte unless tie_word_embeddings is false
//   llama  model_type llama, mistral, qwen2, qwen3, phi3: RMSNorm(rms_norm_eps), rotate-half
//          RoPE(rope_theta), num_key_value_heads, optional head_dim, SwiGLU MLP, tie_word_embeddings;
//          qwen3 adds an RMSNorm over each head of q and of k before RoPE (qk_norm); phi3 stores q/k/v
//          and gate/up as fused tensors, split at load (model.cpp), so the pass is Llama's, and may
//          rotate only the leading head_dim × partial_rotary_factor values (Phi-4-mini);
//          every rotary family: rope_scaling / rope_parameters (RopeScalingConfig below);
//          smollm3: the same with a per-layer NoPE list (no_rope_layers[i] == 1: layer i uses RoPE);
//          gemma2, gemma3_text: (1 + w) RMSNorms, four norms per block, embedding × √hidden_size,
//          GeGLU (gelu tanh), query_pre_attn_scalar, soft-capping (Gemma 2), q/k norms (Gemma 3),
//          sliding-window layers interleaved with global ones, local/global RoPE bases (Gemma 3)
//   deepseek  model_type deepseek_v2, deepseek_v3: Llama's norms and SwiGLU, with multi-head latent
//          attention (MlaConfig) and a mixture-of-experts MLP (MoeConfig) in its own layer functions
//   qwen3_moe, olmoe, granite, granitemoe: Llama's pass with MoeConfig's experts in place of the dense
//          MLP (qwen3_moe: the layers decoder_sparse_step and mlp_only_layers choose; olmoe, granitemoe:
//          every layer); olmoe's q/k norms span the whole projection (qk_norm_whole); granite and
//          granitemoe scale the embedding, each residual branch, the scores and the logits
//   gpt_neox  (Pythia) LayerNorm(layer_norm_eps) with biases, RoPE on the leading head_dim × rotary_pct values
//          (base rotary_emb_base), q/k/v/o and MLP biases, the exact GELU MLP, use_parallel_residual:
//          x + attn(norm1(x)) + mlp(norm2(x)); query_key_value is split per head at load (model.cpp)
//   olmo2  Llama's attention and SwiGLU with the norms AFTER the attention and MLP outputs (no pre-norms)
//          and q/k RMSNorms over the whole projection (qk_norm_whole)
//   gemma3, mistral3, ministral3: multimodal containers; their text_config is read by the reader of its
//          model_type (gemma3_text, mistral, ministral3: Mistral's with rope_parameters' llama_4_scaling_beta
//          query scale), the vision tower is not read (container)
//   gpt_oss  model_type gpt_oss (OpenAI gpt-oss): Llama's norms, GQA with q/k/v/o biases, YaRN, a learned
//          sink logit per head in every row's softmax, sliding (sliding_window) and full layers as
//          layer_types says, and a mixture of experts with the clamped SwiGLU (GptOssConfig), its experts
//          read in place as MXFP4 (mxfp4.h) or as the dequantised BF16 layout
//   qwen3_next  Qwen3-Next: Gated DeltaNet layers (LinearAttentionConfig) and, every full_attention_interval-th
//          layer (or as layer_types says), gated softmax attention with per-head q/k norms and partial RoPE;
//          (1 + w) RMSNorms; Qwen3-MoE's experts plus a gated shared expert
// The differences live in this struct (norm, positions, mlp), not in two forward passes.
// The float32 contract: attnscope's forward equals transformers' with the model loaded in float32
// (dtype=torch.float32, eager attention). Weights of any file dtype are widened exactly; every constant
// is the one a float32-loaded model holds — RoPE frequencies in float32 as modeling_rope_utils.py makes
// them, Gemma's √hidden_size as float32 (transformers casts it to the hidden states' dtype, float32
// there, so a BF16 file does NOT round it to 34.0 for hidden_size 1152: it stays 33.941…).
// Anything outside these conventions is refused with a message that names the key and says what is
// supported: another model_type, a rope type transformers does not define, an activation other than
// the family's own, …
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/attention/linear_layer.h"

namespace attnscope::model {

enum class Family { gpt2, llama };
enum class NormKind { layernorm, rmsnorm };        // LayerNorm (weight + bias) or RMSNorm (weight)
enum class PositionKind { learned, rotary };       // wpe added to the input, or RoPE on q and k
enum class MlpKind { gelu_new, swiglu, geglu, gelu };  // down(gelu_new(up x)), down(silu(gate x) ⊙ up x),
                                                      // down(gelu_tanh(gate x) ⊙ up x) (Gemma) or
                                                      // down(gelu(up x)) with the exact erf GELU (GPT-NeoX)

// DeepSeek's multi-head latent attention (SPEC "Variants after GQA", MLA). Every head has its own
// keys and values, all up-projected from one latent c_KV [kv_lora_rank] per token, plus one rotary key
// [rope_dim] shared by the heads; the cache holds kv_lora_rank + rope_dim values per token per layer.
struct MlaConfig {
  int q_lora_rank = 0;   // 0: q = h·W_Qᵀ (q_proj); else c_Q = RMSNorm(q_a_proj h), q = q_b_proj c_Q
  int kv_lora_rank = 0;  // r: the latent's width (0: not MLA)
  int nope_dim = 0;      // qk_nope_head_dim: each head's key/query part without positions
  int rope_dim = 0;      // qk_rope_head_dim: the rotary part (interleaved pairs 2i, 2i+1)
  int v_dim = 0;         // v_head_dim
  double softmax_scale = 0;  // 1/√(nope + rope), × mscale(f, mscale_all_dim)² with YaRN
  // YaRN (rope_scaling type yarn), Hugging Face's rule: inv_freq blends interpolated and original
  // frequencies over the correction range of beta_fast/beta_slow; cos and sin × attention_factor.
  bool yarn = false;
  double yarn_factor = 1, yarn_original_max = 0, beta_fast = 32, beta_slow = 1, attention_factor = 1;
  static constexpr double latent_norm_eps = 1e-6;  // q_a_layernorm, kv_a_layernorm (SPEC)
  // inv_freq_i of the rotary part, i < rope_dim/2, as Hugging Face computes them (float32 values).
  std::vector<float> inv_freq(double theta) const;
};

// DeepSeek's mixture-of-experts MLP: layers from first_k_dense_replace on replace the dense SwiGLU by
// Σ_{e in top-k} w_e·expert_e(x) + shared(x); experts are SwiGLU MLPs of width expert_ffn, the shared
// one of width expert_ffn·shared.
enum class TopkMethod { greedy, group_limited_greedy, noaux_tc };
struct MoeConfig {
  int experts = 0;          // n_routed_experts E (0: every layer dense)
  int shared = 0;           // n_shared_experts
  int top_k = 0;            // num_experts_per_tok
  int expert_ffn = 0;       // moe_intermediate_size
  int first_dense = 0;      // first_k_dense_replace
  double routed_scale = 1;  // routed_scaling_factor
  TopkMethod method = TopkMethod::greedy;
  int groups = 1, topk_groups = 1;  // n_group, topk_group
  bool norm_topk = false;   // norm_topk_prob: the chosen weights sum to 1 (before routed_scale, V3)
  bool sigmoid = false;     // scoring_func sigmoid (V3), else softmax (V2)
  bool correction_bias = false;  // V3's mlp.gate.e_score_correction_bias [E] (choice only)
  // Qwen3-MoE (modeling_qwen3_moe.py, Qwen3MoeDecoderLayer): a layer is a mixture when (layer + 1) is a
  // multiple of decoder_sparse_step and the layer is not in mlp_only_layers; the others are dense.
  int sparse_step = 1;
  std::vector<int> dense_layers;  // mlp_only_layers
  // GraniteMoe (JetMoeTopKGating): the top-k by the router's logits, weighted by the softmax over those
  // k logits only (not over every expert, then renormalised).
  bool softmax_over_topk = false;
  // Qwen3-Next (Qwen3NextSparseMoeBlock): one shared SwiGLU expert of width shared_expert_intermediate_size
  // (shared_ffn > 0, instead of DeepSeek's expert_ffn·shared), its output × σ(h·w_gate) (shared_expert_gate
  // [1, C]), added to the routed experts' sum.
  int shared_ffn = 0;
  bool shared_gate = false;
  bool is_moe_layer(int layer) const {
    if (experts == 0 || layer < first_dense || (layer + 1) % sparse_step != 0) return false;
    for (int d : dense_layers)
      if (d == layer) return false;
    return true;
  }
};

// gpt-oss (transformers 5.x models/gpt_oss/modeling_gpt_oss.py and configuration_gpt_oss.py):
//   attention  P_h[i, ·] = softmax([S_h[i, ·] ; s_h])[:T] — the head's learned sink logit s_h
//              (self_attn.sinks [H]) joins each row's softmax and its share is dropped, so a row sums
//              to 1 − (the sink's share)
//   router     logits = h·W_rᵀ + b_r [E]; the top_k largest, weights = softmax over those k
//   expert e   [g ; u] = h·W_guᵀ + b_gu, gate = columns 0, 2, 4, … and up = 1, 3, 5, … (interleaved);
//              g ← min(g, limit), u ← clamp(u, −limit, limit); y = ((u + 1) ⊙ g·σ(α·g))·W_dᵀ + b_d
//   mlp(h)     Σ over the chosen experts of weight_e · expert_e(h)
struct GptOssConfig {
  int experts = 0;             // num_local_experts E (0: not gpt-oss)
  int top_k = 0;               // num_experts_per_tok
  double alpha = 1.702;        // swiglu_alpha
  double limit = 7.0;          // swiglu_limit
  bool mxfp4 = false;          // quantization_config mxfp4: experts as *_blocks / *_scales (else BF16/F32 tensors)
  bool active() const { return experts > 0; }
};

// Qwen3-Next's Gated DeltaNet layers (transformers 5.x models/qwen3_next/modeling_qwen3_next.py,
// Qwen3NextGatedDeltaNet; SPEC / linear_attention.h "gated_delta"). Per token t of a linear layer, h = norm1(x):
//   [q ; k ; v] = SiLU(causal depthwise conv1d of width conv_kernel over [h·W_qᵀ ; h·W_kᵀ ; h·W_vᵀ])
//   z = h·W_zᵀ, b = h·W_bᵀ, a = h·W_aᵀ  (in_proj_qkvz / in_proj_ba hold them grouped per key head; split at
//   load), β = σ(b), g = −exp(A_log)·softplus(a + dt_bias), per value head j (key head j / (Hv/Hk)):
//   q, k L2-normalised (x·rsqrt(Σx² + 1e−6)), q × 1/√key_dim, the gated delta rule over S [key_dim, value_dim],
//   o_j = RMSNorm(o_j)·w·SiLU(z_j) (norm.weight [value_dim], no 1 +), out_proj [C, Hv·value_dim].
// Its drawn "attention" is each value head's explicit matrix M (linear_head_matrix): signed, rows not
// summing to 1.
struct LinearAttentionConfig {
  int key_heads = 0;    // linear_num_key_heads Hk (0: no linear layers)
  int value_heads = 0;  // linear_num_value_heads Hv, a multiple of Hk
  int key_dim = 0;      // linear_key_head_dim
  int value_dim = 0;    // linear_value_head_dim
  int conv_kernel = 0;  // linear_conv_kernel_dim
  bool active() const { return key_heads > 0; }
  int conv_dim() const { return 2 * key_heads * key_dim + value_heads * value_dim; }
};

// Granite 4.0-H's Mamba-2 layers (transformers 5.x models/granitemoehybrid/modeling_granitemoehybrid.py,
// GraniteMoeHybridMambaLayer.torch_forward; SPEC / linear_attention.h "mamba2"). Per token t of a Mamba layer,
// h = norm1(x), I = heads·head_dim:
//   [z ; xBC ; dt] = h·W_inᵀ (in_proj [I + conv_dim + heads, C]), xBC = SiLU(causal depthwise conv1d of width
//   conv_kernel over xBC, + conv1d.bias), split into x [I], B [groups·state], C [groups·state];
//   Δ = softplus(dt + dt_bias), A = −exp(A_log) per head; head j (its B, C group j / (heads / groups)) runs the
//   SSD over S [head_dim, state]: y = M·x + D·x; out = out_proj(RMSNorm(y·SiLU(z)) over all I values ·w).
// Its drawn "attention" is each head's implicit matrix M (linear_head_matrix mamba2, M_ts = C_t·B_s·Δ_s·
// Π_{r=s+1..t} exp(Δ_r·A)): signed, rows not summing to 1; the D skip is outside M, as the engine's kind has it.
struct Mamba2Config {
  int heads = 0;        // mamba_n_heads (0: no Mamba layers)
  int head_dim = 0;     // mamba_d_head (heads × head_dim = mamba_expand × hidden_size)
  int groups = 1;       // mamba_n_groups: B and C per group, shared by heads / groups heads
  int state = 0;        // mamba_d_state N
  int conv_kernel = 0;  // mamba_d_conv
  bool conv_bias = true;  // mamba_conv_bias
  bool active() const { return heads > 0; }
  int inner() const { return heads * head_dim; }
  int conv_dim() const { return inner() + 2 * groups * state; }
};

// A model attnscope trained without a softmax (model_type "attnscope_linear", train/checkpoint.h): the
// Llama layout with every layer's attention one of the seeded layer's kinds (attention/linear_layer.h, the
// trainer's linear_ops.h), G = H, no rotary positions, and the gates' tensors self_attn.{b_proj.weight,
// a_proj.weight, dt_proj.weight, dt_bias, A_log, D} as the kind has them; A = −exp(A_log) where the kind
// has one (retention's γ_h is the fixed schedule). Every layer is linear (layer_linear all true), or, in a
// hybrid (attention_kind "hybrid", layer_types), the layers layer_linear marks; the others are Llama's softmax
// attention (rotary, G = H).
struct TrainedLinearConfig {
  bool active = false;
  LinearLayerKind kind = LinearLayerKind::linear;  // every layer's (a hybrid: its first linear layer's)
  std::vector<LinearLayerKind> layer_kinds;        // a hybrid: [L], each linear layer's kind (empty: `kind`)
  bool normalize = true;  // linear: rows divided by their normaliser
  LinearLayerKind kind_of(int layer) const { return layer_kinds.empty() ? kind : layer_kinds[size_t(layer)]; }
};

// RoPE as config.json's rope_scaling (or transformers 5's rope_parameters) says it, for the
// rotate-half families (transformers 5.x modeling_rope_utils.py, ROPE_INIT_FUNCTIONS; the float32
// frequencies of a float32-loaded model). d = rotary_dim, θ_k = base^(−2k/d) in float32, L = original:
//   plain     θ_k                                   (rope_type "default")
//   linear    θ_k / factor
//   dynamic   base' = base·(factor·T'/P − (factor − 1))^(d/(d−2)), T' = max(T, P), P =
//             max_position_embeddings: unchanged up to P tokens, NTK-scaled by the input's length beyond
//   yarn      θ_k/factor·(1 − e_k) + θ_k·e_k, e_k = 1 − clamp((k − low)/(high − low), 0, 1) over the
//             correction range of beta_fast/beta_slow at L (floored/ceiled unless truncate is false);
//             cos and sin × attention_factor (explicit, else mscale(factor, mscale)/mscale(factor,
//             mscale_all_dim) when both are given, else 0.1·ln factor + 1)
//   llama3    wavelength λ_k = 2π/θ_k: λ_k < L/high_freq_factor kept, λ_k > L/low_freq_factor divided by
//             factor, between them (1 − s)·θ_k/factor + s·θ_k, s = (L/λ_k − low)/(high − low)
//   longrope  θ_k / ext_k, ext = long_factor when T > L, else short_factor; cos and sin × attention_factor
//             (explicit, else √(1 + ln f / ln L) for f = factor, or max_position_embeddings / L, above 1)
enum class RopeType { plain, linear, dynamic, yarn, llama3, longrope };
const char* to_string(RopeType type);  // "default", "linear", "dynamic", "yarn", "llama3", "longrope"

struct RopeScalingConfig {
  RopeType type = RopeType::plain;
  double factor = 1;
  int original_max = 0;  // L: original_max_position_embeddings (yarn, llama3, longrope)
  int max_positions = 0;  // P (dynamic, longrope's default factor)
  double low_freq_factor = 1, high_freq_factor = 4;  // llama3
  double beta_fast = 32, beta_slow = 1;              // yarn
  bool truncate = true;                              // yarn
  double attention_factor = 1;                       // yarn, longrope (resolved when read)
  std::vector<double> short_factor, long_factor;     // longrope, rotary_dim/2 each
};

// One layer's rotary frequencies for an input of T tokens: the float32 θ'_k, k < rotary_dim/2, and the
// factor on cos and sin.
struct RopeFrequencies {
  std::vector<float> inv_freq;
  float attention_factor = 1;
};
// base the layer's RoPE base, d the rotated width.
RopeFrequencies rope_frequencies(const RopeScalingConfig& scaling, double base, int d, int tokens);

struct ModelConfig {
  std::string model_type;  // gpt2 | llama | mistral | qwen2 | qwen3 | phi3 | smollm3 | gemma2 | gemma3_text |
                           // deepseek_v2 | deepseek_v3 | qwen3_moe | olmoe | granite | granitemoe | gpt_neox |
                           // olmo2 | ministral3 | gpt_oss | qwen3_next | granitemoehybrid; a multimodal container's text tower's (text_config.model_type)
  std::string container;   // gemma3 | mistral3 | ministral3 when config.json is a multimodal container whose
                           // text_config was read (its vision tower is not), else empty
  Family family = Family::llama;
  NormKind norm = NormKind::rmsnorm;
  PositionKind positions = PositionKind::rotary;
  MlpKind mlp = MlpKind::swiglu;

  int layers = 0;         // L
  int d_model = 0;        // C
  int heads = 0;          // H
  int kv_heads = 0;       // G, divides H
  int head_dim = 0;       // D (C / H unless config.json says otherwise)
  int ffn_dim = 0;        // F
  int vocab = 0;          // V
  int max_positions = 0;  // the longest input the model was built for
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;      // rotary only
  bool tied_embeddings = true;      // logits use the token embedding table (no lm_head.weight)
  int sliding_window = 0;           // > 0: the window of the sliding-window layers (layer_window)
  bool qkv_bias = false;            // q/k/v projections have biases (gpt2, qwen2, llama attention_bias)
  bool o_bias = false;              // the output projection has a bias (gpt2, llama attention_bias)
  bool mlp_bias = false;            // the MLP projections have biases (gpt2)
  bool qk_norm = false;             // RMSNorm(norm_eps) over each head's D values of q and of k, after the
                                    // projection and before RoPE, weights q_norm/k_norm [D] (qwen3)
  double residual_scale = 1;        // x += branch × residual_multiplier (granite, granitemoe)
  double logits_divisor = 1;        // logits ÷ logits_scaling (granite, granitemoe)
  bool sandwich_norms = false;      // Gemma: post_attention_layernorm on the attention output, and
                                    // pre_/post_feedforward_layernorm around the MLP
  bool norm_plus_one = false;       // Gemma: RMSNorms scale by (1 + w); the 1 is added to w at load
  bool pre_norms = true;            // false (OLMo 2): no norm before attention or the MLP; with
                                    // sandwich_norms the block is x + post_norm(attn(x)), x + post_norm(mlp(x))
  bool qk_norm_whole = false;       // instead of qk_norm's (OLMo 2, OLMoE): RMSNorm(norm_eps) over the whole q
                                    // projection [H·D] and the whole k projection [G·D] (q_norm/k_norm weights
                                    // of those widths), before the heads are split and before RoPE
  bool parallel_residual = false;   // GPT-NeoX use_parallel_residual: x + attn(norm1(x)) + mlp(norm2(x))
  double query_scale_beta = 0;      // > 0 (Ministral 3, rope_parameters.llama_4_scaling_beta): queries after
  int query_scale_length = 0;       // RoPE × 1 + β·ln(1 + ⌊t / length⌋), length = original_max_position_embeddings
  double attn_scale = 0;            // the score scale: 1/√D, Gemma query_pre_attn_scalar^(−1/2)
  double attn_softcap = 0;          // > 0: scores s → tanh(s/cap)·cap before the mask (Gemma 2)
  double final_softcap = 0;         // > 0: logits z → tanh(z/cap)·cap (Gemma 2)
  double embedding_scale = 1;       // x₀ = E[ids]·scale (Gemma: √hidden_size as float32, whatever the
                                    // file's dtype: the float32 contract below)
  std::vector<int> layer_window;    // [L], 0 = global; W > 0: query i sees keys i − W < j ≤ i
  std::vector<double> layer_rope_theta;  // [L] RoPE base per layer, 0 = no RoPE in that layer (NoPE;
                                         // every layer of a learned-position family)
  int rotary_dim = 0;               // the rotated leading part of each head: head_dim × partial_rotary_factor
                                    // (Phi-3 family); the rest passes unrotated. 0 = head_dim
  RopeScalingConfig rope_scaling;   // rope_scaling / rope_parameters (rotary families but DeepSeek: mla)
  std::vector<bool> layer_rope_scaled;  // [L] the layer uses rope_scaling (Gemma 3: global layers only)
  int rotated_dim() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  // The frequencies of `layer` (a rotary, non-NoPE layer) for an input of `tokens` tokens.
  RopeFrequencies layer_rope(int layer, int tokens) const;
  bool nope_layer(int layer) const {  // a rotary model's layer without RoPE (SmolLM3)
    return positions == PositionKind::rotary && layer_rope_theta[size_t(layer)] == 0;
  }
  MlaConfig mla;                    // deepseek_v2/v3 (kv_heads = heads, head_dim = nope + rope)
  MoeConfig moe;                    // deepseek_v2/v3, qwen3_moe, olmoe, granitemoe
  GptOssConfig oss;                 // gpt_oss: sinks and its experts (ffn_dim is each expert's width)
  bool attention_sinks = false;     // gpt_oss: a learned sink logit per head (self_attn.sinks)
  // Qwen3-Next: layer_linear[l] marks its Gated DeltaNet layers (the others are gated softmax attention:
  // q_proj [H·2D, C] gives each head's query and then its gate, output·σ(gate) before o_proj).
  LinearAttentionConfig linear;
  std::vector<bool> layer_linear;   // [L], empty when no layer is linear (Gated DeltaNet or Mamba-2 layers)
  Mamba2Config mamba;               // granitemoehybrid: layer_linear marks its Mamba-2 layers
  TrainedLinearConfig trained;       // attnscope_linear: every layer one kind without a softmax
  bool attn_output_gate = false;
  bool is_linear_layer(int layer) const { return !layer_linear.empty() && layer_linear[size_t(layer)]; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }

  int64_t parameter_count() const;  // from the shapes (biases included when the family has them)
};

// Reads config.json's text with the reader of its model_type's entry in the family table
// (families.h). `name` (the path) goes into messages. Throws InputError naming the key for a missing
// or wrong field, an unsupported model_type or feature. `keys_read` (optional) receives every
// top-level key the reader looked up, present or not, sorted (also when it throws).
ModelConfig parse_model_config(std::string_view json_text, const std::string& name,
                               std::vector<std::string>* keys_read = nullptr);

// model_type values parse_model_config accepts, from the family table: "gpt2, llama, mistral, qwen2, …".
const char* supported_model_types();

// Just (H, G) from a config.json of ANY decoder (num_attention_heads / n_head, num_key_value_heads;
// or the heads / kv_heads of `compute --checkpoint`'s model.json),
// for drawing the kv groups of attentions computed elsewhere; G = H when the file has no
// num_key_value_heads. Throws InputError when it holds neither head count.
struct HeadCounts {
  int heads = 0, kv_heads = 0;
};
HeadCounts parse_head_counts(std::string_view json_text, const std::string& name);

}  // namespace attnscope::model
