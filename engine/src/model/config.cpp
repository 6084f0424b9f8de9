// config.cpp — config.json → ModelConfig, with a message naming the key for every refusal.
//
// Defaults are Hugging Face's own (GPT2Config, LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config,
// Phi3Config, SmolLM3Config, Gemma2Config, Gemma3TextConfig) for the keys their config.json files may
// leave out; the sizes that define the network are required.
#include "attnscope/model/config.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "attnscope/model/families.h"

#include <nlohmann/json.hpp>

#include "attnscope/attention/positions.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"

namespace attnscope::model {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw InputError("'" + name + "': " + what);
}

class Reader {
 public:
  // `looked_up` (optional) collects every key asked about, present or not (families.h's config_keys).
  Reader(const json& j, std::string name, std::set<std::string>* looked_up = nullptr)
      : j_(j), name_(std::move(name)), looked_up_(looked_up) {}

  bool has(const char* key) const { return present(key) && !j_[key].is_null(); }
  // The key is there, even as null (null may mean something else than absent, e.g. Gemma 2's soft-caps).
  bool present(const char* key) const {
    if (looked_up_) looked_up_->insert(prefix_ + key);
    return j_.contains(key);
  }

  // A required whole number in [lo, hi]; `alias` is an older spelling read when `key` is absent.
  int integer(const char* key, int lo, int hi, const char* alias = nullptr) const {
    const char* used = has(key) || !alias ? key : alias;
    if (!has(used))
      fail(name_, "config.json has no \"" + prefix_ + key + "\" (needed to build the " + family_ + " network)");
    return integer_value(used, lo, hi);
  }
  int integer_or(const char* key, int fallback, int lo, int hi) const {
    return has(key) ? integer_value(key, lo, hi) : fallback;
  }
  double number_or(const char* key, double fallback, double lo, double hi) const {
    if (!has(key)) return fallback;
    const json& v = j_[key];
    if (!v.is_number()) fail(name_, "\"" + prefix_ + key + "\" must be a number, got " + v.dump());
    const double d = v.get<double>();
    if (!(d >= lo && d <= hi))
      fail(name_, "\"" + prefix_ + key + "\" = " + v.dump() + " is outside the valid range " + std::to_string(lo) +
                      " to " + std::to_string(hi));
    return d;
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_[key].is_boolean()) fail(name_, "\"" + prefix_ + key + "\" must be true or false, got " + j_[key].dump());
    return j_[key].get<bool>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!j_[key].is_string()) fail(name_, "\"" + prefix_ + key + "\" must be a string, got " + j_[key].dump());
    return j_[key].get<std::string>();
  }
  // A list of `count` values read by `each` (which gets the element and its index), or empty when absent.
  template <class T, class F>
  std::vector<T> list_or_empty(const char* key, int count, F each) const {
    if (!has(key)) return {};
    const json& v = j_[key];
    if (!v.is_array()) fail(name_, "\"" + prefix_ + key + "\" must be a list, got " + v.dump());
    if (int64_t(v.size()) != count)
      fail(name_, "\"" + prefix_ + key + "\" lists " + std::to_string(v.size()) + " layers but \"num_hidden_layers\" is " +
                      std::to_string(count));
    std::vector<T> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(each(v[i], int(i)));
    return out;
  }
  const std::string& name() const { return name_; }
  void set_family(std::string f) { family_ = std::move(f); }
  // The same reader over another object of the same file (a copy with defaults added): its look-ups
  // count as this config's (families.h's config_keys).
  Reader over(const json& other) const {
    Reader r(other, name_, looked_up_);
    r.family_ = family_;
    r.prefix_ = prefix_;
    return r;
  }
  // A reader of the object under `key` (a multimodal container's text_config): its look-ups count as
  // "key.name" (families.h's config_keys), and its messages name the key.
  Reader nested(const json& other, const std::string& key) const {
    Reader r(other, name_, looked_up_);
    r.family_ = family_;
    r.prefix_ = prefix_ + key + ".";
    return r;
  }
  const std::string& prefix() const { return prefix_; }

 private:
  int integer_value(const char* key, int lo, int hi) const {
    const json& v = j_[key];
    if (!v.is_number_integer())
      fail(name_, "\"" + prefix_ + key + "\" must be a whole number, got " + v.dump());
    const int64_t n = v.get<int64_t>();
    if (n < lo || n > hi)
      fail(name_, "\"" + prefix_ + key + "\" = " + std::to_string(n) + " is outside what attnscope supports (" +
                      std::to_string(lo) + " to " + std::to_string(hi) + ")");
    return int(n);
  }
  const json& j_;
  std::string name_;
  std::set<std::string>* looked_up_;
  std::string family_ = "model";
  std::string prefix_;  // "text_config." inside a container
};

// Bounds that keep every size product within int64 and every tensor within reach of 24-bit indices
// times a few: they exceed every published model of these families.
constexpr int max_layers = 1024;
constexpr int max_width = 1 << 16;           // C, F, H·D
constexpr int max_vocab = 1 << 21;
constexpr int max_positions_bound = 1 << 24;

void check_common(const ModelConfig& c, const std::string& name) {
  if (c.kv_heads > c.heads || c.heads % c.kv_heads != 0)
    fail(name, "the key/value heads (" + std::to_string(c.kv_heads) + ") must divide the attention heads (" +
                   std::to_string(c.heads) + ")");
  if (int64_t(c.heads) * c.head_dim > max_width)
    fail(name, "heads × head width = " + std::to_string(int64_t(c.heads) * c.head_dim) + " is above the limit of " +
                   std::to_string(max_width));
}

// "layer_types": ["sliding_attention" | "full_attention", …] of num_hidden_layers entries → true where
// the layer is a sliding-window one; empty when the key is absent.
std::vector<bool> read_layer_types(const Reader& r, int layers) {
  std::vector<int> types = r.list_or_empty<int>("layer_types", layers, [&](const nlohmann::json& v, int i) {
    if (v == "sliding_attention") return 1;
    if (v == "full_attention") return 0;
    fail(r.name(), "\"layer_types\"[" + std::to_string(i) + "] = " + v.dump() +
                       " is not supported (supported: \"sliding_attention\", \"full_attention\")");
  });
  return std::vector<bool>(types.begin(), types.end());
}

ModelConfig read_gpt2(const Reader& r, const std::string& name) {
  ModelConfig c;
  c.family = Family::gpt2;
  c.norm = NormKind::layernorm;
  c.positions = PositionKind::learned;
  c.mlp = MlpKind::gelu_new;
  c.layers = r.integer("n_layer", 1, max_layers);
  c.d_model = r.integer("n_embd", 1, max_width);
  c.heads = r.integer("n_head", 1, limits::max_heads);
  c.kv_heads = c.heads;
  c.vocab = r.integer("vocab_size", 1, max_vocab);
  c.max_positions = r.integer("n_positions", 1, max_positions_bound, "n_ctx");
  c.ffn_dim = r.integer_or("n_inner", 4 * c.d_model, 1, max_width);
  c.norm_eps = r.number_or("layer_norm_epsilon", 1e-5, 0, 1);
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
  if (c.d_model % c.heads != 0)
    fail(name, "\"n_head\" = " + std::to_string(c.heads) + " does not divide \"n_embd\" = " + std::to_string(c.d_model));
  c.head_dim = c.d_model / c.heads;
  const std::string act = r.string_or("activation_function", "gelu_new");
  // gelu_pytorch_tanh is the same tanh formula under another name.
  if (act != "gelu_new" && act != "gelu_pytorch_tanh")
    fail(name, "\"activation_function\" = \"" + act + "\" is not supported for gpt2 (supported: gelu_new)");
  if (!r.boolean_or("scale_attn_weights", true))
    fail(name, "\"scale_attn_weights\" = false is not supported (attnscope scales scores by 1/sqrt(head_dim))");
  if (r.boolean_or("scale_attn_by_inverse_layer_idx", false))
    fail(name, "\"scale_attn_by_inverse_layer_idx\" = true is not supported (supported: false)");
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.layer_window.assign(size_t(c.layers), 0);
  c.layer_rope_theta.assign(size_t(c.layers), 0.0);
  return c;
}

// ---- RoPE: rope_scaling (transformers 4) or rope_parameters (transformers 5) -------------------------
// transformers 5.x RotaryEmbeddingConfigMixin.standardize_rope_params and _validate_*_rope_parameters
// (modeling_rope_utils.py): rope_scaling, when present, is the dict (else rope_parameters); "rope_type"
// (older files: "type") names one of ROPE_INIT_FUNCTIONS; a "rope_theta" in the dict is the base; a
// top-level "original_max_position_embeddings" (Phi-3 writes it there) wins over the dict's, which
// defaults to max_position_embeddings. Every key of the dict is read or refused by name.

std::string list_of(std::initializer_list<const char*> keys) {
  std::string out;
  for (const char* k : keys) out += std::string(out.empty() ? "" : ", ") + k;
  return out;
}

// One rope dict (flat) → c.rope_scaling, with the base into *theta (when the dict has rope_theta).
// rotary_dim is the rotated width the factor lists must match.
void read_rope_dict(const json& p, const Reader& tr, const std::string& key, const std::string& name, ModelConfig& c,
                    double* theta, int rotary_dim, const std::string& family) {
  if (!p.is_object()) fail(name, "\"" + key + "\" must be an object or null, got " + p.dump());
  const Reader pr(p, name);
  std::string type = pr.string_or("rope_type", pr.string_or("type", "default"));
  if (family == "phi3") {
    // Phi3Config (transformers 5): the older "su" and "yarn" are read as longrope; nothing else but default.
    if (type == "su" || type == "yarn") type = "longrope";
    if (type != "default" && type != "longrope")
      fail(name, "\"" + key + "\" has rope type \"" + type + "\", which phi3 does not take (Phi3Config: default or "
                     "longrope; su and yarn are read as longrope)");
  }
  RopeScalingConfig& s = c.rope_scaling;
  s = RopeScalingConfig{};
  s.max_positions = c.max_positions;
  struct Kind {
    const char* name;
    RopeType type;
    std::initializer_list<const char*> required, optional;
  };
  static const Kind kinds[] = {
      {"default", RopeType::plain, {}, {}},
      {"linear", RopeType::linear, {"factor"}, {}},
      {"dynamic", RopeType::dynamic, {"factor"}, {}},
      {"yarn", RopeType::yarn, {"factor"},
       {"original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
        "truncate"}},
      {"llama3", RopeType::llama3, {"factor", "low_freq_factor", "high_freq_factor"},
       {"original_max_position_embeddings"}},
      {"longrope", RopeType::longrope, {"short_factor", "long_factor"},
       {"original_max_position_embeddings", "attention_factor", "factor"}},
  };
  const Kind* kind = nullptr;
  for (const Kind& k : kinds)
    if (type == k.name) kind = &k;
  if (!kind)
    fail(name, "\"" + key + "\" has rope type \"" + type + "\", which attnscope does not implement (supported: "
                   "default, linear, dynamic, yarn, llama3, longrope)");
  s.type = kind->type;
  for (auto it = p.begin(); it != p.end(); ++it) {
    const std::string& k = it.key();
    bool known = k == "rope_type" || k == "type" || k == "rope_theta" || k == "partial_rotary_factor" ||
                 (family == "ministral3" && (k == "llama_4_scaling_beta" || k == "max_position_embeddings"));
    for (const char* r : kind->required) known = known || k == r;
    for (const char* o : kind->optional) known = known || k == o;
    if (!known)
      fail(name, "\"" + key + "\" has \"" + k + "\", which the rope type \"" + type + "\" does not take (it takes: " +
                     (std::string(list_of(kind->required)) + (kind->optional.size() ? ", " + list_of(kind->optional) : "")) +
                     (kind->required.size() + kind->optional.size() ? ", " : "") + "rope_theta)");
  }
  for (const char* r : kind->required)
    if (!pr.has(r))
      fail(name, "\"" + key + "\" of rope type \"" + type + "\" has no \"" + r + "\" (required: " +
                     list_of(kind->required) + ")");
  if (pr.has("rope_theta")) *theta = pr.number_or("rope_theta", *theta, 1.0, 1e12);
  if (family == "ministral3" && pr.has("llama_4_scaling_beta")) {
    // transformers 5.x models/ministral3/modeling_ministral3.py, _get_llama_4_attn_scale: the queries after
    // RoPE × 1 + beta·log(1 + floor(t / rope_parameters["original_max_position_embeddings"])).
    c.query_scale_beta = pr.number_or("llama_4_scaling_beta", 0.0, 0.0, 1e3);
    if (!pr.has("original_max_position_embeddings"))
      fail(name, "\"" + key + "\" has \"llama_4_scaling_beta\" but no \"original_max_position_embeddings\" (the "
                     "query scale steps up every that many positions)");
    c.query_scale_length = pr.integer("original_max_position_embeddings", 1, max_positions_bound);
  }
  if (s.type == RopeType::plain) return;
  if (s.type != RopeType::linear && s.type != RopeType::dynamic) {
    s.original_max = tr.has("original_max_position_embeddings")
                         ? tr.integer("original_max_position_embeddings", 1, max_positions_bound)
                         : pr.integer_or("original_max_position_embeddings", c.max_positions, 1, max_positions_bound);
  }
  auto factor_of = [&] { return pr.number_or("factor", 1.0, 1.0, 1e6); };
  switch (s.type) {
    case RopeType::plain: break;
    case RopeType::linear:
    case RopeType::dynamic:
      s.factor = factor_of();
      if (s.type == RopeType::dynamic && rotary_dim < 4)  // the base grows by a power d/(d − 2)
        fail(name, "\"" + key + "\" of rope type \"dynamic\" needs a rotated width of 4 or more, got " +
                       std::to_string(rotary_dim));
      break;
    case RopeType::yarn: {
      s.factor = factor_of();
      // `beta_fast or 32`, `beta_slow or 1`: 0 means the default
      s.beta_fast = pr.number_or("beta_fast", 32.0, 0, 1e6);
      s.beta_slow = pr.number_or("beta_slow", 1.0, 0, 1e6);
      if (s.beta_fast == 0) s.beta_fast = 32;
      if (s.beta_slow == 0) s.beta_slow = 1;
      s.truncate = pr.boolean_or("truncate", true);
      const double mscale = pr.number_or("mscale", 0.0, 0.0, 1e3), mscale_all = pr.number_or("mscale_all_dim", 0.0, 0.0, 1e3);
      if (pr.has("attention_factor")) s.attention_factor = pr.number_or("attention_factor", 1.0, 0.0, 1e6);
      else if (mscale != 0 && mscale_all != 0) s.attention_factor = yarn_mscale(s.factor, mscale) / yarn_mscale(s.factor, mscale_all);
      else s.attention_factor = yarn_mscale(s.factor, 1.0);
      break;
    }
    case RopeType::llama3: {
      s.factor = factor_of();
      s.low_freq_factor = pr.number_or("low_freq_factor", 1.0, 1e-6, 1e6);
      s.high_freq_factor = pr.number_or("high_freq_factor", 4.0, 1e-6, 1e6);
      if (!(s.high_freq_factor > s.low_freq_factor))
        fail(name, "\"" + key + "\": \"high_freq_factor\" = " + p["high_freq_factor"].dump() +
                       " must be above \"low_freq_factor\" = " + p["low_freq_factor"].dump());
      break;
    }
    case RopeType::longrope: {
      auto factors = [&](const char* k) {
        const json& v = p[k];
        if (!v.is_array())
          fail(name, "\"" + key + "\": \"" + std::string(k) + "\" must be a list of numbers, got " + v.dump());
        if (int64_t(v.size()) != rotary_dim / 2)
          fail(name, "\"" + key + "\": \"" + std::string(k) + "\" lists " + std::to_string(v.size()) +
                         " factors; it must list one per rotated pair, rotary width / 2 = " + std::to_string(rotary_dim / 2));
        std::vector<double> out;
        for (size_t i = 0; i < v.size(); ++i) {
          if (!v[i].is_number() || !(v[i].get<double>() >= 1e-6 && v[i].get<double>() <= 1e6))
            fail(name, "\"" + key + "\": \"" + std::string(k) + "\"[" + std::to_string(i) + "] = " + v[i].dump() +
                           " must be a number from 1e-6 to 1e6 (a divisor of the frequency)");
          out.push_back(v[i].get<double>());
        }
        return out;
      };
      s.short_factor = factors("short_factor");
      s.long_factor = factors("long_factor");
      if (s.original_max < 2)  // its attention factor divides by ln original_max_position_embeddings
        fail(name, "\"" + key + "\" of rope type \"longrope\" needs original_max_position_embeddings of 2 or more, got " +
                       std::to_string(s.original_max));
      s.factor = pr.has("factor") ? factor_of() : double(c.max_positions) / double(s.original_max);
      if (pr.has("attention_factor")) s.attention_factor = pr.number_or("attention_factor", 1.0, 0.0, 1e6);
      else
        s.attention_factor = s.factor <= 1.0 ? 1.0 : std::sqrt(1 + std::log(s.factor) / std::log(double(s.original_max)));
      break;
    }
  }
}

