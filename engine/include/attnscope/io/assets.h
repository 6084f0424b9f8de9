// assets.h — where attnscope finds its assets/ folder (sample sentences, lessons, model presets).
//
// The rule, first match wins (a folder counts when it holds sentences.json):
//   1. the environment variable ATTNSCOPE_ASSETS_DIR, when set and non-empty (if that folder is not
//      an assets folder, that is an error: an explicit choice is never silently skipped);
//   2. <folder of the running executable>/assets                 (a copied or packaged build);
//   3. <folder of the running executable>/../share/attnscope/assets  (an installed layout);
//   4. <folder of the running executable>/../assets               (a build folder inside the sources);
//   5. the source tree's assets/ recorded at compile time (the ATTNSCOPE_ASSETS_DIR definition set by
//      engine/CMakeLists.txt), so tests and uninstalled builds work from anywhere.
#pragma once
#include <filesystem>
#include <vector>

namespace attnscope {

// The folders of the rule above that exist in this process, in order (without checking them).
std::vector<std::filesystem::path> asset_search_path();

// The assets folder. Throws InputError listing every place tried when none holds sentences.json.
std::filesystem::path assets_dir();

// The folder of the running executable (/proc/self/exe); empty if it cannot be read.
std::filesystem::path executable_dir();

}  // namespace attnscope
