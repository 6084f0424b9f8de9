// `--language en|zh` of `attnscope export` and `attnscope compute`: the figure's and the trace's words
// in that language, English by default, and exit 2 naming the valid values for any other.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "core/translations.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string sentence = shell_quote("The cat sat on the mat.");

}  // namespace

TEST_CASE("cli language: export --language zh draws Chinese titles; en and the default draw English") {
  const fs::path dir = fresh_dir("cli_language_export");
  const std::string common = "export --what heads --format svg --kind gqa --heads 4 --groups 2 --text " + sentence;
  for (const char* language : {"", " --language en", " --language zh"}) {
    const fs::path out = dir / (std::string(*language ? language + 12 : "default") + ".svg");
    const CliRun r = run_cli(common + language + " --out " + shell_quote(out.string()));
    INFO(language << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
  }
  const std::string english = slurp(dir / "default.svg"), en = slurp(dir / "en.svg"), zh = slurp(dir / "zh.svg");
  CHECK(en == english);
  CHECK(has(english, "head 3 · kv group 1"));
  CHECK(has(zh, "头 3 · KV 组 1"));
  CHECK(has(zh, ">概率<"));
  CHECK(has(zh, "行：查询，列：键"));
  CHECK_FALSE(has(zh, "kv group"));
}

TEST_CASE("cli language: an unknown --language is exit 2 naming en and zh, and writes nothing") {
  const fs::path dir = fresh_dir("cli_language_bad");
  for (const std::string& command :
       {"export --what heads --format png --text " + sentence + " --out " + shell_quote((dir / "x.png").string()),
        "compute --text " + sentence + " --out " + shell_quote((dir / "computed").string())}) {
    for (const char* bad : {"fr", "ZH", "\"\""}) {
      const CliRun r = run_cli(command + " --language " + bad);
      INFO(command << " --language " << bad << "\nstderr: " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(has(r.err, "--language"));
      CHECK(has(r.err, "en, zh"));
      CHECK(r.out.empty());
    }
  }
  CHECK(count_files(dir) == 0);
}

TEST_CASE("cli language: compute --language zh writes the trace's step names in Chinese") {
  const fs::path dir = fresh_dir("cli_language_compute");
  CliRun r = run_cli("compute --kind gqa --heads 4 --groups 2 --text " + sentence + " --out " + shell_quote((dir / "en").string()));
  REQUIRE(r.exit_code == 0);
  r = run_cli("compute --language zh --table --kind gqa --heads 4 --groups 2 --text " + sentence + " --out " +
              shell_quote((dir / "zh").string()));
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "头 3 · KV 组 1"));
  const auto en = nlohmann::json::parse(slurp(dir / "en" / "trace.json"));
  const auto zh = nlohmann::json::parse(slurp(dir / "zh" / "trace.json"));
  const Translations words = load_translations(fs::path(ATTNSCOPE_SOURCE_DIR) / "assets/i18n/zh.json");
  std::set<std::string> chinese_names;
  for (const auto& [key, step] : words.trace_steps) chinese_names.insert(step.name);
  REQUIRE(en["steps"].size() == zh["steps"].size());
  int changed = 0;
  for (size_t i = 0; i < zh["steps"].size(); ++i) {
    const std::string name = zh["steps"][i]["name"];
    CAPTURE(name);
    CHECK(chinese_names.count(name) == 1);  // every step by its translation ("softmax" stays "softmax")
    changed += name != en["steps"][i]["name"].get<std::string>();
    CHECK(zh["steps"][i]["shape"] == en["steps"][i]["shape"]);  // the numbers stay the same
  }
  CHECK(changed > 0);
}

TEST_CASE("cli language: --help of export and compute documents --language") {
  for (const char* command : {"export", "compute"}) {
    const CliRun r = run_cli(std::string(command) + " --help");
    CAPTURE(command);
    CHECK(r.exit_code == 0);
    CHECK(has(r.out, "--language"));
    CHECK(has(r.out, "en | zh"));
  }
}
