// attention_file.cpp — an [L, H, T, T] attention stack from .npy or .safetensors, with its tokens and
// (optionally) the config that says how the heads share K/V.
#include "attnscope/model/attention_file.h"

#include <climits>
#include <cmath>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/config.h"
#include "attnscope/model/forward.h"

namespace attnscope::model {

namespace fs = std::filesystem;

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The stack's shape and values from a .safetensors file: the tensor "attentions", or the only one.
std::vector<int64_t> read_safetensors_stack(const fs::path& path, std::vector<float>& values) {
  const SafetensorsFile f(path);
  const SafetensorsTensor* t = f.header().find("attentions");
  const std::string name = path.string();
  if (!t) {
    if (f.header().tensors.size() != 1)
      throw InputError(std::string("'") + name + "' holds " + std::to_string(f.header().tensors.size()) +
                       " tensors and none is named \"attentions\"; save the [L, H, T, T] stack under that name");
    t = &f.header().tensors.front();
  }
  if (t->shape.size() != 4 || t->count() > max_model_attention_cells)
    throw InputError(std::string("'") + name + "': tensor '" + t->name + "' has shape " + shape_text(t->shape) +
                     "; an attention stack is [layers, heads, tokens, tokens] of at most " +
                     std::to_string(max_model_attention_cells) + " values");
  values.resize(size_t(t->count()));
  f.read_float32(*t, values.data(), false);
  return t->shape;
}

}  // namespace

std::optional<AttentionFiles> find_attention_files(const fs::path& path) {
  std::error_code error;
  // Anything but a folder counts by its name: a pipe named x.npy is then refused by the reader as a
  // pipe, not taken for a file in a checkpoint folder.
  const bool file = fs::exists(path, error) && !fs::is_directory(path, error);
  const std::string name = path.filename().string(), ext = path.extension().string();
  AttentionFiles f;
  if (file && (ext == ".npy" || (ext == ".safetensors" && name.rfind("attentions", 0) == 0))) {
    f.attentions = path;
  } else {
    const fs::path dir = file ? path.parent_path() : path;
    if (fs::exists(dir / "model.safetensors", error) || fs::exists(dir / "model.safetensors.index.json", error))
      return std::nullopt;  // a checkpoint (also when it holds attentions written beside it)
    for (const char* candidate : {"attentions.npy", "attentions.safetensors"})
      if (fs::exists(dir / candidate, error)) {
        f.attentions = dir / candidate;
        break;
      }
    if (f.attentions.empty()) return std::nullopt;
  }
  const fs::path dir = f.attentions.parent_path();
  f.tokens = dir / "tokens.json";
  for (const char* candidate : {"config.json", "model.json"})
    if (fs::exists(dir / candidate, error)) {
      f.config = dir / candidate;
      break;
    }
  return f;
}

void parse_attention_tokens(std::string_view json_text, int tokens, const std::string& name,
                            std::vector<int32_t>& ids, std::vector<std::string>& labels) {
  ids.clear();
  labels.clear();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("'" + name + "' is not valid JSON: " + e.what());
  }
  require(j.is_object() && (j.contains("ids") || j.contains("labels")),
          "'" + name + "' must be a JSON object with \"ids\" (token ids) and/or \"labels\" (token texts)");
  auto list_of = [&](const char* key) -> const nlohmann::json* {
    if (!j.contains(key)) return nullptr;
    require(j[key].is_array() && int64_t(j[key].size()) == tokens,
            "'" + name + "': \"" + key + "\" must be a list of " + std::to_string(tokens) +
                " entries, one per token of the attentions");
    return &j[key];
  };
  if (const auto* list = list_of("ids"))
    for (const auto& id : *list) {
      const bool whole = id.is_number_unsigned() ? id.get<uint64_t>() <= uint64_t(INT32_MAX)
                                                 : id.is_number_integer() && id.get<int64_t>() >= 0 &&
                                                       id.get<int64_t>() <= INT32_MAX;
      require(whole, "'" + name + "': \"ids\" must hold token ids, whole numbers from 0 to " +
                         std::to_string(INT32_MAX) + ", got " + id.dump());
      ids.push_back(int32_t(id.get<int64_t>()));
    }
  if (const auto* list = list_of("labels")) {
    for (const auto& l : *list) {
      require(l.is_string(), "'" + name + "': \"labels\" must hold strings, got " + l.dump());
      labels.push_back(l.get<std::string>());
    }
  } else {
    for (int32_t id : ids) labels.push_back(std::to_string(id));
  }
}

