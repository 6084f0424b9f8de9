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
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope::model {

struct AttentionStack {
  int layers = 0, heads = 0, kv_heads = 0, tokens = 0;  // L, H, G, T
  std::vector<float> attentions;    // [L, H, T, T]
  std::vector<int32_t> ids;         // [T], or empty when tokens.json has none
  std::vector<std::string> labels;  // [T]
  bool causal = false;              // every head's upper triangle is exactly 0
  bool groups_from_config = false;  // kv_heads came from a config.json (else G = H)
  std::string source;               // the attentions file's name, for captions
  Eigen::Map<const Mat> attention(int layer, int head) const {
    return {attentions.data() + (int64_t(layer) * heads + head) * tokens * tokens, tokens, tokens};
  }
};

// Reads and checks the three files: the stack is 4D, at most max_model_attention_cells values,
// finite, each row a probability distribution (entries in [0, 1], sums within 0.02 of 1: files saved
// from bfloat16 round each entry); tokens.json has T ids and/or labels; config.json's head count is
// the file's H. config_json may be empty. Throws InputError naming the file and the problem.
AttentionStack open_attentions(const std::filesystem::path& attentions_file, const std::filesystem::path& tokens_json,
                               const std::filesystem::path& config_json = {});

}  // namespace attnscope::model
