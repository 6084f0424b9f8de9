// model.cpp — the Llama-layout transformer: parameter arena, initialisation, forward and backward.
//
// Sections: attention kinds · validation · arenas · layout · initialisation · activations · MLA · without a
// softmax · forward · backward
// The forward and backward are straight sequences of ops.h calls, as llm.c's gpt2_forward/backward.
// The linear layers use train/gemm.h (the same contract as ops.h's, on a packed AVX-512 product).
#include "attnscope/train/model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/model/ops.h"
#include "attnscope/attention/linear_layer.h"
#include "train/gemm.h"
#include "train/linear_ops.h"

namespace attnscope::train {

// ================================ attention kinds ================================================

const std::vector<AttentionKindEntry>& attention_kinds() {
  static const std::vector<AttentionKindEntry> table = {
      {AttentionKind::grouped, "grouped", "grouped"},  // the title is MHA/GQA/MQA by the groups
      {AttentionKind::mla, "mla", "MLA"},
      {AttentionKind::linear, "linear", "linear attention"},
      {AttentionKind::retention, "retention", "retention"},
      {AttentionKind::mamba2, "mamba2", "Mamba-2"},
      {AttentionKind::deltanet, "deltanet", "DeltaNet"},
      {AttentionKind::gated_deltanet, "gated-deltanet", "Gated DeltaNet"}};
  return table;
}

std::string attention_kind_words() {
  std::string words;
  for (const AttentionKindEntry& e : attention_kinds()) words += (words.empty() ? "" : " | ") + std::string(e.name);
  return words;
}

AttentionKind parse_attention_kind(const std::string& name) {
  for (const AttentionKindEntry& e : attention_kinds())
    if (name == e.name) return e.kind;
  throw InputError("the attention kind must be one of " + attention_kind_words() + ", got '" + name + "'");
}

const char* attention_kind_word(AttentionKind kind) {
  for (const AttentionKindEntry& e : attention_kinds())
    if (e.kind == kind) return e.name;
  return "?";
}

// ================================ validation =====================================================

void validate_model_config(const ModelConfig& c) {
  auto s = [](auto v) { return std::to_string(v); };
  require(c.layers >= 1 && c.layers <= max_layers, "layers must be 1 to " + s(max_layers) + ", got " + s(c.layers));
  require(c.d_model >= 2 && c.d_model <= max_d_model,
          "d_model must be 2 to " + s(max_d_model) + ", got " + s(c.d_model));
  require(c.heads >= 1 && c.heads <= max_heads, "heads must be 1 to " + s(max_heads) + ", got " + s(c.heads));
  require(c.d_model % c.heads == 0, "d_model (" + s(c.d_model) + ") must be divisible by heads (" + s(c.heads) +
                                        "): each head gets d_model / heads dimensions");
  require(c.mla() || c.softmax_free() || c.head_dim() % 2 == 0, "the head width d_model / heads = " + s(c.head_dim()) +
                                                 " must be even: rotary positions rotate pairs of dimensions");
  if (!c.mla() && !c.softmax_free()) {  // MLA has no groups: every head its own keys, made from the one latent
    require(c.groups >= 1 && c.groups <= c.heads,
            "groups (kv heads) must be 1 to heads (" + s(c.heads) + "), got " + s(c.groups));
    require(c.heads % c.groups == 0, "groups (" + s(c.groups) + ") must divide heads (" + s(c.heads) +
                                         "): each kv head serves the same number of query heads");
  }
  require(c.vocab_size >= 2 && c.vocab_size <= max_vocab,
          "the vocabulary must have 2 to " + s(max_vocab) + " tokens, got " + s(c.vocab_size));
  require(c.intermediate_size >= 0, "the MLP width must be 1 or more (0 = 4 x d_model), got " +
                                        s(c.intermediate_size));
  require(!c.mlp || (c.ffn() >= 1 && c.ffn() <= 4 * max_d_model),
          "the MLP width must be 1 to " + s(4 * max_d_model) + ", got " + s(c.ffn()));
  require(std::isfinite(c.rope_theta) && c.rope_theta > 1.0f, "rope theta must be a number above 1");
  require(std::isfinite(c.rms_norm_eps) && c.rms_norm_eps > 0.0f, "rms_norm_eps must be a number above 0");
  require(c.max_positions >= 1, "max_positions must be at least 1");
  require(c.window >= 0 && c.window <= max_seq_len,
          "the sliding window must be 1 to " + s(max_seq_len) + " tokens (0 = none), got " + s(c.window));
  require(c.local_layers.empty() || int(c.local_layers.size()) == c.layers,
          "the window pattern must name one of local/global for each of the " + s(c.layers) + " layers");
  require(!c.softmax_free() || c.window == 0,
          std::string("a sliding window is for softmax attention; ") + attention_kind_word(c.attention) +
              " attention keeps a state of a fixed size instead: leave the window out");
  if (c.hybrid()) {
    require(int(c.layer_kinds.size()) == c.layers, "the layer kinds list " + layer_kinds_text(c.layer_kinds) +
                                                       " must name one kind for each of the " + s(c.layers) + " layers");
    bool softmax = false, without = false;
    for (const AttentionKind k : c.layer_kinds) {
      require(k != AttentionKind::mla, "a hybrid mixes grouped softmax attention with kinds without a softmax; MLA "
                                       "is not one of its layer kinds (valid: " + attention_kind_words() + " but mla)");
      (k == AttentionKind::grouped ? softmax : without) = true;
    }
    require(softmax && without, "the layer kinds " + layer_kinds_text(c.layer_kinds) + " over " + s(c.layers) +
                                    " layers are not a hybrid: it needs grouped (softmax) layers and layers without a "
                                    "softmax; for one kind in every layer choose the attention kind alone");
    require(c.groups == c.heads, "in a hybrid every head has its own keys and values: groups must equal heads (" +
                                     s(c.heads) + "), got " + s(c.groups));
    require(c.window == 0, "a hybrid has no sliding window (its layers without a softmax keep a state of a fixed "
                           "size): leave the window out");
  }
  if (!c.mla()) return;
  require(c.kv_lora_rank >= 1 && c.kv_lora_rank <= c.d_model,
          "kv_lora_rank (the latent width) must be 1 to d_model (" + s(c.d_model) + "), got " + s(c.kv_lora_rank));
  require(c.q_lora_rank >= 0 && c.q_lora_rank <= c.d_model,
          "q_lora_rank must be 0 (no query compression) to d_model (" + s(c.d_model) + "), got " + s(c.q_lora_rank));
  require(c.rope_head_dim >= 2 && c.rope_head_dim <= 64 && c.rope_head_dim % 2 == 0,
          "rope_head_dim (the rotary part of each head) must be even, 2 to 64, got " + s(c.rope_head_dim));
}

std::vector<bool> parse_window_pattern(const std::string& pattern, int layers) {
  if (pattern.empty() || pattern == "all") return std::vector<bool>(size_t(std::max(layers, 0)), true);
  if (pattern == "none") return std::vector<bool>(size_t(std::max(layers, 0)), false);
  std::vector<bool> cycle;
  size_t begin = 0;
  while (begin <= pattern.size()) {
    const size_t end = std::min(pattern.find(',', begin), pattern.size());
    const std::string word = pattern.substr(begin, end - begin);
    if (word == "local") cycle.push_back(true);
    else if (word == "global") cycle.push_back(false);
    else
      throw InputError("the window pattern \"" + pattern + "\" has \"" + word +
                       "\"; write local and global separated by commas (e.g. local,global), or all / none");
    begin = end + 1;
  }
  std::vector<bool> out;
  for (int l = 0; l < layers; ++l) out.push_back(cycle[size_t(l) % cycle.size()]);
  return out;
}

std::string window_pattern_text(const std::vector<bool>& local_layers, int layers) {
  if (local_layers.empty() || std::all_of(local_layers.begin(), local_layers.end(), [](bool b) { return b; }))
    return "all";
  std::string out;
  for (int l = 0; l < layers && size_t(l) < local_layers.size(); ++l)
    out += (l ? "," : "") + std::string(local_layers[size_t(l)] ? "local" : "global");
  return out;
}

std::vector<AttentionKind> parse_layer_kinds(const std::string& list, int layers) {
  std::vector<AttentionKind> cycle;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string word = list.substr(begin, end - begin);
    bool found = false;
    for (const AttentionKindEntry& e : attention_kinds())
      if (word == e.name) cycle.push_back(e.kind), found = true;
    if (!found)
      throw InputError("the layer kinds \"" + list + "\" have \"" + word + "\"; write attention kinds (" +
                       attention_kind_words() + ") separated by commas, e.g. gated-deltanet,grouped");
    begin = end + 1;
  }
  std::vector<AttentionKind> out;
  for (int l = 0; l < layers; ++l) out.push_back(cycle[size_t(l) % cycle.size()]);
  return out;
}

