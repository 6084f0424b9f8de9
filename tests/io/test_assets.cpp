// The assets folder rule (io/assets.h), one step at a time on folders made here, then the process's
// own lookup: this build finds the copy the build made in <build>/share/attnscope, not the sources.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "attnscope/classroom/lessons.h"
#include "attnscope/core/error.h"
#include "attnscope/io/assets.h"
#include "attnscope/io/file_io.h"
#include "check.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

// An assets folder: the marker file sentences.json with one sentence of our choosing.
fs::path make_assets(const fs::path& dir, const std::string& sentence, const std::string& lang = "en") {
  fs::create_directories(dir);
  write_file_atomic(dir / "sentences.json",
                    R"({"sentences": [{"lang": ")" + lang + R"(", "text": ")" + sentence + R"("}]})");
  return dir;
}

// An installed tree: <root>/bin (the executable's folder) and <root>/share/attnscope.
struct Tree {
  fs::path root, bin, share;
};
Tree make_tree(const fs::path& root, bool with_assets) {
  Tree t{root, root / "bin", root / "share" / "attnscope"};
  fs::create_directories(t.bin);
  if (with_assets) make_assets(t.share, "installed");
  return t;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("assets: the search path is $ATTNSCOPE_ASSETS, ../share/attnscope beside the executable, the prefix") {
  const AssetLookup all{"/my/assets", "/opt/x/bin", "/usr/share/attnscope"};
  const auto path = asset_search_path(all);
  REQUIRE(path.size() == 3);
  CHECK(path[0] == fs::path("/my/assets"));
  CHECK(path[1] == fs::path("/opt/x/share/attnscope"));  // normalised: no "bin/.." left in messages
  CHECK(path[2] == fs::path("/usr/share/attnscope"));
  // Steps that do not apply are left out.
  CHECK(asset_search_path({"", "/opt/x/bin", ""}) == std::vector<fs::path>{"/opt/x/share/attnscope"});
  CHECK(asset_search_path({"", "", "/usr/share/attnscope"}) == std::vector<fs::path>{"/usr/share/attnscope"});
  CHECK(asset_search_path({}).empty());
}

TEST_CASE("assets: step 1, $ATTNSCOPE_ASSETS wins over an installed folder and is never skipped") {
  const fs::path dir = fresh_dir("assets_env");
  const Tree tree = make_tree(dir / "prefix", true);
  const fs::path mine = make_assets(dir / "mine", "mine");
  const fs::path prefix = make_assets(dir / "compiled_prefix", "prefix");
  CHECK(find_assets_dir({mine.string(), tree.bin, prefix}) == mine);
  // Set to a folder that is not an assets folder: that is the answer, although the others would do.
  const std::string message = error_of([&] { find_assets_dir({(dir / "typo").string(), tree.bin, prefix}); });
  CHECK(contains(message,
                 "ATTNSCOPE_ASSETS is '" + (dir / "typo").string() + "', which is not an attnscope assets folder"));
  CHECK(contains(message, "it has no sentences.json"));
}

TEST_CASE("assets: step 2, ../share/attnscope beside the executable, wherever the tree was moved") {
  const fs::path dir = fresh_dir("assets_relative");
  const fs::path prefix = make_assets(dir / "compiled_prefix", "prefix");
  const Tree tree = make_tree(dir / "first_place", true);
  CHECK(find_assets_dir({"", tree.bin, prefix}) == fs::path(tree.share));  // before the compiled-in prefix
  fs::rename(tree.root, dir / "moved");
  CHECK(find_assets_dir({"", dir / "moved" / "bin", prefix}) == dir / "moved" / "share" / "attnscope");
}

TEST_CASE("assets: step 3, the compiled-in prefix serves an executable copied out of its tree") {
  const fs::path dir = fresh_dir("assets_prefix");
  const Tree lonely = make_tree(dir / "copied", false);
  const fs::path prefix = make_assets(dir / "usr" / "share" / "attnscope", "prefix");
  CHECK(find_assets_dir({"", lonely.bin, prefix}) == prefix);
  CHECK(find_assets_dir({"", "", prefix}) == prefix);  // /proc/self/exe unreadable
}

TEST_CASE("assets: none found is one InputError naming every folder tried and the way out") {
  const fs::path dir = fresh_dir("assets_none");
  const Tree lonely = make_tree(dir / "copied", false);
  const std::string message = error_of([&] { find_assets_dir({"", lonely.bin, dir / "no_prefix"}); });
  CHECK(contains(message, "cannot find attnscope's assets folder"));
  CHECK(contains(message, (lonely.root / "share" / "attnscope").string()));
  CHECK(contains(message, (dir / "no_prefix").string()));
  CHECK(contains(message, "set ATTNSCOPE_ASSETS"));
  CHECK(contains(error_of([] { find_assets_dir({}); }), "the executable's folder is unknown"));
}

TEST_CASE("assets: this build finds <build>/share/attnscope, a copy of the sources' assets/") {
  REQUIRE(std::getenv("ATTNSCOPE_ASSETS") == nullptr);  // the suite runs without the override
  const fs::path found = assets_dir();
  CHECK(found == (executable_dir() / ".." / "share" / "attnscope").lexically_normal());
  const fs::path sources = fs::path(ATTNSCOPE_SOURCE_DIR) / "assets";
  CHECK(fs::weakly_canonical(found) != fs::weakly_canonical(sources));  // a copy, not the source tree
  for (const auto& entry : fs::recursive_directory_iterator(sources)) {
    if (!entry.is_regular_file()) continue;
    const fs::path copy = found / fs::relative(entry.path(), sources);
    CAPTURE(copy);
    CHECK(slurp(copy) == slurp(entry.path()));
  }
  // The installed folder compiled in: absolute, <prefix>/share/attnscope.
  CHECK(installed_assets_dir().is_absolute());
  CHECK(installed_assets_dir().filename() == "attnscope");
  CHECK(installed_assets_dir().parent_path().filename() == "share");
}

TEST_CASE("assets: the process reads $ATTNSCOPE_ASSETS, and the loaders follow it") {
  const fs::path mine = make_assets(fresh_dir("assets_process") / "mine", "你好", "zh");
  setenv("ATTNSCOPE_ASSETS", mine.c_str(), 1);
  const fs::path found = assets_dir();
  const auto sentences = load_sample_sentences();
  setenv("ATTNSCOPE_ASSETS", "", 1);  // empty counts as unset
  const fs::path empty_env = assets_dir();
  unsetenv("ATTNSCOPE_ASSETS");
  CHECK(found == mine);
  REQUIRE(sentences.size() == 1);
  CHECK(sentences[0].text == "你好");
  CHECK(empty_env == assets_dir());
}
