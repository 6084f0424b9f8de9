// `attnscope families`: the loader's family table in its three formats, and a bad format exits 2;
// `families --checkpoints DIR`: what the loader does with each real config.json.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/config.h"
#include "attnscope/model/families.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;

TEST_CASE("cli families: text, md and json list every entry of the family table") {
  const auto& families = model::model_families();
  const CliRun json = run_cli("families --format json");
  INFO(json.err);
  REQUIRE(json.exit_code == 0);
  const auto listed = nlohmann::json::parse(json.out);
  REQUIRE(listed.size() == families.size());
  for (size_t i = 0; i < families.size(); ++i) {
    CAPTURE(families[i].model_type);
    CHECK(listed[i]["model_type"] == std::string(families[i].model_type));
    CHECK(listed[i]["architecture"] == std::string(families[i].architecture));
    CHECK(listed[i]["config_keys"].size() == families[i].config_keys.size());
  }
  const CliRun md = run_cli("families --format md");
  REQUIRE(md.exit_code == 0);
  const CliRun text = run_cli("families");
  REQUIRE(text.exit_code == 0);
  for (const model::ModelFamily& f : families) {
    CAPTURE(f.model_type);
    CHECK(md.out.find("| `" + std::string(f.model_type) + "` |") != std::string::npos);
    CHECK(text.out.find(std::string(f.model_type) + " — " + std::string(f.name)) != std::string::npos);
  }
  const CliRun bad = run_cli("families --format xml");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("text, md or json") != std::string::npos);
  CHECK(bad.out.empty());
}

// `families --checkpoints DIR` (docs/real-models.md's table of real checkpoints): one row per config.json
// under DIR, saying what the loader itself does with it, so the table follows the loader as families are
// added.
TEST_CASE("cli families --checkpoints: every real config, opening or refused as parse_model_config does") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "real-configs";
  const CliRun json = run_cli("families --checkpoints " + shell_quote(dir.string()) + " --format json");
  INFO(json.err);
  REQUIRE(json.exit_code == 0);
  const auto rows = nlohmann::json::parse(json.out);
  int files = 0, opening = 0;
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& row : rows) by_id[row["id"].get<std::string>()] = row;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const std::string id = fs::relative(entry.path(), dir).replace_extension().generic_string();
    CAPTURE(id);
    REQUIRE(by_id.count(id) == 1);
    const nlohmann::json& row = by_id[id];
    const std::string text = read_file(entry.path(), 1 << 20);
    const nlohmann::json config = nlohmann::json::parse(text);
    CHECK(row["model_type"] == config.value("model_type", ""));
    CHECK(row["source"] != "");  // sources.tsv names every file
    try {
      const model::ModelConfig c = model::parse_model_config(text, id);
      ++opening;
      CHECK(row["opens"] == true);
      CHECK(row["reason"] == "");
      CHECK(row["family"] == std::string(model::find_model_family(c.model_type)->name));
      const std::string positions = row["positions"];
      if (c.positions == model::PositionKind::rotary && !c.is_mla() && c.rope_scaling.type != model::RopeType::plain)
        CHECK(positions.find(model::to_string(c.rope_scaling.type)) != std::string::npos);
      if (c.rotated_dim() < c.head_dim) CHECK(positions.find("rotary " + std::to_string(c.rotated_dim())) != std::string::npos);
    } catch (const InputError& e) {
      CHECK(row["opens"] == false);
      const std::string reason = row["reason"];
      CHECK_FALSE(reason.empty());
      // the loader's own message, without the file name the row already gives nor the list of model_types
      // the families table gives
      std::string expected = e.what();
      REQUIRE(expected.starts_with("'" + id + "': "));
      expected.erase(0, id.size() + 4);
      const std::string supported = std::string(" (supported: ") + model::supported_model_types() + ")";
      if (const size_t at = expected.find(supported); at != std::string::npos) expected.erase(at, supported.size());
      CHECK(reason == expected);
      CHECK(reason.find(config.value("model_type", "")) != std::string::npos);
    }
  }
  CHECK(files == 50);
  CHECK(int(rows.size()) == files);
  const CliRun md = run_cli("families --checkpoints " + shell_quote(dir.string()) + " --format md");
  REQUIRE(md.exit_code == 0);
  CHECK(md.out.starts_with(std::to_string(opening) + " of " + std::to_string(files) + " configs open"));
  CHECK(md.out.find("| `meta-llama/Llama-3.2-1B-Instruct` | `llama` | yes | Llama | GQA, 32 heads, 8 K/V | RoPE θ 500000, "
                    "llama3 ×32 |") != std::string::npos);

  const CliRun missing = run_cli("families --checkpoints /nonexistent/folder");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("is not a folder") != std::string::npos);
  const fs::path empty = test_tmp() / "families_empty";
  fs::create_directories(empty);
  const CliRun none = run_cli("families --checkpoints " + shell_quote(empty.string()));
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("holds no .json file") != std::string::npos);
  CHECK(none.out.empty());
}
