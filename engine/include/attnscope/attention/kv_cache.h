// kv_cache.h — the KV-cache and attention-parameter calculator: why MQA and GQA exist.
//
// During generation a decoder keeps the keys and values of every past token, in every layer:
//   KV-cache bytes = 2 × L × G × d_head × bytes per element × seq × batch
// (2: one K and one V; G kv heads per layer; SPEC "Parameter counts"). The same model is compared
// with G = H (MHA), its own G (GQA; equals H for an MHA model and 1 for an MQA one), and G = 1 (MQA).
// Attention parameters per model: L × (2·C·H·d_head + 2·C·G·d_head) with C = H·d_head, which holds
// for every preset (W_Q and W_O are C·H·d_head each, W_K and W_V C·G·d_head; no biases counted).
//
// Presets of real models live in assets/models.json (see assets.h for where assets are found);
// each names where its configuration is published.
//
// Layer types (what a model actually caches). A model is a list of layer counts per type, adding up to L:
//   full     every past token: G·(d_k + d_v) elements per token per layer (2·G·d_head when d_v = d_k)
//   sliding  a window of W tokens (key j visible to query i iff i − W < j ≤ i), a rolling cache of at
//            most W tokens, plus k attention-sink tokens kept beside it (StreamingLLM): the layer holds
//            min(seq, W + k) tokens of G·(d_k + d_v) elements
//   mla      multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, §2.1): one latent c_KV of
//            kv_lora_rank elements and the shared RoPE key of qk_rope_head_dim elements per token per
//            layer; no K or V heads are cached (W_UK and W_UV are absorbed into the query and the output)
//   linear   linear attention / the delta rule / Gated DeltaNet (Qwen3-Next): no cache at all but a fixed-size
//            state per layer and sequence, whatever seq: heads × d_k × d_v elements of the recurrent state S
//            (one d_k × d_v matrix per value head) plus the short causal convolution's last inputs,
//            conv_dim × conv_kernel with conv_dim = 2 · key_heads · d_k + heads · d_v (q, k and v go through it)
//   mamba2   a Mamba-2 SSM layer (Granite 4.0-H, Falcon-H1, Nemotron-H): heads × head_dim × d_state elements
//            of the SSM state plus the convolution's conv_dim × conv_kernel, conv_dim = heads · head_dim +
//            2 · n_groups · d_state (x, B and C go through it). The same shape as linear's, read with Mamba-2's
//            state-space duality: C is the query, B the key, x the value, d_state = d_k, head_dim = d_v.
// The state sizes are the tensors transformers 5.x keeps per layer: Qwen3NextGatedDeltaNet (modeling_qwen3_next.py)
// caches recurrent_states [batch, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim] and
// conv_states [batch, conv_dim, linear_conv_kernel_dim] (mixed_qkv padded to the kernel width); Mamba-2's cache
// (modeling_mamba2.py, granitemoehybrid) ssm_states [batch, num_heads, head_dim, state_size] and conv_states
// [batch, intermediate_size + 2 · n_groups · state_size, conv_kernel]. (The convolution needs only the last
// conv_kernel − 1 inputs; transformers keeps conv_kernel columns, and so does this count.)
// Learned sink logits (gpt-oss) are parameters, one per head, and cost no cache: they are not sink tokens.
// The MHA / GQA / MQA variants keep today's comparison: every layer full attention with G = H, the
// model's G, and G = 1. For an MLA model the MHA variant is the dense cache MLA replaces: G = H heads
// of the model's own widths, K = qk_nope + qk_rope (head_dim) and V = v_head_dim.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

enum class ElementType { fp32, fp16, int8 };
const char* to_string(ElementType type);           // "fp32" | "fp16" | "int8"
ElementType parse_element_type(const std::string& name);  // throws InputError listing the valid names
int bytes_per_element(ElementType type);           // 4, 2, 1

enum class LayerKind { full, sliding, mla, linear, mamba2 };
const char* to_string(LayerKind kind);              // "full" | "sliding" | "mla" | "linear" | "mamba2"
LayerKind parse_layer_kind(const std::string& name);  // throws InputError listing the valid names

