// model.h — a small decoder-only transformer in exactly the Llama layout, trainable on the CPU.
//
//   ids [B, T] → x = embed_tokens[ids]                                     [BT, C]
//   each of L blocks (pre-norm):
//     h = RMSNorm₁(x); q = h·W_qᵀ [BT, H·D], k = h·W_kᵀ, v = h·W_vᵀ [BT, G·D]
//     q, k ← rotary(q, k);  a = grouped causal attention(q, k, v)   [BT, H·D]   (probs [B, H, T, T])
//     x ← x + a·W_oᵀ
//     with an MLP:  h = RMSNorm₂(x);  x ← x + W_down·(silu(W_gate·h) ⊙ W_up·h)
//   logits = RMSNorm_f(x)·embed_tokensᵀ (tied)                              [BT, V]
//   loss = mean cross-entropy of the next token over the scored positions (targets ≥ 0)
//
// Attention kind MLA (DeepSeek-V2 §2.1, Hugging Face's DeepseekV2Attention) replaces q/k/v_proj: with
// D = C/H (= d_nope = d_v), R = rope_head_dim, r = kv_lora_rank, r_q = q_lora_rank:
//     q = h·W_qᵀ [BT, H·(D+R)]   or   c_Q = RMSNorm_q(h·W_qaᵀ) [BT, r_q], q = c_Q·W_qbᵀ
//     [c_KV | k_pe] = h·W_kv_aᵀ [BT, r + R];  c_KV ← RMSNorm_kv(c_KV);  kv = c_KV·W_kv_bᵀ [BT, H·(D+D)]
//     q's last R of each head and k_pe rotate (interleaved pairs, DeepSeek); k_h = [kv_h key ; k_pe],
//     v_h = kv_h value; attention scaled by 1/√(D+R); the latent norms have eps 1e-6 (SPEC)
//   KV cache per token per layer: r + R values (c_KV and k_pe), against 2·G·D for grouped attention.
// Attention without a softmax (linear, retention, mamba2, deltanet, gated-deltanet; issue 39) keeps
// q_proj, k_proj, v_proj [H·D, C] (G = H, no rotary positions) and the formulas of the inference engine's
// seeded layer (attention/linear_layer.h, docs/math.md "Attention without a softmax"), with the gates'
// weights trained: per layer b_proj [H, C] (β = sigmoid(h·b_projᵀ)), Mamba-2's dt_proj [H, C], dt_bias [H],
// A_log [H] (A = −exp(A_log)), D [H]; Gated DeltaNet's a_proj [H, C], dt_bias, A_log
// (g = −exp(A_log)·softplus(h·a_projᵀ + dt_bias)); retention's γ_h is the fixed schedule. probs then holds
// each head's explicit matrix M (signed). Forward and backward in train/linear_ops.h.
// A sliding window W (per model, or per layer by a pattern such as local,global) lets query i see the
// keys i − W < j ≤ i only (Mistral's convention), in either kind.
//
// Parameters live in one arena with named views (llm.c, llama2.c): `params()` lists every tensor
// under its Hugging Face Llama name, so saving a checkpoint is a walk over that table. Gradients and
// the two AdamW moments are arenas of the same layout. An attention-only model has no MLP tensors
// (and no post-attention norm) in its arena; the checkpoint writer fills them with zeros / ones.
//
// Sizes: L ≤ 4 layers, d_model ≤ 256, H ≤ 16 heads (issue 14); validate_model_config() says what
// is wrong in words.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::train {

// How the keys and values are made: grouped (MHA/GQA/MQA by `groups`), multi-head latent attention, or
// one of the kinds without a softmax (linear_layer.h's LinearLayerKind, in the same order).
enum class AttentionKind { grouped, mla, linear, retention, mamba2, deltanet, gated_deltanet };

// The kinds by their command-line names ("grouped", "mla", "linear", "retention", "mamba2", "deltanet",
// "gated-deltanet"), in one table.
struct AttentionKindEntry {
  AttentionKind kind;
  const char* name;   // --attention's word
  const char* title;  // "MLA", "Mamba-2", … for progress lines
};
const std::vector<AttentionKindEntry>& attention_kinds();
// Throws InputError naming every valid word.
AttentionKind parse_attention_kind(const std::string& name);
const char* attention_kind_word(AttentionKind kind);
// "grouped | mla | linear | …" for help texts and messages.
std::string attention_kind_words();

