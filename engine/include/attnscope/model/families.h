// families.h — the checkpoint families attnscope opens: one entry per config.json model_type.
//
// This is the loader's own table: parse_model_config (config.h) finds a config's model_type here and
// reads it with that entry's reader, and supported_model_types() lists these entries. `attnscope
// families` prints it and docs/real-models.md's table is generated from that output
// (scripts/gen-docs.sh), so what the manual says is what the loader does. tests/model/test_families.cpp
// holds each entry's `config_keys` to the keys its reader actually looks up on the fixture checkpoints,
// and its `architecture` to their config.json.
#pragma once
#include <string_view>
#include <vector>

namespace attnscope::model {

struct ModelFamily {
  std::string_view model_type;    // config.json's "model_type", e.g. "llama"
  std::string_view name;          // the family as people call it, e.g. "Llama"
  std::string_view architecture;  // config.json's "architectures" entry, e.g. "LlamaForCausalLM"
  std::string_view attention;     // MHA | GQA | MQA | MLA, and which keys choose among them
  std::string_view positions;     // how positions enter (learned, RoPE with its base, NoPE layers, …)
  std::string_view windows;       // sliding-window layers and how config.json places them ("" = none)
  std::string_view extras;        // what else differs from Llama: soft-capping, q/k norms, MoE, … ("" = none)
  std::string_view tensors;       // the weight names read from the safetensors files
  // Every top-level config.json key the family's reader looks at: read into the network, or checked
  // and refused by name when it asks for something attnscope does not implement.
  std::vector<std::string_view> config_keys;
  std::vector<std::string_view> examples;  // Hugging Face checkpoints of the family
};

// The families, in the order `attnscope families` lists them.
const std::vector<ModelFamily>& model_families();

// The entry for a model_type, or nullptr.
const ModelFamily* find_model_family(std::string_view model_type);

}  // namespace attnscope::model