// The rope settings of a rotate-half family: the dict (flat; for Gemma 3 also nested by layer type,
// {"full_attention": {…}, "sliding_attention": {…}}), partial_rotary_factor (`partial`: the families
// whose attention rotates the leading part only), and which layers are scaled.
// *local_theta (Gemma 3's sliding layers' base) may be set by a nested "sliding_attention".
void read_rope(const json& j, const Reader& r, const std::string& name, const std::string& type, ModelConfig& c,
               bool partial, double* local_theta = nullptr) {
  // partial_rotary_factor: top level (transformers 5 copies it into the dict), else the dict's.
  const bool scaling = r.has("rope_scaling");
  const char* key = scaling ? "rope_scaling" : "rope_parameters";
  const bool has_dict = scaling || r.has("rope_parameters");
  const json none = json::object();
  const json& p = has_dict ? j[key] : none;
  if (!p.is_object()) fail(name, "\"" + std::string(key) + "\" must be an object or null, got " + p.dump());
  double prf = r.number_or("partial_rotary_factor", 1.0, 0, 1);
  std::string prf_text = r.has("partial_rotary_factor") ? "\"partial_rotary_factor\" = " + j["partial_rotary_factor"].dump() : "";
  if (!r.has("partial_rotary_factor") && p.contains("partial_rotary_factor") && !p["partial_rotary_factor"].is_null()) {
    prf = Reader(p, name).number_or("partial_rotary_factor", 1.0, 0, 1);
    prf_text = "\"" + std::string(key) + "\".partial_rotary_factor = " + p["partial_rotary_factor"].dump();
  }
  if (prf != 1.0 && !partial)
    fail(name, prf_text + " is not supported for " + type + " (its attention rotates the whole head; supported: 1; "
                   "partial rotary: phi3, gpt_neox)");
  c.rotary_dim = int(double(c.head_dim) * prf);
  if (c.rotary_dim < 2 || c.rotary_dim % 2 != 0)
    fail(name, prf_text + " rotates " + std::to_string(c.rotary_dim) + " of the head's " + std::to_string(c.head_dim) +
                   " values; rotary positions need an even width of 2 or more");
  if (c.rotary_dim == c.head_dim) c.rotary_dim = 0;
  const int rotary = c.rotated_dim();
  bool nested = !p.empty();
  for (auto it = p.begin(); it != p.end(); ++it)
    nested = nested && (it.key() == "full_attention" || it.key() == "sliding_attention");
  if (!nested) {
    read_rope_dict(p, r, key, name, c, &c.rope_theta, rotary, type);
    return;
  }
  if (type != "gemma3_text")
    fail(name, "\"" + std::string(key) + "\" is given per layer type (full_attention / sliding_attention), which "
                   "attnscope reads for gemma3_text only; for " + type + " give one dict");
  if (p.contains("sliding_attention")) {
    double theta = local_theta ? *local_theta : c.rope_theta;
    read_rope_dict(p["sliding_attention"], r, std::string(key) + ".sliding_attention", name, c, &theta, rotary, type);
    if (c.rope_scaling.type != RopeType::plain)
      fail(name, "\"" + std::string(key) + ".sliding_attention\" has rope type \"" +
                     std::string(to_string(c.rope_scaling.type)) + "\"; attnscope scales the global layers only (supported: default)");
    if (local_theta) *local_theta = theta;
  }
  if (p.contains("full_attention"))
    read_rope_dict(p["full_attention"], r, std::string(key) + ".full_attention", name, c, &c.rope_theta, rotary, type);
  else
    c.rope_scaling = RopeScalingConfig{};
}

// Llama, Mistral, Qwen2, Qwen3, Phi-3: one network, with the defaults of each family's config class.
ModelConfig read_llama(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  ModelConfig c;
  c.family = Family::llama;
  c.layers = r.integer("num_hidden_layers", 1, max_layers);
  c.d_model = r.integer("hidden_size", 1, max_width);
  c.heads = r.integer("num_attention_heads", 1, limits::max_heads);
  // Qwen3MoeConfig's num_key_value_heads defaults to 4, the others' to num_attention_heads.
  // Qwen3NextConfig's to 2.
  c.kv_heads = r.integer_or("num_key_value_heads", type == "qwen3_moe" ? 4 : type == "qwen3_next" ? 2 : c.heads, 1,
                            limits::max_heads);
  c.ffn_dim = r.integer("intermediate_size", 1, max_width);
  c.vocab = r.integer("vocab_size", 1, max_vocab);
  c.max_positions = r.integer("max_position_embeddings", 1, max_positions_bound);
  if (r.has("head_dim")) {
    c.head_dim = r.integer("head_dim", 2, max_width);
  } else if (type == "qwen3") {
    c.head_dim = 128;  // Qwen3Config's default, not hidden_size / heads
  } else if (type == "qwen3_next") {
    c.head_dim = 256;  // Qwen3NextConfig's default
  } else {
    if (c.d_model % c.heads != 0)
      fail(name, "\"num_attention_heads\" = " + std::to_string(c.heads) + " does not divide \"hidden_size\" = " +
                     std::to_string(c.d_model) + " and there is no \"head_dim\"");
    c.head_dim = c.d_model / c.heads;
  }
  if (c.head_dim % 2 != 0 && type != "attnscope_linear")  // (a layer without a softmax has no rotary pairs)
    fail(name, "the head width " + std::to_string(c.head_dim) + " is odd; rotary positions pair dimension i with i + d/2");
  // Phi3Config, OlmoeConfig, Olmo2Config and Ministral3Config default to 1e-5, the others to 1e-6.
  c.norm_eps = r.number_or("rms_norm_eps",
                           type == "phi3" || type == "olmoe" || type == "olmo2" || type == "ministral3" ? 1e-5 : 1e-6,
                           0, 1);
  c.rope_theta = r.number_or("rope_theta", 10000.0, 1.0, 1e12);
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  const std::string act = r.string_or("hidden_act", "silu");
  if (act != "silu")
    fail(name, "\"hidden_act\" = \"" + act + "\" is not supported for " + type + " (supported: silu, the SwiGLU MLP)");
  // Phi3Attention rotates the leading head_dim × partial_rotary_factor values (Phi-4-mini: 0.75); the
  // others' apply_rotary_pos_emb rotates the whole head. Phi3Config's original_max_position_embeddings
  // defaults to 4096.
  json with_default = j;
  if (type == "phi3" && !r.has("original_max_position_embeddings")) with_default["original_max_position_embeddings"] = 4096;
  // Ministral3Config: without rope_parameters, YaRN ×16 over 16384 positions with llama_4_scaling_beta 0.1.
  if (type == "ministral3" && !r.has("rope_scaling") && !r.has("rope_parameters"))
    with_default["rope_parameters"] = {{"type", "yarn"}, {"rope_theta", 1000000.0}, {"factor", 16.0},
                                       {"original_max_position_embeddings", 16384}, {"beta_fast", 32.0},
                                       {"beta_slow", 1.0}, {"mscale_all_dim", 1.0}, {"mscale", 1.0},
                                       {"llama_4_scaling_beta", 0.1}};
  // Qwen3NextConfig sets partial_rotary_factor 0.25 unless given (its rotary embedding reads it from the
  // rope dict, where transformers 5 copies it).
  if (type == "qwen3_next" && !r.has("partial_rotary_factor") &&
      !(j.contains("rope_parameters") && j["rope_parameters"].is_object() &&
        j["rope_parameters"].contains("partial_rotary_factor")) &&
      !(j.contains("rope_scaling") && j["rope_scaling"].is_object() && j["rope_scaling"].contains("partial_rotary_factor")))
    with_default["partial_rotary_factor"] = 0.25;
  read_rope(with_default, r.over(with_default), name, type, c, type == "phi3" || type == "qwen3_next");
  if (r.boolean_or("mlp_bias", false)) fail(name, "\"mlp_bias\" = true is not supported (supported: false)");
  // Qwen2 always has q/k/v biases; Llama's, Qwen3's and OLMo 2's attention_bias adds them to q, k, v and o;
  // Phi-3's fused projections and Ministral 3's never have biases (their attention does not read attention_bias).
  const bool attention_bias = type != "phi3" && type != "ministral3" && r.boolean_or("attention_bias", false);
  c.qkv_bias = type == "qwen2" || attention_bias;
  c.o_bias = attention_bias;
  c.mlp_bias = false;
  c.qk_norm = type == "qwen3" || type == "qwen3_moe" || type == "olmoe" || type == "qwen3_next";
  if (type == "olmo2") {
    // transformers 5.x models/olmo2/modeling_olmo2.py: Olmo2DecoderLayer has no input_layernorm; it normalises
    // the attention's and the MLP's OUTPUTS (post_attention_layernorm, post_feedforward_layernorm) before each
    // residual add, and Olmo2Attention's q_norm/k_norm are RMSNorms over the whole q_proj [H·D] and k_proj
    // [G·D] outputs, before the view into heads and RoPE.
    c.pre_norms = false;
    c.sandwich_norms = true;
    c.qk_norm_whole = true;
  }
  c.layer_rope_theta.assign(size_t(c.layers), c.rope_theta);
  c.layer_window.assign(size_t(c.layers), 0);
  if (type == "mistral" || type == "phi3" || type == "ministral3") {
    // MistralAttention, Phi3Attention, Ministral3Attention: every layer sees the last sliding_window keys.
    c.sliding_window = r.integer_or("sliding_window", 0, 1, max_positions_bound);
    c.layer_window.assign(size_t(c.layers), c.sliding_window);
  } else if (type == "qwen2") {
    // Qwen2Config: with use_sliding_window, the layers from max_window_layers on (or those layer_types
    // names "sliding_attention") see the last sliding_window keys.
    if (r.boolean_or("use_sliding_window", false)) {
      c.sliding_window = r.integer_or("sliding_window", 4096, 1, max_positions_bound);
      const int first = r.integer_or("max_window_layers", 28, 0, max_layers);
      for (int i = 0; i < c.layers; ++i) c.layer_window[size_t(i)] = i >= first ? c.sliding_window : 0;
      const std::vector<bool> sliding = read_layer_types(r, c.layers);
      if (!sliding.empty())
        for (int i = 0; i < c.layers; ++i) c.layer_window[size_t(i)] = sliding[size_t(i)] ? c.sliding_window : 0;
    }
  } else if (type == "qwen3_moe") {
    // Qwen3MoeConfig keeps sliding_window only with use_sliding_window; no fixture checks a windowed one.
    if (r.boolean_or("use_sliding_window", false))
      fail(name, "\"use_sliding_window\" = true is not supported for qwen3_moe (supported: false, every layer full "
                 "causal attention)");
  } else if (type == "qwen3") {
    // Qwen3's windowed layers (from max_window_layers on) have no fixture to check them against: refused.
    if (r.boolean_or("use_sliding_window", false))
      fail(name, "\"use_sliding_window\" = true is not supported for qwen3 (sliding-window layers from "
                 "max_window_layers on; supported: false, every layer full causal attention)");
    if (r.has("layer_types")) {
      const json& types = j["layer_types"];
      if (!types.is_array() || types.size() != size_t(c.layers))
        fail(name, "\"layer_types\" must be a list of " + std::to_string(c.layers) + " entries (one per layer), got " +
                       types.dump());
      for (size_t i = 0; i < types.size(); ++i)
        if (types[i] != "full_attention")
          fail(name, "\"layer_types\"[" + std::to_string(i) + "] = " + types[i].dump() +
                         " is not supported for qwen3 (supported: \"full_attention\")");
    }
  } else if (type == "smollm3") {
    // SmolLM3Config: no_rope_layers[i] == 1 means layer i USES RoPE, 0 makes it a NoPE layer; absent,
    // every no_rope_layer_interval-th layer (i + 1 divisible by it) is NoPE.
    const int interval = r.integer_or("no_rope_layer_interval", 4, 1, max_layers);
    std::vector<int> uses = r.list_or_empty<int>("no_rope_layers", c.layers, [&](const json& v, int i) {
      if (!v.is_number_integer() || (v.get<int64_t>() != 0 && v.get<int64_t>() != 1))
        fail(name, "\"no_rope_layers\"[" + std::to_string(i) + "] = " + v.dump() +
                       " must be 1 (the layer uses RoPE) or 0 (no positions in that layer)");
      return int(v.get<int64_t>());
    });
    if (uses.empty())
      for (int i = 0; i < c.layers; ++i) uses.push_back((i + 1) % interval != 0 ? 1 : 0);
    for (int i = 0; i < c.layers; ++i) c.layer_rope_theta[size_t(i)] = uses[size_t(i)] ? c.rope_theta : 0.0;
    // With use_sliding_window, the NoPE layers (or those layer_types names) use the window.
    std::vector<bool> sliding = read_layer_types(r, c.layers);
    const bool use_window = r.boolean_or("use_sliding_window", false);
    if (use_window || std::count(sliding.begin(), sliding.end(), true) > 0) {
      c.sliding_window = r.integer("sliding_window", 1, max_positions_bound);
      if (sliding.empty())
        for (int i = 0; i < c.layers; ++i) sliding.push_back(!uses[size_t(i)]);
      for (int i = 0; i < c.layers; ++i) c.layer_window[size_t(i)] = sliding[size_t(i)] ? c.sliding_window : 0;
    }
  }
  return c;
}