// True for the layer types whose memory is a fixed-size state (linear, mamba2) rather than a cache.
bool is_state_kind(LayerKind kind);

// `layers` layers of one type.
struct KvLayerGroup {
  LayerKind kind = LayerKind::full;
  int64_t layers = 0;
  int64_t window = 0;  // sliding: W tokens (≥ 1); 0 for the other types
  int64_t sinks = 0;   // sliding: k first tokens kept beside the window (StreamingLLM); 0 = none
  // linear and mamba2 (all ≥ 1 there, 0 for the other types):
  int64_t state_heads = 0;  // linear: value heads (linear_num_value_heads); mamba2: heads (mamba_n_heads)
  int64_t key_heads = 0;    // linear: key heads (linear_num_key_heads); mamba2: groups of B and C (n_groups)
  int64_t key_dim = 0;      // linear: d_k (linear_key_head_dim); mamba2: d_state (state_size)
  int64_t value_dim = 0;    // linear: d_v (linear_value_head_dim); mamba2: head_dim
  int64_t conv_kernel = 0;  // the short convolution's width (linear_conv_kernel_dim, mamba_d_conv)
};

struct ModelPreset {
  std::string name;         // what --model takes, lower case: "llama-2-70b"
  std::string label;        // for display: "Llama-2-70B"
  int64_t layers = 0;       // L
  int64_t heads = 0;        // H
  int64_t kv_heads = 0;     // G, divides H
  int64_t head_dim = 0;     // d_head
  int64_t context = 0;      // the published context length in tokens (a sensible default for seq)
  std::string source;       // where the configuration is published
  // Optional (0 / empty when the file leaves them out):
  int64_t v_head_dim = 0;    // d_v when it differs from d_head (MLA: v_head_dim 128, d_head = K width 192)
  int64_t hidden = 0;        // the model width C when it is not H·d_head
  int64_t kv_lora_rank = 0;  // MLA: the latent c_KV's width
  int64_t rope_dim = 0;      // MLA: qk_rope_head_dim, the shared RoPE key's width
  std::vector<KvLayerGroup> layer_types;  // empty: L full-attention layers
};

struct KvCacheInput {
  int64_t layers = 0, heads = 0, kv_heads = 0, head_dim = 0;  // L, H, G, d_head
  int64_t seq = 0;                                            // tokens per sequence
  int64_t batch = 1;                                          // sequences
  ElementType dtype = ElementType::fp16;
  double memory_gib = 0;                                      // memory to fit into (GiB = 2^30 bytes); 0 = none
  std::vector<KvLayerGroup> layer_types;  // adding up to L; empty = L full-attention layers
  int64_t kv_lora_rank = 0, rope_dim = 0;  // for mla layers: latent width (≥ 1) and RoPE key width (≥ 0)
  int64_t v_head_dim = 0;                  // d_v; 0 = d_head
  int64_t hidden = 0;                      // C for the parameter count; 0 = H·d_head
};

// One layer type of the model at the input's seq and batch.
struct KvLayerTypeRow {
  KvLayerGroup group;
  int64_t elements_per_token = 0;  // one token, one layer: G·(d_k + d_v), or kv_lora_rank + rope_dim for mla; 0 for a state
  int64_t bytes_per_token = 0;     // elements_per_token · bytes · layers: one more cached token, all these layers
  int64_t tokens = 0;              // tokens each layer holds per sequence: seq, or min(seq, W + sinks); 0 for a state
  // linear and mamba2 (0 for the cached types): one layer, one sequence, at any seq
  int64_t recurrent_elements = 0;  // state_heads · key_dim · value_dim
  int64_t conv_elements = 0;       // conv_dim · conv_kernel, conv_dim = 2 · key_heads · key_dim + state_heads · value_dim
  int64_t state_elements = 0;      // recurrent_elements + conv_elements
  int64_t state_bytes_per_layer = 0;  // state_elements · bytes: one layer, one sequence
  int64_t bytes = 0;               // bytes_per_token · tokens · batch, or state_bytes_per_layer · layers · batch
};

