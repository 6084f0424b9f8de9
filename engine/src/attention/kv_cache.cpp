// kv_cache.cpp — KV-cache bytes and attention parameters for MHA, GQA and MQA, the model's own layer
// types (full, sliding window with sinks, MLA, and the fixed-size states of linear attention / Gated
// DeltaNet and Mamba-2), with checked arithmetic, and the model presets file.
//
// Sections: element types · layer types · checked arithmetic · the calculator · presets
#include "attnscope/attention/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "attnscope/io/assets.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/text/tokenizer.h"

namespace attnscope {

// ---- element types ------------------------------------------------------------------------------

const char* to_string(ElementType t) {
  switch (t) {
    case ElementType::fp32: return "fp32";
    case ElementType::fp16: return "fp16";
    case ElementType::int8: return "int8";
  }
  return "?";
}

ElementType parse_element_type(const std::string& name) {
  for (auto t : {ElementType::fp32, ElementType::fp16, ElementType::int8})
    if (name == to_string(t)) return t;
  throw InputError("unknown element type '" + name + "' (valid: fp32, fp16, int8)");
}

int bytes_per_element(ElementType t) {
  switch (t) {
    case ElementType::fp32: return 4;
    case ElementType::fp16: return 2;
    case ElementType::int8: return 1;
  }
  return 0;
}

// ---- layer types --------------------------------------------------------------------------------

const char* to_string(LayerKind k) {
  switch (k) {
    case LayerKind::full: return "full";
    case LayerKind::sliding: return "sliding";
    case LayerKind::mla: return "mla";
    case LayerKind::linear: return "linear";
    case LayerKind::mamba2: return "mamba2";
  }
  return "?";
}

LayerKind parse_layer_kind(const std::string& name) {
  for (auto k : {LayerKind::full, LayerKind::sliding, LayerKind::mla, LayerKind::linear, LayerKind::mamba2})
    if (name == to_string(k)) return k;
  throw InputError("unknown layer type '" + name + "' (valid: full, sliding, mla, linear, mamba2)");
}

bool is_state_kind(LayerKind k) { return k == LayerKind::linear || k == LayerKind::mamba2; }

std::vector<KvLayerGroup> layer_types_of(const KvCacheInput& in) {
  if (!in.layer_types.empty()) return in.layer_types;
  return {KvLayerGroup{LayerKind::full, in.layers, 0, 0, 0, 0, 0, 0, 0}};
}

// ---- checked arithmetic -------------------------------------------------------------------------
namespace {

// a·b, or nullopt-like failure reported through `ok`.
int64_t multiply(int64_t a, int64_t b, bool& ok) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) ok = false;
  return r;
}

int64_t add(int64_t a, int64_t b, bool& ok) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) ok = false;
  return r;
}

void require_positive(int64_t value, const char* name) {
  require(value >= 1, std::string(name) + " must be a whole number of at least 1, got " + std::to_string(value));
}

std::string divisors(int64_t n) {
  std::string list;
  int shown = 0;
  for (int64_t d = 1; d <= n && shown < 24; ++d)
    if (n % d == 0) {
      list += (list.empty() ? "" : ", ") + std::to_string(d);
      ++shown;
    }
  return list;
}

int64_t v_dim(const KvCacheInput& in) { return in.v_head_dim > 0 ? in.v_head_dim : in.head_dim; }

// L·C·(H·d_k + G·d_k + G·d_v + H·d_v): W_Q, W_K, W_V, W_O; with C = H·d and d_v = d_k this is
// L·(2·C·H·d + 2·C·G·d).
int64_t attention_params(const KvCacheInput& in, int64_t kv_heads, bool& ok) {
  const int64_t c = in.hidden > 0 ? in.hidden : multiply(in.heads, in.head_dim, ok);
  const int64_t widths = add(multiply(in.heads, in.head_dim, ok), multiply(kv_heads, in.head_dim, ok), ok);
  const int64_t v_widths = add(multiply(kv_heads, v_dim(in), ok), multiply(in.heads, v_dim(in), ok), ok);
  return multiply(in.layers, multiply(c, add(widths, v_widths, ok), ok), ok);
}

