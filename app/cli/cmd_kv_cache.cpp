// cmd_kv_cache.cpp — `attnscope kv-cache`: KV-cache bytes of a model as MHA, GQA and MQA, as one JSON object.
//
//   attnscope kv-cache (--model NAME | --layers L --heads H --kv-heads G --head-dim D) --seq N
//                      [--batch B] [--dtype fp32|fp16|int8] [--memory-gib M]
// bytes = 2 × L × G × d_head × bytes per element × seq × batch, for G = H (mha), the model's G (gqa)
// and G = 1 (mqa). Presets come from assets/models.json (kv_cache.h, assets.h).
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/attention/kv_cache.h"
#include "cli/commands.h"

namespace attnscope::cli {
namespace {

struct KvCacheOptions {
  std::string model, dtype = "fp16";
  int64_t layers = 0, heads = 0, kv_heads = 0, head_dim = 0, seq = 0, batch = 1;
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
  in.seq = o.seq;
  in.batch = o.batch;
  in.dtype = parse_element_type(o.dtype);
  in.memory_gib = o.memory_gib;
  if (o.given("--memory-gib"))
    require(o.memory_gib > 0, "--memory-gib must be more than 0, got " + std::to_string(o.memory_gib));
  const KvCacheReport r = kv_cache_report(in);  // validates every value

  const bool memory_given = o.given("--memory-gib");
  const nlohmann::json out = {
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
  };
  std::printf("%s\n", out.dump(2).c_str());
}

void add_kv_cache_command(CLI::App& root) {
  auto options = std::make_shared<KvCacheOptions>();
  CLI::App* cmd = root.add_subcommand("kv-cache", "KV-cache bytes of a model as MHA, GQA and MQA (one JSON object)");
  options->app = cmd;
  cmd->add_option("--model", options->model,
                  "A preset: gpt2-small | llama-2-7b | llama-2-70b | mistral-7b | falcon-7b (assets/models.json)");
  cmd->add_option("--layers", options->layers, "Layers L (custom model)");
  cmd->add_option("--heads", options->heads, "Query heads H (custom model)");
  cmd->add_option("--kv-heads", options->kv_heads, "Key/value heads G, dividing H (custom model)");
  cmd->add_option("--head-dim", options->head_dim, "Head width d_head (custom model)");
  cmd->add_option("--seq", options->seq, "Tokens per sequence")->required();
  cmd->add_option("--batch", options->batch, "Sequences in the batch (default 1)");
  cmd->add_option("--dtype", options->dtype, "Element type: fp32 | fp16 (default) | int8");
  cmd->add_option("--memory-gib", options->memory_gib, "Memory to fit into, GiB; adds fits true/false per variant");
  cmd->callback([options] { run(*options); });
}

CommandRegistrar registrar(add_kv_cache_command);

}  // namespace
}  // namespace attnscope::cli
