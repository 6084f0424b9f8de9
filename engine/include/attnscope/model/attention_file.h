// attention_file.h — attentions computed elsewhere, for models too big to run here (issue 13 item 9).
//
// What README's transformers snippet writes (output_attentions=True on the user's GPU machine):
//   attentions.npy            float32 [L, H, T, T]  (or attentions.safetensors: a tensor named
//                             "attentions", or its only tensor, F32/F16/BF16 [L, H, T, T])
//   tokens.json               {"ids": [T ints], "labels": [T strings]}  (labels optional: ids shown)
//   config.json (optional)    the model's own: num_attention_heads and num_key_value_heads give the
//                             K/V groups the heads are framed by; without it every head is its own group
// `attnscope compute --checkpoint` writes the same attentions.npy and tokens.json, so its output
// opens here too.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope::model {

// At most this many layers and heads in an attentions file (config.json's own limit for head counts).
inline constexpr int max_attention_file_heads = 4096;

struct AttentionStack {
  int layers = 0, heads = 0, kv_heads = 0, tokens = 0;  // L, H, G, T
  std::vector<float> attentions;    // [L, H, T, T]
  std::vector<int32_t> ids;         // [T], or empty when tokens.json has none
  std::vector<std::string> labels;  // [T]
  bool causal = false;              // every head's upper triangle is exactly 0
  std::vector<int> layer_window;    // [L] a checkpoint's sliding windows (0 = global), else empty
  bool groups_from_config = false;  // kv_heads came from a config.json (else G = H)
  std::string source;               // the attentions file's name, for captions
  // A checkpoint's layers without a softmax (Qwen3-Next's Gated DeltaNet; model::ForwardResult::layer_maps and
  // linear_maps): layer_kind[l] names a linear layer's kind ("Gated DeltaNet"; "" for softmax attention) and
  // linear_maps[l] holds its heads' signed matrices M [H_l, T, T] (rows not summing to 1; H_l its own head
  // count, linear_num_value_heads). That layer's slot of `attentions` holds zeros. Both empty for every other
  // model and for attentions files.
  std::vector<std::string> layer_kind;          // [L] or empty
  std::vector<std::vector<float>> linear_maps;  // [L] or empty
  Eigen::Map<const Mat> attention(int layer, int head) const {
    return {attentions.data() + (int64_t(layer) * heads + head) * tokens * tokens, tokens, tokens};
  }
  bool linear_layer(int layer) const { return !layer_kind.empty() && !layer_kind[size_t(layer)].empty(); }
  bool has_linear_layers() const {
    for (int l = 0; l < int(layer_kind.size()); ++l)
      if (linear_layer(l)) return true;
    return false;
  }
  // Layer l's head count: H for a softmax layer, H_l for a linear one.
  int layer_heads(int layer) const {
    return linear_layer(layer) ? int(linear_maps[size_t(layer)].size() / (size_t(tokens) * size_t(tokens))) : heads;
  }
  // The most heads of any layer (the Model view's columns).
  int most_heads() const {
    int most = heads;
    for (int l = 0; l < layers; ++l) most = std::max(most, layer_heads(l));
    return most;
  }
  // Head h of layer l as drawn: its probabilities, or a linear layer's signed matrix M. [T, T]
  Eigen::Map<const Mat> map(int layer, int head) const {
    if (!linear_layer(layer)) return attention(layer, head);
    return {linear_maps[size_t(layer)].data() + int64_t(head) * tokens * tokens, tokens, tokens};
  }
};

// The files to open for `path`, or nullopt when `path` is a checkpoint folder (or a file in one) instead:
//   a file named *.npy, or attentions*.safetensors  →  that file, with tokens.json and config.json beside it
//   a folder (or another file in it) holding attentions.npy or attentions.safetensors (.npy first) and no
//   model weights (model.safetensors or model.safetensors.index.json)  →  that file, likewise
// `config` is config.json, else `compute --checkpoint`'s model.json, else empty (every head its own
// group); `tokens` is tokens.json whether or not it exists (opening it then says it is missing).
struct AttentionFiles {
  std::filesystem::path attentions, tokens, config;
};
std::optional<AttentionFiles> find_attention_files(const std::filesystem::path& path);

// tokens.json's text → ids and labels for T tokens (labels are the ids' numbers when it has none).
// Throws InputError naming `name` unless it is an object with "ids" and/or "labels", each a list of T
// whole numbers / strings.
void parse_attention_tokens(std::string_view json_text, int tokens, const std::string& name,
                            std::vector<int32_t>& ids, std::vector<std::string>& labels);

// Reads and checks the three files: the stack is 4D, at most max_model_attention_cells values,
// finite, each row a probability distribution (entries in [0, 1], sums within 0.02 of 1: files saved
// from bfloat16 round each entry); tokens.json has T ids and/or labels; config.json's head count is
// the file's H (config.json's num_attention_heads / num_key_value_heads, or model.json's heads /
// kv_heads). config_json may be empty. Throws InputError naming the file and the problem, and
// Cancelled soon after *cancel becomes true. progress(fraction) is called as the rows are checked
// (increasing, the last call 1).
AttentionStack open_attentions(const std::filesystem::path& attentions_file, const std::filesystem::path& tokens_json,
                               const std::filesystem::path& config_json = {},
                               const std::function<void(double)>& progress = {},
                               const std::atomic<bool>* cancel = nullptr);
inline AttentionStack open_attentions(const AttentionFiles& files, const std::function<void(double)>& progress = {},
                                      const std::atomic<bool>* cancel = nullptr) {
  return open_attentions(files.attentions, files.tokens, files.config, progress, cancel);
}

}  // namespace attnscope::model
