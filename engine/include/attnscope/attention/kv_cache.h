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

struct ModelPreset {
  std::string name;         // what --model takes, lower case: "llama-2-70b"
  std::string label;        // for display: "Llama-2-70B"
  int64_t layers = 0;       // L
  int64_t heads = 0;        // H
  int64_t kv_heads = 0;     // G, divides H
  int64_t head_dim = 0;     // d_head
  int64_t context = 0;      // the published context length in tokens (a sensible default for seq)
  std::string source;       // where the configuration is published
};

struct KvCacheInput {
  int64_t layers = 0, heads = 0, kv_heads = 0, head_dim = 0;  // L, H, G, d_head
  int64_t seq = 0;                                            // tokens per sequence
  int64_t batch = 1;                                          // sequences
  ElementType dtype = ElementType::fp16;
  double memory_gib = 0;                                      // memory to fit into (GiB = 2^30 bytes); 0 = none
  // An open checkpoint's sliding windows, one per layer (0 = a global layer): a sliding-window layer
  // keeps the keys and values of its last W tokens only, min(seq, W) instead of seq. Empty: every
  // layer is global (the presets, the custom model).
  std::vector<int64_t> layer_window;
};

// One attention variant of the model.
struct KvCacheVariant {
  std::string kind;                // "mha" | "gqa" | "mqa"
  int64_t kv_heads = 0;            // G used: H, the model's G, 1
  int64_t bytes_per_token = 0;     // 2·L·G·d_head·bytes: one token of one sequence, all layers
  int64_t bytes = 0;               // bytes_per_token · seq · batch (a sliding-window layer counts
                                   // min(seq, W) tokens)
  double gib = 0;                  // bytes / 2^30
  int64_t attention_params = 0;    // L·(2·C·H·d_head + 2·C·G·d_head), C = H·d_head
  bool fits = true;                // bytes ≤ memory_gib·2^30 (always true when memory_gib is 0)
};

struct KvCacheReport {
  KvCacheInput input;
  KvCacheVariant mha, gqa, mqa;
};

// Throws InputError unless every size is ≥ 1, G divides H, memory_gib is finite and ≥ 0, and every
// product fits in 63 bits; each message names the value and what would be valid.
void validate_kv_cache_input(const KvCacheInput& input);

// 2·L·G·d_head·bytes·seq·batch; throws InputError if it does not fit in 63 bits.
int64_t kv_cache_bytes(int64_t layers, int64_t kv_heads, int64_t head_dim, int bytes_per_element, int64_t seq,
                       int64_t batch);

// The three variants for `input` (validated first).
KvCacheReport kv_cache_report(const KvCacheInput& input);

// Reads and validates a presets file ({"models": [ {name, label, layers, heads, kv_heads, head_dim,
// context, source}, … ]}); throws InputError naming the file and the bad entry.
std::vector<ModelPreset> load_model_presets(const std::filesystem::path& path);
// assets_dir()/models.json
std::vector<ModelPreset> load_model_presets();

// The preset called `name` (case-insensitive); throws InputError listing the valid names.
const ModelPreset& find_model_preset(const std::vector<ModelPreset>& presets, const std::string& name);

// L, H, G, d_head from a preset; seq, batch, dtype and memory left at their defaults.
KvCacheInput kv_cache_input(const ModelPreset& preset);

}  // namespace attnscope