// K and V of G heads for one token in one layer: G·(d_k + d_v).
int64_t dense_elements(const KvCacheInput& in, int64_t kv_heads, bool& ok) {
  return multiply(kv_heads, add(in.head_dim, v_dim(in), ok), ok);
}

// One token, one layer, of a layer type.
int64_t elements_per_token(const KvCacheInput& in, const KvLayerGroup& g, bool& ok) {
  return g.kind == LayerKind::mla ? add(in.kv_lora_rank, in.rope_dim, ok) : dense_elements(in, in.kv_heads, ok);
}

// Tokens a layer of this type holds per sequence at `seq`.
int64_t cached_tokens(const KvLayerGroup& g, int64_t seq, bool& ok) {
  return g.kind == LayerKind::sliding ? std::min(seq, add(g.window, g.sinks, ok)) : seq;
}

std::string describe(const KvLayerGroup& g) {
  std::string s = std::to_string(g.layers) + " " + to_string(g.kind);
  if (g.kind == LayerKind::sliding) s += " (window " + std::to_string(g.window) + ")";
  return s;
}

// The fixed-size state of one linear or mamba2 layer for one sequence (kv_cache.h): the recurrent state
// heads · d_k · d_v and the convolution's (2 · key_heads · d_k + heads · d_v) · kernel.
void state_elements(const KvLayerGroup& g, KvLayerTypeRow& r, bool& ok) {
  r.recurrent_elements = multiply(multiply(g.state_heads, g.key_dim, ok), g.value_dim, ok);
  const int64_t conv_dim =
      add(multiply(multiply(2, g.key_heads, ok), g.key_dim, ok), multiply(g.state_heads, g.value_dim, ok), ok);
  r.conv_elements = multiply(conv_dim, g.conv_kernel, ok);
  r.state_elements = add(r.recurrent_elements, r.conv_elements, ok);
}

