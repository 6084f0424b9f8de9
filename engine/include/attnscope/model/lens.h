// lens.h — what a checkpoint's heads do (issue 38): the logit lens, the direct logit attribution of every
// head, and head ablation. Each is a step over one forward pass (forward.h) and its trace (ForwardTaps), so a
// request runs the forward once and then the analyses it asks for.
//
// Logit lens (nostalgebraist 2020): the residual stream after layer l, x_l [T, C], put through the model's own
// final norm and unembedding, ÷ Granite's logits_scaling and through Gemma 2's final soft-cap where the
// family has them: lens_l = cap(norm_f(x_l)·Eᵀ / s). The last layer's lens is the model's logits. Per layer
// and position: the top-k next tokens, KL(P_final ‖ P_l) in nats (P_final the model's own next-token
// distribution), and the rank of the model's top-1 token in P_l (1 = P_l's most probable; ties: lower id first).
//
// Direct logit attribution: with the final norm's scale frozen at its actual value (the per-position
// 1/rms, or LayerNorm's 1/σ, of x_L taken as a constant), the chosen token v's logit before any soft-cap is
// linear in x_L = Σ parts, so logit_t(v) = Σ_p part_p,t · a_t + the norm's bias term, a_t = w_f ⊙ E_v / (σ_t·s).
// LayerNorm's mean term is given to the parts (each part centred: a_t − mean(a_t)), its bias term is a part.
// A head's part is its output through its slice of W_O, z_h,t·W_O,hᵀ (Gemma's post-attention norm frozen the
// same way at its per-position scale, × Granite's residual multiplier); W_O's bias is a part of its own. A
// linear/mixer layer (Gated DeltaNet, Mamba-2, a trained linear model) is one part, not split per head.
// A soft-capped model (Gemma 2) is attributed before the cap: the parts sum to the logit before tanh.
//
// Head ablation: forward.h HeadAblation (zero, or the mean over the input's positions) in a second forward
// pass, compared with the first: the loss on the input, the next-token distributions, every layer's attention.
//
// Legend: L layers, T tokens, C d_model, H heads, V vocabulary, P parts.
#pragma once
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "attnscope/core/types.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"

namespace attnscope::model {

// The options a forward pass needs for logit_lens and direct_logit_attribution (both taps).
ForwardOptions lens_forward_options(ForwardOptions options = {});

// cap(norm_f(x)·Eᵀ / s) for any residual stream x [T, C] → [T, V]; softcap false leaves Gemma 2's cap out.
Mat lens_logits(const Model& model, const Mat& x, bool softcap = true);

// ---- logit lens ------------------------------------------------------------------------------------
struct LogitLens {
  int layers = 0, tokens = 0, top_k = 0;
  std::vector<std::vector<std::vector<NextToken>>> top;  // [L][T][top_k] most probable first
  Mat kl;                          // [L, T] KL(P_final ‖ P_l) in nats (0 where the layer agrees)
  std::vector<int32_t> final_top;  // [T] the model's own top-1 next token
  std::vector<int32_t> rank;       // [L·T] the rank of final_top[t] in layer l's distribution (1 = its top)
  int final_rank(int layer, int t) const { return rank[size_t(int64_t(layer) * tokens + t)]; }
};

// Needs `result` from a forward with ForwardTaps::residual (else InputError). Cancellable between layers.
LogitLens logit_lens(const Model& model, const ForwardResult& result, int top_k = 5,
                     const std::atomic<bool>* cancel = nullptr);

// ---- direct logit attribution ----------------------------------------------------------------------
enum class PartKind {
  embedding,        // the token embedding (× Gemma's √C)
  positions,        // learned positions (GPT-2)
  head,             // one softmax head's output through W_O
  attention_bias,   // W_O's bias of a layer (GPT-2, gpt-oss, …)
  mixer,            // a whole linear/mixer layer's output (Gated DeltaNet, Mamba-2, trained linear)
  mlp,              // a layer's MLP or mixture of experts
  final_norm_bias,  // the final LayerNorm's bias
};
struct LogitPart {
  PartKind kind = PartKind::embedding;
  int layer = -1, head = -1;  // −1 where the kind has none
};
// "embedding", "positions", "L2H5", "L2 attention bias", "L2 mixer", "L2 MLP", "final norm bias".
std::string part_label(const LogitPart& part);

struct LogitAttribution {
  std::vector<int32_t> target;   // [T] the token whose logit is attributed at each position
  std::vector<float> logit;      // [T] its logit before any soft-cap (÷ logits_scaling): what the parts sum to
  bool before_softcap = false;   // true when the model caps its logits (Gemma 2): the attribution is before the cap
  std::vector<LogitPart> parts;  // [P] embedding, positions, then per layer its heads (or mixer), bias, MLP; final bias
  Mat values;                    // [P, T]
  int head_part(int layer, int head) const;  // the row of (layer, head), −1 when not a part
};

// Needs `result` from a forward with both taps (lens_forward_options). targets [T] (empty: the model's top-1
// at each position); ids outside [0, V) or a wrong length are refused with InputError.
LogitAttribution direct_logit_attribution(const Model& model, const ForwardResult& result,
                                          std::span<const int32_t> targets = {});

// ---- head ablation ---------------------------------------------------------------------------------
// −ln P(ids[t+1] | ids[0..t]) for t < T − 1 from logits [T, V] (the model's own, after any soft-cap).
struct InputLoss {
  std::vector<float> per_token;  // [T − 1] (empty for one token)
  double mean = 0;               // their mean (0 for one token)
};
InputLoss input_loss(const Mat& logits, std::span<const int32_t> ids);

struct AblationEffect {
  ForwardResult ablated;                // the forward pass with the heads switched off
  InputLoss loss_before, loss_after;
  std::vector<float> next_token_kl;     // [T] KL(P_before ‖ P_after) of each position's next token, nats
  std::vector<float> attention_change;  // [L] largest |ΔA| over the layer's heads and cells (linear layers: their maps)
  int first_changed_layer = -1;         // the lowest ablated layer (layers before it are unchanged)
};

// Runs the forward again with `ablation` (check_head_ablation's refusals) and compares it with `baseline`,
// the same model's unablated forward of the same ids. options' ablation is replaced; its taps are kept.
AblationEffect ablate_heads(const Model& model, std::span<const int32_t> ids, const ForwardResult& baseline,
                            const HeadAblation& ablation, ForwardOptions options = {});

}  // namespace attnscope::model
