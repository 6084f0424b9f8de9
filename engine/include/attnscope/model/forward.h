// forward.h — the forward pass of a real checkpoint: every layer's attention, the logits, the top-5.
//
// One pass for both families (SPEC "Real checkpoints"), float32, always causal:
//   x = embed(ids) (+ wpe[0..T) for learned positions)                       [T, C]
//   per layer:  h = norm1(x);  q, k, v = h·W_Qᵀ (+b), h·W_Kᵀ (+b), h·W_Vᵀ (+b)  [T, H·D], [T, G·D]
//               rotary: rope(q), rope(k) (rotate-half, rope_theta)
//               P_h = softmax(q_h·k_{g(h)}ᵀ/√D + causal mask)               [H, T, T]  → attentions[l]
//               x += (P·v)·W_Oᵀ (+b);  x += mlp(norm2(x))
//   logits = norm_f(x)·Eᵀ   (E = lm_head, or the token embedding when tied)  [T, V]
// DeepSeek (config.is_mla()) runs its own layer functions in the same pass: MLA, q_h = [q_N ; RoPE(q_R)],
// k_h = [W_UK,h·RMSNorm(c_KV) ; RoPE(k_R)] with c_KV, k_R = h·W_DKVᵀ shared by the heads, v_h =
// W_UV,h·RMSNorm(c_KV), scale softmax_scale; then the dense or mixture-of-experts MLP. G = H there, D =
// nope + rope is the q·k width and LayerDetail's v, head_out and concat are v_head_dim wide.
// gpt-oss (config.attention_sinks, config.oss): each head's sink logit s_h joins every row's softmax and
// is dropped after it, P_h[i, ·] = softmax([S_h[i, ·] ; s_h])[:T], so attentions' rows sum to 1 minus
// the sink's share; then its mixture of experts (config.h, GptOssConfig).
// Qwen3-Next (config.linear): a Gated DeltaNet layer computes no probabilities. Its "attention" is each value
// head's explicit matrix M [T, T] (attention/linear_attention.h, gated_delta: output = M·v), kept in
// linear_maps[l] ([Hv, T, T]: signed, rows not summing to 1); layer_maps[l] says so and names the kind, and
// that layer's slot of `attentions` holds zeros (no probability exists there). Its softmax layers multiply
// each head's output by σ(gate) (q_proj's gate rows) before o_proj.
// Legend: L layers, T tokens, C d_model, H query heads, G kv heads, D head width, V vocabulary.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attnscope/core/types.h"
#include "attnscope/model/head_maps.h"
#include "attnscope/model/model.h"

