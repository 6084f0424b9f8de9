// scene_json.h — Scene ⇄ JSON. Unknown keys are ignored with a warning; missing keys keep defaults,
// so a scene written by an older version still loads. A malformed file raises InputError naming
// the file, line/column and what is wrong; a value of the wrong type names its key.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/scene/scene.h"

namespace attnscope {

inline constexpr int scene_format_version = 1;

nlohmann::json scene_to_json(const Scene& scene);
// `warnings` receives one line per ignored key.
Scene scene_from_json(const nlohmann::json& j, std::vector<std::string>* warnings = nullptr);

Scene load_scene(const std::filesystem::path& path, std::vector<std::string>* warnings = nullptr);
void save_scene(const std::filesystem::path& path, const Scene& scene);

}  // namespace attnscope
