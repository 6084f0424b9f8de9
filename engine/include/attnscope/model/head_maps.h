// head_maps.h — long inputs (issue 38 item 6): a head's attention map recomputed on demand, and pooled.
//
// forward() with ForwardOptions::keep = AttentionKeep::on_demand keeps no [L, H, T, T] stack. Per softmax
// layer it keeps what each head's map is made from, as the scores read it:
//   grouped (dense, GQA, MQA; Gemma's soft-cap and windows, Ministral's query scale, Qwen3-Next's softmax layers)
//       q [T, H·D] after RoPE (and the query scale), k [T, G·D] after RoPE; scale, soft-cap, window
//   sinks (gpt-oss)   the same and each head's sink logit s_h
//   latent (DeepSeek MLA)   q [T, H·D] = [q_N ; RoPE(q_R)], k [T, H·D] = [W_UK,h·c_KV ; RoPE(k_R)]; its scale
// HeadMaps::head(l, h) runs the same code the pass ran (ops::attention_head_probs; gpt-oss's and MLA's own
// softmax loops), so its [T, T] is bit for bit the map forward()'s stack holds at a T where both run.
// Linear/mixer layers (Gated DeltaNet, Mamba-2, attnscope's trained linear layers) are refused in this mode by
// check_forward_input: their maps M need the whole recurrence's inputs per value head (Hv·T·(dk + dv + 2)
// floats) and are not softmax probabilities; they stay with the stack's limit.
// Memory: kept_bytes() = Σ_l 4·T·(H·D + G·D) (+ 4·H sinks); forward() also holds, while it runs, one [T, T]
// scratch per thread (on_demand_bytes counts both).
// Pooling (pool_map): a [T, T] map to at most `pixels`×`pixels` cells, each the max or the mean of a b×b block
// (b = ⌈T / pixels⌉; b = 1 is the exact map). Masked cells (a later key; a key outside the window) are never
// pooled: a block's mean is over its unmasked cells, a block with none is masked.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope::model {

struct ModelConfig;

// What forward() keeps of the attention: every layer's probabilities (the stack, ForwardResult::attentions),
// or per softmax layer what a head's map is recomputed from (ForwardResult::head_maps).
enum class AttentionKeep : uint8_t { stack, on_demand };

// The longest input of the on-demand mode (the stack's is limits::max_tokens), and the most bytes its kept
// q and k may take (the scratch of the heads' maps besides).
inline constexpr int max_on_demand_tokens = 8192;
inline constexpr int64_t max_on_demand_bytes = int64_t(4) << 30;  // 4 GiB

// Which keys query i sees: keys 0…i (causal), and with window W > 0 only i − W < j.
struct MapMask {
  int window = 0;
  bool masked(int64_t i, int64_t j) const { return j > i || (window > 0 && j <= i - window); }
};

// One softmax layer's inputs to its maps (see the header comment).
struct KeptLayer {
  enum class Kind : uint8_t { grouped, sinks, latent };
  Kind kind = Kind::grouped;
  int heads = 0, kv_heads = 0, dim = 0;  // H, G (latent: H), D (the q·k width)
  float scale = 0, softcap = 0;          // the scores' scale (0: 1/√D, as ops::AttentionOptions) and soft-cap (0: none)
  int window = 0;                        // 0: global
  std::vector<float> q;                  // [T, H·D]
  std::vector<float> k;                  // [T, G·D]
  Vec sinks;                             // [H] gpt-oss's sink logits (else empty)
  int64_t bytes() const { return int64_t(q.size() + k.size() + size_t(sinks.size())) * int64_t(sizeof(float)); }
};

class HeadMaps {
 public:
  int tokens = 0;
  std::vector<KeptLayer> layers;  // [L]
  int layer_count() const { return int(layers.size()); }
  int heads(int layer) const { return layers.at(size_t(layer)).heads; }
  MapMask mask(int layer) const { return {layers.at(size_t(layer)).window}; }
  // The bytes kept (what the window shows beside the figure).
  int64_t kept_bytes() const;
  // Head `head` of layer `layer`, [T, T] (rows queries, columns keys; masked cells exactly 0). Throws
  // InputError naming the valid range for a layer or head outside the model. Thread-safe (const).
  Mat head(int layer, int head) const;
  // The same into out [T·T] (row-major), no allocation of the map.
  void head_into(int layer, int head, float* out) const;
};

// The bytes forward() in on-demand mode holds for the attention of `tokens` tokens of `config`: the kept q and
// k of every layer plus `threads` [T, T] scratch maps. 0 when the config has a layer the mode refuses.
int64_t on_demand_kept_bytes(const ModelConfig& config, int tokens);
int64_t on_demand_bytes(const ModelConfig& config, int tokens, int threads);

// "2.1 GB", "640 MB", "12 KB": a byte count as the window and the command line print it (powers of 1024).
std::string byte_size_text(int64_t bytes);

// ---- pooling --------------------------------------------------------------------------------------
enum class Pooling : uint8_t { max, mean };
const char* to_string(Pooling pooling);  // "max", "mean"
// "max" | "mean" → Pooling; throws InputError naming `what` (e.g. "--pool") otherwise.
Pooling parse_pooling(const std::string& text, const std::string& what);

struct PooledMap {
  Pooling pooling = Pooling::max;
  int tokens = 0;  // T of the map pooled
  int block = 1;   // b: each cell is a b×b block of the map (1: exact cells)
  int rows = 0, cols = 0;  // ⌈T / b⌉
  Mat values;              // [rows, cols]; 0 where masked
  std::vector<uint8_t> masked;  // [rows·cols] 1 where the whole block is masked
  bool is_masked(int r, int c) const { return masked[size_t(r) * size_t(cols) + size_t(c)] != 0; }
  // What the colour bar's title names: "max-pooled 4×4" (mean-pooled …), or "exact cells" when block = 1.
  std::string label() const;
};

// The block size pooling T tokens to at most `pixels` cells a side: ⌈T / pixels⌉ (pixels ≥ 1).
int pool_block(int tokens, int pixels);

// map [T, T] pooled to at most pixels × pixels cells (mask: which cells the pass left out). pixels ≥ T gives
// the exact cells. Throws InputError for pixels < 1 or a non-square map.
PooledMap pool_map(const Eigen::Ref<const Mat>& map, const MapMask& mask, Pooling pooling, int pixels);

// Head `head` of layer `layer` of `maps` pooled: one [T, T] map made and dropped (no more than one head held).
PooledMap pool_head(const HeadMaps& maps, int layer, int head, Pooling pooling, int pixels);

}  // namespace attnscope::model