// Gemma 2 and Gemma 3 (text): Gemma2Config / Gemma3TextConfig and their modeling files.
ModelConfig read_gemma(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  const bool gemma3 = type == "gemma3_text";
  ModelConfig c;
  c.family = Family::llama;
  c.mlp = MlpKind::geglu;
  c.sandwich_norms = true;
  c.norm_plus_one = true;
  c.qk_norm = gemma3;
  c.layers = r.integer("num_hidden_layers", 1, max_layers);
  c.d_model = r.integer("hidden_size", 1, max_width);
  c.heads = r.integer("num_attention_heads", 1, limits::max_heads);
  c.kv_heads = r.integer_or("num_key_value_heads", c.heads, 1, limits::max_heads);
  c.head_dim = r.integer_or("head_dim", 256, 2, max_width);
  if (c.head_dim % 2 != 0)
    fail(name, "the head width " + std::to_string(c.head_dim) + " is odd; rotary positions pair dimension i with i + d/2");
  c.ffn_dim = r.integer("intermediate_size", 1, max_width);
  c.vocab = r.integer("vocab_size", 1, max_vocab);
  c.max_positions = r.integer_or("max_position_embeddings", gemma3 ? 131072 : 8192, 1, max_positions_bound);
  c.norm_eps = r.number_or("rms_norm_eps", 1e-6, 0, 1);
  c.rope_theta = r.number_or("rope_theta", gemma3 ? 1000000.0 : 10000.0, 1.0, 1e12);
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
  // Gemma's MLP reads hidden_activation (hidden_act is its older name).
  const std::string act = r.string_or("hidden_activation", r.string_or("hidden_act", "gelu_pytorch_tanh"));
  if (act != "gelu_pytorch_tanh")
    fail(name, "\"hidden_activation\" = \"" + act + "\" is not supported for " + type +
                   " (supported: gelu_pytorch_tanh, the GeGLU MLP)");
  if (r.boolean_or("use_bidirectional_attention", false))
    fail(name, "\"use_bidirectional_attention\" = true is not supported (supported: false, causal attention)");
  const bool attention_bias = r.boolean_or("attention_bias", false);
  c.qkv_bias = c.o_bias = attention_bias;
  // Scores are scaled by query_pre_attn_scalar^(−1/2) instead of head_dim^(−1/2).
  const double scalar = r.number_or("query_pre_attn_scalar", 256, 1e-6, 1e9);
  c.attn_scale = 1.0 / std::sqrt(scalar);
  auto softcap = [&](const char* key, double fallback) {
    if (!r.has(key)) return fallback;
    const double v = r.number_or(key, 0, -1e30, 1e30);
    if (!(v > 0)) fail(name, "\"" + std::string(key) + "\" = " + j[key].dump() + " must be above 0 (or null for no soft-capping)");
    return v;
  };
  // Gemma2Config's defaults are 50 and 30; an explicit null turns soft-capping off. Gemma 3 has none.
  c.attn_softcap = r.present("attn_logit_softcapping") ? softcap("attn_logit_softcapping", 0) : (gemma3 ? 0 : 50.0);
  c.final_softcap = r.present("final_logit_softcapping") ? softcap("final_logit_softcapping", 0) : (gemma3 ? 0 : 30.0);
  // √hidden_size as float32, whatever the file's dtype (the float32 contract, config.h): transformers
  // casts it to the hidden states' dtype, float32 in a float32-loaded model.
  c.embedding_scale = double(float(std::sqrt(double(c.d_model))));
  c.sliding_window = r.integer_or("sliding_window", 4096, 1, max_positions_bound);
  // The layer pattern: layer_types, else Gemma 2 alternates (sliding first) and Gemma 3 makes every
  // sliding_window_pattern-th layer global.
  std::vector<bool> sliding = read_layer_types(r, c.layers);
  if (sliding.empty()) {
    const int pattern = gemma3 ? r.integer_or("sliding_window_pattern", 6, 1, max_layers) : 2;
    for (int i = 0; i < c.layers; ++i) sliding.push_back((i + 1) % pattern != 0);
  }
  // Gemma2RotaryEmbedding scales every layer; Gemma 3's sliding layers use rope_local_base_freq
  // unscaled (rotary_emb_local: rope_type default), its global ones rope_theta with the scaling.
  double local_theta = gemma3 ? r.number_or("rope_local_base_freq", 10000.0, 1.0, 1e12) : 0;
  read_rope(j, r, name, type, c, false, gemma3 ? &local_theta : nullptr);
  if (!gemma3) local_theta = c.rope_theta;
  for (int i = 0; i < c.layers; ++i) {
    c.layer_window.push_back(sliding[size_t(i)] ? c.sliding_window : 0);
    c.layer_rope_theta.push_back(sliding[size_t(i)] ? local_theta : c.rope_theta);
    c.layer_rope_scaled.push_back(!(gemma3 && sliding[size_t(i)]));
  }
  return c;
}

// Qwen3-MoE, OLMoE, Granite and GraniteMoE: Llama's attention and norms (read_llama), with their own
// additions (transformers 5.x):
//   qwen3_moe   configuration_qwen3_moe.py / modeling_qwen3_moe.py: Qwen3's per-head q/k norms; a layer
//               is a Qwen3MoeSparseMoeBlock when (layer + 1) % decoder_sparse_step == 0 and it is not in
//               mlp_only_layers (else a dense SwiGLU of intermediate_size); the router (mlp.gate) takes
//               softmax over all num_experts in float32, the top num_experts_per_tok, divided by their
//               sum when norm_topk_prob; experts of width moe_intermediate_size.
//   olmoe       configuration_olmoe.py / modeling_olmoe.py: q_norm/k_norm over the whole q [H·D] and k
//               [G·D] projections; every layer a mixture (OlmoeSparseMoeBlock, Qwen3-MoE's routing)
//               of num_experts experts of width intermediate_size; clip_qkv refused.
//   granite     configuration_granite.py / modeling_granite.py: x₀ = E[ids]·embedding_multiplier, scores
//               × attention_multiplier (instead of 1/√D), x += branch·residual_multiplier after the
//               attention and the MLP, logits ÷ logits_scaling; all four default to 1.
//   granitemoe  modular_granitemoe.py: granite's multipliers with a mixture in every layer
//               (GraniteMoeMoE): the router (JetMoeTopKGating) takes the top num_experts_per_tok of the
//               logits and the softmax over those k only; num_local_experts experts of width
//               intermediate_size stored fused (input_linear [E, 2F, C] = gate then up, output_linear
//               [E, C, F]).
ModelConfig read_moe_family(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  ModelConfig c = read_llama(j, r, name, type);
  if (type == "olmoe") {
    c.qk_norm_whole = true;
    if (r.has("clip_qkv"))
      fail(name, "\"clip_qkv\" = " + j["clip_qkv"].dump() + " is not supported for olmoe (supported: null, no clamping "
                 "of q, k and v)");
  }
  if (type == "granite" || type == "granitemoe") {
    c.embedding_scale = r.number_or("embedding_multiplier", 1.0, 1e-6, 1e6);
    c.attn_scale = r.number_or("attention_multiplier", 1.0, 1e-9, 1e6);
    c.residual_scale = r.number_or("residual_multiplier", 1.0, 1e-9, 1e6);
    c.logits_divisor = r.number_or("logits_scaling", 1.0, 1e-9, 1e9);
  }
  if (type == "granite") return c;
  MoeConfig& e = c.moe;
  const char* experts_key = type == "granitemoe" ? "num_local_experts" : "num_experts";
  // Qwen3NextConfig: num_experts defaults to 512, and 0 makes every layer dense.
  e.experts = type == "qwen3_next" ? r.integer_or(experts_key, 512, 0, 1 << 16) : r.integer(experts_key, 1, 1 << 16);
  if (e.experts == 0) return c;
  e.top_k = r.integer("num_experts_per_tok", 1, 1 << 16);
  if (e.top_k > e.experts)
    fail(name, "\"num_experts_per_tok\" = " + std::to_string(e.top_k) + " is more than the " + std::to_string(e.experts) +
                   " experts (\"" + experts_key + "\"); valid: 1 to " + std::to_string(e.experts));
  if (type == "qwen3_moe" || type == "qwen3_next") {
    e.expert_ffn = r.integer("moe_intermediate_size", 1, max_width);
    e.sparse_step = r.integer_or("decoder_sparse_step", 1, 1, max_layers);
    if (r.has("mlp_only_layers")) {
      const json& v = j["mlp_only_layers"];
      if (!v.is_array()) fail(name, "\"mlp_only_layers\" must be a list of layer numbers, got " + v.dump());
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0 || v[i].get<int64_t>() >= c.layers)
          fail(name, "\"mlp_only_layers\"[" + std::to_string(i) + "] = " + v[i].dump() +
                         " is not a layer (valid: 0 to " + std::to_string(c.layers - 1) + ")");
        e.dense_layers.push_back(int(v[i].get<int64_t>()));
      }
    }
  } else {
    e.expert_ffn = c.ffn_dim;  // OlmoeMLP and GraniteMoeMoE: intermediate_size
  }
  if (type == "granitemoe") e.softmax_over_topk = true;
  else e.norm_topk = r.boolean_or("norm_topk_prob", false);
  return c;
}

// Qwen3-Next: transformers 5.x models/qwen3_next/configuration_qwen3_next.py and modeling_qwen3_next.py.
// Qwen3NextConfig's defaults for the keys its published config.json leaves out (num_hidden_layers 48,
// shared_expert_intermediate_size 512, the linear_* sizes, partial_rotary_factor 0.25); layer_types, else
// every full_attention_interval-th layer (i + 1 divisible by it) full attention and the others
// "linear_attention" (Qwen3NextConfig.__post_init__; remap_legacy_layer_types reads "attention" and
// "mamba" as the current names). Attention: Qwen3-MoE's with a gate per head in q_proj (attn_output_gate),
// (1 + w) RMSNorms everywhere but the Gated DeltaNet's gated norm; the MLP: Qwen3-MoE's routing with a
// shared expert gated by σ(shared_expert_gate).
ModelConfig read_qwen3_next(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  json d = j;
  for (const auto& [key, value] : {std::pair<const char*, int>{"num_hidden_layers", 48}, {"hidden_size", 2048},
                                   {"intermediate_size", 5632}, {"num_attention_heads", 16},
                                   {"vocab_size", 151936}, {"max_position_embeddings", 32768},
                                   {"moe_intermediate_size", 512}})
    if (!r.has(key)) d[key] = value;
  const Reader rd = r.over(d);
  if (rd.boolean_or("attention_bias", false))
    fail(name, "\"attention_bias\" = true is not supported for qwen3_next (supported: false, the published "
               "checkpoints' projections have no biases)");
  ModelConfig c = read_moe_family(d, rd, name, type);
  c.norm_plus_one = true;  // Qwen3NextRMSNorm: x̂·(1 + w)
  c.attn_output_gate = true;
  if (c.moe.experts > 0) {
    c.moe.shared_ffn = rd.integer_or("shared_expert_intermediate_size", 512, 1, max_width);
    c.moe.shared_gate = true;
  }
  LinearAttentionConfig& a = c.linear;
  a.key_heads = rd.integer_or("linear_num_key_heads", 16, 1, limits::max_heads);
  a.value_heads = rd.integer_or("linear_num_value_heads", 32, 1, limits::max_heads);
  a.key_dim = rd.integer_or("linear_key_head_dim", 128, 1, max_width);
  a.value_dim = rd.integer_or("linear_value_head_dim", 128, 1, max_width);
  a.conv_kernel = rd.integer_or("linear_conv_kernel_dim", 4, 1, 64);
  if (a.value_heads % a.key_heads != 0)
    fail(name, "\"linear_num_key_heads\" = " + std::to_string(a.key_heads) + " does not divide \"linear_num_value_heads\" = " +
                   std::to_string(a.value_heads) + " (each key head serves linear_num_value_heads / linear_num_key_heads "
                   "value heads)");
  if (int64_t(a.value_heads) * a.value_dim > max_width || int64_t(a.key_heads) * a.key_dim > max_width)
    fail(name, "the linear layers' heads × head width is above the limit of " + std::to_string(max_width));
  if (rd.has("layer_types")) {
    const json& types = d["layer_types"];
    if (!types.is_array() || types.size() != size_t(c.layers))
      fail(name, "\"layer_types\" must be a list of " + std::to_string(c.layers) +
                     " entries (one per layer, \"num_hidden_layers\"), got " +
                     (types.is_array() ? std::to_string(types.size()) + " entries" : types.dump()));
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] == "linear_attention" || types[i] == "mamba") c.layer_linear.push_back(true);
      else if (types[i] == "full_attention" || types[i] == "attention") c.layer_linear.push_back(false);
      else
        fail(name, "\"layer_types\"[" + std::to_string(i) + "] = " + types[i].dump() +
                       " is not supported for qwen3_next (supported: \"linear_attention\", \"full_attention\")");
    }
  } else {
    const int interval = rd.integer_or("full_attention_interval", 4, 1, max_layers);
    for (int i = 0; i < c.layers; ++i) c.layer_linear.push_back((i + 1) % interval != 0);
  }
  return c;
}

