// assets.cpp — the assets folder search (the rule is in assets.h).
#include "attnscope/io/assets.h"

#include <cstdlib>
#include <system_error>

#include "attnscope/core/error.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

constexpr const char* marker_file = "sentences.json";

bool is_assets_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / marker_file, ec);
}

}  // namespace

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

std::vector<fs::path> asset_search_path() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("ATTNSCOPE_ASSETS_DIR"); env && *env) dirs.emplace_back(env);
  if (const fs::path exe = executable_dir(); !exe.empty()) {
    dirs.push_back(exe / "assets");
    dirs.push_back(exe.parent_path() / "share" / "attnscope" / "assets");
    dirs.push_back(exe.parent_path() / "assets");
  }
#ifdef ATTNSCOPE_ASSETS_DIR
  dirs.emplace_back(ATTNSCOPE_ASSETS_DIR);
#endif
  return dirs;
}

fs::path assets_dir() {
  if (const char* env = std::getenv("ATTNSCOPE_ASSETS_DIR"); env && *env) {
    require(is_assets_folder(env), "ATTNSCOPE_ASSETS_DIR is '" + std::string(env) +
                                       "', which is not an attnscope assets folder (it has no " + marker_file +
                                       "); unset it or point it at the assets/ folder of the sources");
    return fs::path(env);
  }
  std::string tried;
  for (const fs::path& dir : asset_search_path()) {
    if (is_assets_folder(dir)) return dir;
    tried += (tried.empty() ? "" : ", ") + dir.string();
  }
  throw InputError("cannot find attnscope's assets folder (looked for " + std::string(marker_file) + " in: " + tried +
                   "); set ATTNSCOPE_ASSETS_DIR to the assets/ folder of the sources");
}

}  // namespace attnscope
