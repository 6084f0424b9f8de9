// checkpoint.cpp — the safetensors writer and the Llama checkpoint folder (layout in checkpoint.h).
#include "attnscope/train/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"

namespace attnscope::train {

namespace fs = std::filesystem;

std::string safetensors_bytes(const std::vector<TensorToWrite>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    uint64_t count = 1;
    for (int64_t d : t.shape) count *= uint64_t(d);
    const uint64_t bytes = count * sizeof(float);
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // tensors start 8-byte aligned
  std::string out(8, '\0');
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = char((n >> (8 * i)) & 0xff);  // little-endian
  out += json;
  out.reserve(out.size() + offset);
  for (const TensorToWrite& t : tensors) {
    uint64_t count = 1;
    for (int64_t d : t.shape) count *= uint64_t(d);
    static_assert(sizeof(float) == 4);
    // x86 and ARM are little-endian, as the format is.
    out.append(reinterpret_cast<const char*>(t.data), count * sizeof(float));
  }
  return out;
}

namespace {
// The shortest decimal that reads back as the same float: 1e-5f is written 1e-05, not 9.99999975e-06.
double shortest_decimal(float f) {
  char text[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, double(f));
    if (std::strtof(text, nullptr) == f) break;
  }
  return std::strtod(text, nullptr);
}
}  // namespace

std::string checkpoint_refusal(const ModelConfig& c) {
  if (c.mla() && c.window > 0)
    return "an MLA model with a sliding window cannot be saved as a checkpoint: DeepSeek-V2's checkpoint format "
           "has no sliding window. Train the MLA model without a window to save it";
  return "";
}

