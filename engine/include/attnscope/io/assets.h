// assets.h — where attnscope finds its assets folder (sample sentences, lessons, model presets).
//
// Nothing points into the source tree. The rule, first match wins (a folder counts when it holds
// sentences.json):
//   1. $ATTNSCOPE_ASSETS, when set and non-empty. An explicit choice is never skipped: if that folder
//      is not an assets folder, that is the error reported.
//   2. <folder of the running executable>/../share/attnscope — the installed layout (bin/attnscope
//      beside share/attnscope/), wherever the tree was installed or moved to. A build folder has the
//      same layout: the build copies assets/ to <build>/share/attnscope, and every program of the
//      build sits one folder below <build> (app/, tests/, bench/).
//   3. <install prefix>/share/attnscope, compiled in (CMAKE_INSTALL_FULL_DATADIR): for a copy of
//      the executable taken out of its tree.
// Why the variable comes first: it is only ever set on purpose (a teacher's own lessons, a test),
// and if the installed folder came first the variable could never override an installed copy.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

// What the rule reads from the process, separated so that each step can be tested.
struct AssetLookup {
  std::string env;                     // $ATTNSCOPE_ASSETS ("" when unset)
  std::filesystem::path executable_dir;  // folder of /proc/self/exe ("" when unreadable)
  std::filesystem::path install_dir;     // <prefix>/share/attnscope compiled in ("" when none)
};

// The process's own: the environment, /proc/self/exe and the compiled-in prefix.
AssetLookup process_asset_lookup();

// The candidate folders of the rule, in order (steps that do not apply are left out; nothing is
// checked on disk).
std::vector<std::filesystem::path> asset_search_path(const AssetLookup& lookup);
std::vector<std::filesystem::path> asset_search_path();  // of process_asset_lookup()

// The first candidate that holds sentences.json. Throws InputError naming every folder tried and how
// to point attnscope at its assets when none does, or when $ATTNSCOPE_ASSETS names another folder.
std::filesystem::path find_assets_dir(const AssetLookup& lookup);
std::filesystem::path assets_dir();  // find_assets_dir(process_asset_lookup())

// The folder of the running executable (/proc/self/exe, symlinks resolved); empty if unreadable.
std::filesystem::path executable_dir();

// The compiled-in <prefix>/share/attnscope.
std::filesystem::path installed_assets_dir();

}  // namespace attnscope
