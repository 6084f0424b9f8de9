// What the program says about itself: `--version` (the project version and the git revision of the
// build) and the About box's library notices, which packaging/copyright must carry too.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "check.h"
#include "core/about.h"
#include "core/version.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot read " << p);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The VERSION of project() in the top CMakeLists.txt.
std::string project_version() {
  const std::string cmake = slurp(fs::path(ATTNSCOPE_SOURCE_DIR) / "CMakeLists.txt");
  std::smatch m;
  REQUIRE(std::regex_search(cmake, m, std::regex(R"(project\(attnscope VERSION ([0-9.]+))")));
  return m[1];
}

}  // namespace

TEST_CASE("about: --version prints the project version and the git revision it was built from") {
  const CliRun r = run_cli("--version");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out == version_line() + "\n");
  std::smatch m;
  REQUIRE(std::regex_match(r.out, m, std::regex(R"(attnscope ([0-9.]+) \(git (.+)\)\n)")));
  CHECK(m[1] == project_version());
  const std::string revision = m[2];
  if (fs::exists(fs::path(ATTNSCOPE_SOURCE_DIR) / ".git")) {
    // A real commit of this repository (the build may carry uncommitted changes: "-dirty").
    std::smatch h;
    REQUIRE(std::regex_match(revision, h, std::regex(R"(([0-9a-f]{12})(-dirty)?)")));
    const std::string git =
        "git -C " + shell_quote(ATTNSCOPE_SOURCE_DIR) + " cat-file -e " + std::string(h[1]) + "^{commit}";
    CHECK_MESSAGE(std::system(git.c_str()) == 0, git);
  } else {
    CHECK(revision == "unknown (not built from a git checkout)");
  }
}

TEST_CASE("about: every library the About box names has its copyright lines in packaging/copyright") {
  const std::string copyright = slurp(fs::path(ATTNSCOPE_SOURCE_DIR) / "packaging" / "copyright");
  REQUIRE_FALSE(library_notices().empty());
  for (const LibraryNotice& lib : library_notices()) {
    CAPTURE(lib.name);
    std::string holders = lib.copyright;
    for (size_t start = 0; start <= holders.size();) {  // "; " separates holders
      const size_t end = std::min(holders.find("; ", start), holders.size());
      const std::string holder = holders.substr(start, end - start);
      CAPTURE(holder);
      CHECK(contains(copyright, holder));
      start = end + 2;
    }
  }
  CHECK(contains(copyright, "Copyright: 2026 the attnscope authors\nLicense: Expat"));
  // LICENSE says the same about attnscope itself.
  CHECK(contains(slurp(fs::path(ATTNSCOPE_SOURCE_DIR) / "LICENSE"), "Copyright (c) 2026 the attnscope authors"));
}
