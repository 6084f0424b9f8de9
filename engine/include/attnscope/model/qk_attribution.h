// qk_attribution.h — why a head attends (issue 38, item 4): one score of one head split into the
// contributions of the residual stream's parts at the query's and at the key's position.
//
// The score of head h of layer ℓ at (query i, key j) is s = scale·q_i·k_j (q, k after the rotary positions;
// scale 1/√D, Gemma's query_pre_attn_scalar^(−1/2), MLA's softmax_scale). The stream layer ℓ reads at a
// position, x_t, is the sum of its parts (forward.h ForwardTrace): the token embedding (× Gemma's √C), the
// learned positions (GPT-2), and for every earlier layer l < ℓ each softmax head's output through its slice of
// W_O (Gemma's post-attention norm frozen at its per-position scale, × Granite's residual multiplier), W_O's
// bias, or the whole branch of a linear/mixer layer (Gated DeltaNet, Mamba-2, a trained linear layer), and the
// MLP (or mixture of experts) output.
//
// With every norm's scale frozen at its actual value — the input norm's 1/rms (RMSNorm) or 1/σ (LayerNorm,
// whose mean subtraction is linear: each part centred), the q/k norms' 1/rms (Qwen3, Gemma 3: per head; OLMo 2:
// over the whole projection), MLA's q_a and latent norms — and RoPE a rotation at fixed positions (rotate-half;
// MLA's interleaved rotary part), q_i and k_j are affine in their streams' parts:
//   q_i = Σ_p A_i(part_p,i) + A_i'(β) + A_i''(b_q),   k_j likewise,
// where the affine terms are parts of their own: the input norm's bias β ("norm bias"), the q/k projection's
// bias ("q bias", "k bias"). So s = Σ_p Σ_r scale·q_p·k_r exactly: a query-part × key-part table that sums to
// the score. A soft-capped model (Gemma 2) is attributed before the cap: the table sums to s, the drawn score
// is cap·tanh(s/cap). Only softmax layers have scores: a linear/mixer layer is refused by name.
//
// Legend: L layers, T tokens, C d_model, H heads, P parts of one side, D the q·k width.
#pragma once
#include <string>
#include <vector>

#include "attnscope/core/types.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"

namespace attnscope::model {

// The cell attributed: head `head` of layer `layer`, query position `query`, key position `key` (from 0).
struct QkCell {
  int layer = 0, head = 0, query = 0, key = 0;
  friend bool operator==(const QkCell&, const QkCell&) = default;
};

enum class QkPartKind {
  embedding,        // the token embedding (× Gemma's √C)
  positions,        // learned positions (GPT-2)
  head,             // an earlier layer's softmax head through W_O
  attention_bias,   // an earlier layer's W_O bias
  mixer,            // an earlier linear/mixer layer's whole output
  mlp,              // an earlier layer's MLP or mixture of experts
  norm_bias,        // the attributed layer's input LayerNorm bias β
  projection_bias,  // the attributed head's q bias (query side) or k bias (key side)
};
struct QkPart {
  QkPartKind kind = QkPartKind::embedding;
  int layer = -1, head = -1;  // −1 where the kind has none
};
// "embedding", "positions", "L2.H3 attn", "L2 attn bias", "L2 mixer", "L1 MLP", "norm bias", "q bias"/"k bias".
std::string qk_part_label(const QkPart& part, bool query_side);

struct QkAttribution {
  QkCell cell;
  std::vector<QkPart> query_parts, key_parts;  // [Pq], [Pk]
  Mat table;                                   // [Pq, Pk] scale·q_p·k_r: the whole table sums to `score`
  Mat query_vectors, key_vectors;              // [Pq, C], [Pk, C] each residual-space part at i and at j
                                               // (zero rows for the norm and projection biases)
  float score = 0;          // scale·q_i·k_j from the forward pass's own q and k (before any soft-cap)
  float drawn = 0;          // the score as the head uses it: after Gemma 2's soft-cap (= score without one)
  bool before_softcap = false;  // the layer caps its scores (Gemma 2): the table sums to the score before the cap
  double sum() const { return table.cast<double>().sum(); }
  // Σ over the key parts of query part p (what query part p adds with the whole key), and the converse.
  std::vector<double> query_marginal() const;
  std::vector<double> key_marginal() const;
};

// One entry of the table: a query part, a key part and its contribution.
struct QkEntry {
  int query_part = 0, key_part = 0;
  double value = 0;
};
// The n entries of largest |value|, largest first (ties: lower query part, then lower key part).
std::vector<QkEntry> largest_entries(const QkAttribution& a, int n);

// The whole table as CSV: a header row "query part \ key part", the key parts' labels, "total"; one row per query
// part (its label, its entries, its total); a last row "total" (the key parts' totals and the sum, = the score).
std::string qk_attribution_csv(const QkAttribution& a);

// Throws InputError naming the valid range for a layer, head, query or key outside the model or the input
// (T tokens), for a key the query does not see (later than it, or outside the layer's sliding window), and
// for a linear/mixer layer (named by `maps[layer].kind` when given): it has no softmax scores.
void check_qk_cell(const ModelConfig& config, const std::vector<LayerMaps>& maps, int tokens, const QkCell& cell);

// The options the attribution's forward pass needs: the parts (ForwardTaps::parts) and the cell's layer's detail.
ForwardOptions qk_forward_options(int layer, ForwardOptions options = {});

// Needs `result` from a forward with qk_forward_options(cell.layer) (else InputError); check_qk_cell's refusals.
QkAttribution qk_attribution(const Model& model, const ForwardResult& result, const QkCell& cell);

}  // namespace attnscope::model