std::string layer_kinds_text(const std::vector<AttentionKind>& kinds) {
  std::string out;
  for (const AttentionKind k : kinds) out += (out.empty() ? "" : ",") + std::string(attention_kind_word(k));
  return out;
}

std::vector<AttentionKind> every_kth_softmax(AttentionKind kind, int k, int layers) {
  std::vector<AttentionKind> out;
  for (int l = 0; l < layers; ++l) out.push_back(k > 0 && (l + 1) % k == 0 ? AttentionKind::grouped : kind);
  return out;
}

// ================================ arenas =========================================================

FloatArena::FloatArena(size_t n) : size_(n) {
  const size_t bytes = ((n * sizeof(float) + 63) / 64) * 64;
  data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes ? bytes : 64)));
  if (!data_) throw std::bad_alloc();
  zero();
}

void FloatArena::zero() {
  if (size_) std::memset(data_.get(), 0, size_ * sizeof(float));
}

void FloatArena::Free::operator()(float* p) const { std::free(p); }

// ================================ layout =========================================================

namespace {
size_t round16(size_t n) { return (n + 15) / 16 * 16; }
// The layer of a tensor named "model.layers.N.…" (0 for the others, which no caller asks about).
int layer_of(const std::string& name) {
  const std::string prefix = "model.layers.";
  return name.compare(0, prefix.size(), prefix) == 0 ? std::atoi(name.c_str() + prefix.size()) : 0;
}
}  // namespace

