// assets.cpp — the assets folder search (the rule and its order are in assets.h).
#include "attnscope/io/assets.h"

#include <cstdlib>
#include <system_error>

#include "attnscope/core/error.h"

// <prefix>/share/attnscope, set for this file only by engine/CMakeLists.txt (so that a new prefix
// recompiles one file).
#ifndef ATTNSCOPE_INSTALL_ASSETS_DIR
#define ATTNSCOPE_INSTALL_ASSETS_DIR ""
#endif

namespace attnscope {
namespace fs = std::filesystem;

namespace {

constexpr const char* marker_file = "sentences.json";
constexpr const char* env_name = "ATTNSCOPE_ASSETS";

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

fs::path installed_assets_dir() { return fs::path(ATTNSCOPE_INSTALL_ASSETS_DIR); }

AssetLookup process_asset_lookup() {
  AssetLookup lookup;
  if (const char* env = std::getenv(env_name)) lookup.env = env;
  lookup.executable_dir = executable_dir();
  lookup.install_dir = installed_assets_dir();
  return lookup;
}

std::vector<fs::path> asset_search_path(const AssetLookup& lookup) {
  std::vector<fs::path> dirs;
  if (!lookup.env.empty()) dirs.emplace_back(lookup.env);
  if (!lookup.executable_dir.empty())
    dirs.push_back((lookup.executable_dir / ".." / "share" / "attnscope").lexically_normal());
  if (!lookup.install_dir.empty()) dirs.push_back(lookup.install_dir);
  return dirs;
}

std::vector<fs::path> asset_search_path() { return asset_search_path(process_asset_lookup()); }

fs::path find_assets_dir(const AssetLookup& lookup) {
  if (!lookup.env.empty()) {
    require(is_assets_folder(lookup.env), std::string(env_name) + " is '" + lookup.env +
                                              "', which is not an attnscope assets folder (it has no " + marker_file +
                                              "); unset it or point it at a folder such as the sources' assets/");
    return fs::path(lookup.env);
  }
  std::string tried;
  for (const fs::path& dir : asset_search_path(lookup)) {
    if (is_assets_folder(dir)) return dir;
    tried += (tried.empty() ? "" : ", ") + dir.string();
  }
  if (tried.empty()) tried = "nowhere: the executable's folder is unknown and no install prefix was compiled in";
  throw InputError("cannot find attnscope's assets folder (looked for " + std::string(marker_file) + " in: " + tried +
                   "); reinstall attnscope, or set " + env_name +
                   " to a folder holding its assets (the sources' assets/)");
}

fs::path assets_dir() { return find_assets_dir(process_asset_lookup()); }

}  // namespace attnscope
