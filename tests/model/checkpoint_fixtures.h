// checkpoint_fixtures.h — the tiny checkpoints of tests/fixtures/models (made by make_model_fixtures.py) and
// their PyTorch reference outputs, for the model tests.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/config.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "test_paths.h"
#include "test_tmp.h"

namespace attnscope::test {

// What parse_model_config says of a config.json (as "cfg/config.json"), or "" when it takes it.
inline std::string config_refusal(const nlohmann::json& j) {
  return error_of([&] { (void)model::parse_model_config(j.dump(), "cfg/config.json"); });
}

// What model::open says of a checkpoint folder, or "" when it opens.
inline std::string open_error(const std::filesystem::path& dir) {
  return error_of([&] { (void)model::open(dir); });
}

// Rewrites a checkpoint folder's config.json through `edit`.
inline void edit_config(const std::filesystem::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(attnscope::read_file(dir / "config.json", 1 << 20));
  edit(j);
  attnscope::write_file_atomic(dir / "config.json", j.dump(2));
}

// Rewrites a safetensors file's JSON header through `edit`, keeping its data area.
inline void rewrite_header(const std::filesystem::path& file, const std::function<void(nlohmann::json&)>& edit) {
  const std::string bytes = attnscope::read_file(file, 1 << 26);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[size_t(i)]);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, size_t(n)));
  edit(header);
  const std::string text = header.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(text.size()) >> (8 * i)) & 0xFF);
  attnscope::write_file_atomic(file, out + text + bytes.substr(size_t(8 + n)));
}


inline std::filesystem::path model_fixture(const std::string& name) {
  return std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "models" / name;
}

// The token ids of the long-input tests (issue 38 item 6: the worker, the command line and the window, past
// the stack's 2048 tokens): T ids of the fixtures' 64-token vocabulary, not periodic over a head's window.
inline std::vector<int32_t> long_fixture_ids(int T) {
  std::vector<int32_t> ids;
  for (int t = 0; t < T; ++t) ids.push_back(int32_t((t * 7 + t / 13) % 64));
  return ids;
}

// Every checkpoint fixture, one per family variant.
inline const std::vector<std::string>& checkpoint_fixtures() {
  static const std::vector<std::string> names{"gpt2_prefix_f32",           "gpt2_noprefix_f16_untied",
                                              "llama_gqa_bf16_sharded",    "llama_mqa_headdim_tied_f32",
                                              "qwen2_gqa",                 "mistral_mha_f32",
                                              "qwen3_gqa_bf16_tied",       "phi3_gqa_f16_sharded",
                                              "phi3_mha_long_f32",
                                              "smollm3_nope_bf16",         "gemma2_softcap_f32",
                                              "gemma3_local_global_bf16",
                                              // RoPE as each config says it (make_model_fixtures.py)
                                              "llama32_1b_llama3rope_bf16", "llama_dynamic_f32",
                                              "qwen3_yarn_bf16",           "qwen2_yarn_notrunc_f16",
                                              "phi35_longrope_bf16",       "phi4mini_partial_longrope_bf16",
                                              "gemma3_linear_global_bf16",
                                              // GPT-NeoX, OLMo 2, multimodal containers (make_dense_fixtures.py)
                                              "pythia160m_parallel_f16",   "olmo2_postnorm_f32",
                                              "gemma3_4b_container_bf16",  "mistral_small31_container_bf16",
                                              "ministral3_3b_container_bf16"};
  return names;
}

inline std::vector<int32_t> fixture_ids(const std::string& name) {
  const auto j = nlohmann::json::parse(read_file(model_fixture(name) / "ids.json", 1 << 20));
  return j["ids"].get<std::vector<int32_t>>();
}

// Token ids as the command line's --ids takes them: "3,1,4".
inline std::string ids_arg(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

// The further inputs of a fixture ("more" in ids.json; references "more.K.attentions", "more.K.logits").
inline std::vector<std::vector<int32_t>> fixture_more_ids(const std::string& name) {
  const auto j = nlohmann::json::parse(read_file(model_fixture(name) / "ids.json", 1 << 20));
  if (!j.contains("more")) return {};
  return j["more"].get<std::vector<std::vector<int32_t>>>();
}

struct ReferenceTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// A tensor of the fixture's reference.safetensors ("attentions", "logits", "detail.q", …).
inline ReferenceTensor fixture_reference(const std::string& name, const std::string& tensor) {
  const SafetensorsFile f(model_fixture(name) / "reference.safetensors");
  const SafetensorsTensor* t = f.header().find(tensor);
  ReferenceTensor r;
  if (!t) return r;
  r.shape = t->shape;
  r.values.resize(size_t(t->count()));
  f.read_float32(*t, r.values.data(), false);
  return r;
}

// Copies a fixture folder to a fresh scratch folder, to break it in one way.
inline std::filesystem::path copy_fixture(const std::string& name, const std::string& scratch) {
  namespace fs = std::filesystem;
  const fs::path dir = attnscope::test::test_tmp() / "model_fixtures" / scratch;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  fs::copy(model_fixture(name), dir, fs::copy_options::recursive);
  return dir;
}

}  // namespace attnscope::test