nlohmann::json llama_config_json(const ModelConfig& c) {
  if (c.softmax_free() || c.hybrid()) {
    // No Hugging Face family trains these formulas: attnscope's own model_type, with every setting the
    // formulas need (linear_ops.h) and the gates' tensors in model.safetensors beside Llama's. A hybrid says
    // "hybrid" and lists each layer's kind in layer_types (its grouped layers are Llama's softmax attention
    // with rotary positions, G = H).
    nlohmann::json j = {{"architectures", {"AttnscopeLinearForCausalLM"}},
                        {"model_type", "attnscope_linear"},
                        {"attention_kind", c.hybrid() ? "hybrid" : attention_kind_word(c.attention)},
                        {"hidden_size", c.d_model},
                        {"num_hidden_layers", c.layers},
                        {"num_attention_heads", c.heads},
                        {"num_key_value_heads", c.heads},
                        {"head_dim", c.head_dim()},
                        {"intermediate_size", c.mlp ? c.ffn() : 1},
                        {"hidden_act", "silu"},
                        {"rms_norm_eps", shortest_decimal(c.rms_norm_eps)},
                        {"vocab_size", c.vocab_size},
                        {"max_position_embeddings", c.max_positions},
                        {"tie_word_embeddings", true},
                        {"torch_dtype", "float32"}};
    bool linear = false, retention = false, q_scaled = false;
    for (int l = 0; l < c.layers; ++l) {
      const AttentionKind k = c.kind_of(l);
      linear = linear || k == AttentionKind::linear, retention = retention || k == AttentionKind::retention;
      q_scaled = q_scaled || (c.layer_softmax_free(l) && k != AttentionKind::linear && k != AttentionKind::mamba2);
    }
    if (linear) j["feature_map"] = "elu+1", j["normalize"] = true;
    if (retention) j["decay"] = "1 - 2^(-1 - 4h/(H-1))";
    if (q_scaled) j["q_scale"] = "1/sqrt(head_dim)";
    if (c.hybrid()) {
      nlohmann::json types = nlohmann::json::array();
      for (const AttentionKind k : c.layer_kinds) types.push_back(attention_kind_word(k));
      j["layer_types"] = types;
      j["rope_theta"] = shortest_decimal(c.rope_theta);
    }
    return j;
  }
  if (c.mla()) {
    // DeepSeek-V2 (Hugging Face DeepseekV2Config): MLA, a dense SwiGLU in every layer (no routed experts)
    nlohmann::json j = {{"architectures", {"DeepseekV2ForCausalLM"}},
                        {"model_type", "deepseek_v2"},
                        {"hidden_size", c.d_model},
                        {"num_hidden_layers", c.layers},
                        {"num_attention_heads", c.heads},
                        {"num_key_value_heads", c.heads},
                        {"kv_lora_rank", c.kv_lora_rank},
                        {"q_lora_rank", nullptr},
                        {"qk_nope_head_dim", c.head_dim()},
                        {"qk_rope_head_dim", c.rope_head_dim},
                        {"v_head_dim", c.head_dim()},
                        {"intermediate_size", c.mlp ? c.ffn() : 1},
                        {"hidden_act", "silu"},
                        {"n_routed_experts", nullptr},
                        {"first_k_dense_replace", c.layers},
                        {"rms_norm_eps", shortest_decimal(c.rms_norm_eps)},
                        {"rope_theta", shortest_decimal(c.rope_theta)},
                        {"rope_scaling", nullptr},
                        {"vocab_size", c.vocab_size},
                        {"max_position_embeddings", c.max_positions},
                        {"tie_word_embeddings", true},
                        {"attention_bias", false},
                        {"torch_dtype", "float32"}};
    if (c.q_lora_rank > 0) j["q_lora_rank"] = c.q_lora_rank;
    return j;
  }
  if (c.window > 0) {
    const bool every_layer = c.local_layers.empty() ||
                             std::all_of(c.local_layers.begin(), c.local_layers.end(), [](bool b) { return b; });
    if (every_layer)  // Mistral: every layer sees the last sliding_window keys
      return {{"architectures", {"MistralForCausalLM"}},
              {"model_type", "mistral"},
              {"hidden_size", c.d_model},
              {"num_hidden_layers", c.layers},
              {"num_attention_heads", c.heads},
              {"num_key_value_heads", c.groups},
              {"head_dim", c.head_dim()},
              {"intermediate_size", c.mlp ? c.ffn() : 1},
              {"hidden_act", "silu"},
              {"sliding_window", c.window},
              {"rms_norm_eps", shortest_decimal(c.rms_norm_eps)},
              {"rope_theta", shortest_decimal(c.rope_theta)},
              {"vocab_size", c.vocab_size},
              {"max_position_embeddings", c.max_positions},
              {"tie_word_embeddings", true},
              {"torch_dtype", "float32"}};
    // Local and global layers: Qwen2's layer_types (its q/k/v biases are written as zeros)
    nlohmann::json types = nlohmann::json::array();
    for (int l = 0; l < c.layers; ++l) types.push_back(c.window_of(l) > 0 ? "sliding_attention" : "full_attention");
    return {{"architectures", {"Qwen2ForCausalLM"}},
            {"model_type", "qwen2"},
            {"hidden_size", c.d_model},
            {"num_hidden_layers", c.layers},
            {"num_attention_heads", c.heads},
            {"num_key_value_heads", c.groups},
            {"intermediate_size", c.mlp ? c.ffn() : 1},
            {"hidden_act", "silu"},
            {"use_sliding_window", true},
            {"sliding_window", c.window},
            {"max_window_layers", 0},
            {"layer_types", types},
            {"rms_norm_eps", shortest_decimal(c.rms_norm_eps)},
            {"rope_theta", shortest_decimal(c.rope_theta)},
            {"vocab_size", c.vocab_size},
            {"max_position_embeddings", c.max_positions},
            {"tie_word_embeddings", true},
            {"torch_dtype", "float32"}};
  }
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_size", c.d_model},
          {"num_hidden_layers", c.layers},
          {"num_attention_heads", c.heads},
          {"num_key_value_heads", c.groups},
          {"head_dim", c.head_dim()},
          {"intermediate_size", c.mlp ? c.ffn() : 1},
          {"hidden_act", "silu"},
          {"rms_norm_eps", shortest_decimal(c.rms_norm_eps)},
          {"rope_theta", shortest_decimal(c.rope_theta)},
          {"vocab_size", c.vocab_size},
          {"max_position_embeddings", c.max_positions},
          {"tie_word_embeddings", true},
          {"attention_bias", false},
          {"mlp_bias", false},
          {"torch_dtype", "float32"}};
}

