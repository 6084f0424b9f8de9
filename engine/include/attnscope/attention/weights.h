// weights.h — attention weights in the PyTorch nn.Linear layout (SPEC "Weights").
//
// y = x·Wᵀ + b, W stored [out, in], row-major float32. Biases are optional (empty vector = none).
//   W_Q [H·d_k, C]   W_K, W_V [G·d_k, C]   W_O [C, H·d_k]
// Three sources: seeded random (Xavier/Glorot uniform), converted from an MHA base by mean-pooling
// K/V heads per kv group (Ainslie et al. 2023), and loaded from .npy files.
#pragma once
#include <cstdint>
#include <filesystem>

#include "attnscope/core/types.h"

namespace attnscope {

// The sizes of one attention layer. d_k = d_model / heads.
struct AttentionShape {
  int d_model = 64;  // C
  int heads = 8;     // H
  int groups = 8;    // G, divides H
  int head_dim() const { return d_model / heads; }
};

// Throws InputError unless C ≥ 1, H ≥ 1, H divides C, G ≥ 1, G divides H, and the sizes are within
// the documented limits (limits.h).
void validate_shape(const AttentionShape& shape);

// g(h) = floor(h / (H/G)): contiguous heads share a group.
inline int kv_group_of_head(int head, int heads, int groups) { return head / (heads / groups); }

struct AttentionWeights {
  Mat wq;  // [H·d_k, C]
  Mat wk;  // [G·d_k, C]
  Mat wv;  // [G·d_k, C]
  Mat wo;  // [C, H·d_k]
  Vec bq, bk, bv, bo;  // [H·d_k], [G·d_k], [G·d_k], [C]; size 0 when the layer has no bias
};

// Xavier/Glorot uniform: W ~ U(−b, b), b = √(6 / (fan_in + fan_out)); biases zero-sized.
// Deterministic for (shape, seed) on every machine.
AttentionWeights random_weights(const AttentionShape& shape, uint64_t seed);

// Mean-pools the K and V heads of each group of an MHA weight set (G = H) into `groups` kv heads:
// W_K^(g) = mean_{h: g(h)=g} W_K^(h), same for W_V and the biases; W_Q, W_O unchanged.
// groups == H is the identity; groups == 1 gives MQA.  Throws InputError if groups ∤ H.
AttentionWeights convert_mha_to_grouped(const AttentionWeights& mha, int heads, int groups);

// Loads wq.npy, wk.npy, wv.npy, wo.npy (required) and bq.npy, bk.npy, bv.npy, bo.npy (optional,
// all or none) from `dir`. Throws InputError naming the file on any missing file or wrong shape.
AttentionWeights load_weights(const std::filesystem::path& dir, const AttentionShape& shape);

// Throws InputError naming the first weight whose shape does not match `shape`.
void validate_weights(const AttentionWeights& w, const AttentionShape& shape);

}  // namespace attnscope