Model::Model(const ModelConfig& config) : config_(config) {
  validate_model_config(config_);
  const int64_t C = config_.d_model, V = config_.vocab_size, HD = int64_t(config_.heads) * config_.head_dim(),
                GD = int64_t(config_.groups) * config_.head_dim(), F = config_.ffn(),
                HQK = int64_t(config_.heads) * config_.qk_head_dim(), r = config_.kv_lora_rank,
                rq = config_.q_lora_rank, R = config_.rope_head_dim;
  auto add = [&](std::string name, std::vector<int64_t> shape, bool decay) {
    size_t n = 1;
    for (int64_t d : shape) n *= size_t(d);
    views_.push_back({std::move(name), std::move(shape), total_, n, decay});
    total_ += round16(n);
  };
  add("model.embed_tokens.weight", {V, C}, true);
  for (int l = 0; l < config_.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {C}, false);
    if (config_.mla()) {  // Hugging Face DeepSeek-V2's names and shapes
      if (rq > 0) {
        add(p + "self_attn.q_a_proj.weight", {rq, C}, true);
        add(p + "self_attn.q_a_layernorm.weight", {rq}, false);
        add(p + "self_attn.q_b_proj.weight", {HQK, rq}, true);
      } else {
        add(p + "self_attn.q_proj.weight", {HQK, C}, true);
      }
      add(p + "self_attn.kv_a_proj_with_mqa.weight", {r + R, C}, true);
      add(p + "self_attn.kv_a_layernorm.weight", {r}, false);
      add(p + "self_attn.kv_b_proj.weight", {2 * HD, r}, true);
    } else if (config_.layer_softmax_free(l)) {  // every head its own keys (G = H); the gates after o_proj
      add(p + "self_attn.q_proj.weight", {HD, C}, true);
      add(p + "self_attn.k_proj.weight", {HD, C}, true);
      add(p + "self_attn.v_proj.weight", {HD, C}, true);
    } else {
      add(p + "self_attn.q_proj.weight", {HD, C}, true);
      add(p + "self_attn.k_proj.weight", {GD, C}, true);
      add(p + "self_attn.v_proj.weight", {GD, C}, true);
    }
    add(p + "self_attn.o_proj.weight", {C, HD}, true);
    const int64_t H = config_.heads;
    switch (config_.kind_of(l)) {  // the gates (linear_ops.h's legend)
      case AttentionKind::mamba2:
        add(p + "self_attn.dt_proj.weight", {H, C}, true);
        add(p + "self_attn.dt_bias", {H}, false);
        add(p + "self_attn.A_log", {H}, false);
        add(p + "self_attn.D", {H}, false);
        break;
      case AttentionKind::deltanet: add(p + "self_attn.b_proj.weight", {H, C}, true); break;
      case AttentionKind::gated_deltanet:
        add(p + "self_attn.b_proj.weight", {H, C}, true);
        add(p + "self_attn.a_proj.weight", {H, C}, true);
        add(p + "self_attn.dt_bias", {H}, false);
        add(p + "self_attn.A_log", {H}, false);
        break;
      default: break;
    }
    if (config_.mlp) {
      add(p + "post_attention_layernorm.weight", {C}, false);
      add(p + "mlp.gate_proj.weight", {F, C}, true);
      add(p + "mlp.up_proj.weight", {F, C}, true);
      add(p + "mlp.down_proj.weight", {C, F}, true);
    }
  }
  add("model.norm.weight", {C}, false);
  weights_ = FloatArena(total_);
  grads_ = FloatArena(total_);
}

const ParamView* Model::find(const std::string& name) const {
  for (const ParamView& v : views_)
    if (v.name == name) return &v;
  return nullptr;
}

ModelTensors Model::tensors_of(float* base) const {
  auto at = [&](const std::string& name) -> float* {
    const ParamView* v = find(name);
    return v ? base + v->offset : nullptr;
  };
  ModelTensors t;
  t.embed = at("model.embed_tokens.weight");
  for (int l = 0; l < config_.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.layers.push_back({at(p + "input_layernorm.weight"), at(p + "self_attn.q_proj.weight"),
                        at(p + "self_attn.k_proj.weight"), at(p + "self_attn.v_proj.weight"),
                        at(p + "self_attn.o_proj.weight"), at(p + "post_attention_layernorm.weight"),
                        at(p + "mlp.gate_proj.weight"), at(p + "mlp.up_proj.weight"), at(p + "mlp.down_proj.weight"),
                        at(p + "self_attn.q_a_proj.weight"), at(p + "self_attn.q_a_layernorm.weight"),
                        at(p + "self_attn.q_b_proj.weight"), at(p + "self_attn.kv_a_proj_with_mqa.weight"),
                        at(p + "self_attn.kv_a_layernorm.weight"), at(p + "self_attn.kv_b_proj.weight"),
                        at(p + "self_attn.b_proj.weight"),
                        config_.kind_of(l) == AttentionKind::mamba2 ? at(p + "self_attn.dt_proj.weight")
                                                                   : at(p + "self_attn.a_proj.weight"),
                        at(p + "self_attn.dt_bias"), at(p + "self_attn.A_log"), at(p + "self_attn.D")});
  }
  t.final_norm = at("model.norm.weight");
  return t;
}

