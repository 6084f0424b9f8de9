// checkpoint.h — saving a trained model as a Hugging Face Llama checkpoint folder.
//
//   DIR/config.json        model_type "llama", hidden_size, num_hidden_layers, num_attention_heads,
//                          num_key_value_heads, head_dim, intermediate_size, rms_norm_eps, rope_theta,
//                          vocab_size, max_position_embeddings, tie_word_embeddings true,
//                          torch_dtype "float32", architectures ["LlamaForCausalLM"]
//                          (MLA and windowed models: see llama_config_json)
//   DIR/model.safetensors  F32 tensors under Llama's names (DeepSeek-V2's self_attn names for MLA) (model.embed_tokens.weight,
//                          model.layers.N.self_attn.{q,k,v,o}_proj.weight, mlp.{gate,up,down}_proj.weight,
//                          input_layernorm.weight, post_attention_layernorm.weight, model.norm.weight).
//                          An attention-only model is written with intermediate_size 1, MLP weights 0
//                          and post-attention norms 1, so any Llama loader computes the same logits.
//   DIR/vocab.json         the token text of every id ({"task", "level", "tokens": [...]}), for labels
// Every file goes through write_file_atomic; if one fails, the files this call already wrote are
// removed again, so the folder never holds half a checkpoint.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/train/model.h"

namespace attnscope::train {

// One float32 tensor for the writer.
struct TensorToWrite {
  std::string name;
  std::vector<int64_t> shape;
  const float* data = nullptr;  // product(shape) values
};

// The bytes of a safetensors file: 8-byte little-endian header length N, N bytes of JSON
// ({name: {"dtype": "F32", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}) padded
// with spaces to a multiple of 8, then the tensors in the given order, little-endian.
std::string safetensors_bytes(const std::vector<TensorToWrite>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

// config.json of a model: model_type "llama" for grouped attention; with a sliding window on every layer
// "mistral" (sliding_window); with local and global layers "qwen2" (use_sliding_window, layer_types, its
// q/k/v biases written as zeros); with MLA "deepseek_v2" (kv_lora_rank, q_lora_rank or null,
// qk_nope_head_dim = v_head_dim = d_model/heads, qk_rope_head_dim, n_routed_experts null: dense layers);
// without a softmax attnscope's own "attnscope_linear" (attention_kind linear | retention | mamba2 |
// deltanet | gated-deltanet, the Llama sizes, and the gates' tensors self_attn.{b_proj.weight,
// a_proj.weight, dt_proj.weight, dt_bias, A_log, D} as the kind has them; model.h's legend); a hybrid is
// attnscope_linear too, attention_kind "hybrid" with layer_types (each layer's kind word, "grouped" for its
// softmax layers, which have rotary positions: rope_theta).
nlohmann::json llama_config_json(const ModelConfig& config);

// Why this model cannot be saved ("" when it can): MLA with a sliding window, which DeepSeek's format
// has no field for.
std::string checkpoint_refusal(const ModelConfig& config);

// Every tensor a Llama loader expects, from the model's arena (with zeros / ones filled in for an
// attention-only model). `storage` keeps the filled-in tensors alive while the result is used.
std::vector<TensorToWrite> llama_tensors(const Model& model, std::vector<std::vector<float>>& storage);

struct CheckpointExtras {
  std::vector<std::string> vocab;  // token text per id
  std::string task, level;         // written into vocab.json
  std::vector<float> losses;       // when not empty, DIR/loss.csv: "step,loss" (steps from 1)
};

// Writes the checkpoint folder (creating it). Throws InputError naming the path on failure.
void save_checkpoint(const Model& model, const std::filesystem::path& dir, const CheckpointExtras& extras);

// loss.csv text: "step,loss\n1,<loss>\n…" with 9 significant digits.
std::string loss_csv(const std::vector<float>& losses);

}  // namespace attnscope::train