namespace attnscope::model {

// The largest [L, H, T, T] attention stack a forward pass keeps: 2^28 floats = 1 GiB.
inline constexpr int64_t max_model_attention_cells = int64_t(1) << 28;

// Head ablation (issue 38): the heads switched off in a forward pass. A head's output — its slice of what the
// attention's output projection W_O reads, P_h·v_g (after Qwen3-Next's output gate) — is replaced before W_O
// by zeros (`zero`) or, at every position, by its mean over the input's positions (`mean`); W_O's bias is
// kept. Only softmax-attention heads (dense, GQA, MLA, windowed, sinks) can be switched off: a linear/mixer
// layer (Gated DeltaNet, Mamba-2, a trained linear model) is refused by check_head_ablation.
enum class AblationMode { zero, mean };
struct HeadRef {
  int layer = 0, head = 0;  // from 0, as everywhere
  friend bool operator==(const HeadRef&, const HeadRef&) = default;
};
struct HeadAblation {
  AblationMode mode = AblationMode::zero;
  std::vector<HeadRef> heads;
  bool contains(int layer, int head) const;
  friend bool operator==(const HeadAblation&, const HeadAblation&) = default;
};

// What a forward pass keeps for the analyses of model/lens.h (ForwardTrace): `residual` the stream after
// each layer; `parts` the pieces it is the sum of (embedding, learned positions, each block's branch, each
// softmax layer's head outputs before W_O).
struct ForwardTaps {
  bool residual = false;
  bool parts = false;
};

struct ForwardOptions {
  // Checked between layers; a set flag throws Cancelled (the window's worker: a newer setting).
  const std::atomic<bool>* cancel = nullptr;
  // ≥ 0: also keep this layer's inputs and intermediates (LayerDetail), as `compute --layer N` writes.
  int detail_layer = -1;
  int top_k = 5;  // next tokens kept per position (at most V)
  ForwardTaps taps;                         // forward() only (forward_reference ignores it)
  const HeadAblation* ablation = nullptr;   // forward() only; checked by check_head_ablation
  // on_demand (forward() only; long inputs, head_maps.h): no [L, H, T, T] stack; ForwardResult::head_maps
  // recomputes any head. Refuses detail_layer ≥ 0 and linear/mixer layers (check_forward_input).
  AttentionKeep keep = AttentionKeep::stack;
};

// The residual stream and its parts, as ForwardTaps asks (else the vectors stay empty). Legend as above;
// W the width W_O reads (H·D, MLA H·Dv). x_L = embedding + positions + Σ_l (block[l] + mlp[l]) to float rounding.
struct ForwardTrace {
  std::vector<Mat> residual;    // [L] [T, C] x after layer l (the last one is what the final norm reads)
  Mat embedding;                // [T, C] the token embedding (× Gemma's √C)
  Mat positions;                // [T, C] learned positions wpe[0..T) (empty for the other families)
  std::vector<Mat> block;       // [L] [T, C] the attention/mixer branch as added to x (after Gemma's post-norm, × Granite's residual multiplier)
  std::vector<Mat> mlp;         // [L] [T, C] the MLP/MoE branch as added to x
  std::vector<Mat> head_input;  // [L] [T, W] what W_O read (after the ablation); empty for a linear/mixer layer
};

// One layer's attention in the shapes of grouped_attention.h's AttentionResult.
struct LayerDetail {
  int layer = 0;
  Mat input;        // [T, C]     norm1(x): what the projections read
  Tensor3 q;        // [H, T, D]  after the rotary positions (what the scores use)
  Tensor3 k;        // [G, T, D]  after the rotary positions
  Tensor3 v;        // [G, T, D]
  Tensor3 scores;   // [H, T, T]  q_h·k_{g(h)}ᵀ/√D, masked entries −inf
  Tensor3 probs;    // [H, T, T]
  Tensor3 head_out; // [H, T, D]  P_h·v_{g(h)}
  Mat concat;       // [T, H·D]
  Mat output;       // [T, C]     the attention block's output (before the residual add)
  // Multi-head latent attention only (empty otherwise): what every head's keys and values are made from.
  Mat latent;       // [T, r]     c_KV = RMSNorm(kv_a_proj h)[:, :kv_lora_rank], the only K/V part cached
  Mat rope_key;     // [T, d_rope] the rotary key after RoPE, appended to every head's key
  // Learned sinks only (gpt-oss; empty otherwise): each query's share of its head's sink, 1 − Σ_j probs.
  Mat sink_share;   // [H, T]
  // A Gated DeltaNet layer (Qwen3-Next) fills: q, k [Hv, T, dk] after the convolution, L2-normalised (q also
  // × 1/√dk), each value head's key head repeated; v [Hv, T, dv]; probs [Hv, T, T] its signed matrices M;
  // head_out [Hv, T, dv] = M·v (the recurrence's output, before the gated norm); concat [T, Hv·dv] after the
  // gated norm (what out_proj reads); output; beta and decay [Hv, T] (β_t and g_t = log α_t). scores is empty.
  // A Mamba-2 layer (Granite 4.0-H): q = C, k = B, v = x per head, head_out the SSD's output with the D skip,
  // concat the gated norm's output; step [H, T] its Δ_t and decay [H, T] Δ_t·A (the log of the factor a_t); beta empty.
  bool linear = false;
  Mat beta, decay, step;
};

// What a layer's maps are: softmax probabilities (rows sum to 1; gpt-oss's sinks take a share), or the signed
// explicit matrices of a linear-attention layer (`kind` names it, e.g. "Gated DeltaNet"; `heads` of them).
struct LayerMaps {
  bool signed_weights = false;
  std::string kind;  // "" for softmax attention
  int heads = 0;
};

struct NextToken {
  int32_t id = 0;
  float probability = 0;
};

struct ForwardResult {
  int layers = 0, heads = 0, kv_heads = 0, tokens = 0, vocab = 0;  // L, H, G, T, V
  std::vector<float> attentions;  // [L, H, T, T] row-major: every layer's probabilities (empty: on_demand)
  std::shared_ptr<const HeadMaps> head_maps;  // on_demand: what each head's map is recomputed from (else null)
  Mat logits;                     // [T, V]
  std::vector<std::vector<NextToken>> top;  // [T][top_k] most probable next tokens, most probable first
  std::optional<LayerDetail> detail;        // when ForwardOptions::detail_layer ≥ 0
  std::vector<LayerMaps> layer_maps;        // [L]
  std::vector<std::vector<float>> linear_maps;  // [L]: [Hv, T, T] for a linear layer, else empty
  ForwardTrace trace;                           // what ForwardOptions::taps asked for
  // Head h of layer l: [T, T] rows are queries, columns keys.
  Eigen::Map<const Mat> attention(int layer, int head) const {
    return {attentions.data() + (int64_t(layer) * heads + head) * tokens * tokens, tokens, tokens};
  }
  bool signed_layer(int layer) const { return layer_maps[size_t(layer)].signed_weights; }
  // Value head h's matrix M of linear layer l: [T, T].
  Eigen::Map<const Mat> linear_map(int layer, int head) const {
    return {linear_maps[size_t(layer)].data() + int64_t(head) * tokens * tokens, tokens, tokens};
  }
};

// Throws InputError naming the problem for ids outside [0, V), an empty input, more tokens than the
// model's max_position_embeddings, its sliding window, attnscope's T limit (2048) or an attention stack
// above max_model_attention_cells; Cancelled when *cancel becomes true between layers.
// keep = on_demand: the limits are max_on_demand_tokens and max_on_demand_bytes of kept q and k (the
// message names the bytes needed and the limit), and a linear/mixer layer is refused by its kind.
void check_forward_input(const ModelConfig& config, std::span<const int32_t> ids,
                         AttentionKeep keep = AttentionKeep::stack);
// True when the whole [L, H, T, T] stack of `tokens` tokens is within attnscope's limits (limits::max_tokens,
// max_model_attention_cells): what a view checks to ask for AttentionKeep::on_demand instead.
bool stack_fits(const ModelConfig& config, int tokens);

// Throws InputError naming the head for a layer or head outside the model, a repeated head, or a head of a
// linear/mixer layer (no softmax head to switch off there).
void check_head_ablation(const ModelConfig& config, const HeadAblation& ablation);

// The fast pass (Eigen products through model/ops.h, OpenMP).
ForwardResult forward(const Model& model, std::span<const int32_t> ids, const ForwardOptions& options = {});

// The plain-loop reference the fast pass is tested against (same contract; slow: tests only).
ForwardResult forward_reference(const Model& model, std::span<const int32_t> ids, const ForwardOptions& options = {});

// The top_k entries of each row of logits [T, V] after a softmax, most probable first (ties: the lower
// id first).
std::vector<std::vector<NextToken>> top_next_tokens(const Mat& logits, int top_k);

}  // namespace attnscope::model
