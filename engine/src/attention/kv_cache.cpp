// kv_cache.cpp — KV-cache bytes and attention parameters for MHA, GQA and MQA, with checked
// arithmetic, and the model presets file.
//
// Sections: element types · checked arithmetic · the calculator · presets
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

// L·(2·C·H·d + 2·C·G·d), C = H·d.
int64_t attention_params(const KvCacheInput& in, int64_t kv_heads, bool& ok) {
  const int64_t c = multiply(in.heads, in.head_dim, ok);
  const int64_t q_and_o = multiply(2, multiply(c, c, ok), ok);
  const int64_t k_and_v = multiply(2, multiply(c, multiply(kv_heads, in.head_dim, ok), ok), ok);
  return multiply(in.layers, add(q_and_o, k_and_v, ok), ok);
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
  require(in.layer_window.empty() || int64_t(in.layer_window.size()) == in.layers,
          "the sliding windows list " + std::to_string(in.layer_window.size()) + " layers, not the model's " +
              std::to_string(in.layers));
  for (int64_t w : in.layer_window) require(w >= 0, "a sliding window must be 0 (global) or a number of tokens, got " + std::to_string(w));
  // The largest variant is MHA (G = H); if it fits in 63 bits, GQA and MQA do too.
  kv_cache_bytes(in.layers, in.heads, in.head_dim, bytes_per_element(in.dtype), in.seq, in.batch);
  bool ok = true;
  attention_params(in, in.heads, ok);
  require(ok, "the attention parameters of " + std::to_string(in.layers) + " layers of " + std::to_string(in.heads) +
                  " heads × " + std::to_string(in.head_dim) + " do not fit in 63 bits: use smaller sizes");
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
    v.bytes_per_token = kv_cache_bytes(in.layers, kv_heads, in.head_dim, bytes, 1, 1);
    if (in.layer_window.empty()) {
      v.bytes = kv_cache_bytes(in.layers, kv_heads, in.head_dim, bytes, in.seq, in.batch);
    } else {  // layer by layer: a sliding-window layer keeps min(seq, W) tokens (≤ the all-global total)
      v.bytes = 0;
      for (int64_t w : in.layer_window)
        v.bytes += kv_cache_bytes(1, kv_heads, in.head_dim, bytes, w > 0 ? std::min(in.seq, w) : in.seq, in.batch);
    }
    v.gib = double(v.bytes) / double(int64_t(1) << 30);
    bool ok = true;
    v.attention_params = attention_params(in, kv_heads, ok);
    v.fits = in.memory_gib == 0 || double(v.bytes) <= memory_bytes;
    return v;
  };
  r.mha = variant("mha", in.heads);
  r.gqa = variant("gqa", in.kv_heads);
  r.mqa = variant("mqa", 1);
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
  return in;
}

}  // namespace attnscope