// The rows of the model's own layer types; `ok` turns false on overflow.
std::vector<KvLayerTypeRow> layer_rows(const KvCacheInput& in, bool& ok) {
  const int bytes = bytes_per_element(in.dtype);
  std::vector<KvLayerTypeRow> rows;
  for (const KvLayerGroup& g : layer_types_of(in)) {
    KvLayerTypeRow r;
    r.group = g;
    if (is_state_kind(g.kind)) {  // a state: the same bytes at every seq, nothing per token
      state_elements(g, r, ok);
      r.state_bytes_per_layer = multiply(r.state_elements, bytes, ok);
      r.bytes = multiply(multiply(r.state_bytes_per_layer, g.layers, ok), in.batch, ok);
    } else {
      r.elements_per_token = elements_per_token(in, g, ok);
      r.bytes_per_token = multiply(multiply(r.elements_per_token, bytes, ok), g.layers, ok);
      r.tokens = cached_tokens(g, in.seq, ok);
      r.bytes = multiply(multiply(r.bytes_per_token, r.tokens, ok), in.batch, ok);
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

// ---- the calculator -----------------------------------------------------------------------------

int64_t kv_cache_bytes(int64_t layers, int64_t kv_heads, int64_t head_dim, int bytes, int64_t seq, int64_t batch) {
  bool ok = true;
  const int64_t per_token = multiply(multiply(multiply(multiply(2, layers, ok), kv_heads, ok), head_dim, ok), bytes, ok);
  const int64_t total = multiply(multiply(per_token, seq, ok), batch, ok);
  require(ok, "the KV cache 2 × " + std::to_string(layers) + " layers × " + std::to_string(kv_heads) + " kv heads × " +
                  std::to_string(head_dim) + " × " + std::to_string(bytes) + " bytes × " + std::to_string(seq) +
                  " tokens × " + std::to_string(batch) +
                  " sequences does not fit in 63 bits (more than 8 EiB): use smaller sizes");
  return total;
}

void validate_kv_cache_input(const KvCacheInput& in) {
  require_positive(in.layers, "layers");
  require_positive(in.heads, "heads");
  require_positive(in.kv_heads, "kv heads");
  require_positive(in.head_dim, "head dim");
  require_positive(in.seq, "sequence length");
  require_positive(in.batch, "batch");
  require(in.heads % in.kv_heads == 0, "kv heads must divide heads: " + std::to_string(in.heads) +
                                           " heads cannot share " + std::to_string(in.kv_heads) +
                                           " kv heads equally (valid kv heads for " + std::to_string(in.heads) +
                                           " heads: " + divisors(in.heads) + (in.heads > 24 ? ", …" : "") + ")");
  require(std::isfinite(in.memory_gib) && in.memory_gib >= 0,
          "memory must be a finite number of GiB ≥ 0 (0 = no check), got " + std::to_string(in.memory_gib));
  require(in.v_head_dim >= 0, "v head dim must be 0 (the same as d_head) or more, got " + std::to_string(in.v_head_dim));
  require(in.hidden >= 0, "model width must be 0 (H × d_head) or more, got " + std::to_string(in.hidden));
  // The layer types: each valid on its own, together exactly L layers.
  int64_t total_layers = 0;
  std::string parts;
  bool has_mla = false;
  bool ok = true;
  for (const KvLayerGroup& g : layer_types_of(in)) {
    const std::string what = std::string(to_string(g.kind)) + " layers";
    require(g.layers >= 1, what + ": a layer type needs at least 1 layer, got " + std::to_string(g.layers));
    if (g.kind == LayerKind::sliding) {
      require(g.window >= 1, "sliding-window layers need a window of at least 1 token, got " + std::to_string(g.window));
      require(g.sinks >= 0, "sink tokens must be 0 or more, got " + std::to_string(g.sinks));
    } else {
      require(g.window == 0 && g.sinks == 0, what + " have no window and no sink tokens (only sliding layers do)");
    }
    if (is_state_kind(g.kind)) {
      const bool linear = g.kind == LayerKind::linear;
      const std::pair<int64_t, const char*> widths[] = {
          {g.state_heads, linear ? "value heads (linear_num_value_heads)" : "heads (mamba_n_heads)"},
          {g.key_heads, linear ? "key heads (linear_num_key_heads)" : "groups (mamba_n_groups)"},
          {g.key_dim, linear ? "key head width d_k (linear_key_head_dim)" : "state size d_state (mamba_d_state)"},
          {g.value_dim, linear ? "value head width d_v (linear_value_head_dim)" : "head width (mamba_d_head)"},
          {g.conv_kernel, linear ? "convolution width (linear_conv_kernel_dim)" : "convolution width (mamba_d_conv)"}};
      for (const auto& [value, name] : widths)
        require(value >= 1, what + " need " + name + " of at least 1, got " + std::to_string(value));
    } else {
      require(g.state_heads == 0 && g.key_heads == 0 && g.key_dim == 0 && g.value_dim == 0 && g.conv_kernel == 0,
              what + " have no fixed-size state (only linear and mamba2 layers have heads, widths and a convolution)");
    }
    has_mla = has_mla || g.kind == LayerKind::mla;
    total_layers = add(total_layers, g.layers, ok);
    parts += (parts.empty() ? "" : " + ") + describe(g);
  }
  require(ok && total_layers == in.layers, "the layer types add up to " + std::to_string(total_layers) + " layers (" +
                                               parts + "), not the model's " + std::to_string(in.layers) +
                                               " layers L: give layer counts that add up to L");
  if (has_mla) {
    require(in.kv_lora_rank >= 1, "MLA layers need a kv_lora_rank (the latent c_KV's width) of at least 1, got " +
                                      std::to_string(in.kv_lora_rank));
    require(in.rope_dim >= 0, "the MLA RoPE key width (qk_rope_head_dim) must be 0 or more, got " +
                                  std::to_string(in.rope_dim));
  }
  // The largest variant is MHA (G = H); if it fits in 63 bits, GQA and MQA do too.
  kv_cache_bytes(in.layers, in.heads, std::max(in.head_dim, v_dim(in)), bytes_per_element(in.dtype), in.seq, in.batch);
  attention_params(in, in.heads, ok);
  require(ok, "the attention parameters of " + std::to_string(in.layers) + " layers of " + std::to_string(in.heads) +
                  " heads × " + std::to_string(in.head_dim) + " do not fit in 63 bits: use smaller sizes");
  int64_t total = 0;
  for (const KvLayerTypeRow& r : layer_rows(in, ok)) total = add(total, r.bytes, ok);
  require(ok, "the KV cache of the layer types (" + parts + ") at " + std::to_string(in.seq) + " tokens × " +
                  std::to_string(in.batch) + " sequences does not fit in 63 bits (more than 8 EiB): use smaller sizes");
}

int64_t gqa_kv_heads(const KvCacheInput& in) {
  const std::vector<KvLayerGroup> types = layer_types_of(in);
  const bool mla = std::any_of(types.begin(), types.end(), [](const KvLayerGroup& g) { return g.kind == LayerKind::mla; });
  if (!mla || in.kv_heads != in.heads) return in.kv_heads;
  // The latent replaces MHA: the grouping that caches about as much is the smallest G dividing H whose K and V
  // hold at least the latent's r + d_rope elements a token (DeepSeek-V2 §2.1: MLA ≈ GQA with 2.25 groups).
  bool ok = true;
  const int64_t latent = add(in.kv_lora_rank, in.rope_dim, ok);
  for (int64_t g = 1; g < in.heads; ++g)
    if (in.heads % g == 0 && dense_elements(in, g, ok) >= latent) return g;
  return in.heads;
}

KvCacheReport kv_cache_report(const KvCacheInput& in) {
  validate_kv_cache_input(in);
  KvCacheReport r;
  r.input = in;
  const int bytes = bytes_per_element(in.dtype);
  const double memory_bytes = in.memory_gib * double(int64_t(1) << 30);
  auto variant = [&](const char* kind, int64_t kv_heads) {
    KvCacheVariant v;
    v.kind = kind;
    v.kv_heads = kv_heads;
    bool ok = true;  // validated: MHA at the wider of d_k and d_v fits, so every variant does
    v.bytes_per_token = multiply(multiply(dense_elements(in, kv_heads, ok), in.layers, ok), bytes, ok);
    v.bytes = multiply(multiply(v.bytes_per_token, in.seq, ok), in.batch, ok);
    v.gib = double(v.bytes) / double(int64_t(1) << 30);
    v.attention_params = attention_params(in, kv_heads, ok);
    v.fits = in.memory_gib == 0 || double(v.bytes) <= memory_bytes;
    return v;
  };
  r.mha = variant("mha", in.heads);
  r.gqa = variant("gqa", gqa_kv_heads(in));
  r.mqa = variant("mqa", 1);
  bool ok = true;
  r.layer_types = layer_rows(in, ok);
  for (const KvLayerTypeRow& row : r.layer_types) r.bytes += row.bytes;
  r.gib = double(r.bytes) / double(int64_t(1) << 30);
  r.fits = in.memory_gib == 0 || double(r.bytes) <= memory_bytes;
  return r;
}

// ---- presets ------------------------------------------------------------------------------------

std::vector<ModelPreset> load_model_presets(const std::filesystem::path& path) {
  using nlohmann::json;
  const std::string text = read_file(path, 1 << 20);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError("model presets file '" + path.string() + "' is not valid JSON: " + e.what());
  }
  const std::string where = "model presets file '" + path.string() + "'";
  require(j.is_object() && j.contains("models") && j["models"].is_array() && !j["models"].empty(),
          where + " must be an object with a non-empty list \"models\"");
  std::vector<ModelPreset> presets;
  std::set<std::string> names;
  for (size_t k = 0; k < j["models"].size(); ++k) {
    const json& m = j["models"][k];
    const std::string entry = where + ", model " + std::to_string(k + 1);
    require(m.is_object(), entry + " must be an object");
    auto text_field = [&](const char* key) {
      require(m.contains(key) && m[key].is_string() && !m[key].get<std::string>().empty(),
              entry + ": \"" + key + "\" must be a non-empty string");
      return m[key].get<std::string>();
    };
    auto size_field = [&](const char* key) {
      require(m.contains(key) && m[key].is_number_integer() && m[key].get<int64_t>() >= 1,
              entry + ": \"" + key + "\" must be a whole number of at least 1");
      return m[key].get<int64_t>();
    };
    ModelPreset p;
    p.name = text_field("name");
    require(p.name == lower_ascii(p.name), entry + ": name '" + p.name + "' must be lower case");
    require(names.insert(p.name).second, entry + ": name '" + p.name + "' is used twice");
    p.label = text_field("label");
    p.layers = size_field("layers");
    p.heads = size_field("heads");
    p.kv_heads = size_field("kv_heads");
    p.head_dim = size_field("head_dim");
    p.context = size_field("context");
    p.source = text_field("source");
    auto optional_size = [&](const char* key, int64_t minimum) {
      if (!m.contains(key)) return int64_t(0);
      require(m[key].is_number_integer() && m[key].get<int64_t>() >= minimum,
              entry + ": \"" + key + "\" must be a whole number of at least " + std::to_string(minimum));
      return m[key].get<int64_t>();
    };
    p.v_head_dim = optional_size("v_head_dim", 1);
    p.hidden = optional_size("hidden", 1);
    p.kv_lora_rank = optional_size("kv_lora_rank", 1);
    p.rope_dim = optional_size("qk_rope_head_dim", 0);
    if (m.contains("layer_types")) {
      require(m["layer_types"].is_array() && !m["layer_types"].empty(),
              entry + ": \"layer_types\" must be a non-empty list");
      for (const json& t : m["layer_types"]) {
        require(t.is_object() && t.contains("type") && t["type"].is_string(),
                entry + ": each layer type must be an object with a \"type\" (full, sliding, mla, linear, mamba2)");
        KvLayerGroup g;
        try {
          g.kind = parse_layer_kind(t["type"].get<std::string>());
        } catch (const InputError& e) {
          throw InputError(entry + ": " + e.what());
        }
        auto count = [&](const char* key) {
          if (!t.contains(key)) return int64_t(0);
          require(t[key].is_number_integer(), entry + ": layer type \"" + key + "\" must be a whole number");
          return t[key].get<int64_t>();
        };
        g.layers = count("layers");
        g.window = count("window");
        g.sinks = count("sinks");
        // The state widths, under the names of the configs they come from (kv_cache.h).
        const bool linear = g.kind == LayerKind::linear;
        const std::set<std::string> known =
            linear ? std::set<std::string>{"type", "layers", "heads", "key_heads", "key_dim", "value_dim", "conv_kernel"}
            : g.kind == LayerKind::mamba2
                ? std::set<std::string>{"type", "layers", "heads", "groups", "state", "head_dim", "conv_kernel"}
                : std::set<std::string>{"type", "layers", "window", "sinks"};
        for (const auto& item : t.items()) {
          std::string valid;
          for (const std::string& k : known) valid += (valid.empty() ? "" : ", ") + k;
          require(known.count(item.key()) > 0, entry + ": a " + std::string(to_string(g.kind)) +
                                                   " layer type has no key \"" + item.key() + "\" (valid: " + valid + ")");
        }
        if (is_state_kind(g.kind)) {
          g.state_heads = count("heads");
          g.key_heads = count(linear ? "key_heads" : "groups");
          g.key_dim = count(linear ? "key_dim" : "state");
          g.value_dim = count(linear ? "value_dim" : "head_dim");
          g.conv_kernel = count("conv_kernel");
        }
        p.layer_types.push_back(g);
      }
    }
    try {
      KvCacheInput in = kv_cache_input(p);
      in.seq = p.context;
      validate_kv_cache_input(in);
    } catch (const InputError& e) {
      throw InputError(entry + " (" + p.name + "): " + e.what());
    }
    presets.push_back(std::move(p));
  }
  return presets;
}

std::vector<ModelPreset> load_model_presets() { return load_model_presets(assets_dir() / "models.json"); }

const ModelPreset& find_model_preset(const std::vector<ModelPreset>& presets, const std::string& name) {
  const std::string key = lower_ascii(name);
  std::string valid;
  for (const ModelPreset& p : presets) {
    if (p.name == key) return p;
    valid += (valid.empty() ? "" : ", ") + p.name;
  }
  throw InputError("unknown model '" + name + "' (valid: " + valid + ")");
}

KvCacheInput kv_cache_input(const ModelPreset& p) {
  KvCacheInput in;
  in.layers = p.layers;
  in.heads = p.heads;
  in.kv_heads = p.kv_heads;
  in.head_dim = p.head_dim;
  in.v_head_dim = p.v_head_dim;
  in.hidden = p.hidden;
  in.kv_lora_rank = p.kv_lora_rank;
  in.rope_dim = p.rope_dim;
  in.layer_types = p.layer_types;
  return in;
}

}  // namespace attnscope