// Granite 4.0-H: transformers 5.x models/granitemoehybrid/configuration_granitemoehybrid.py and
// modeling_granitemoehybrid.py. Granite's multipliers (embedding, attention = the score scale, residual,
// logits ÷ logits_scaling); layer_types (layers_block_type, its alias) "mamba" or "attention", every layer Mamba
// without it (GraniteMoeHybridConfig.layers_block_type); attention layers with RoPE only when
// position_embedding_type is "rope" (GraniteMoeHybridModel builds no rotary embedding otherwise: Granite 4.0-H's
// "nope"); every layer's MLP is block_sparse_moe (GraniteMoe's routing, num_local_experts of intermediate_size) plus
// shared_mlp (shared_intermediate_size), or shared_mlp alone when num_local_experts is 0. The Mamba-2 sizes as
// GraniteMoeHybridConfig checks them: mamba_d_head "auto" (absent) = mamba_expand·hidden_size / mamba_n_heads.
ModelConfig read_granite_hybrid(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  ModelConfig c = read_llama(j, r, name, type);
  c.embedding_scale = r.number_or("embedding_multiplier", 1.0, 1e-6, 1e6);
  c.attn_scale = r.number_or("attention_multiplier", 1.0, 1e-9, 1e6);
  c.residual_scale = r.number_or("residual_multiplier", 1.0, 1e-9, 1e6);
  c.logits_divisor = r.number_or("logits_scaling", 1.0, 1e-9, 1e9);
  const std::string positions = r.has("position_embedding_type") && !j["position_embedding_type"].is_null()
                                    ? r.string_or("position_embedding_type", "nope") : "nope";
  if (positions != "nope" && positions != "rope")
    fail(name, "\"position_embedding_type\" = \"" + positions + "\" is not supported for granitemoehybrid (supported: "
               "\"nope\" or null, no positions in the attention layers, as Granite 4.0-H; \"rope\")");
  if (positions == "nope") c.layer_rope_theta.assign(size_t(c.layers), 0.0);
  const int shared = r.integer_or("shared_intermediate_size", 1024, 1, max_width);
  MoeConfig& e = c.moe;
  e.experts = r.integer_or("num_local_experts", 8, 0, 1 << 16);
  if (e.experts == 0) {
    c.ffn_dim = shared;  // GraniteMoeHybridDecoderLayer: shared_mlp alone
  } else {
    e.top_k = r.integer_or("num_experts_per_tok", 2, 1, 1 << 16);
    if (e.top_k > e.experts)
      fail(name, "\"num_experts_per_tok\" = " + std::to_string(e.top_k) + " is more than the " +
                     std::to_string(e.experts) + " experts (\"num_local_experts\"); valid: 1 to " + std::to_string(e.experts));
    e.expert_ffn = c.ffn_dim;
    e.softmax_over_topk = true;
    e.shared = 1;  // shared_mlp, beside the routed experts, on every token
    e.shared_ffn = shared;
  }
  Mamba2Config& m = c.mamba;
  const int expand = r.integer_or("mamba_expand", 2, 1, 64);
  m.heads = r.integer_or("mamba_n_heads", 128, 1, limits::max_heads);
  const int64_t inner = int64_t(expand) * c.d_model;
  if (inner > max_width || inner % m.heads != 0)
    fail(name, "\"mamba_n_heads\" = " + std::to_string(m.heads) + " does not divide mamba_expand × hidden_size = " +
                   std::to_string(inner) + " (valid: a divisor of it)");
  m.head_dim = r.has("mamba_d_head") && !j["mamba_d_head"].is_string() ? r.integer("mamba_d_head", 1, max_width)
                                                                     : int(inner / m.heads);
  if (int64_t(m.head_dim) * m.heads != inner)
    fail(name, "\"mamba_d_head\" = " + std::to_string(m.head_dim) + " × \"mamba_n_heads\" = " + std::to_string(m.heads) +
                   " is not mamba_expand × hidden_size = " + std::to_string(inner) + " (valid: \"mamba_d_head\": " +
                   std::to_string(inner / m.heads) + ")");
  m.groups = r.integer_or("mamba_n_groups", 1, 1, limits::max_heads);
  if (m.heads % m.groups != 0)
    fail(name, "\"mamba_n_groups\" = " + std::to_string(m.groups) + " does not divide \"mamba_n_heads\" = " +
                   std::to_string(m.heads) + " (each group's B and C serve mamba_n_heads / mamba_n_groups heads)");
  m.state = r.integer_or("mamba_d_state", 256, 1, max_width);
  m.conv_kernel = r.integer_or("mamba_d_conv", 4, 1, 64);
  m.conv_bias = r.boolean_or("mamba_conv_bias", true);
  if (r.boolean_or("mamba_proj_bias", false))
    fail(name, "\"mamba_proj_bias\" = true is not supported for granitemoehybrid (supported: false, the published "
               "checkpoints' in_proj and out_proj have no biases)");
  if (int64_t(m.conv_dim()) > max_width) fail(name, "the Mamba layers' width is above the limit of " + std::to_string(max_width));
  const bool has_types = r.has("layer_types"), has_alias = r.has("layers_block_type");  // attribute_map's alias
  const char* types_key = has_types ? "layer_types" : has_alias ? "layers_block_type" : nullptr;
  if (types_key) {
    const json& types = j[types_key];
    if (!types.is_array() || types.size() != size_t(c.layers))
      fail(name, "\"" + std::string(types_key) + "\" must be a list of " + std::to_string(c.layers) +
                     " entries (one per layer, \"num_hidden_layers\"), got " +
                     (types.is_array() ? std::to_string(types.size()) + " entries" : types.dump()));
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] == "mamba") c.layer_linear.push_back(true);
      else if (types[i] == "attention") c.layer_linear.push_back(false);
      else
        fail(name, "\"" + std::string(types_key) + "\"[" + std::to_string(i) + "] = " + types[i].dump() +
                       " is not supported for granitemoehybrid (supported: \"mamba\", \"attention\")");
    }
  } else {
    c.layer_linear.assign(size_t(c.layers), true);
  }
  return c;
}

// GPT-NeoX (Pythia): transformers 5.x models/gpt_neox/configuration_gpt_neox.py and modeling_gpt_neox.py.
// LayerNorm(layer_norm_eps) with biases, a fused per-head query_key_value, rotate-half RoPE on the leading
// head_dim × rotary_pct values (base rotary_emb_base), q/k/v/o biases (attention_bias), the exact-erf GELU
// MLP with biases, use_parallel_residual, an untied embed_out.
// attnscope's own checkpoint of a model trained without a softmax (train/checkpoint.h llama_config_json): the
// Llama sizes, every layer the kind attention_kind names (or, "hybrid", the kind layer_types names per layer,
// "grouped" for Llama's softmax attention with RoPE), G = H, no rotary positions elsewhere. The formulas' fixed
// choices are written out in the file (feature_map, decay, q_scale); a file that says otherwise is refused.
ModelConfig read_attnscope_linear(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  ModelConfig c = read_llama(j, r, name, type);
  if (!r.has("attention_kind"))
    fail(name, "config.json has no \"attention_kind\" (needed to build the attnscope_linear network: linear, retention, "
               "mamba2, deltanet or gated-deltanet)");
  const std::string kind = r.string_or("attention_kind", "");
  const LinearLayerKind linear_kinds[] = {LinearLayerKind::linear, LinearLayerKind::retention, LinearLayerKind::mamba2,
                                          LinearLayerKind::deltanet, LinearLayerKind::gated_deltanet};
  bool found = false;
  for (const LinearLayerKind k : linear_kinds)
    if (kind == to_string(k)) c.trained.kind = k, found = true;
  const bool hybrid = kind == "hybrid";
  if (!found && !hybrid)
    fail(name, "\"attention_kind\" = \"" + kind + "\" is not a kind without a softmax or \"hybrid\" (supported: "
               "linear, retention, mamba2, deltanet, gated-deltanet, hybrid with layer_types)");
  c.trained.active = true;
  // A hybrid (train/checkpoint.h): layer_types names each layer's kind, "grouped" for softmax attention.
  if (hybrid && !r.has("layer_types"))
    fail(name, "\"attention_kind\" = \"hybrid\" needs \"layer_types\": one kind per layer (linear, retention, "
               "mamba2, deltanet, gated-deltanet or grouped)");
  if (!hybrid && r.has("layer_types"))
    fail(name, "\"layer_types\" is for \"attention_kind\" = \"hybrid\"; this file says \"" + kind +
                   "\" for every layer: leave layer_types out or write \"hybrid\"");
  c.layer_linear.assign(size_t(c.layers), true);
  if (hybrid) {
    const json& types = j["layer_types"];
    if (!types.is_array() || types.size() != size_t(c.layers))
      fail(name, "\"layer_types\" must be a list of " + std::to_string(c.layers) +
                     " entries (one per layer, \"num_hidden_layers\"), got " +
                     (types.is_array() ? std::to_string(types.size()) + " entries" : types.dump()));
    bool first = true, softmax = false, linear = false;
    for (size_t i = 0; i < types.size(); ++i) {
      const std::string word = types[i].is_string() ? types[i].get<std::string>() : types[i].dump();
      bool known = word == "grouped";
      LinearLayerKind layer_kind = c.trained.kind;
      for (const LinearLayerKind k : linear_kinds)
        if (word == to_string(k)) layer_kind = k, known = true;
      if (!known)
        fail(name, "\"layer_types\"[" + std::to_string(i) + "] = " + types[i].dump() +
                       " is not supported for attnscope_linear (supported: \"linear\", \"retention\", \"mamba2\", "
                       "\"deltanet\", \"gated-deltanet\", \"grouped\")");
      c.layer_linear[i] = word != "grouped";
      (c.layer_linear[i] ? linear : softmax) = true;
      if (c.layer_linear[i] && first) c.trained.kind = layer_kind, first = false;
      c.trained.layer_kinds.push_back(layer_kind);
    }
    if (!softmax || !linear)
      fail(name, "\"layer_types\" = " + types.dump() + " is not a hybrid (it needs \"grouped\" softmax layers and "
                     "layers without a softmax); a model of one kind writes it as \"attention_kind\"");
    if (c.head_dim % 2 != 0)
      fail(name, "the head width " + std::to_string(c.head_dim) +
                     " is odd; the hybrid's softmax layers rotate pairs of dimensions (rotary positions)");
  }
  if (c.kv_heads != c.heads)
    fail(name, "\"num_key_value_heads\" = " + std::to_string(c.kv_heads) + " must equal \"num_attention_heads\" = " +
                   std::to_string(c.heads) + ": attention without a softmax gives every head its own keys and values");
  if (c.head_dim * c.heads != c.d_model)
    fail(name, "\"head_dim\" × \"num_attention_heads\" = " + std::to_string(c.head_dim * c.heads) +
                   " must equal \"hidden_size\" = " + std::to_string(c.d_model) + " (d = C / H, as attnscope trains it)");
  const std::string feature = r.string_or("feature_map", "elu+1");
  if (feature != "elu+1") fail(name, "\"feature_map\" = \"" + feature + "\" is not supported (supported: \"elu+1\")");
  c.trained.normalize = r.boolean_or("normalize", true);
  const std::string decay = r.string_or("decay", "1 - 2^(-1 - 4h/(H-1))");
  if (decay != "1 - 2^(-1 - 4h/(H-1))")
    fail(name, "\"decay\" = \"" + decay + "\" is not supported (supported: \"1 - 2^(-1 - 4h/(H-1))\", the per-head schedule)");
  const std::string q_scale = r.string_or("q_scale", "1/sqrt(head_dim)");
  if (q_scale != "1/sqrt(head_dim)")
    fail(name, "\"q_scale\" = \"" + q_scale + "\" is not supported (supported: \"1/sqrt(head_dim)\")");
  return c;
}