namespace {

// `compute --checkpoint`'s model.json of a model with layers without a softmax (Qwen3-Next) lists every layer's
// type in "layer_maps"; those layers' slots of attentions.npy hold zeros and their signed matrices are in
// linear_maps.npy [L_linear, H_linear, T, T] beside it, at "linear_index". Read them into the stack (its layer_kind
// and linear_maps); nothing for any other config.
void read_linear_layers(AttentionStack& s, const fs::path& config_json, const fs::path& attentions_file) {
  if (config_json.empty()) return;
  const nlohmann::json j = nlohmann::json::parse(read_file(config_json, int64_t(16) << 20), nullptr, false);
  if (!j.is_object() || !j.contains("layer_maps")) return;
  const std::string name = config_json.string();
  const nlohmann::json& layers = j["layer_maps"];
  require(layers.is_array() && layers.size() == size_t(s.layers),
          "'" + name + "': \"layer_maps\" must list the " + std::to_string(s.layers) + " layers of '" +
              attentions_file.string() + "'");
  std::vector<std::pair<std::string, int64_t>> linear(size_t(s.layers), {"", -1});
  bool any = false;
  for (int l = 0; l < s.layers; ++l) {
    const nlohmann::json& e = layers[size_t(l)];
    require(e.is_object() && e.contains("type") && e["type"].is_string(),
            "'" + name + "': \"layer_maps\"[" + std::to_string(l) + "] has no \"type\" string");
    if (e["type"] == "attention") continue;
    require(e.contains("linear_index") && e["linear_index"].is_number_integer(),
            "'" + name + "': \"layer_maps\"[" + std::to_string(l) + "] (" + e["type"].get<std::string>() +
                ") has no \"linear_index\" into linear_maps.npy");
    linear[size_t(l)] = {e["type"].get<std::string>(), e["linear_index"].get<int64_t>()};
    any = true;
  }
  if (!any) return;
  const fs::path file = attentions_file.parent_path() / "linear_maps.npy";
  NpyArray m = read_npy(file, 4);
  require(m.shape.size() == 4 && m.shape[2] == s.tokens && m.shape[3] == s.tokens && m.shape[1] >= 1 &&
              m.shape[1] <= max_attention_file_heads,
          "'" + file.string() + "' has shape " + shape_text(m.shape) + "; it must be [linear layers, heads, " +
              std::to_string(s.tokens) + ", " + std::to_string(s.tokens) + "]");
  const size_t per_layer = size_t(m.shape[1]) * size_t(s.tokens) * size_t(s.tokens);
  s.layer_kind.assign(size_t(s.layers), "");
  s.linear_maps.assign(size_t(s.layers), {});
  for (int l = 0; l < s.layers; ++l) {
    const auto& [kind, index] = linear[size_t(l)];
    if (kind.empty()) continue;
    require(index >= 0 && index < m.shape[0], "'" + name + "': layer " + std::to_string(l) + "'s \"linear_index\" " +
                                                  std::to_string(index) + " is not one of the " +
                                                  std::to_string(m.shape[0]) + " layers of '" + file.string() + "'");
    const float* first = m.data.data() + size_t(index) * per_layer;
    for (size_t i = 0; i < per_layer; ++i)
      require(std::isfinite(first[i]), "'" + file.string() + "': layer " + std::to_string(index) + " holds a value that is "
                                                                                              "not finite");
    s.layer_kind[size_t(l)] = kind;
    s.linear_maps[size_t(l)].assign(first, first + per_layer);
  }
}

}  // namespace