std::vector<TensorToWrite> llama_tensors(const Model& model, std::vector<std::vector<float>>& storage) {
  const ModelConfig& c = model.config();
  const int64_t C = c.d_model;
  std::vector<TensorToWrite> out;
  storage.clear();
  storage.reserve(size_t(c.layers) * 7 + 1);  // never reallocated: `out` points into it
  const bool qwen2 = llama_config_json(c)["model_type"] == "qwen2";
  auto from_arena = [&](const std::string& name) {
    const ParamView* v = model.find(name);
    out.push_back({name, v->shape, model.weights() + v->offset});
  };
  auto filled = [&](const std::string& name, std::vector<int64_t> shape, float value) {
    size_t n = 1;
    for (int64_t d : shape) n *= size_t(d);
    storage.emplace_back(n, value);
    out.push_back({name, std::move(shape), storage.back().data()});
  };
  from_arena("model.embed_tokens.weight");
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    from_arena(p + "input_layernorm.weight");
    if (c.mla()) {
      const char* q_projs[] = {"q_a_proj", "q_a_layernorm", "q_b_proj"};
      if (c.q_lora_rank > 0)
        for (const char* proj : q_projs) from_arena(p + "self_attn." + proj + ".weight");
      else
        from_arena(p + "self_attn.q_proj.weight");
      for (const char* proj : {"kv_a_proj_with_mqa", "kv_a_layernorm", "kv_b_proj", "o_proj"})
        from_arena(p + "self_attn." + proj + ".weight");
    } else {
      for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"}) from_arena(p + "self_attn." + proj + ".weight");
      for (const char* gate : {"b_proj.weight", "a_proj.weight", "dt_proj.weight", "dt_bias", "A_log", "D"})
        if (model.find(p + "self_attn." + gate)) from_arena(p + "self_attn." + gate);  // without a softmax
      if (qwen2) {  // Qwen2 always has q/k/v biases: zeros add nothing
        filled(p + "self_attn.q_proj.bias", {int64_t(c.heads) * c.head_dim()}, 0.0f);
        filled(p + "self_attn.k_proj.bias", {int64_t(c.groups) * c.head_dim()}, 0.0f);
        filled(p + "self_attn.v_proj.bias", {int64_t(c.groups) * c.head_dim()}, 0.0f);
      }
    }
    if (c.mlp) {
      from_arena(p + "post_attention_layernorm.weight");
      for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) from_arena(p + "mlp." + proj + ".weight");
    } else {
      // Attention-only: an MLP of width 1 whose weights are 0 adds exactly 0 to the residual stream.
      filled(p + "post_attention_layernorm.weight", {C}, 1.0f);
      filled(p + "mlp.gate_proj.weight", {1, C}, 0.0f);
      filled(p + "mlp.up_proj.weight", {1, C}, 0.0f);
      filled(p + "mlp.down_proj.weight", {C, 1}, 0.0f);
    }
  }
  from_arena("model.norm.weight");
  return out;
}

std::string loss_csv(const std::vector<float>& losses) {
  std::string csv = "step,loss\n";
  char line[64];
  for (size_t i = 0; i < losses.size(); ++i) {
    std::snprintf(line, sizeof line, "%zu,%.9g\n", i + 1, double(losses[i]));
    csv += line;
  }
  return csv;
}

void save_checkpoint(const Model& model, const fs::path& dir, const CheckpointExtras& extras) {
  if (const std::string refusal = checkpoint_refusal(model.config()); !refusal.empty()) throw InputError(refusal);
  // Everything is serialised before the first byte goes to disk.
  std::vector<std::vector<float>> storage;
  const std::vector<TensorToWrite> tensors = llama_tensors(model, storage);
  std::vector<std::pair<fs::path, std::string>> files;
  files.push_back({dir / "model.safetensors", safetensors_bytes(tensors, {{"format", "pt"}})});
  files.push_back({dir / "config.json", llama_config_json(model.config()).dump(2) + "\n"});
  nlohmann::json vocab = {{"task", extras.task}, {"level", extras.level}, {"tokens", extras.vocab}};
  files.push_back({dir / "vocab.json", vocab.dump(1) + "\n"});
  if (!extras.losses.empty()) files.push_back({dir / "loss.csv", loss_csv(extras.losses)});

  ensure_directory(dir);
  std::vector<fs::path> written;
  try {
    for (const auto& [path, bytes] : files) {
      write_file_atomic(path, bytes);
      written.push_back(path);
    }
  } catch (...) {
    std::error_code ec;
    for (const fs::path& p : written) fs::remove(p, ec);
    throw;
  }
}

}  // namespace attnscope::train