ModelConfig read_gpt_neox(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  ModelConfig c;
  c.family = Family::llama;
  c.norm = NormKind::layernorm;
  c.mlp = MlpKind::gelu;
  c.layers = r.integer("num_hidden_layers", 1, max_layers);
  c.d_model = r.integer("hidden_size", 1, max_width);
  c.heads = r.integer("num_attention_heads", 1, limits::max_heads);
  c.kv_heads = c.heads;
  c.ffn_dim = r.integer("intermediate_size", 1, max_width);
  c.vocab = r.integer("vocab_size", 1, max_vocab);
  c.max_positions = r.integer_or("max_position_embeddings", 2048, 1, max_positions_bound);
  if (c.d_model % c.heads != 0)
    fail(name, "\"num_attention_heads\" = " + std::to_string(c.heads) + " does not divide \"hidden_size\" = " +
                   std::to_string(c.d_model));
  c.head_dim = c.d_model / c.heads;
  c.norm_eps = r.number_or("layer_norm_eps", 1e-5, 0, 1);
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  const std::string act = r.string_or("hidden_act", "gelu");
  if (act != "gelu")
    fail(name, "\"hidden_act\" = \"" + act + "\" is not supported for gpt_neox (supported: gelu, the exact erf GELU)");
  c.parallel_residual = r.boolean_or("use_parallel_residual", true);
  c.qkv_bias = c.o_bias = r.boolean_or("attention_bias", true);
  c.mlp_bias = true;
  // rotary_pct and rotary_emb_base are GPT-NeoX's names for partial_rotary_factor and rope_theta (transformers 5
  // reads either); the rope dict (rope_scaling / rope_parameters) as for every rotary family.
  json with_default = j;
  if (r.has("rotary_pct") && !r.has("partial_rotary_factor")) with_default["partial_rotary_factor"] = j["rotary_pct"];
  if (!r.has("rotary_pct") && !r.has("partial_rotary_factor")) with_default["partial_rotary_factor"] = 0.25;
  c.rope_theta = r.number_or("rotary_emb_base", r.number_or("rope_theta", 10000.0, 1.0, 1e12), 1.0, 1e12);
  read_rope(with_default, r.over(with_default), name, type, c, true);
  c.layer_rope_theta.assign(size_t(c.layers), c.rope_theta);
  return c;
}

// The multimodal containers whose language model is a family attnscope knows: the text tower is read from
// text_config with that family's reader, the vision tower is left unread (model.cpp counts its tensors).
// transformers 5.x models/gemma3/configuration_gemma3.py (Gemma3Config: text_config a Gemma3TextConfig),
// models/mistral3/configuration_mistral3.py (Mistral3Config: text_config a MistralConfig, or Ministral3Config
// for Ministral 3, whose container's own model_type is ministral3 too).
struct ContainerKind {
  const char* type;          // the container's model_type
  const char* default_text;  // text_config.model_type when it is absent
  std::vector<const char*> text_types;
  int default_positions;     // the text config class's max_position_embeddings default
};

const ContainerKind* find_container(const std::string& type) {
  static const ContainerKind kinds[] = {{"gemma3", "gemma3_text", {"gemma3_text"}, 131072},
                                        {"mistral3", "mistral", {"mistral", "ministral3"}, 131072},
                                        {"ministral3", "ministral3", {"ministral3"}, 262144}};
  for (const ContainerKind& k : kinds)
    if (type == k.type) return &k;
  return nullptr;
}

ModelConfig read_container(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  const ContainerKind& kind = *find_container(type);
  std::string valid;
  for (const char* t : kind.text_types) valid += std::string(valid.empty() ? "" : " or ") + t;
  if (!r.has("text_config"))
    fail(name, "\"model_type\" = \"" + type + "\" is a multimodal container, but config.json has no \"text_config\" "
                   "(attnscope opens its language model from text_config: an object whose model_type is " + valid + ")");
  const json& t = j["text_config"];
  if (!t.is_object())
    fail(name, "\"text_config\" must be an object (the language model's settings, model_type " + valid + "), got " +
                   t.dump());
  const Reader probe = r.nested(t, "text_config");
  const std::string text_type = probe.string_or("model_type", kind.default_text);
  if (std::find_if(kind.text_types.begin(), kind.text_types.end(), [&](const char* v) { return text_type == v; }) ==
      kind.text_types.end())
    fail(name, "\"text_config.model_type\" = \"" + text_type + "\" is not a language model attnscope opens inside a " +
                   type + " container (valid: " + valid + ")");
  json text = t;
  if (!text.contains("max_position_embeddings") || text["max_position_embeddings"].is_null())
    text["max_position_embeddings"] = kind.default_positions;
  Reader tr = r.nested(text, "text_config");
  tr.set_family(text_type);
  ModelConfig c = text_type == "gemma3_text" ? read_gemma(text, tr, name, text_type) : read_llama(text, tr, name, text_type);
  c.model_type = text_type;
  c.container = type;
  return c;
}

// DeepSeek's rope_scaling (or transformers 5's rope_parameters): null, or YaRN with its parameters.
// Every key is either read or refused by name.
void read_deepseek_rope(const json& j, const Reader& r, const std::string& name, ModelConfig& c) {
  const bool scaling = r.has("rope_scaling"), params = r.has("rope_parameters");
  if (!scaling && !params) return;
  const char* key = scaling ? "rope_scaling" : "rope_parameters";
  const json& p = j[key];
  if (!p.is_object()) fail(name, "\"" + std::string(key) + "\" must be an object or null, got " + p.dump());
  const Reader pr(p, name);
  std::string type = pr.string_or("rope_type", pr.string_or("type", "default"));
  if (params && !r.has("rope_theta")) c.rope_theta = pr.number_or("rope_theta", c.rope_theta, 1.0, 1e12);
  if (type == "default" && params && !scaling) return;
  if (type != "yarn")
    fail(name, "\"" + std::string(key) + "\" type \"" + type + "\" is not supported for " + c.model_type +
                   " (supported: null, or \"yarn\" as DeepSeek uses it)");
  for (auto it = p.begin(); it != p.end(); ++it) {
    static const char* known[] = {"type", "rope_type", "factor", "original_max_position_embeddings", "beta_fast",
                                  "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "rope_theta"};
    if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }) == std::end(known))
      fail(name, "\"" + std::string(key) + "\" has \"" + it.key() + "\", which attnscope does not implement for YaRN "
                     "(supported: factor, original_max_position_embeddings, beta_fast, beta_slow, mscale, "
                     "mscale_all_dim, attention_factor)");
  }
  if (!pr.has("factor")) fail(name, "\"" + std::string(key) + "\" of type yarn has no \"factor\"");
  MlaConfig& m = c.mla;
  m.yarn = true;
  m.yarn_factor = pr.number_or("factor", 1.0, 1.0, 1e6);
  m.yarn_original_max = pr.number_or("original_max_position_embeddings", double(c.max_positions), 1.0, 1e9);
  m.beta_fast = pr.number_or("beta_fast", 32.0, 1e-6, 1e6);
  m.beta_slow = pr.number_or("beta_slow", 1.0, 1e-6, 1e6);
  const double mscale = pr.number_or("mscale", 0.0, 0.0, 1e3), mscale_all = pr.number_or("mscale_all_dim", 0.0, 0.0, 1e3);
  // mscale(f, m) = 0.1·m·ln f + 1 for f > 1 (SPEC; yarn_get_mscale, attention/positions.h)
  auto get_mscale = [f = m.yarn_factor](double k) { return yarn_mscale(f, k); };
  if (pr.has("attention_factor")) m.attention_factor = pr.number_or("attention_factor", 1.0, 1e-6, 1e6);
  else if (mscale != 0 && mscale_all != 0) m.attention_factor = get_mscale(mscale) / get_mscale(mscale_all);
  else m.attention_factor = get_mscale(1.0);
  if (mscale_all != 0) m.softmax_scale *= get_mscale(mscale_all) * get_mscale(mscale_all);
}

// DeepSeek-V2 and V3: Llama's embedding, norms and SwiGLU, with MLA and the MoE MLP. Follows the
// Hugging Face DeepseekV2/V3 modeling code; each key is read, or refused by name when attnscope does
// not implement what it asks for.
ModelConfig read_deepseek(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  const bool v3 = type == "deepseek_v3";
  ModelConfig c;
  c.model_type = type;
  c.family = Family::llama;
  c.layers = r.integer("num_hidden_layers", 1, max_layers);
  c.d_model = r.integer("hidden_size", 1, max_width);
  c.heads = r.integer("num_attention_heads", 1, limits::max_heads);
  c.ffn_dim = r.integer("intermediate_size", 1, max_width);
  c.vocab = r.integer("vocab_size", 1, max_vocab);
  c.max_positions = r.integer("max_position_embeddings", 1, max_positions_bound);
  c.norm_eps = r.number_or("rms_norm_eps", 1e-6, 0, 1);
  c.rope_theta = r.number_or("rope_theta", 10000.0, 1.0, 1e12);
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  const int kv = r.integer_or("num_key_value_heads", c.heads, 1, limits::max_heads);
  if (kv != c.heads)
    fail(name, "\"num_key_value_heads\" = " + std::to_string(kv) + " differs from \"num_attention_heads\" = " +
                   std::to_string(c.heads) + ": in multi-head latent attention every head has its own keys");
  const std::string act = r.string_or("hidden_act", "silu");
  if (act != "silu")
    fail(name, "\"hidden_act\" = \"" + act + "\" is not supported for " + type + " (supported: silu, the SwiGLU MLP)");
  if (r.boolean_or("attention_bias", false)) fail(name, "\"attention_bias\" = true is not supported for " + type + " (supported: false)");
  if (r.boolean_or("mlp_bias", false)) fail(name, "\"mlp_bias\" = true is not supported (supported: false)");
  if (r.has("quantization_config"))
    fail(name, "\"quantization_config\" is not supported (attnscope reads F32/F16/BF16 weights; convert the FP8 "
               "weights to BF16 first)");
  if (!r.boolean_or("rope_interleave", true))
    fail(name, "\"rope_interleave\" = false is not supported (supported: true, DeepSeek's interleaved rotary pairs)");

  // MLA
  MlaConfig& m = c.mla;
  if (!r.present("q_lora_rank"))
    fail(name, "config.json has no \"q_lora_rank\" (a number, or null when q_proj projects the queries directly)");
  m.q_lora_rank = r.integer_or("q_lora_rank", 0, 1, max_width);
  m.kv_lora_rank = r.integer("kv_lora_rank", 1, max_width);
  m.nope_dim = r.integer("qk_nope_head_dim", 1, max_width);
  m.rope_dim = r.integer("qk_rope_head_dim", 2, max_width);
  m.v_dim = r.integer("v_head_dim", 1, max_width);
  if (m.rope_dim % 2 != 0)
    fail(name, "\"qk_rope_head_dim\" = " + std::to_string(m.rope_dim) + " is odd; rotary positions rotate pairs of dimensions");
  c.kv_heads = c.heads;
  c.head_dim = m.nope_dim + m.rope_dim;
  if (int64_t(c.heads) * (m.nope_dim + m.v_dim) > max_width || int64_t(c.heads) * m.v_dim > max_width)
    fail(name, "heads × (qk_nope_head_dim + v_head_dim) is above the limit of " + std::to_string(max_width));
  m.softmax_scale = 1.0 / std::sqrt(double(c.head_dim));
  read_deepseek_rope(j, r, name, c);

  // MoE
  MoeConfig& e = c.moe;
  if (!r.has("n_routed_experts")) return c;  // null: every layer dense
  e.experts = r.integer_or("n_routed_experts", 0, 0, 1 << 16);
  if (e.experts == 0)
    fail(name, "\"n_routed_experts\" = 0: a mixture-of-experts layer needs at least one expert (or null for a dense model)");
  e.top_k = r.integer("num_experts_per_tok", 1, 1 << 16);
  if (e.top_k > e.experts)
    fail(name, "\"num_experts_per_tok\" = " + std::to_string(e.top_k) + " is more than the " +
                   std::to_string(e.experts) + " routed experts (\"n_routed_experts\")");
  e.expert_ffn = r.integer("moe_intermediate_size", 1, max_width);
  e.shared = r.integer_or("n_shared_experts", 0, 0, 1 << 10);
  if (int64_t(e.shared) * e.expert_ffn > max_width)
    fail(name, "n_shared_experts × moe_intermediate_size is above the limit of " + std::to_string(max_width));
  e.first_dense = r.integer_or("first_k_dense_replace", 0, 0, c.layers);
  if (r.integer_or("moe_layer_freq", 1, 1, max_layers) != 1)
    fail(name, "\"moe_layer_freq\" = " + j["moe_layer_freq"].dump() +
                   " is not supported (supported: 1, every layer from first_k_dense_replace on is a mixture of experts)");
  e.routed_scale = r.number_or("routed_scaling_factor", 1.0, 0, 1e6);
  e.norm_topk = r.boolean_or("norm_topk_prob", false);
  const std::string scoring = r.string_or("scoring_func", v3 ? "sigmoid" : "softmax");
  const std::string method = r.string_or("topk_method", v3 ? "noaux_tc" : "greedy");
  if (!v3) {
    if (scoring != "softmax")
      fail(name, "\"scoring_func\" = \"" + scoring + "\" is not supported for deepseek_v2 (supported: softmax)");
    if (method == "greedy") e.method = TopkMethod::greedy;
    else if (method == "group_limited_greedy") e.method = TopkMethod::group_limited_greedy;
    else
      fail(name, "\"topk_method\" = \"" + method + "\" is not supported for deepseek_v2 (supported: greedy, "
                     "group_limited_greedy)");
    // The published V2 code and transformers' port disagree on what it means: refused, not guessed.
    if (e.norm_topk)
      fail(name, "\"norm_topk_prob\" = true is not supported for deepseek_v2 (supported: false, as in the published models)");
  } else {
    if (scoring != "sigmoid")
      fail(name, "\"scoring_func\" = \"" + scoring + "\" is not supported for deepseek_v3 (supported: sigmoid)");
    if (method != "noaux_tc")
      fail(name, "\"topk_method\" = \"" + method + "\" is not supported for deepseek_v3 (supported: noaux_tc)");
    e.method = TopkMethod::noaux_tc;
    e.sigmoid = true;
    e.correction_bias = true;
  }
  if (e.method != TopkMethod::greedy) {
    e.groups = r.integer("n_group", 1, e.experts);
    e.topk_groups = r.integer("topk_group", 1, e.groups);
    if (e.experts % e.groups != 0)
      fail(name, "\"n_group\" = " + std::to_string(e.groups) + " does not divide \"n_routed_experts\" = " +
                     std::to_string(e.experts));
    const int per_group = e.experts / e.groups;
    if (e.method == TopkMethod::noaux_tc && per_group < 2)
      fail(name, "noaux_tc scores each group by its two best experts, but \"n_group\" = " + std::to_string(e.groups) +
                     " leaves " + std::to_string(per_group) + " expert per group");
    if (e.top_k > e.topk_groups * per_group)
      fail(name, "\"num_experts_per_tok\" = " + std::to_string(e.top_k) + " is more than the " +
                     std::to_string(e.topk_groups * per_group) + " experts of the \"topk_group\" = " +
                     std::to_string(e.topk_groups) + " groups a token may use");
  }
  return c;
}