ModelTensors Model::weight_tensors() { return tensors_of(weights_.data()); }
ModelTensors Model::grad_tensors() { return tensors_of(grads_.data()); }

// ================================ initialisation =================================================

void Model::init_weights(uint64_t seed) {
  Rng rng(seed);
  // Box–Muller from the portable generator (rng.h), so a seed means the same weights everywhere.
  auto normal = [&rng]() {
    const double u1 = (double(rng.next_u64() >> 11) + 1.0) * 0x1.0p-53, u2 = double(rng.next_u64() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  };
  const double std_dev = 0.02, out_std = 0.02 / std::sqrt(2.0 * config_.layers);
  weights_.zero();
  for (const ParamView& v : views_) {
    float* w = weights_.data() + v.offset;
    auto ends_with = [&](const char* tail) {
      const std::string t = tail;
      return v.name.size() >= t.size() && v.name.compare(v.name.size() - t.size(), t.size(), t) == 0;
    };
    // the gates' vectors where the engine's seeded layer has them (linear_layer.cpp)
    if (ends_with(".dt_bias")) {
      std::fill(w, w + v.size, float(std::log(std::exp(1.0) - 1.0)));  // softplus(b) = 1
      continue;
    }
    if (ends_with(".A_log")) {
      for (size_t h = 0; h < v.size; ++h)
        w[h] = float(std::log(-std::log(linear_decay_schedule(int(h), int(v.size)))));  // −exp(A_log) = log γ_h
      continue;
    }
    if (v.shape.size() == 1) {  // norm weights and D
      std::fill(w, w + v.size, 1.0f);
      continue;
    }
    const bool output_proj = v.name.find("o_proj") != std::string::npos || v.name.find("down_proj") != std::string::npos;
    // Without a softmax the heads' output is a product q·k·v of three projections (no softmax to turn
    // small scores into a mean): at 0.02 it starts near 0 and the decayed kinds sit on that saddle for
    // hundreds of steps, so q, k and v start at nn.Linear's scale 1/√C instead.
    const bool qkv = v.name.find("self_attn.q_proj") != std::string::npos ||
                     v.name.find("self_attn.k_proj") != std::string::npos ||
                     v.name.find("self_attn.v_proj") != std::string::npos;
    const double s = output_proj ? out_std
                     : qkv && config_.layer_softmax_free(layer_of(v.name)) ? 1.0 / std::sqrt(double(config_.d_model))
                                                      : std_dev;
    for (size_t i = 0; i < v.size; ++i) w[i] = float(s * normal());
  }
}

// ================================ activations ====================================================

Activations Model::make_activations(int B, int T) const {
  // Widths of q, k, v and the attention output: grouped H·D, G·D, G·D, H·D; MLA H·(D+R), H·(D+R), H·D, H·D.
  const bool mla = config_.mla();
  const size_t BT = size_t(B) * T, C = config_.d_model, HD = size_t(config_.heads) * config_.head_dim(),
               QW = size_t(config_.heads) * config_.qk_head_dim(),
               KW = size_t(config_.kv_heads()) * config_.qk_head_dim(),
               VW = size_t(config_.kv_heads()) * config_.head_dim(), F = config_.ffn(), V = config_.vocab_size,
               L = config_.layers, HTT = size_t(B) * config_.heads * T * T, r = config_.kv_lora_rank,
               rq = config_.q_lora_rank, R = config_.rope_head_dim;
  // First pass counts, second pass hands out pointers: one arena, every block 64-byte aligned.
  Activations a;
  a.B = B, a.T = T;
  a.ids.assign(BT, 0);
  a.targets.assign(BT, -1);
  size_t total = 0;
  std::vector<std::pair<float**, size_t>> plan;
  auto take = [&](float*& p, size_t n) { plan.push_back({&p, n}), total += round16(n); };
  a.x.resize(L + 1), a.ln1.resize(L), a.rstd1.resize(L), a.q.resize(L), a.k.resize(L), a.v.resize(L);
  a.probs.resize(L), a.atty.resize(L), a.x_mid.resize(L);
  a.ln2.assign(L, nullptr), a.rstd2.assign(L, nullptr), a.gate.assign(L, nullptr), a.up.assign(L, nullptr),
      a.swi.assign(L, nullptr);
  for (auto* m : {&a.cq_raw, &a.cq, &a.rstd_q, &a.ckv_raw, &a.ckv, &a.rstd_kv, &a.kpe, &a.kvb, &a.gate_b, &a.gate_s})
    m->assign(L, nullptr);
  auto gate_b = [&](size_t l) {
    const AttentionKind k = config_.kind_of(int(l));
    return k == AttentionKind::deltanet || k == AttentionKind::gated_deltanet;
  };
  auto gate_s = [&](size_t l) {
    const AttentionKind k = config_.kind_of(int(l));
    return k == AttentionKind::mamba2 || k == AttentionKind::gated_deltanet;
  };
  bool any_gate_b = false, any_gate_s = false;
  for (size_t l = 0; l < L; ++l) any_gate_b = any_gate_b || gate_b(l), any_gate_s = any_gate_s || gate_s(l);
  const size_t H = config_.heads;
  for (size_t l = 0; l <= L; ++l) take(a.x[l], BT * C);
  for (size_t l = 0; l < L; ++l) {
    take(a.ln1[l], BT * C), take(a.rstd1[l], BT), take(a.q[l], BT * QW), take(a.k[l], BT * KW), take(a.v[l], BT * VW);
    take(a.probs[l], HTT), take(a.atty[l], BT * HD), take(a.x_mid[l], BT * C);
    if (mla) {
      if (rq > 0) take(a.cq_raw[l], BT * rq), take(a.cq[l], BT * rq), take(a.rstd_q[l], BT);
      take(a.ckv_raw[l], BT * r), take(a.ckv[l], BT * r), take(a.rstd_kv[l], BT), take(a.kpe[l], BT * R);
      take(a.kvb[l], BT * 2 * HD);
    }
    if (gate_b(l)) take(a.gate_b[l], BT * H);
    if (gate_s(l)) take(a.gate_s[l], BT * H);
    if (config_.mlp) take(a.ln2[l], BT * C), take(a.rstd2[l], BT), take(a.gate[l], BT * F), take(a.up[l], BT * F),
        take(a.swi[l], BT * F);
  }
  take(a.lnf, BT * C), take(a.rstdf, BT), take(a.logits, BT * V), take(a.out_probs, BT * V);
  take(a.dresid, BT * C), take(a.dln, BT * C), take(a.dq, BT * QW), take(a.dk, BT * KW), take(a.dv, BT * VW);
  take(a.datty, BT * HD), take(a.dlogits, BT * V);
  if (mla) {
    if (rq > 0) take(a.dcq, BT * rq), take(a.dcq_raw, BT * rq);
    take(a.dckv, BT * r), take(a.dckv_raw, BT * r), take(a.dkpe, BT * R), take(a.dkvb, BT * 2 * HD);
  }
  if (any_gate_b) take(a.dgate_b, BT * H);
  if (any_gate_s) take(a.dgate_s, BT * H);
  if (config_.mlp) take(a.dgate, BT * F), take(a.dup, BT * F), take(a.dswi, BT * F);
  a.memory = FloatArena(total);
  size_t offset = 0;
  for (auto& [p, n] : plan) *p = a.memory.data() + offset, offset += round16(n);
  return a;
}

// ================================ MLA ============================================================
// The attention of one MLA layer from a.ln1[l] to a.atty[l] [BT, H·D] and a.probs[l], and its backward
// from a.datty to a.dln (accumulated) and the layer's weight gradients. The order of ops.h calls is
// Hugging Face's DeepseekV2Attention (naive form: keys and values built per head).

void Model::mla_forward(Activations& a, int l, const LayerTensors& lw) const {
  const int B = a.B, T = a.T, BT = B * T, C = config_.d_model, H = config_.heads, D = config_.head_dim(),
            R = config_.rope_head_dim, r = config_.kv_lora_rank, rq = config_.q_lora_rank, Dqk = D + R;
  const float theta = config_.rope_theta, eps = latent_norm_eps;
  if (rq > 0) {
    linear_forward(a.cq_raw[l], a.ln1[l], lw.q_a, nullptr, BT, C, rq);
    ops::rmsnorm_forward(a.cq[l], a.rstd_q[l], a.cq_raw[l], lw.q_a_norm, BT, rq, eps);
    linear_forward(a.q[l], a.cq[l], lw.q_b, nullptr, BT, rq, H * Dqk);
  } else {
    linear_forward(a.q[l], a.ln1[l], lw.wq, nullptr, BT, C, H * Dqk);
  }
  // kv_a_proj_with_mqa's first r rows make c_KV, its last R rows k_pe
  linear_forward(a.ckv_raw[l], a.ln1[l], lw.kv_a, nullptr, BT, C, r);
  linear_forward(a.kpe[l], a.ln1[l], lw.kv_a + size_t(r) * C, nullptr, BT, C, R);
  ops::rmsnorm_forward(a.ckv[l], a.rstd_kv[l], a.ckv_raw[l], lw.kv_a_norm, BT, r, eps);
  linear_forward(a.kvb[l], a.ckv[l], lw.kv_b, nullptr, BT, r, 2 * H * D);
  ops::rope_interleaved_forward(a.q[l], B, T, H, Dqk, D, R, theta, 0);
  ops::rope_interleaved_forward(a.kpe[l], B, T, 1, R, 0, R, theta, 0);
  ops::mla_kv_forward(a.k[l], a.v[l], a.kvb[l], a.kpe[l], BT, H, D, R, D);
  ops::AttentionOptions options;
  options.window = config_.window_of(l);
  ops::attention_forward_general(a.atty[l], a.probs[l], a.q[l], a.k[l], a.v[l], B, T, H, H, Dqk, D, options);
}

void Model::mla_backward(Activations& a, int l, const LayerTensors& lw, const LayerTensors& lg) const {
  const int B = a.B, T = a.T, BT = B * T, C = config_.d_model, H = config_.heads, D = config_.head_dim(),
            R = config_.rope_head_dim, r = config_.kv_lora_rank, rq = config_.q_lora_rank, Dqk = D + R;
  const float theta = config_.rope_theta;
  auto zero = [](float* p, size_t n) { std::memset(p, 0, n * sizeof(float)); };
  zero(a.dq, size_t(BT) * H * Dqk), zero(a.dk, size_t(BT) * H * Dqk), zero(a.dv, size_t(BT) * H * D);
  ops::AttentionOptions options;
  options.window = config_.window_of(l);
  ops::attention_backward_general(a.dq, a.dk, a.dv, a.datty, a.probs[l], a.q[l], a.k[l], a.v[l], B, T, H, H, Dqk, D,
                                  options);
  zero(a.dkvb, size_t(BT) * 2 * H * D), zero(a.dkpe, size_t(BT) * R);
  ops::mla_kv_backward(a.dkvb, a.dkpe, a.dk, a.dv, BT, H, D, R, D);
  ops::rope_interleaved_backward(a.dkpe, B, T, 1, R, 0, R, theta, 0);
  ops::rope_interleaved_backward(a.dq, B, T, H, Dqk, D, R, theta, 0);
  zero(a.dckv, size_t(BT) * r);
  linear_backward(a.dckv, lg.kv_b, nullptr, a.dkvb, a.ckv[l], lw.kv_b, BT, r, 2 * H * D);
  zero(a.dckv_raw, size_t(BT) * r);
  ops::rmsnorm_backward(a.dckv_raw, lg.kv_a_norm, a.dckv, a.ckv_raw[l], lw.kv_a_norm, a.rstd_kv[l], BT, r);
  linear_backward(a.dln, lg.kv_a, nullptr, a.dckv_raw, a.ln1[l], lw.kv_a, BT, C, r);
  linear_backward(a.dln, lg.kv_a + size_t(r) * C, nullptr, a.dkpe, a.ln1[l], lw.kv_a + size_t(r) * C, BT, C, R);
  if (rq > 0) {
    zero(a.dcq, size_t(BT) * rq);
    linear_backward(a.dcq, lg.q_b, nullptr, a.dq, a.cq[l], lw.q_b, BT, rq, H * Dqk);
    zero(a.dcq_raw, size_t(BT) * rq);
    ops::rmsnorm_backward(a.dcq_raw, lg.q_a_norm, a.dcq, a.cq_raw[l], lw.q_a_norm, a.rstd_q[l], BT, rq);
    linear_backward(a.dln, lg.q_a, nullptr, a.dcq_raw, a.ln1[l], lw.q_a, BT, C, rq);
  } else {
    linear_backward(a.dln, lg.wq, nullptr, a.dq, a.ln1[l], lw.wq, BT, C, H * Dqk);
  }
}

// ================================ without a softmax ==============================================
// q, k, v and the gates' inputs from a.ln1[l], then linear_ops.h's layer to a.atty[l] and a.probs[l]
// (each head's explicit matrix M); the backward from a.datty to a.dln (accumulated) and the weights.

void Model::linear_kind_forward(Activations& a, int l, const LayerTensors& lw) const {
  const int B = a.B, T = a.T, BT = B * T, C = config_.d_model, H = config_.heads, D = config_.head_dim();
  linear_forward(a.q[l], a.ln1[l], lw.wq, nullptr, BT, C, H * D);
  linear_forward(a.k[l], a.ln1[l], lw.wk, nullptr, BT, C, H * D);
  linear_forward(a.v[l], a.ln1[l], lw.wv, nullptr, BT, C, H * D);
  if (a.gate_b[l]) linear_forward(a.gate_b[l], a.ln1[l], lw.b_proj, nullptr, BT, C, H);
  if (a.gate_s[l]) linear_forward(a.gate_s[l], a.ln1[l], lw.step_proj, nullptr, BT, C, H);
  linear_ops::layer_forward(config_.kind_of(l), a.atty[l], a.probs[l], a.q[l], a.k[l], a.v[l], a.gate_b[l],
                            a.gate_s[l], {lw.dt_bias, lw.a_log, lw.d_skip}, B, T, H, D);
}

void Model::linear_kind_backward(Activations& a, int l, const LayerTensors& lw, const LayerTensors& lg) const {
  const int B = a.B, T = a.T, BT = B * T, C = config_.d_model, H = config_.heads, D = config_.head_dim();
  linear_ops::layer_backward(config_.kind_of(l), a.dq, a.dk, a.dv, a.dgate_b, a.dgate_s,
                             {lg.dt_bias, lg.a_log, lg.d_skip}, a.datty, a.q[l], a.k[l], a.v[l], a.gate_b[l],
                             a.gate_s[l], {lw.dt_bias, lw.a_log, lw.d_skip}, B, T, H, D);
  linear_backward(a.dln, lg.wq, nullptr, a.dq, a.ln1[l], lw.wq, BT, C, H * D);
  linear_backward(a.dln, lg.wk, nullptr, a.dk, a.ln1[l], lw.wk, BT, C, H * D);
  linear_backward(a.dln, lg.wv, nullptr, a.dv, a.ln1[l], lw.wv, BT, C, H * D);
  if (a.gate_b[l]) linear_backward(a.dln, lg.b_proj, nullptr, a.dgate_b, a.ln1[l], lw.b_proj, BT, C, H);
  if (a.gate_s[l]) linear_backward(a.dln, lg.step_proj, nullptr, a.dgate_s, a.ln1[l], lw.step_proj, BT, C, H);
}

// ================================ forward ========================================================

float Model::forward(Activations& a, const int32_t* ids, const int32_t* targets) const {
  forward_begin(a, ids, targets);
  for (int l = 0; l < config_.layers; ++l) forward_layer(a, l);
  return forward_end(a, targets != nullptr);
}

void Model::forward_begin(Activations& a, const int32_t* ids, const int32_t* targets) const {
  const int BT = a.B * a.T, C = config_.d_model;
  const ModelTensors w = tensors_of(const_cast<float*>(weights_.data()));
  std::copy(ids, ids + BT, a.ids.begin());
  if (targets) std::copy(targets, targets + BT, a.targets.begin());
  else std::fill(a.targets.begin(), a.targets.end(), -1);
  ops::embedding_forward(a.x[0], a.ids.data(), w.embed, BT, C);
}

void Model::forward_layer(Activations& a, int l) const {
  const int B = a.B, T = a.T, BT = B * T, C = config_.d_model, H = config_.heads, G = config_.groups,
            D = config_.head_dim(), F = config_.ffn();
  const float eps = config_.rms_norm_eps, theta = config_.rope_theta;
  const ModelTensors w = tensors_of(const_cast<float*>(weights_.data()));
  const LayerTensors& lw = w.layers[l];
  // attention block
  ops::rmsnorm_forward(a.ln1[l], a.rstd1[l], a.x[l], lw.attn_norm, BT, C, eps);
  ops::AttentionOptions window;
  window.window = config_.window_of(l);
  if (config_.mla()) {
    mla_forward(a, l, lw);
  } else if (config_.layer_softmax_free(l)) {
    linear_kind_forward(a, l, lw);
  } else {
    linear_forward(a.q[l], a.ln1[l], lw.wq, nullptr, BT, C, H * D);
    linear_forward(a.k[l], a.ln1[l], lw.wk, nullptr, BT, C, G * D);
    linear_forward(a.v[l], a.ln1[l], lw.wv, nullptr, BT, C, G * D);
    ops::rope_forward(a.q[l], B, T, H, D, theta, 0);
    ops::rope_forward(a.k[l], B, T, G, D, theta, 0);
    if (window.window > 0) ops::attention_forward_general(a.atty[l], a.probs[l], a.q[l], a.k[l], a.v[l], B, T, H, G, D, D, window);
    else ops::attention_forward(a.atty[l], a.probs[l], a.q[l], a.k[l], a.v[l], B, T, H, G, D);
  }
  linear_forward(a.x_mid[l], a.atty[l], lw.wo, nullptr, BT, H * D, C);
  ops::residual_forward(a.x_mid[l], a.x_mid[l], a.x[l], BT * C);
  if (!config_.mlp) {
    std::copy(a.x_mid[l], a.x_mid[l] + size_t(BT) * C, a.x[l + 1]);
    return;
  }
  // MLP block
  ops::rmsnorm_forward(a.ln2[l], a.rstd2[l], a.x_mid[l], lw.mlp_norm, BT, C, eps);
  linear_forward(a.gate[l], a.ln2[l], lw.gate, nullptr, BT, C, F);
  linear_forward(a.up[l], a.ln2[l], lw.up, nullptr, BT, C, F);
  ops::swiglu_forward(a.swi[l], a.gate[l], a.up[l], BT, F);
  linear_forward(a.x[l + 1], a.swi[l], lw.down, nullptr, BT, F, C);
  ops::residual_forward(a.x[l + 1], a.x[l + 1], a.x_mid[l], BT * C);
}

float Model::forward_end(Activations& a, bool scored) const {
  const int BT = a.B * a.T, C = config_.d_model, V = config_.vocab_size;
  const ModelTensors w = tensors_of(const_cast<float*>(weights_.data()));
  ops::rmsnorm_forward(a.lnf, a.rstdf, a.x[config_.layers], w.final_norm, BT, C, config_.rms_norm_eps);
  linear_forward(a.logits, a.lnf, w.embed, nullptr, BT, C, V);  // tied output embedding
  if (!scored) return 0.0f;
  return ops::crossentropy_forward(a.out_probs, a.logits, a.targets.data(), BT, V);
}

// ================================ backward =======================================================

namespace {
void zero(float* p, size_t n) { std::memset(p, 0, n * sizeof(float)); }
}  // namespace

void Model::backward(Activations& a, float* grad_arena) {
  backward_begin(a, grad_arena);
  for (int l = config_.layers - 1; l >= 0; --l) backward_layer(a, l, grad_arena);
  backward_end(a, grad_arena);
}

// loss → logits → final norm; dresid carries the residual stream's gradient down the blocks
void Model::backward_begin(Activations& a, float* grad_arena) {
  const int BT = a.B * a.T, C = config_.d_model, V = config_.vocab_size;
  const ModelTensors w = weight_tensors();
  const ModelTensors g = tensors_of(grad_arena ? grad_arena : grads_.data());
  zero(a.dlogits, size_t(BT) * V);
  ops::crossentropy_backward(a.dlogits, a.out_probs, a.targets.data(), BT, V);
  zero(a.dln, size_t(BT) * C);
  linear_backward(a.dln, g.embed, nullptr, a.dlogits, a.lnf, w.embed, BT, C, V);
  zero(a.dresid, size_t(BT) * C);
  ops::rmsnorm_backward(a.dresid, g.final_norm, a.dln, a.x[config_.layers], w.final_norm, a.rstdf, BT, C);
}

void Model::backward_layer(Activations& a, int l, float* grad_arena) {
  const int B = a.B, T = a.T, BT = B * T, C = config_.d_model, H = config_.heads, G = config_.groups,
            D = config_.head_dim(), F = config_.ffn();
  const float theta = config_.rope_theta;
  const ModelTensors w = weight_tensors();
  const ModelTensors g = tensors_of(grad_arena ? grad_arena : grads_.data());
  const LayerTensors& lw = w.layers[l];
  const LayerTensors& lg = g.layers[l];
  if (config_.mlp) {
    // x[l+1] = x_mid + down(swi): the residual passes dresid through unchanged, the branch gets it too
    zero(a.dswi, size_t(BT) * F);
    linear_backward(a.dswi, lg.down, nullptr, a.dresid, a.swi[l], lw.down, BT, F, C);
    zero(a.dgate, size_t(BT) * F), zero(a.dup, size_t(BT) * F);
    ops::swiglu_backward(a.dgate, a.dup, a.dswi, a.gate[l], a.up[l], BT, F);
    zero(a.dln, size_t(BT) * C);
    linear_backward(a.dln, lg.gate, nullptr, a.dgate, a.ln2[l], lw.gate, BT, C, F);
    linear_backward(a.dln, lg.up, nullptr, a.dup, a.ln2[l], lw.up, BT, C, F);
    ops::rmsnorm_backward(a.dresid, lg.mlp_norm, a.dln, a.x_mid[l], lw.mlp_norm, a.rstd2[l], BT, C);
  }
  // x_mid = x[l] + o_proj(attention(...))
  zero(a.datty, size_t(BT) * H * D);
  linear_backward(a.datty, lg.wo, nullptr, a.dresid, a.atty[l], lw.wo, BT, H * D, C);
  zero(a.dln, size_t(BT) * C);
  if (config_.mla()) {
    mla_backward(a, l, lw, lg);
  } else if (config_.layer_softmax_free(l)) {
    linear_kind_backward(a, l, lw, lg);
  } else {
    zero(a.dq, size_t(BT) * H * D), zero(a.dk, size_t(BT) * G * D), zero(a.dv, size_t(BT) * G * D);
    ops::AttentionOptions window;
    window.window = config_.window_of(l);
    ops::attention_backward_general(a.dq, a.dk, a.dv, a.datty, a.probs[l], a.q[l], a.k[l], a.v[l], B, T, H, G, D, D,
                                    window);
    ops::rope_backward(a.dq, B, T, H, D, theta, 0);
    ops::rope_backward(a.dk, B, T, G, D, theta, 0);
    linear_backward(a.dln, lg.wq, nullptr, a.dq, a.ln1[l], lw.wq, BT, C, H * D);
    linear_backward(a.dln, lg.wk, nullptr, a.dk, a.ln1[l], lw.wk, BT, C, G * D);
    linear_backward(a.dln, lg.wv, nullptr, a.dv, a.ln1[l], lw.wv, BT, C, G * D);
  }
  ops::rmsnorm_backward(a.dresid, lg.attn_norm, a.dln, a.x[l], lw.attn_norm, a.rstd1[l], BT, C);
}

void Model::backward_end(Activations& a, float* grad_arena) {
  const ModelTensors g = tensors_of(grad_arena ? grad_arena : grads_.data());
  ops::embedding_backward(g.embed, a.dresid, a.ids.data(), a.B * a.T, config_.d_model);
}

}  // namespace attnscope::train