struct ModelConfig {
  int vocab_size = 0;
  int layers = 2;            // L
  int d_model = 64;          // C
  int heads = 4;             // H
  int groups = 2;            // G, kv heads; divides H
  bool mlp = false;          // SwiGLU MLP in every block, or attention-only
  int intermediate_size = 0; // F; 0 means 4·C rounded (only with mlp)
  int max_positions = 256;   // written to config.json; rotary positions work at any length
  float rope_theta = 10000.0f;
  float rms_norm_eps = 1e-5f;
  AttentionKind attention = AttentionKind::grouped;
  int kv_lora_rank = 16;     // r_kv, the latent c_KV's width (MLA)
  int q_lora_rank = 0;       // r_q; 0: q_proj straight from h (MLA)
  int rope_head_dim = 8;     // qk_rope_head_dim, the decoupled rotary part (MLA); even
  int window = 0;            // sliding window W in tokens; 0: every layer sees all earlier tokens
  std::vector<bool> local_layers;  // with a window: the layers that use it (empty: every layer)
  // A hybrid (Qwen3-Next, Granite 4.0-H, Kimi Linear): each layer's kind, grouped softmax attention or a kind
  // without a softmax, one per layer; empty: every layer is `attention` (which a hybrid ignores). In a
  // hybrid every head has its own keys and values (groups = heads), so every layer's k_proj is [H·D, C].
  std::vector<AttentionKind> layer_kinds;

  bool hybrid() const { return !layer_kinds.empty(); }
  AttentionKind kind_of(int l) const { return hybrid() ? layer_kinds[size_t(l)] : attention; }
  bool mla() const { return !hybrid() && attention == AttentionKind::mla; }
  // No softmax in any layer: the state of a fixed size instead of a KV cache.
  bool softmax_free() const { return !hybrid() && softmax_free_kind(attention); }
  // Layer l has no softmax (a uniform model's kind, or a hybrid's layer).
  bool layer_softmax_free(int l) const { return softmax_free_kind(kind_of(l)); }
  static bool softmax_free_kind(AttentionKind k) { return k != AttentionKind::grouped && k != AttentionKind::mla; }
  int head_dim() const { return d_model / heads; }  // grouped: D; MLA: d_nope = d_v
  int qk_head_dim() const { return mla() ? head_dim() + rope_head_dim : head_dim(); }
  int kv_heads() const { return mla() || softmax_free() || hybrid() ? heads : groups; }  // K/V heads the op sees
  // The window of layer l (0: none).
  int window_of(int l) const {
    return window > 0 && (local_layers.empty() || (size_t(l) < local_layers.size() && local_layers[size_t(l)]))
               ? window
               : 0;
  }
  int ffn() const { return mlp ? (intermediate_size > 0 ? intermediate_size : 4 * d_model) : 0; }
};

inline constexpr int max_layers = 4;
inline constexpr int max_d_model = 256;
inline constexpr int max_heads = 16;
inline constexpr int max_vocab = 8192;
inline constexpr int max_seq_len = 512;

// Throws InputError naming the setting, its value and what would be valid.
void validate_model_config(const ModelConfig& c);

// A layer pattern such as "local,global" (Gemma 2) or "local,local,local,local,local,global" (Gemma 3)
// repeated over `layers` layers: true where the layer is local (windowed). "all" / "" = every layer
// local, "none" = none. Throws InputError naming the bad word.
std::vector<bool> parse_window_pattern(const std::string& pattern, int layers);
// The pattern back as text ("local,global,…" per layer; "all" when every layer is local or the list empty).
std::string window_pattern_text(const std::vector<bool>& local_layers, int layers);