// gpt-oss: GptOssConfig (transformers 5.x models/gpt_oss/configuration_gpt_oss.py) and its modeling
// file. Every key is read, or refused by name when it asks for what the modeling file does not do.
ModelConfig read_gpt_oss(const json& j, const Reader& r, const std::string& name, const std::string& type) {
  ModelConfig c;
  c.family = Family::llama;
  c.layers = r.integer("num_hidden_layers", 1, max_layers);
  c.d_model = r.integer("hidden_size", 1, max_width);
  c.heads = r.integer("num_attention_heads", 1, limits::max_heads);
  c.kv_heads = r.integer_or("num_key_value_heads", c.heads, 1, limits::max_heads);
  // GptOssConfig: head_dim 64 when absent; null means hidden_size / num_attention_heads.
  c.head_dim = r.has("head_dim") ? r.integer("head_dim", 2, max_width) : r.present("head_dim") ? 0 : 64;
  if (c.head_dim == 0) {
    if (c.d_model % c.heads != 0)
      fail(name, "\"num_attention_heads\" = " + std::to_string(c.heads) + " does not divide \"hidden_size\" = " +
                     std::to_string(c.d_model) + " and there is no \"head_dim\"");
    c.head_dim = c.d_model / c.heads;
  }
  if (c.head_dim % 2 != 0)
    fail(name, "the head width " + std::to_string(c.head_dim) + " is odd; rotary positions pair dimension i with i + d/2");
  c.ffn_dim = r.integer("intermediate_size", 1, max_width);
  c.vocab = r.integer("vocab_size", 1, max_vocab);
  c.max_positions = r.integer_or("max_position_embeddings", 131072, 1, max_positions_bound);
  c.norm_eps = r.number_or("rms_norm_eps", 1e-5, 0, 1);
  c.rope_theta = r.number_or("rope_theta", 150000.0, 1.0, 1e12);
  c.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  const std::string act = r.string_or("hidden_act", "silu");
  if (act != "silu")
    fail(name, "\"hidden_act\" = \"" + act + "\" is not supported for gpt_oss (supported: silu; its experts' clamped "
                   "SwiGLU is fixed by the modeling file)");
  c.qkv_bias = c.o_bias = r.boolean_or("attention_bias", true);
  c.attention_sinks = true;
  // GptOssConfig: without rope_scaling / rope_parameters the rope is YaRN (factor 32 over 4096 positions).
  json with_default = j;
  if (!r.has("rope_scaling") && !r.has("rope_parameters"))
    with_default["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 32.0}, {"beta_fast", 32.0}, {"beta_slow", 1.0},
                                       {"truncate", false}, {"original_max_position_embeddings", 4096}};
  read_rope(with_default, r.over(with_default), name, type, c, false);
  // The layer pattern: layer_types, else sliding first and alternating (GptOssConfig.__post_init__).
  c.sliding_window = r.integer_or("sliding_window", 128, 1, max_positions_bound);
  std::vector<bool> sliding = read_layer_types(r, c.layers);
  if (sliding.empty())
    for (int i = 0; i < c.layers; ++i) sliding.push_back((i + 1) % 2 != 0);
  for (int i = 0; i < c.layers; ++i) c.layer_window.push_back(sliding[size_t(i)] ? c.sliding_window : 0);
  // The experts.
  GptOssConfig& e = c.oss;
  e.experts = r.integer("num_local_experts", 1, 1 << 16);
  e.top_k = r.integer_or("num_experts_per_tok", 4, 1, 1 << 16);
  if (e.top_k > e.experts)
    fail(name, "\"num_experts_per_tok\" = " + std::to_string(e.top_k) + " is more than the " + std::to_string(e.experts) +
                   " experts (\"num_local_experts\")");
  e.alpha = r.number_or("swiglu_alpha", 1.702, 1e-6, 1e6);
  e.limit = r.number_or("swiglu_limit", 7.0, 1e-6, 1e6);
  if (r.has("quantization_config")) {
    const json& q = j["quantization_config"];
    const std::string method = q.is_object() && q.contains("quant_method") && q["quant_method"].is_string()
                                   ? q["quant_method"].get<std::string>() : "";
    if (method != "mxfp4")
      fail(name, "\"quantization_config\" has quant_method " + (q.is_object() && q.contains("quant_method") ?
                     q["quant_method"].dump() : std::string("missing")) + ", which attnscope does not read for gpt_oss "
                     "(supported: \"mxfp4\", the experts' *_blocks and *_scales as published, or no "
                     "quantization_config for the dequantised gate_up_proj / down_proj tensors)");
    e.mxfp4 = true;
  }
  return c;
}

// ---- the family table (families.h): one entry per model_type, with the reader that parses it --------

using ReadFamily = ModelConfig (*)(const json& j, const Reader& r, const std::string& name, const std::string& type);
struct FamilyEntry {
  ModelFamily family;
  ReadFamily read;
};

ModelConfig gpt2_reader(const json&, const Reader& r, const std::string& name, const std::string&) {
  return read_gpt2(r, name);
}

// The positions, attention and tensors every Llama-like family shares.
constexpr std::string_view llama_attention = "MHA, GQA or MQA (num_key_value_heads)";
constexpr std::string_view llama_rope =
    "RoPE, rotate-half pairs, base rope_theta; rope_scaling / rope_parameters: linear, dynamic, yarn, llama3, longrope";
constexpr std::string_view llama_tensors = "model.layers.N.self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj";
constexpr std::string_view deepseek_attention = "MLA (kv_lora_rank latent, qk_rope_head_dim rotary key)";
constexpr std::string_view deepseek_rope = "RoPE on the rotary part, interleaved pairs, rope_theta; rope_scaling yarn";
constexpr std::string_view deepseek_tensors =
    "model.layers.N.self_attn.{q_proj | q_a_proj, q_b_proj}, kv_a_proj_with_mqa, kv_b_proj, o_proj; mlp.experts.E.*";

// `keys` with `add` and without `remove`, sorted.
std::vector<std::string_view> with_keys(std::vector<std::string_view> keys, std::vector<std::string_view> add,
                                        const std::vector<std::string_view>& remove) {
  for (std::string_view k : remove) keys.erase(std::remove(keys.begin(), keys.end(), k), keys.end());
  keys.insert(keys.end(), add.begin(), add.end());
  std::sort(keys.begin(), keys.end());
  return keys;
}