AttentionStack open_attentions(const fs::path& attentions_file, const fs::path& tokens_json, const fs::path& config_json,
                               const std::function<void(double)>& progress, const std::atomic<bool>* cancel) {
  const std::string name = attentions_file.string();
  AttentionStack s;
  s.source = attentions_file.filename().string();
  std::vector<int64_t> shape;
  const std::string ext = attentions_file.extension().string();
  if (ext == ".safetensors") {
    shape = read_safetensors_stack(attentions_file, s.attentions);
  } else {
    require(ext == ".npy", "'" + name + "': an attentions file is .npy or .safetensors");
    NpyArray a = read_npy(attentions_file, 4);
    shape = a.shape;
    s.attentions = std::move(a.data);
  }
  require(shape.size() == 4 && shape[2] == shape[3] && shape[0] >= 1 && shape[1] >= 1 && shape[2] >= 1 &&
              shape[0] <= max_attention_file_heads && shape[1] <= max_attention_file_heads,
          "'" + name + "' has shape " + shape_text(shape) + "; an attention stack is [layers, heads, tokens, tokens], " +
              "each at least 1, with at most " + std::to_string(max_attention_file_heads) + " layers and heads");
  require(int64_t(s.attentions.size()) <= max_model_attention_cells,
          "'" + name + "' holds more than " + std::to_string(max_model_attention_cells) + " values");
  s.layers = int(shape[0]), s.heads = int(shape[1]), s.tokens = int(shape[2]);
  s.kv_heads = s.heads;
  const int T = s.tokens;
  read_linear_layers(s, config_json, attentions_file);

  // Every row a probability distribution over the keys (messages built only on failure: this runs
  // over up to 2^28 values).
  s.causal = true;
  auto where = [&](int l, int h, int i) {
    return "'" + name + "': layer " + std::to_string(l) + ", head " + std::to_string(h) + ", query " + std::to_string(i);
  };
  for (int l = 0; l < s.layers; ++l) {
    check_cancel(cancel);
    for (int h = 0; h < s.heads && !s.linear_layer(l); ++h)
      for (int i = 0; i < T; ++i) {
        const float* row = s.attentions.data() + ((int64_t(l) * s.heads + h) * T + i) * T;
        double sum = 0;
        for (int j = 0; j < T; ++j) {
          if (!(std::isfinite(row[j]) && row[j] >= -1e-6f && row[j] <= 1.0f + 1e-3f))
            throw InputError(where(l, h, i) + ", key " + std::to_string(j) + " holds " + std::to_string(row[j]) +
                             ", which is not a probability (the file must hold softmax outputs, not scores)");
          sum += row[j];
          if (j > i && row[j] != 0.0f) s.causal = false;
        }
        if (std::abs(sum - 1.0) > 0.02) throw InputError(where(l, h, i) + " sums to " + std::to_string(sum) + ", not 1");
      }
    if (progress) progress(double(l + 1) / double(s.layers));
  }

  // tokens.json: ids and/or labels, T of each.
  parse_attention_tokens(read_file(tokens_json, int64_t(64) << 20), T, tokens_json.string(), s.ids, s.labels);

  if (!config_json.empty()) {
    const HeadCounts h = parse_head_counts(read_file(config_json, int64_t(16) << 20), config_json.string());
    if (h.heads != s.heads)
      throw InputError(std::string("'") + config_json.string() + "' gives " + std::to_string(h.heads) +
                       " attention heads, but '" + name + "' holds " + std::to_string(s.heads) +
                       " per layer (is it the same model?)");
    s.kv_heads = h.kv_heads;
    s.groups_from_config = true;
  }
  return s;
}

}  // namespace attnscope::model