// One attention variant of the model.
struct KvCacheVariant {
  std::string kind;                // "mha" | "gqa" | "mqa"
  int64_t kv_heads = 0;            // G used: H, gqa_kv_heads (the model's G), 1
  int64_t bytes_per_token = 0;     // 2·L·G·d_head·bytes: one token of one sequence, all layers
  int64_t bytes = 0;               // bytes_per_token · seq · batch
  double gib = 0;                  // bytes / 2^30
  int64_t attention_params = 0;    // L·(2·C·H·d_head + 2·C·G·d_head), C = H·d_head
  bool fits = true;                // bytes ≤ memory_gib·2^30 (always true when memory_gib is 0)
};

struct KvCacheReport {
  KvCacheInput input;
  KvCacheVariant mha, gqa, mqa;         // every layer full attention (MHA for an MLA model: what it replaces)
  std::vector<KvLayerTypeRow> layer_types;  // the model as it is: one row per layer type, in the input's order
  int64_t bytes = 0;                    // the model's cache: the sum of the rows' bytes
  double gib = 0;                       // bytes / 2^30
  bool fits = true;                     // bytes ≤ memory_gib·2^30 (always true when memory_gib is 0)
};

// The layer types of `input` (its own list, or L full-attention layers when the list is empty).
std::vector<KvLayerGroup> layer_types_of(const KvCacheInput& input);

// Throws InputError unless every size is ≥ 1, G divides H, memory_gib is finite and ≥ 0, every layer
// type has ≥ 1 layer and the types add up to L, every window is ≥ 1 token and every sink count ≥ 0,
// MLA layers have kv_lora_rank ≥ 1 and rope_dim ≥ 0, linear and mamba2 layers have every state width ≥ 1
// (and only they have one), and every product fits in 63 bits; each message names the value and what
// would be valid.
void validate_kv_cache_input(const KvCacheInput& input);

// 2·L·G·d_head·bytes·seq·batch; throws InputError if it does not fit in 63 bits.
int64_t kv_cache_bytes(int64_t layers, int64_t kv_heads, int64_t head_dim, int bytes_per_element, int64_t seq,
                       int64_t batch);

// The G of the report's GQA variant: the model's own, except for an MLA model that keeps every head's
// K/V (G = H, so its GQA would be its MHA): there the smallest G dividing H whose K and V are at least as
// large as the latent and rotary key a token, the grouping MLA's cache compares with.
int64_t gqa_kv_heads(const KvCacheInput& input);

// The three variants and the layer-type rows for `input` (validated first).
KvCacheReport kv_cache_report(const KvCacheInput& input);

// Reads and validates a presets file ({"models": [ {name, label, layers, heads, kv_heads, head_dim,
// context, source, optionally v_head_dim, hidden, kv_lora_rank, qk_rope_head_dim and layer_types:
// [{"type": "sliding", "layers": 40, "window": 1024, "sinks": 0}, {"type": "full", "layers": 8},
// {"type": "linear", "layers": 36, "heads": 32, "key_heads": 16, "key_dim": 128, "value_dim": 128,
// "conv_kernel": 4}, {"type": "mamba2", "layers": 36, "heads": 128, "groups": 1, "state": 128,
// "head_dim": 64, "conv_kernel": 4}]}, … ]});
// throws InputError naming the file and the bad entry.
std::vector<ModelPreset> load_model_presets(const std::filesystem::path& path);
// assets_dir()/models.json
std::vector<ModelPreset> load_model_presets();

// The preset called `name` (case-insensitive); throws InputError listing the valid names.
const ModelPreset& find_model_preset(const std::vector<ModelPreset>& presets, const std::string& name);

// L, H, G, d_head and the layer types from a preset; seq, batch, dtype and memory left at their defaults.
KvCacheInput kv_cache_input(const ModelPreset& preset);

}  // namespace attnscope