const std::vector<FamilyEntry>& family_entries() {
  // The keys the Llama-like, Gemma and DeepSeek readers share; a family's own list adds and removes.
  static const std::vector<std::string_view> llama_keys =
      {"attention_bias", "head_dim", "hidden_act", "hidden_size", "intermediate_size", "max_position_embeddings",
       "mlp_bias", "num_attention_heads", "num_hidden_layers", "num_key_value_heads", "original_max_position_embeddings",
       "partial_rotary_factor", "rms_norm_eps", "rope_parameters", "rope_scaling", "rope_theta", "tie_word_embeddings",
       "vocab_size"};
  static const std::vector<std::string_view> gemma_keys =
      {"attention_bias", "attn_logit_softcapping", "final_logit_softcapping", "head_dim", "hidden_act",
       "hidden_activation", "hidden_size", "intermediate_size", "layer_types", "max_position_embeddings",
       "num_attention_heads", "num_hidden_layers", "num_key_value_heads", "original_max_position_embeddings",
       "partial_rotary_factor", "query_pre_attn_scalar", "rms_norm_eps", "rope_parameters", "rope_scaling", "rope_theta",
       "sliding_window", "tie_word_embeddings", "use_bidirectional_attention", "vocab_size"};
  static const std::vector<std::string_view> deepseek_keys =
      {"attention_bias", "first_k_dense_replace", "hidden_act", "hidden_size", "intermediate_size", "kv_lora_rank",
       "max_position_embeddings", "mlp_bias", "moe_intermediate_size", "moe_layer_freq", "n_group",
       "n_routed_experts", "n_shared_experts", "norm_topk_prob", "num_attention_heads", "num_experts_per_tok",
       "num_hidden_layers", "num_key_value_heads", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
       "quantization_config", "rms_norm_eps", "rope_interleave", "rope_parameters", "rope_scaling", "rope_theta",
       "routed_scaling_factor", "scoring_func", "tie_word_embeddings", "topk_group", "topk_method", "v_head_dim",
       "vocab_size"};
  static const std::vector<std::string_view> granite_keys = with_keys(
      llama_keys, {"attention_multiplier", "embedding_multiplier", "logits_scaling", "residual_multiplier"}, {});
  static const std::vector<FamilyEntry> entries = {
      {{"gpt2", "GPT-2", "GPT2LMHeadModel", "MHA (n_head heads)", "learned absolute positions (wpe)", "",
        "LayerNorm, gelu_new MLP, Conv1D weights",
        "[transformer.]h.N.attn.c_attn (fused Q|K|V), attn.c_proj, mlp.c_fc, mlp.c_proj",
        {"activation_function", "layer_norm_epsilon", "n_ctx", "n_embd", "n_head", "n_inner", "n_layer",
         "n_positions", "scale_attn_by_inverse_layer_idx", "scale_attn_weights", "tie_word_embeddings",
         "vocab_size"},
        {"openai-community/gpt2", "distilbert/distilgpt2"}},
       gpt2_reader},
      {{"llama", "Llama", "LlamaForCausalLM", llama_attention, llama_rope, "", "attention_bias adds q/k/v/o biases",
        llama_tensors,
        llama_keys,
        {"meta-llama/Llama-3.2-1B", "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T"}},
       read_llama},
      {{"mistral", "Mistral", "MistralForCausalLM", llama_attention, llama_rope,
        "every layer: the last sliding_window keys", "", llama_tensors,
        with_keys(llama_keys, {"sliding_window"}, {}),
        {"mistralai/Mistral-7B-v0.1"}},
       read_llama},
      {{"qwen2", "Qwen2 / Qwen2.5", "Qwen2ForCausalLM", llama_attention, llama_rope,
        "with use_sliding_window: layers from max_window_layers on (or as layer_types says)", "q/k/v biases",
        llama_tensors,
        with_keys(llama_keys, {"layer_types", "max_window_layers", "sliding_window", "use_sliding_window"}, {}),
        {"Qwen/Qwen2.5-0.5B", "Qwen/Qwen2-0.5B"}},
       read_llama},
      {{"qwen3", "Qwen3", "Qwen3ForCausalLM", llama_attention, llama_rope, "",
        "RMSNorm over each head of q and k before RoPE (q_norm, k_norm)", llama_tensors,
        with_keys(llama_keys, {"layer_types", "use_sliding_window"}, {}),
        {"Qwen/Qwen3-0.6B"}},
       read_llama},
      {{"phi3", "Phi-3", "Phi3ForCausalLM", llama_attention, llama_rope, "every layer: the last sliding_window keys",
        "fused projections, split at load; partial_rotary_factor rotates the leading part of each head",
        "model.layers.N.self_attn.{qkv_proj, o_proj}, mlp.{gate_up_proj, down_proj}",
        with_keys(llama_keys, {"sliding_window"}, {"attention_bias"}),
        {"microsoft/Phi-3-mini-4k-instruct"}},
       read_llama},
      {{"smollm3", "SmolLM3", "SmolLM3ForCausalLM", llama_attention,
        "RoPE (rope_theta) except the NoPE layers of no_rope_layers / no_rope_layer_interval",
        "with use_sliding_window: the NoPE layers (or as layer_types says)", "", llama_tensors,
        with_keys(llama_keys, {"layer_types", "no_rope_layer_interval", "no_rope_layers", "sliding_window",
                               "use_sliding_window"}, {}),
        {"HuggingFaceTB/SmolLM3-3B"}},
       read_llama},
      {{"gemma2", "Gemma 2", "Gemma2ForCausalLM", llama_attention, llama_rope,
        "alternating: sliding_window layers, then global (or as layer_types says)",
        "soft-capping of scores and logits, (1 + w) RMSNorms, GeGLU, query_pre_attn_scalar",
        "model.layers.N.self_attn.{q,k,v,o}_proj, four norms per block, mlp.{gate,up,down}_proj",
        gemma_keys,
        {"google/gemma-2-2b"}},
       read_gemma},
      {{"gemma3_text", "Gemma 3 (text)", "Gemma3ForCausalLM", llama_attention,
        "RoPE: rope_theta on global layers (scaled by rope_scaling), rope_local_base_freq on sliding ones",
        "every sliding_window_pattern-th layer global, the others sliding_window (or as layer_types says)",
        "q/k norms, (1 + w) RMSNorms, GeGLU, query_pre_attn_scalar",
        "model.layers.N.self_attn.{q,k,v,o}_proj, q_norm, k_norm, four norms per block",
        with_keys(gemma_keys, {"rope_local_base_freq", "sliding_window_pattern"}, {}),
        {"google/gemma-3-1b-pt"}},
       read_gemma},
      {{"gemma3", "Gemma 3 (multimodal)", "Gemma3ForConditionalGeneration", llama_attention,
        "as gemma3_text (text_config): rope_theta on global layers scaled by rope_scaling, rope_local_base_freq on "
        "sliding ones",
        "as gemma3_text (text_config)", "the text tower only (text_config, a gemma3_text); the vision tower is not read",
        "language_model.model.* (or model.language_model.*) as gemma3_text; vision_tower.*, multi_modal_projector.* "
        "skipped",
        {"text_config", "text_config.attention_bias", "text_config.attn_logit_softcapping",
         "text_config.final_logit_softcapping", "text_config.head_dim", "text_config.hidden_act",
         "text_config.hidden_activation", "text_config.hidden_size", "text_config.intermediate_size",
         "text_config.layer_types", "text_config.max_position_embeddings", "text_config.model_type",
         "text_config.num_attention_heads", "text_config.num_hidden_layers", "text_config.num_key_value_heads",
         "text_config.partial_rotary_factor", "text_config.query_pre_attn_scalar", "text_config.rms_norm_eps",
         "text_config.rope_local_base_freq", "text_config.rope_scaling", "text_config.rope_theta",
         "text_config.sliding_window", "text_config.sliding_window_pattern", "text_config.tie_word_embeddings",
         "text_config.use_bidirectional_attention", "text_config.vocab_size"},
        {"google/gemma-3-4b-it"}},
       read_container},
      {{"gpt_neox", "GPT-NeoX (Pythia)", "GPTNeoXForCausalLM", "MHA (num_attention_heads)",
        "RoPE on the leading rotary_pct of each head, base rotary_emb_base; rope_scaling / rope_parameters as Llama's",
        "", "parallel residual (use_parallel_residual), LayerNorms with biases, per-head fused q/k/v, exact GELU MLP",
        "gpt_neox.layers.N.attention.{query_key_value, dense}, mlp.{dense_h_to_4h, dense_4h_to_h}; embed_out",
        {"attention_bias", "hidden_act", "hidden_size", "intermediate_size", "layer_norm_eps",
         "max_position_embeddings", "num_attention_heads", "num_hidden_layers", "original_max_position_embeddings",
         "partial_rotary_factor",
         "rope_parameters", "rope_scaling", "rope_theta", "rotary_emb_base", "rotary_pct", "tie_word_embeddings",
         "use_parallel_residual", "vocab_size"},
        {"EleutherAI/pythia-160m"}},
       read_gpt_neox},
      {{"olmo2", "OLMo 2", "Olmo2ForCausalLM", llama_attention, llama_rope, "",
        "RMSNorms after the attention and MLP outputs (no norm before them), q/k RMSNorms over the whole projection",
        "model.layers.N.self_attn.{q,k,v,o}_proj, q_norm, k_norm, post_attention_layernorm, post_feedforward_layernorm",
        llama_keys,
        {"allenai/OLMo-2-1124-7B"}},
       read_llama},
      {{"mistral3", "Mistral 3 (multimodal)", "Mistral3ForConditionalGeneration", llama_attention, llama_rope,
        "as mistral (text_config): every layer the last sliding_window keys",
        "the text tower only (text_config, a mistral or ministral3); the vision tower is not read",
        "language_model.model.* (or model.language_model.*) as mistral; vision_tower.*, multi_modal_projector.* skipped",
        {"text_config", "text_config.attention_bias", "text_config.head_dim", "text_config.hidden_act",
         "text_config.hidden_size", "text_config.intermediate_size", "text_config.max_position_embeddings",
         "text_config.mlp_bias", "text_config.model_type", "text_config.num_attention_heads",
         "text_config.num_hidden_layers", "text_config.num_key_value_heads", "text_config.partial_rotary_factor",
         "text_config.rms_norm_eps", "text_config.rope_parameters", "text_config.rope_scaling",
         "text_config.rope_theta", "text_config.sliding_window", "text_config.tie_word_embeddings",
         "text_config.vocab_size"},
        {"mistralai/Mistral-Small-3.1-24B-Instruct-2503"}},
       read_container},
      {{"ministral3", "Ministral 3 (multimodal)", "Mistral3ForConditionalGeneration", llama_attention,
        "RoPE as rope_parameters says (YaRN); queries × 1 + llama_4_scaling_beta·ln(1 + ⌊t / original context⌋)",
        "every layer the last sliding_window keys (null: none)",
        "the text tower only (text_config, a ministral3); the vision tower is not read",
        "model.language_model.* (or language_model.model.*) as mistral; vision_tower.*, multi_modal_projector.* "
        "skipped",
        {"text_config", "text_config.head_dim", "text_config.hidden_act", "text_config.hidden_size",
         "text_config.intermediate_size", "text_config.max_position_embeddings", "text_config.mlp_bias",
         "text_config.model_type", "text_config.num_attention_heads", "text_config.num_hidden_layers",
         "text_config.num_key_value_heads", "text_config.original_max_position_embeddings",
         "text_config.partial_rotary_factor", "text_config.rms_norm_eps", "text_config.rope_parameters",
         "text_config.rope_scaling", "text_config.rope_theta", "text_config.sliding_window",
         "text_config.tie_word_embeddings", "text_config.vocab_size"},
        {"mistralai/Ministral-3-3B-Instruct-2512"}},
       read_container},
      {{"deepseek_v2", "DeepSeek-V2", "DeepseekV2ForCausalLM", deepseek_attention, deepseek_rope, "",
        "mixture of experts (softmax routing, greedy or group-limited)", deepseek_tensors,
        deepseek_keys,
        {"deepseek-ai/DeepSeek-V2-Lite"}},
       read_deepseek},
      {{"deepseek_v3", "DeepSeek-V3", "DeepseekV3ForCausalLM", deepseek_attention, deepseek_rope, "",
        "mixture of experts (sigmoid routing, noaux_tc); FP8 weights refused (convert to BF16)", deepseek_tensors,
        deepseek_keys,
        {"deepseek-ai/DeepSeek-V3"}},
       read_deepseek},
      {{"qwen3_moe", "Qwen3-MoE", "Qwen3MoeForCausalLM", llama_attention, llama_rope, "",
        "RMSNorm over each head of q and k; mixture of experts (softmax top-k, norm_topk_prob) in the layers "
        "decoder_sparse_step and mlp_only_layers choose, dense SwiGLU in the others",
        "model.layers.N.self_attn.{q,k,v,o}_proj, q_norm, k_norm; mlp.gate, mlp.experts.E.{gate,up,down}_proj "
        "(dense layers: mlp.{gate,up,down}_proj)",
        with_keys(llama_keys, {"decoder_sparse_step", "mlp_only_layers", "moe_intermediate_size", "norm_topk_prob",
                               "num_experts", "num_experts_per_tok", "use_sliding_window"}, {}),
        {"Qwen/Qwen3-30B-A3B"}},
       read_moe_family},
      {{"olmoe", "OLMoE", "OlmoeForCausalLM", llama_attention, llama_rope, "",
        "RMSNorm over the whole q and k projections; mixture of experts in every layer (softmax top-k, "
        "norm_topk_prob)",
        "model.layers.N.self_attn.{q,k,v,o}_proj, q_norm, k_norm; mlp.gate, mlp.experts.E.{gate,up,down}_proj",
        with_keys(llama_keys, {"clip_qkv", "norm_topk_prob", "num_experts", "num_experts_per_tok"}, {}),
        {"allenai/OLMoE-1B-7B-0924"}},
       read_moe_family},
      {{"granite", "Granite", "GraniteForCausalLM", llama_attention, llama_rope, "",
        "embedding_multiplier, residual_multiplier, attention_multiplier (the score scale), logits ÷ "
        "logits_scaling",
        llama_tensors, granite_keys,
        {"ibm-granite/granite-3.1-2b-instruct"}},
       read_moe_family},
      {{"granitemoe", "Granite MoE", "GraniteMoeForCausalLM", llama_attention, llama_rope, "",
        "Granite's multipliers; mixture of experts in every layer (top-k of the router's logits, softmax over "
        "those k)",
        "model.layers.N.self_attn.{q,k,v,o}_proj; block_sparse_moe.router.layer, input_linear [E, 2F, C], "
        "output_linear [E, C, F]",
        with_keys(granite_keys, {"num_experts_per_tok", "num_local_experts"}, {}),
        {"ibm-granite/granite-3.1-1b-a400m-instruct"}},
       read_moe_family},
      {{"gpt_oss", "gpt-oss", "GptOssForCausalLM", llama_attention,
        "RoPE, rotate-half pairs, base rope_theta, YaRN (rope_scaling / rope_parameters; YaRN factor 32 when absent)",
        "as layer_types says (else alternating, sliding first): sliding_window keys or all",
        "a learned sink logit per head joins every row's softmax; q/k/v/o biases; mixture of experts (top-k "
        "router with bias, softmax over the chosen, clamped SwiGLU); MXFP4 experts read in place",
        "model.layers.N.self_attn.{q,k,v,o}_proj with biases, self_attn.sinks, mlp.router; mlp.experts."
        "{gate_up_proj, down_proj}_{blocks, scales} (MXFP4) or mlp.experts.{gate_up_proj, down_proj}, and their _bias",
        {"attention_bias", "head_dim", "hidden_act", "hidden_size", "intermediate_size", "layer_types",
         "max_position_embeddings", "num_attention_heads", "num_experts_per_tok", "num_hidden_layers",
         "num_key_value_heads", "num_local_experts", "original_max_position_embeddings", "partial_rotary_factor",
         "quantization_config", "rms_norm_eps", "rope_parameters", "rope_scaling", "rope_theta", "sliding_window",
         "swiglu_alpha", "swiglu_limit", "tie_word_embeddings", "vocab_size"},
        {"openai/gpt-oss-20b", "openai/gpt-oss-120b"}},
       read_gpt_oss},
      {{"qwen3_next", "Qwen3-Next", "Qwen3NextForCausalLM",
        "Gated DeltaNet (linear attention, linear_num_key_heads / linear_num_value_heads) in 3 of 4 layers; gated "
        "softmax attention (GQA, num_key_value_heads) in the others",
        "RoPE on the leading head_dim × partial_rotary_factor values (rotate-half, rope_theta) in the softmax layers; "
        "the linear layers have none (their short convolution orders the tokens)",
        "",
        "layer_types (else every full_attention_interval-th layer softmax); Gated DeltaNet with its causal conv1d, "
        "β, decay and gated RMSNorm, drawn as its signed T×T matrix; output gate and q/k norms in the softmax "
        "layers; (1 + w) RMSNorms; mixture of experts with a gated shared expert. The Model and Heads views draw its "
        "linear layers' matrices on the diverging scale, its softmax layers' probabilities",
        "model.layers.N.linear_attn.{in_proj_qkvz, in_proj_ba, conv1d, dt_bias, A_log, norm, out_proj} or "
        "self_attn.{q,k,v,o}_proj, q_norm, k_norm; mlp.gate, mlp.experts.E.*, mlp.shared_expert.*, "
        "mlp.shared_expert_gate",
        with_keys(llama_keys, {"decoder_sparse_step", "full_attention_interval", "layer_types",
                               "linear_conv_kernel_dim", "linear_key_head_dim", "linear_num_key_heads",
                               "linear_num_value_heads", "linear_value_head_dim", "mlp_only_layers",
                               "moe_intermediate_size", "norm_topk_prob", "num_experts", "num_experts_per_tok",
                               "shared_expert_intermediate_size"}, {}),
        {"Qwen/Qwen3-Next-80B-A3B-Instruct"}},
       read_qwen3_next},
      {{"attnscope_linear", "attnscope (trained without a softmax)", "AttnscopeLinearForCausalLM",
        "one kind without a softmax in every layer (attention_kind: linear, retention, mamba2, deltanet, "
        "gated-deltanet), or a hybrid (attention_kind hybrid: layer_types names each layer's kind, grouped for "
        "softmax attention), every head its own keys and values",
        "none (the causal recurrence orders the tokens); RoPE in a hybrid's softmax layers",
        "",
        "a model the Training window or `attnscope train --attention KIND` saved: the Llama layout with the kind's "
        "gates; each layer drawn as its heads' signed T×T matrices M (docs/math.md, \"Attention without a softmax\")",
        "model.layers.N.self_attn.{q,k,v,o}_proj and, as the kind has them, self_attn.{b_proj, a_proj, dt_proj}.weight, "
        "dt_bias, A_log, D; the Llama norms and MLP",
        with_keys(llama_keys, {"attention_kind", "decay", "feature_map", "layer_types", "normalize", "q_scale"}, {}),
        {"attnscope train --attention gated-deltanet --save DIR"}},
       read_attnscope_linear},
      {{"granitemoehybrid", "Granite 4.0-H", "GraniteMoeHybridForCausalLM",
        "Mamba-2 (state-space duality, mamba_n_heads heads over a mamba_d_state state) in the layers layer_types "
        "names \"mamba\"; softmax attention (GQA, num_key_value_heads) in the others",
        "none (position_embedding_type \"nope\", as published: the Mamba layers' convolution and decay order the "
        "tokens); RoPE (rotate-half, rope_theta) in the attention layers with \"rope\"",
        "",
        "Granite's multipliers; Mamba-2 layers with their causal conv1d, Δ, A and D skip and gated RMSNorm, drawn as "
        "each head's signed T×T matrix M; mixture of experts (top-k of the router's logits, softmax over those k) "
        "plus a shared MLP in every layer, or the shared MLP alone. The Model and Heads views draw its Mamba layers' "
        "matrices on the diverging scale, its attention layers' probabilities",
        "model.layers.N.mamba.{in_proj, conv1d (weight, bias), dt_bias, A_log, D, norm, out_proj} or "
        "self_attn.{q,k,v,o}_proj; block_sparse_moe.router.layer, input_linear [E, 2F, C], output_linear [E, C, F]; "
        "shared_mlp.{input_linear, output_linear}",
        with_keys(granite_keys, {"layer_types", "layers_block_type", "mamba_conv_bias", "mamba_d_conv", "mamba_d_head",
                                 "mamba_d_state", "mamba_expand", "mamba_n_groups", "mamba_n_heads", "mamba_proj_bias",
                                 "num_experts_per_tok", "num_local_experts", "position_embedding_type",
                                 "shared_intermediate_size"}, {}),
        {"ibm-granite/granite-4.0-h-tiny"}},
       read_granite_hybrid},
  };
  return entries;
}

const FamilyEntry* find_entry(std::string_view model_type) {
  for (const FamilyEntry& e : family_entries())
    if (e.family.model_type == model_type) return &e;
  return nullptr;
}

}  // namespace

