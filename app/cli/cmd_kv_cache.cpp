// cmd_kv_cache.cpp — `attnscope kv-cache`: KV-cache bytes of a model as MHA, GQA and MQA, and per layer
// type as the model is built (full, sliding window with sinks, MLA, and the fixed-size states of linear
// attention / Gated DeltaNet and Mamba-2 layers), as one JSON object.
//
//   attnscope kv-cache (--model NAME | --layers L --heads H --kv-heads G --head-dim D [--v-head-dim DV]) --seq N
//                      [--window W [--window-layers N] [--sinks K] | --kv-rank R [--rope-dim D]
//                       | --linear-layers N --linear-heads HV --linear-key-dim DK [--linear-key-heads HK]
//                         [--linear-value-dim DV] [--conv-kernel K]
//                       | --mamba-layers N --mamba-heads H --mamba-head-dim P --mamba-state S [--mamba-groups G]
//                         [--conv-kernel K]]
//                      [--batch B] [--dtype fp32|fp16|int8] [--memory-gib M]
// bytes = 2 × L × G × d_head × bytes per element × seq × batch, for G = H (mha), the model's G (gqa;
// for an MLA model the grouping its latent compares with, kv_cache.h gqa_kv_heads) and G = 1 (mqa), every layer full attention. "layer_types" gives the model's own layers: a preset's
// (assets/models.json), or the layout the flags build (they replace a preset's): --window W makes N
// layers (all L unless --window-layers N) hold at most W + K tokens, the rest full; --kv-rank R makes
// every layer MLA, caching R + D elements per token; --linear-layers N / --mamba-layers N make N of the L
// layers Gated DeltaNet / Mamba-2 layers (the rest full attention), each holding a fixed-size state whatever
// the length (kv_cache.h). Presets come from assets/models.json (kv_cache.h, assets.h).
#include <cstdio>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/attention/kv_cache.h"
#include "cli/commands.h"