// A hybrid's layer kinds from a list such as "gated-deltanet,grouped" (attention kind words separated by
// commas) repeated over `layers` layers, as the window pattern is. Throws InputError naming the bad word and
// every valid one. validate_model_config checks the mix (softmax and a kind without one, no MLA).
std::vector<AttentionKind> parse_layer_kinds(const std::string& list, int layers);
// The list back as text: "gated-deltanet,grouped,gated-deltanet,grouped".
std::string layer_kinds_text(const std::vector<AttentionKind>& kinds);
// "softmax every k-th layer" (the Training window's pattern choice): layer l is grouped softmax attention
// when (l + 1) % k == 0, `kind` otherwise.
std::vector<AttentionKind> every_kth_softmax(AttentionKind kind, int k, int layers);



// One tensor of the arena: its Hugging Face name, shape and place.
struct ParamView {
  std::string name;            // e.g. "model.layers.0.self_attn.q_proj.weight"
  std::vector<int64_t> shape;  // [out, in] for matrices (nn.Linear layout), [C] for norms
  size_t offset = 0;           // in floats, a multiple of 16 (64-byte aligned)
  size_t size = 0;
  bool decay = false;          // AdamW weight decay applies (matrices, not norm weights)
};

// A 64-byte-aligned float buffer (aligned, so Eigen's vectorised loops split it the same way on
// every run — see ops.cpp on determinism).
class FloatArena {
 public:
  FloatArena() = default;
  explicit FloatArena(size_t n);
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  size_t size() const { return size_; }
  void zero();

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float[], Free> data_;
  size_t size_ = 0;
};

// Pointers into an arena, one per tensor (null where the model has no such tensor).
struct LayerTensors {
  float *attn_norm, *wq, *wk, *wv, *wo, *mlp_norm, *gate, *up, *down;
  // MLA (null otherwise): q_a_proj [r_q, C], q_a_layernorm [r_q], q_b_proj [H·(D+R), r_q] (with r_q > 0,
  // else wq is q_proj [H·(D+R), C]); kv_a_proj_with_mqa [r + R, C] (rows 0…r−1 make c_KV, the last R k_pe),
  // kv_a_layernorm [r], kv_b_proj [H·2D, r]; wo is o_proj [C, H·D]
  float *q_a = nullptr, *q_a_norm = nullptr, *q_b = nullptr, *kv_a = nullptr, *kv_a_norm = nullptr, *kv_b = nullptr;
  // Without a softmax (null where the kind has none): b_proj [H, C], dt_proj or a_proj [H, C] (`step`),
  // dt_bias [H], A_log [H], D [H]
  float *b_proj = nullptr, *step_proj = nullptr, *dt_bias = nullptr, *a_log = nullptr, *d_skip = nullptr;
};
struct ModelTensors {
  float* embed = nullptr;       // [V, C]
  std::vector<LayerTensors> layers;
  float* final_norm = nullptr;  // [C]
};

// The activations of one forward pass at one (B, T), kept for the backward (llm.c's ActivationTensors),
// plus the gradient scratch the backward needs.
struct Activations {
  int B = 0, T = 0;
  FloatArena memory;
  std::vector<float*> x;                      // [L + 1] residual stream entering each block, x[L] = final [BT, C]
  std::vector<float*> ln1, rstd1, q, k, v;    // [BT, C], [BT], [BT, H·D] (rotated), [BT, G·D] (rotated), [BT, G·D]
  std::vector<float*> probs, atty, x_mid;     // [B, H, T, T], [BT, H·D], [BT, C]
  std::vector<float*> ln2, rstd2, gate, up, swi;  // [BT, C], [BT], [BT, F] ×3 (MLP only)
  // MLA only (q, k [BT, H·(D+R)], v [BT, H·D] then): c_Q before and after its norm [BT, r_q] and its rstd
  // [BT] (with r_q > 0); c_KV before/after its norm [BT, r], rstd [BT]; k_pe [BT, R] (rotated);
  // kv_b_proj's output [BT, H·2D]
  std::vector<float*> cq_raw, cq, rstd_q, ckv_raw, ckv, rstd_kv, kpe, kvb;
  // Without a softmax: the gates' inputs h·b_projᵀ and h·step_projᵀ [BT, H] (null where the kind has none)
  std::vector<float*> gate_b, gate_s;
  float *lnf = nullptr, *rstdf = nullptr, *logits = nullptr, *out_probs = nullptr;  // [BT, C], [BT], [BT, V] ×2
  std::vector<int32_t> ids, targets;          // [BT]
  // backward scratch
  float *dresid = nullptr, *dln = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr, *datty = nullptr;
  float *dgate = nullptr, *dup = nullptr, *dswi = nullptr, *dlogits = nullptr;
  float *dcq = nullptr, *dcq_raw = nullptr, *dckv = nullptr, *dckv_raw = nullptr, *dkpe = nullptr, *dkvb = nullptr;  // MLA
  float *dgate_b = nullptr, *dgate_s = nullptr;  // without a softmax [BT, H]
};