const std::vector<ModelFamily>& model_families() {
  static const std::vector<ModelFamily> families = [] {
    std::vector<ModelFamily> f;
    for (const FamilyEntry& e : family_entries()) f.push_back(e.family);
    return f;
  }();
  return families;
}

const ModelFamily* find_model_family(std::string_view model_type) {
  for (const ModelFamily& f : model_families())
    if (f.model_type == model_type) return &f;
  return nullptr;
}

std::vector<float> MlaConfig::inv_freq(double theta) const {
  // Hugging Face's float32 frequencies, plain or YaRN's blend (attention/positions.h, shared with the
  // scene model's RoPE).
  if (!yarn) return rope_inv_freq_float32(theta, rope_dim);
  return yarn_inv_freq_float32(theta, rope_dim, yarn_factor, yarn_original_max, beta_fast, beta_slow);
}

const char* to_string(RopeType type) {
  switch (type) {
    case RopeType::plain: return "default";
    case RopeType::linear: return "linear";
    case RopeType::dynamic: return "dynamic";
    case RopeType::yarn: return "yarn";
    case RopeType::llama3: return "llama3";
    case RopeType::longrope: return "longrope";
  }
  return "default";
}

RopeFrequencies rope_frequencies(const RopeScalingConfig& s, double base, int d, int tokens) {
  // transformers 5.x modeling_rope_utils.py in float32: a Python float meeting a float32 tensor is
  // rounded to float32 first, and `x / tensor` is tensor.reciprocal() · x.
  RopeFrequencies f;
  const int half = d / 2;
  switch (s.type) {
    case RopeType::plain: f.inv_freq = rope_inv_freq_float32(base, d); break;
    case RopeType::linear:  // _compute_linear_scaling_rope_parameters: inv_freq /= factor
      f.inv_freq = rope_inv_freq_float32(base, d);
      for (float& v : f.inv_freq) v /= float(s.factor);
      break;
    case RopeType::dynamic: {
      // dynamic_frequency_update: recomputed at seq_len = T when T > max_position_embeddings (a
      // float32 tensor base), else the original frequencies.
      if (tokens <= s.max_positions) {
        f.inv_freq = rope_inv_freq_float32(base, d);
        break;
      }
      const float ratio = float(s.factor) * float(tokens) / float(s.max_positions) - float(s.factor - 1);
      const float scaled = float(base) * std::pow(ratio, float(double(d) / double(d - 2)));
      f.inv_freq.resize(size_t(half));
      for (int k = 0; k < half; ++k)
        f.inv_freq[size_t(k)] = 1.0f / std::pow(scaled, float(2 * k) / float(d));
      break;
    }
    case RopeType::yarn:
      f.inv_freq = yarn_inv_freq_float32(base, d, s.factor, double(s.original_max), s.beta_fast, s.beta_slow, s.truncate);
      f.attention_factor = float(s.attention_factor);
      break;
    case RopeType::llama3: {
      // _compute_llama3_parameters: by wavelength against original/low_freq_factor and original/high_freq_factor
      const std::vector<float> inv = rope_inv_freq_float32(base, d);
      const float L = float(s.original_max), factor = float(s.factor);
      const float low_wavelen = float(double(s.original_max) / s.low_freq_factor);
      const float high_wavelen = float(double(s.original_max) / s.high_freq_factor);
      const float two_pi = float(2 * 3.14159265358979323846);
      f.inv_freq.resize(size_t(half));
      for (int k = 0; k < half; ++k) {
        const float theta = inv[size_t(k)];
        const float wavelen = (1.0f / theta) * two_pi;
        const float scaled = wavelen > low_wavelen ? theta / factor : theta;
        const float smooth = ((1.0f / wavelen) * L - float(s.low_freq_factor)) / float(s.high_freq_factor - s.low_freq_factor);
        const float smoothed = (1.0f - smooth) * scaled / factor + smooth * scaled;
        const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
        f.inv_freq[size_t(k)] = medium ? smoothed : scaled;
      }
      break;
    }
    case RopeType::longrope: {
      // _compute_longrope_parameters / longrope_frequency_update: long factors once T > original
      const std::vector<double>& ext = tokens > s.original_max ? s.long_factor : s.short_factor;
      f.inv_freq.resize(size_t(half));
      for (int k = 0; k < half; ++k) {
        const float pos = std::pow(float(base), float(2 * k) / float(d));
        f.inv_freq[size_t(k)] = 1.0f / (float(ext[size_t(k)]) * pos);
      }
      f.attention_factor = float(s.attention_factor);
      break;
    }
  }
  return f;
}

RopeFrequencies ModelConfig::layer_rope(int layer, int tokens) const {
  static const RopeScalingConfig plain;
  return rope_frequencies(layer_rope_scaled.empty() || layer_rope_scaled[size_t(layer)] ? rope_scaling : plain,
                          layer_rope_theta[size_t(layer)], rotated_dim(), tokens);
}

const char* supported_model_types() {
  static const std::string types = [] {
    std::string t;
    for (const FamilyEntry& e : family_entries()) t += (t.empty() ? "" : ", ") + std::string(e.family.model_type);
    return t;
  }();
  return types.c_str();
}

int64_t ModelConfig::parameter_count() const {
  const int64_t C = d_model, Q = int64_t(heads) * head_dim, KV = int64_t(kv_heads) * head_dim, F = ffn_dim;
  const bool layernorm = norm == NormKind::layernorm;
  if (is_mla()) {  // DeepSeek: MLA, then a dense or MoE SwiGLU per layer
    const int64_t H = heads, r = mla.kv_lora_rank, rq = mla.q_lora_rank;
    int64_t attention = rq ? C * rq + rq + rq * H * head_dim : C * H * head_dim;
    attention += C * (r + mla.rope_dim) + r + r * H * (mla.nope_dim + mla.v_dim) + H * mla.v_dim * C;
    const int64_t dense = 3 * C * F;
    const int64_t moe_mlp = int64_t(moe.experts) * (C + 3 * C * moe.expert_ffn) + 3 * C * moe.expert_ffn * moe.shared +
                            (moe.correction_bias ? moe.experts : 0);
    int64_t total = int64_t(vocab) * C * (tied_embeddings ? 1 : 2) + C;
    for (int l = 0; l < layers; ++l) total += attention + 2 * C + (moe.is_moe_layer(l) ? moe_mlp : dense);
    return total;
  }
  if (oss.active()) {  // gpt-oss: attention with biases and sinks, the router, E experts with biases
    const int64_t E = oss.experts;
    const int64_t attention = C * Q + 2 * C * KV + Q * C + (qkv_bias ? Q + 2 * KV : 0) + (o_bias ? C : 0) + heads;
    const int64_t experts = E * (C + 1) + E * (C * 2 * F + 2 * F + F * C + C);
    return int64_t(vocab) * C * (tied_embeddings ? 1 : 2) + C + int64_t(layers) * (attention + experts + 2 * C);
  }
  if (mamba.active()) {  // Granite 4.0-H: Mamba-2 or attention, then the experts + shared MLP, or the shared MLP
    const int64_t I = mamba.inner(), CD = mamba.conv_dim(), Hm = mamba.heads;
    const int64_t mamba2 = C * (I + CD + Hm) + CD * mamba.conv_kernel + (mamba.conv_bias ? CD : 0) + 3 * Hm + I + I * C;
    int64_t attention = C * Q + 2 * C * KV + Q * C;
    if (qkv_bias) attention += Q + 2 * KV;
    if (o_bias) attention += C;
    const int64_t moe_mlp = int64_t(moe.experts) * (C + 3 * C * moe.expert_ffn) + 3 * C * moe.shared_ffn;
    int64_t total = int64_t(vocab) * C * (tied_embeddings ? 1 : 2) + C;
    for (int l = 0; l < layers; ++l)
      total += (is_linear_layer(l) ? mamba2 : attention) + 2 * C + (moe.is_moe_layer(l) ? moe_mlp : 3 * C * F);
    return total;
  }
  if (linear.active()) {  // Qwen3-Next: Gated DeltaNet or gated attention, then a dense or MoE MLP
    const LinearAttentionConfig& a = linear;
    const int64_t Kd = int64_t(a.key_heads) * a.key_dim, Vd = int64_t(a.value_heads) * a.value_dim;
    const int64_t deltanet = C * (2 * Kd + 2 * Vd) + C * 2 * a.value_heads + int64_t(a.conv_dim()) * a.conv_kernel +
                             2 * a.value_heads + a.value_dim + Vd * C;
    const int64_t attention = C * 2 * Q + 2 * C * KV + Q * C + 2 * int64_t(head_dim);
    const int64_t moe_mlp = int64_t(moe.experts) * (C + 3 * C * moe.expert_ffn) + 3 * C * moe.shared_ffn + C;
    int64_t total = int64_t(vocab) * C * (tied_embeddings ? 1 : 2) + C;
    for (int l = 0; l < layers; ++l)
      total += (is_linear_layer(l) ? deltanet : attention) + 2 * C + (moe.is_moe_layer(l) ? moe_mlp : 3 * C * F);
    return total;
  }
  int64_t per_layer = C * Q + 2 * C * KV + Q * C;  // W_Q, W_K, W_V, W_O
  if (qkv_bias) per_layer += Q + 2 * KV;
  if (o_bias) per_layer += C;
  const int64_t dense_mlp = (mlp == MlpKind::swiglu || mlp == MlpKind::geglu ? 3 : 2) * C * F + (mlp_bias ? F + C : 0);
  if (pre_norms) per_layer += (layernorm ? 4 : 2) * C;  // two norms (weight, and bias for LayerNorm)
  if (sandwich_norms) per_layer += 2 * C;  // Gemma's and OLMo 2's post-attention and post-MLP norms
  if (qk_norm_whole) per_layer += Q + KV;  // q_norm [H·D], k_norm [G·D] (OLMo 2, OLMoE)
  else if (qk_norm) per_layer += 2 * int64_t(head_dim);  // q_norm, k_norm per head (Qwen3)
  // each layer's MLP: dense, or the router [E, C] and E SwiGLU experts of width expert_ffn
  const int64_t moe_mlp = int64_t(moe.experts) * (C + 3 * C * moe.expert_ffn);
  int64_t total = int64_t(vocab) * C + per_layer * layers + (layernorm ? 2 : 1) * C;
  for (int l = 0; l < layers; ++l) total += moe.is_moe_layer(l) ? moe_mlp : dense_mlp;
  if (positions == PositionKind::learned) total += int64_t(max_positions) * C;
  if (!tied_embeddings) total += int64_t(vocab) * C;
  return total;
}

ModelConfig parse_model_config(std::string_view json_text, const std::string& name,
                               std::vector<std::string>* keys_read) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    fail(name, std::string("config.json is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail(name, "config.json is not a JSON object");
  if (!j.contains("model_type") || !j["model_type"].is_string())
    fail(name, std::string("config.json has no \"model_type\" string (supported: ") + supported_model_types() + ")");
  const std::string type = j["model_type"].get<std::string>();
  const FamilyEntry* family = find_entry(type);
  if (!family)
    fail(name, "\"model_type\" = \"" + type + "\" is not supported (supported: " + supported_model_types() +
                   "); for other models compute the attentions with transformers and open the attentions file");
  std::set<std::string> looked_up;
  Reader r(j, name, keys_read ? &looked_up : nullptr);
  r.set_family(type);
  ModelConfig c;
  try {
    c = family->read(j, r, name, type);
  } catch (...) {  // a refusal looked its key up too
    if (keys_read) keys_read->assign(looked_up.begin(), looked_up.end());
    throw;
  }
  if (keys_read) keys_read->assign(looked_up.begin(), looked_up.end());
  if (c.container.empty()) c.model_type = type;
  if (c.attn_scale == 0) c.attn_scale = 1.0 / std::sqrt(double(c.head_dim));
  // Every family has the per-layer lists (DeepSeek's MLA layers: global, its own RoPE on the rope part).
  if (c.layer_window.empty()) c.layer_window.assign(size_t(c.layers), 0);
  if (c.layer_rope_theta.empty())
    c.layer_rope_theta.assign(size_t(c.layers), c.positions == PositionKind::rotary ? c.rope_theta : 0.0);
  if (c.layer_rope_scaled.empty()) c.layer_rope_scaled.assign(size_t(c.layers), true);
  check_common(c, name);
  return c;
}

HeadCounts parse_head_counts(std::string_view json_text, const std::string& name) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    fail(name, std::string("config.json is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail(name, "config.json is not a JSON object");
  const Reader r(j, name);
  // A multimodal container (gemma3, mistral3, ministral3) keeps its language model's heads in text_config.
  if (!r.has("num_attention_heads") && !r.has("n_head") && !r.has("heads") && r.has("text_config") &&
      j["text_config"].is_object())
    return parse_head_counts(j["text_config"].dump(), name);
  HeadCounts h;
  if (r.has("num_attention_heads")) h.heads = r.integer("num_attention_heads", 1, 1 << 12);
  else if (r.has("n_head")) h.heads = r.integer("n_head", 1, 1 << 12);
  else if (r.has("heads")) h.heads = r.integer("heads", 1, 1 << 12);  // `compute --checkpoint`'s model.json
  else fail(name, "config.json has neither \"num_attention_heads\" nor \"n_head\" (nor model.json's \"heads\")");
  if (r.has("num_key_value_heads")) h.kv_heads = r.integer("num_key_value_heads", 1, 1 << 12);
  else if (r.has("num_kv_heads")) h.kv_heads = r.integer("num_kv_heads", 1, 1 << 12);
  else if (r.has("n_head_kv")) h.kv_heads = r.integer("n_head_kv", 1, 1 << 12);
  else if (r.has("kv_heads")) h.kv_heads = r.integer("kv_heads", 1, 1 << 12);
  else if (r.boolean_or("multi_query", false)) h.kv_heads = 1;
  else h.kv_heads = h.heads;
  if (h.heads % h.kv_heads != 0)
    fail(name, "the key/value heads (" + std::to_string(h.kv_heads) + ") must divide the attention heads (" +
                   std::to_string(h.heads) + ")");
  return h;
}

}  // namespace attnscope::model
