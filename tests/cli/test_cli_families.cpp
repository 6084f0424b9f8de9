// `attnscope families`: the loader's family table in its three formats, and a bad format exits 2.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "attnscope/model/families.h"
#include "run_cli.h"

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
