// The allowed include directions (README "Layout"), checked over the sources:
//   - the engine includes no ImGui, GLFW or OpenGL header and nothing of app/;
//   - each engine folder includes only the folders its README.md lists under "May include:";
//   - app/core includes neither app/cli nor app/gui, and app/cli not app/gui;
//   - app/ reaches the engine's analyses, tokens and forward passes only through pipeline::run (issue 38 item 7).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

const fs::path source_dir = ATTNSCOPE_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool is_source(const fs::path& p) { return p.extension() == ".h" || p.extension() == ".cpp"; }

// Every `#include "…"` and `#include <…>` of a file.
std::vector<std::string> includes_of(const fs::path& p) {
  static const std::regex include_line(R"(^\s*#\s*include\s*[<"]([^">]+)[">])");
  std::vector<std::string> out;
  std::istringstream in(slurp(p));
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, include_line)) out.push_back(m[1]);
  return out;
}

// The engine folder an include names ("attnscope/relpos/grids.h", or a private "relpos/x.h"), or "".
std::string engine_folder_of(const std::string& include, const std::set<std::string>& folders) {
  std::string path = include.rfind("attnscope/", 0) == 0 ? include.substr(10) : include;
  const size_t slash = path.find('/');
  if (slash == std::string::npos) return "";
  const std::string folder = path.substr(0, slash);
  return folders.count(folder) ? folder : "";
}

}  // namespace

TEST_CASE("layout: every engine folder says what it may include, and its sources keep to it") {
  std::map<std::string, std::set<std::string>> allowed;
  for (const auto& entry : fs::directory_iterator(source_dir / "engine/src")) {
    if (!entry.is_directory()) continue;
    const std::string folder = entry.path().filename().string();
    const fs::path note = entry.path() / "README.md";
    INFO("engine/src/" << folder);
    REQUIRE_MESSAGE(fs::exists(note), "each engine folder has a README.md saying what lives there");
    std::smatch m;
    const std::string text = slurp(note);
    REQUIRE(std::regex_search(text, m, std::regex(R"(May include:([^\n]*))")));
    std::istringstream words(m[1].str());
    allowed[folder];
    for (std::string w; words >> w;)
      if (w != "nothing" && w != "else" && w != "in" && w != "the" && w != "engine") allowed[folder].insert(w);
  }
  std::set<std::string> folders;
  for (const auto& [f, _] : allowed) folders.insert(f);
  // Every public header folder has its source folder (and so its note).
  for (const auto& entry : fs::directory_iterator(source_dir / "engine/include/attnscope")) {
    CHECK_MESSAGE(entry.is_directory(), entry.path() << ": public headers live in concept folders");
    CHECK_MESSAGE(folders.count(entry.path().filename().string()), entry.path() << " has no engine/src folder");
  }
  for (const auto& entry : allowed)  // not a structured binding: CHECK_MESSAGE cannot capture one (clang 14)
    for (const std::string& d : entry.second)
      CHECK_MESSAGE(folders.count(d), entry.first << " may include '" << d << "', which is no folder");

  int files = 0, checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir / "engine")) {
    if (!entry.is_regular_file() || !is_source(entry.path())) continue;
    const fs::path rel = fs::relative(entry.path(), source_dir / "engine");
    auto part = rel.begin();
    const std::string top = (part++)->string();
    if (top == "include") ++part;  // include/attnscope/<folder>/…
    const std::string folder = part->string();
    INFO(rel.string());
    REQUIRE_MESSAGE(folders.count(folder), "every engine source sits in a concept folder");
    ++files;
    for (const std::string& inc : includes_of(entry.path())) {
      INFO("#include " << inc);
      for (const char* gui : {"imgui", "GLFW/", "GL/", "glad", "backends/"})
        CHECK_MESSAGE(inc.rfind(gui, 0) != 0, "the engine includes no window header");
      for (const char* app : {"gui/", "cli/", "core/scene_options", "core/compute_worker", "core/pictures"})
        CHECK_MESSAGE(inc.rfind(app, 0) != 0, "the engine includes nothing of app/");
      const std::string to = engine_folder_of(inc, folders);
      if (to.empty() || to == folder) continue;
      ++checked;
      CHECK_MESSAGE(allowed[folder].count(to), "engine/" << folder << " may not include " << to
                                                         << " (see engine/src/" << folder << "/README.md)");
    }
  }
  CHECK(files > 50);
  CHECK(checked > 50);
}

TEST_CASE("layout: app/core includes neither the command line nor the window, and the command line not the window") {
  const std::map<std::string, std::vector<std::string>> forbidden = {{"core", {"cli/", "gui/", "imgui", "GLFW/"}},
                                                                     {"cli", {"gui/", "imgui", "GLFW/"}}};
  int files = 0;
  for (const auto& rule : forbidden) {
    const std::string& folder = rule.first;  // not a structured binding: CHECK_MESSAGE cannot capture one
    const auto& bad = rule.second;
    for (const auto& entry : fs::directory_iterator(source_dir / "app" / folder)) {
      if (!is_source(entry.path())) continue;
      ++files;
      for (const std::string& inc : includes_of(entry.path()))
        for (const std::string& b : bad)
          CHECK_MESSAGE(inc.rfind(b, 0) != 0, "app/" << folder << "/" << entry.path().filename().string() << " includes " << inc);
    }
  }
  CHECK(files >= 10);
}

// Issue 38 item 7: one request → one engine pipeline. The window and the command line make no analysis, tokens,
// tokenizer load, input check, K/V conversion or forward pass of their own; they ask pipeline.h (run, run_steps,
// needs_on_demand, analyse_scene, open_source) and read its Result.
TEST_CASE("layout: app/ calls the engine's analyses, tokens and forward passes only through the pipeline") {
  static const std::regex own_call(
      R"((^|[^A-Za-z0-9_:.>])(attnscope::)?(model::)?(analyse|request_tokens|load_tokenizer_cached|model_tokens_from_input|model_input_problem|default_model_input|run_model_layer|convert_kv_heads|forward)\s*\()");
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir / "app")) {
    if (!is_source(entry.path())) continue;
    ++files;
    std::istringstream in(slurp(entry.path()));
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      const std::string code = line.substr(0, line.find("//"));  // comments may name them
      CHECK_MESSAGE(!std::regex_search(code, own_call),
                    entry.path().lexically_relative(source_dir).string() << ":" << number << " calls the engine outside the pipeline: " << line);
    }
  }
  CHECK(files > 100);
}