class Model {
 public:
  // Validates the configuration and lays out the arenas; the weights start at zero (see init_weights).
  explicit Model(const ModelConfig& config);

  const ModelConfig& config() const { return config_; }
  const std::vector<ParamView>& params() const { return views_; }
  size_t parameter_count() const { return weights_.size() ? total_ : 0; }

  float* weights() { return weights_.data(); }
  const float* weights() const { return weights_.data(); }
  float* grads() { return grads_.data(); }
  const float* grads() const { return grads_.data(); }
  size_t arena_size() const { return total_; }
  ModelTensors weight_tensors();
  ModelTensors grad_tensors();
  // The view of a named tensor, or null.
  const ParamView* find(const std::string& name) const;

  // Llama-style initialisation from `seed`: matrices and the embedding N(0, 0.02) — the output
  // projections (o_proj, down_proj) scaled by 1/sqrt(2L) as in GPT-2 — and norm weights 1. The gates'
  // vectors start where the inference engine's seeded layer has them: dt_bias softplus⁻¹(1) (Δ ≈ 1),
  // A_log_h = log(−log γ_h) with γ_h = linear_decay_schedule(h, H), D = 1.
  void init_weights(uint64_t seed);

  // Activations sized for B sequences of T tokens.
  Activations make_activations(int B, int T) const;

  // Forward pass over ids [B·T] (row b·T + t = token t of sequence b). With targets [B·T] (−1 = not
  // scored) it returns the mean cross-entropy; without, 0. Logits and every layer's probs stay in `a`.
  float forward(Activations& a, const int32_t* ids, const int32_t* targets) const;
  // Accumulates the gradient of the last forward's loss into grads() (call zero_grads() first), or
  // into `grad_arena` [arena_size()] when given (the trainer's per-thread share of a batch).
  void backward(Activations& a, float* grad_arena = nullptr);
  void zero_grads() { grads_.zero(); }
  // The same two passes in pieces, which forward() and backward() are made of (so the result is the same
  // bit for bit): the trainer runs a step piece by piece where a frame must not wait for a whole step
  // (the browser, Trainer::advance):
  //   forward  = forward_begin, forward_layer(l) for l = 0 … L − 1, forward_end (returns forward's value)
  //   backward = backward_begin, backward_layer(l) for l = L − 1 … 0, backward_end
  void forward_begin(Activations& a, const int32_t* ids, const int32_t* targets) const;
  void forward_layer(Activations& a, int l) const;
  float forward_end(Activations& a, bool scored) const;
  void backward_begin(Activations& a, float* grad_arena = nullptr);
  void backward_layer(Activations& a, int l, float* grad_arena = nullptr);
  void backward_end(Activations& a, float* grad_arena = nullptr);

  static constexpr float latent_norm_eps = 1e-6f;  // q_a_layernorm, kv_a_layernorm (SPEC, DeepSeek-V2)

 private:
  ModelTensors tensors_of(float* base) const;
  void mla_forward(Activations& a, int l, const LayerTensors& lw) const;
  void mla_backward(Activations& a, int l, const LayerTensors& lg_w, const LayerTensors& lg) const;
  void linear_kind_forward(Activations& a, int l, const LayerTensors& lw) const;
  void linear_kind_backward(Activations& a, int l, const LayerTensors& lw, const LayerTensors& lg) const;
  ModelConfig config_;
  std::vector<ParamView> views_;
  size_t total_ = 0;
  FloatArena weights_, grads_;
};

}  // namespace attnscope::train
