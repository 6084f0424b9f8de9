// Tests of the family table (families.h) against the loader and the fixture checkpoints: the table is
// what parse_model_config dispatches on, every family has a fixture whose config.json names the
// table's architecture, and each family's config_keys are exactly the keys its reader looks up.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/config.h"
#include "attnscope/model/families.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::model;
namespace fs = std::filesystem;

namespace {

// Every fixture checkpoint's config.json (tests/fixtures/models/*/config.json), by folder name.
std::map<std::string, nlohmann::json> fixture_configs() {
  std::map<std::string, nlohmann::json> configs;
  for (const auto& e : fs::directory_iterator(fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "models")) {
    const fs::path config = e.path() / "config.json";
    if (fs::exists(config)) configs[e.path().filename().string()] = nlohmann::json::parse(read_file(config, 1 << 20));
  }
  return configs;
}

// The keys the reader looks up on `config`, also when it refuses it.
std::set<std::string> keys_looked_up(const nlohmann::json& config) {
  std::vector<std::string> keys;
  try {
    parse_model_config(config.dump(), "fixture", &keys);
  } catch (const InputError&) {
  }
  return {keys.begin(), keys.end()};
}

std::string listed(const std::set<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

}  // namespace

TEST_CASE("families: the table is what the loader accepts, one entry per model_type") {
  const auto& families = model_families();
  REQUIRE(!families.empty());
  std::set<std::string_view> types;
  for (const ModelFamily& f : families) {
    CAPTURE(f.model_type);
    CHECK(types.insert(f.model_type).second);
    CHECK(find_model_family(f.model_type) == &f);
    CHECK(std::string(supported_model_types()).find(std::string(f.model_type)) != std::string::npos);
    CHECK(!f.name.empty());
    CHECK(!f.attention.empty());
    CHECK(!f.positions.empty());
    CHECK(!f.tensors.empty());
    CHECK(!f.examples.empty());
  }
  CHECK(find_model_family("bert") == nullptr);
  // A model_type outside the table is refused with the table's list.
  try {
    parse_model_config(R"({"model_type": "bert"})", "x");
    FAIL("bert was accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(supported_model_types()) != std::string::npos);
  }
}

TEST_CASE("families: every family has a fixture checkpoint, whose architectures names the table's") {
  const auto configs = fixture_configs();
  REQUIRE(configs.size() >= model_families().size());
  std::set<std::string> covered;
  for (const auto& entry : configs) {  // no structured binding: clang's CAPTURE cannot name one
    const auto& folder = entry.first;
    const auto& config = entry.second;
    CAPTURE(folder);
    const std::string type = config.at("model_type").get<std::string>();
    const ModelFamily* f = find_model_family(type);
    REQUIRE_MESSAGE(f != nullptr, "fixture model_type " << type << " has no entry in the family table");
    REQUIRE(config.contains("architectures"));
    CHECK(config["architectures"].at(0).get<std::string>() == std::string(f->architecture));
    CHECK_NOTHROW(parse_model_config(config.dump(), folder));
    covered.insert(type);
  }
  for (const ModelFamily& f : model_families()) {
    CAPTURE(f.model_type);
    CHECK(covered.count(std::string(f.model_type)) == 1);
  }
}

TEST_CASE("families: each family's config_keys are exactly the keys its reader looks up") {
  // The fixtures as they are, each with one key left out (an optional key's default, an older alias
  // such as GPT-2's n_ctx) and with the switches that make the reader look further set.
  std::map<std::string, std::set<std::string>> seen;
  for (const auto& [folder, config] : fixture_configs()) {
    const std::string type = config.at("model_type").get<std::string>();
    std::set<std::string>& keys = seen[type];
    std::vector<nlohmann::json> variants = {config};
    for (auto it = config.begin(); it != config.end(); ++it) {
      if (it.key() == "model_type") continue;
      nlohmann::json without = config;
      without.erase(it.key());
      variants.push_back(without);
    }
    for (const char* key : {"use_sliding_window"}) {
      nlohmann::json on = config;
      on[key] = true;
      variants.push_back(on);
    }
    // A rope scaling that reads the top-level original_max_position_embeddings (the rotate-half families).
    if (type != "gpt2" && type.rfind("deepseek", 0) != 0) {
      nlohmann::json yarn = config;
      yarn["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 2.0}};
      variants.push_back(yarn);
    }
    for (const nlohmann::json& v : variants) keys.merge(keys_looked_up(v));
  }
  for (const ModelFamily& f : model_families()) {
    CAPTURE(f.model_type);
    const std::set<std::string> table(f.config_keys.begin(), f.config_keys.end());
    const std::set<std::string>& looked_up = seen[std::string(f.model_type)];
    CHECK_MESSAGE(table == looked_up, "table: " << listed(table) << "\nreader: " << listed(looked_up));
  }
}
