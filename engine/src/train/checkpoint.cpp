// checkpoint.cpp — the safetensors writer and the Llama checkpoint folder (layout in checkpoint.h).
#include "attnscope/train/checkpoint.h"

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

nlohmann::json llama_config_json(const ModelConfig& c) {
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
  storage.reserve(size_t(c.layers) * 4 + 1);
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
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"}) from_arena(p + "self_attn." + proj + ".weight");
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