namespace attnscope::cli {
namespace {

struct KvCacheOptions {
  std::string model, dtype = "fp16";
  int64_t layers = 0, heads = 0, kv_heads = 0, head_dim = 0, seq = 0, batch = 1;
  int64_t v_head_dim = 0, window = 0, window_layers = 0, sinks = 0, kv_rank = 0, rope_dim = 0;
  int64_t linear_layers = 0, linear_heads = 0, linear_key_heads = 0, linear_key_dim = 0, linear_value_dim = 0;
  int64_t mamba_layers = 0, mamba_heads = 0, mamba_head_dim = 0, mamba_state = 0, mamba_groups = 1, conv_kernel = 4;
  double memory_gib = 0;
  CLI::App* app = nullptr;
  bool given(const char* flag) const { return app->count(flag) > 0; }
};

nlohmann::json variant_json(const KvCacheVariant& v, bool memory_given) {
  nlohmann::json j = {{"kv_heads", v.kv_heads},
                      {"bytes_per_token", v.bytes_per_token},
                      {"bytes", v.bytes},
                      {"gib", v.gib},
                      {"attention_params", v.attention_params}};
  j["fits"] = memory_given ? nlohmann::json(v.fits) : nlohmann::json(nullptr);
  return j;
}

void run(const KvCacheOptions& o) {
  const char* custom_flags[] = {"--layers", "--heads", "--kv-heads", "--head-dim"};
  KvCacheInput in;
  nlohmann::json model = nullptr;
  if (o.given("--model")) {
    for (const char* flag : custom_flags)
      require(!o.given(flag), std::string("--model and ") + flag +
                                  " are exclusive: give a preset name or all four custom sizes");
    const std::vector<ModelPreset> presets = load_model_presets();
    const ModelPreset& preset = find_model_preset(presets, o.model);
    in = kv_cache_input(preset);
    model = {{"name", preset.name}, {"label", preset.label}, {"context", preset.context}, {"source", preset.source}};
  } else {
    for (const char* flag : custom_flags)
      require(o.given(flag), std::string("give --model NAME or all of --layers, --heads, --kv-heads, --head-dim (") +
                                 flag + " is missing)");
    in.layers = o.layers;
    in.heads = o.heads;
    in.kv_heads = o.kv_heads;
    in.head_dim = o.head_dim;
  }
  if (o.given("--v-head-dim")) {
    require(o.v_head_dim >= 1, "--v-head-dim must be a whole number of at least 1, got " + std::to_string(o.v_head_dim));
    in.v_head_dim = o.v_head_dim;
  }
  // The layer layout: the flags replace a preset's.
  for (const char* flag : {"--window-layers", "--sinks"})
    require(!o.given(flag) || o.given("--window"),
            std::string(flag) + " goes with a sliding window: give --window W too");
  require(!o.given("--rope-dim") || o.given("--kv-rank"), "--rope-dim is the width of MLA's RoPE key: give --kv-rank R too");
  for (const char* flag : {"--linear-heads", "--linear-key-heads", "--linear-key-dim", "--linear-value-dim"})
    require(!o.given(flag) || o.given("--linear-layers"),
            std::string(flag) + " describes Gated DeltaNet layers: give --linear-layers N too");
  for (const char* flag : {"--mamba-heads", "--mamba-head-dim", "--mamba-state", "--mamba-groups"})
    require(!o.given(flag) || o.given("--mamba-layers"), std::string(flag) + " describes Mamba-2 layers: give --mamba-layers N too");
  require(!o.given("--conv-kernel") || o.given("--linear-layers") || o.given("--mamba-layers"),
          "--conv-kernel is the width of a linear or Mamba-2 layer's convolution: give --linear-layers or --mamba-layers too");
  int layouts = 0;
  for (const char* flag : {"--window", "--kv-rank", "--linear-layers", "--mamba-layers"}) layouts += o.given(flag) ? 1 : 0;
  require(layouts <= 1, "--window, --kv-rank, --linear-layers and --mamba-layers are exclusive: a layout is sliding-window/full "
                        "layers, MLA layers, Gated DeltaNet/full layers or Mamba-2/full layers");
  if (o.given("--window")) {
    require(o.window >= 1, "--window must be at least 1 token, got " + std::to_string(o.window));
    require(o.sinks >= 0, "--sinks must be 0 or more tokens, got " + std::to_string(o.sinks));
    const int64_t windowed = o.given("--window-layers") ? o.window_layers : in.layers;
    require(windowed >= 1, "--window-layers must be at least 1, got " + std::to_string(windowed));
    in.layer_types = {KvLayerGroup{LayerKind::sliding, windowed, o.window, o.sinks, 0, 0, 0, 0, 0}};
    in.kv_lora_rank = in.rope_dim = 0;  // a preset's MLA widths go with its own layout
    if (windowed < in.layers) in.layer_types.push_back(KvLayerGroup{LayerKind::full, in.layers - windowed, 0, 0, 0, 0, 0, 0, 0});
  } else if (o.given("--kv-rank")) {
    require(o.kv_rank >= 1, "--kv-rank must be a whole number of at least 1, got " + std::to_string(o.kv_rank));
    require(o.rope_dim >= 0, "--rope-dim must be 0 or more, got " + std::to_string(o.rope_dim));
    in.layer_types = {KvLayerGroup{LayerKind::mla, in.layers, 0, 0, 0, 0, 0, 0, 0}};
    in.kv_lora_rank = o.kv_rank;
    in.rope_dim = o.rope_dim;
  } else if (o.given("--linear-layers") || o.given("--mamba-layers")) {
    // N of the L layers keep a fixed-size state (kv_cache.h), the others full attention.
    const bool linear = o.given("--linear-layers");
    const std::vector<const char*> need = linear ? std::vector<const char*>{"--linear-heads", "--linear-key-dim"}
                                                 : std::vector<const char*>{"--mamba-heads", "--mamba-head-dim", "--mamba-state"};
    for (const char* flag : need)
      require(o.given(flag), std::string(linear ? "Gated DeltaNet layers need " : "Mamba-2 layers need ") + flag +
                                 (linear ? " (give --linear-heads HV --linear-key-dim DK; --linear-key-heads defaults to HV, "
                                           "--linear-value-dim to DK, --conv-kernel to 4)"
                                         : " (give --mamba-heads H --mamba-head-dim P --mamba-state S; --mamba-groups "
                                           "defaults to 1, --conv-kernel to 4)"));
    KvLayerGroup g;
    g.kind = linear ? LayerKind::linear : LayerKind::mamba2;
    g.layers = linear ? o.linear_layers : o.mamba_layers;
    g.state_heads = linear ? o.linear_heads : o.mamba_heads;
    g.key_heads = linear ? (o.given("--linear-key-heads") ? o.linear_key_heads : o.linear_heads) : o.mamba_groups;
    g.key_dim = linear ? o.linear_key_dim : o.mamba_state;
    g.value_dim = linear ? (o.given("--linear-value-dim") ? o.linear_value_dim : o.linear_key_dim) : o.mamba_head_dim;
    g.conv_kernel = o.conv_kernel;
    const char* layers_flag = linear ? "--linear-layers" : "--mamba-layers";
    require(g.layers >= 1 && g.layers <= in.layers, std::string(layers_flag) + " must be from 1 to the model's " +
                                                        std::to_string(in.layers) + " layers, got " + std::to_string(g.layers));
    const std::pair<int64_t, const char*> sizes[] = {
        {g.state_heads, linear ? "--linear-heads" : "--mamba-heads"},
        {g.key_heads, linear ? "--linear-key-heads" : "--mamba-groups"},
        {g.key_dim, linear ? "--linear-key-dim" : "--mamba-state"},
        {g.value_dim, linear ? "--linear-value-dim" : "--mamba-head-dim"},
        {g.conv_kernel, "--conv-kernel"}};
    for (const auto& [value, flag] : sizes)
      require(value >= 1, std::string(flag) + " must be a whole number of at least 1, got " + std::to_string(value));
    in.layer_types = {g};
    in.kv_lora_rank = in.rope_dim = 0;
    if (g.layers < in.layers) in.layer_types.push_back(KvLayerGroup{LayerKind::full, in.layers - g.layers, 0, 0, 0, 0, 0, 0, 0});
  }
  in.seq = o.seq;
  in.batch = o.batch;
  in.dtype = parse_element_type(o.dtype);
  in.memory_gib = o.memory_gib;
  if (o.given("--memory-gib"))
    require(o.memory_gib > 0, "--memory-gib must be more than 0, got " + std::to_string(o.memory_gib));
  const KvCacheReport r = kv_cache_report(in);  // validates every value

  const bool memory_given = o.given("--memory-gib");
  nlohmann::json rows = nlohmann::json::array();
  for (const KvLayerTypeRow& row : r.layer_types) {
    const bool state = is_state_kind(row.group.kind);
    nlohmann::json j = {{"type", to_string(row.group.kind)},
                        {"layers", row.group.layers},
                        {"elements_per_token_per_layer", row.elements_per_token},
                        {"bytes_per_token_per_layer", row.elements_per_token * bytes_per_element(in.dtype)},
                        {"bytes_per_token", row.bytes_per_token},
                        // A state holds no tokens: the same bytes at any seq.
                        {"tokens_cached", state ? nlohmann::json("state") : nlohmann::json(row.tokens)},
                        {"grows_with_seq", !state},
                        {"bytes", row.bytes},
                        {"gib", double(row.bytes) / double(int64_t(1) << 30)}};
    if (row.group.kind == LayerKind::sliding) {
      j["window"] = row.group.window;
      j["sinks"] = row.group.sinks;
    }
    if (state) {
      const bool linear = row.group.kind == LayerKind::linear;
      j[linear ? "value_heads" : "heads"] = row.group.state_heads;
      j[linear ? "key_heads" : "groups"] = row.group.key_heads;
      j[linear ? "key_dim" : "state"] = row.group.key_dim;
      j[linear ? "value_dim" : "head_dim"] = row.group.value_dim;
      j["conv_kernel"] = row.group.conv_kernel;
      j["recurrent_state_elements_per_layer"] = row.recurrent_elements;
      j["conv_state_elements_per_layer"] = row.conv_elements;
      j["state_elements_per_layer"] = row.state_elements;
      j["state_bytes_per_layer"] = row.state_bytes_per_layer;
    }
    rows.push_back(j);
  }
  nlohmann::json total = {{"bytes", r.bytes}, {"gib", r.gib}};
  total["fits"] = memory_given ? nlohmann::json(r.fits) : nlohmann::json(nullptr);
  nlohmann::json out = {
      {"model", model},
      {"layers", in.layers},
      {"heads", in.heads},
      {"kv_heads", in.kv_heads},
      {"head_dim", in.head_dim},
      {"seq", in.seq},
      {"batch", in.batch},
      {"dtype", to_string(in.dtype)},
      {"bytes_per_element", bytes_per_element(in.dtype)},
      {"memory_gib", memory_given ? nlohmann::json(in.memory_gib) : nlohmann::json(nullptr)},
      {"formula", "bytes = 2 x layers x kv_heads x head_dim x bytes_per_element x seq x batch"},
      {"mha", variant_json(r.mha, memory_given)},
      {"gqa", variant_json(r.gqa, memory_given)},
      {"mqa", variant_json(r.mqa, memory_given)},
      {"v_head_dim", in.v_head_dim > 0 ? in.v_head_dim : in.head_dim},
      {"kv_lora_rank", in.kv_lora_rank > 0 ? nlohmann::json(in.kv_lora_rank) : nlohmann::json(nullptr)},
      {"qk_rope_head_dim", in.kv_lora_rank > 0 ? nlohmann::json(in.rope_dim) : nlohmann::json(nullptr)},
      {"layer_formula", "elements per token per layer: full and sliding kv_heads x (head_dim + v_head_dim), "
                        "mla kv_lora_rank + qk_rope_head_dim; tokens cached: full and mla seq, sliding "
                        "min(seq, window + sinks); bytes = elements x bytes_per_element x layers x tokens x batch. "
                        "linear and mamba2 hold a state, not tokens: per layer heads x key_dim x value_dim (mamba2: heads x "
                        "head_dim x state) + conv_dim x conv_kernel, conv_dim = 2 x key_heads x key_dim + heads x value_dim "
                        "(mamba2: heads x head_dim + 2 x groups x state); bytes = state elements x bytes_per_element x layers "
                        "x batch, the same at any seq"},
      {"layer_types", rows},
      {"total", total},
  };
  std::printf("%s\n", out.dump(2).c_str());
}

void add_kv_cache_command(CLI::App& root) {
  auto options = std::make_shared<KvCacheOptions>();
  CLI::App* cmd = root.add_subcommand(
      "kv-cache",
      "KV-cache bytes of a model as MHA, GQA and MQA, and per layer type: full, sliding window, MLA, and the fixed-size "
      "state of Gated DeltaNet (linear) and Mamba-2 layers (one JSON object)");
  options->app = cmd;
  cmd->add_option("--model", options->model,
                  "A preset: gpt2-small | llama-2-7b | llama-2-70b | mistral-7b | falcon-7b | deepseek-v2 | deepseek-v3 | "
                  "gemma-2-9b | gemma-3-12b | gpt-oss-20b | qwen3-next-80b-a3b | granite-4.0-h-tiny (assets/models.json)");
  cmd->add_option("--layers", options->layers, "Layers L (custom model)");
  cmd->add_option("--heads", options->heads, "Query heads H (custom model)");
  cmd->add_option("--kv-heads", options->kv_heads, "Key/value heads G, dividing H (custom model)");
  cmd->add_option("--head-dim", options->head_dim, "Head width d_head (custom model)");
  cmd->add_option("--v-head-dim", options->v_head_dim, "Value width d_v when it differs from d_head (default d_head)");
  cmd->add_option("--window", options->window,
                  "Sliding window W in tokens: those layers cache at most W (+ sinks) tokens; replaces a preset's layout");
  cmd->add_option("--window-layers", options->window_layers,
                  "How many of the L layers use the window (default all); the others attend to every token");
  cmd->add_option("--sinks", options->sinks, "Sink tokens kept beside the window (StreamingLLM; default 0)");
  cmd->add_option("--kv-rank", options->kv_rank,
                  "MLA: every layer caches a latent of R elements per token instead of K and V; replaces a preset's layout");
  cmd->add_option("--rope-dim", options->rope_dim, "MLA: the shared RoPE key's width, cached beside the latent (default 0)");
  cmd->add_option("--linear-layers", options->linear_layers,
                  "How many of the L layers are linear attention / Gated DeltaNet layers, each keeping a fixed-size state "
                  "instead of a cache (the rest full attention); replaces a preset's layout");
  cmd->add_option("--linear-heads", options->linear_heads, "Gated DeltaNet: value heads, one d_k x d_v state each (linear_num_value_heads)");
  cmd->add_option("--linear-key-heads", options->linear_key_heads, "Gated DeltaNet: key heads of q and k (linear_num_key_heads; default the value heads)");
  cmd->add_option("--linear-key-dim", options->linear_key_dim, "Gated DeltaNet: key head width d_k (linear_key_head_dim)");
  cmd->add_option("--linear-value-dim", options->linear_value_dim, "Gated DeltaNet: value head width d_v (linear_value_head_dim; default d_k)");
  cmd->add_option("--mamba-layers", options->mamba_layers,
                  "How many of the L layers are Mamba-2 layers, each keeping a fixed-size state instead of a cache (the rest "
                  "full attention); replaces a preset's layout");
  cmd->add_option("--mamba-heads", options->mamba_heads, "Mamba-2: heads (mamba_n_heads)");
  cmd->add_option("--mamba-head-dim", options->mamba_head_dim, "Mamba-2: head width (mamba_d_head)");
  cmd->add_option("--mamba-state", options->mamba_state, "Mamba-2: state size d_state (mamba_d_state)");
  cmd->add_option("--mamba-groups", options->mamba_groups, "Mamba-2: groups of B and C (mamba_n_groups; default 1)");
  cmd->add_option("--conv-kernel", options->conv_kernel,
                  "Linear / Mamba-2: the short convolution's width; its last inputs are part of the state (default 4)");
  cmd->add_option("--seq", options->seq, "Tokens per sequence")->required();
  cmd->add_option("--batch", options->batch, "Sequences in the batch (default 1)");
  cmd->add_option("--dtype", options->dtype, "Element type: fp32 | fp16 (default) | int8");
  cmd->add_option("--memory-gib", options->memory_gib, "Memory to fit into, GiB; adds fits true/false per variant and to the total");
  cmd->callback([options] { run(*options); });
}

CommandRegistrar registrar(add_kv_cache_command);

}  // namespace
}  // namespace attnscope::cli
