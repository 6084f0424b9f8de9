#include "gui/persistence.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/scene/scene_json.h"
#include "gui/i18n.h"

namespace attnscope::gui {
namespace {

std::filesystem::path config_folder() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "attnscope";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".config" / "attnscope";
  return {};
}

constexpr int64_t max_state_bytes = int64_t(4) << 20;

}  // namespace

Persistence::Persistence(bool enabled) : enabled_(enabled) {
  if (enabled_) folder_ = config_folder();
  if (folder_.empty()) enabled_ = false;
}

std::optional<Scene> Persistence::load_scene(std::string& warning) const {
  if (!enabled_) return std::nullopt;
  const auto path = folder_ / "scene.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    std::vector<std::string> warnings;
    Scene scene = attnscope::load_scene(path, &warnings);
    if (!warnings.empty()) warning = trf("last scene: %s", warnings.front().c_str());
    return scene;
  } catch (const InputError& e) {
    warning = trf("could not restore the last scene (starting afresh): %s", e.what());
    return std::nullopt;
  }
}

std::optional<std::string> Persistence::load_layout() const {
  if (!enabled_) return std::nullopt;
  try {
    const auto path = folder_ / "imgui.ini";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    return read_file(path, max_state_bytes);
  } catch (const InputError&) {
    return std::nullopt;  // an unreadable layout only means the default layout
  }
}

WindowPreferences Persistence::load_preferences() const {
  WindowPreferences p;
  if (!enabled_) return p;
  try {
    const auto path = folder_ / "window.json";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return p;
    const auto j = nlohmann::json::parse(read_file(path, max_state_bytes));
    const float scale = j.value("ui_scale", 0.0f);
    if (scale >= 0.5f && scale <= 4.0f) p.ui_scale = scale;
    p.light_theme = j.value("light_theme", p.light_theme);
    const int w = j.value("width", 0), h = j.value("height", 0);
    if (w >= 320 && w <= 7680 && h >= 240 && h <= 4320) p.width = w, p.height = h;
    const std::string language = j.value("language", std::string());
    if (language == "en" || language == "zh") p.language = language;
    if (j.contains("recent_tokenizers") && j["recent_tokenizers"].is_array())
      for (const auto& path : j["recent_tokenizers"])
        if (path.is_string() && !path.get<std::string>().empty() && p.recent_tokenizers.size() < max_recent_tokenizers)
          p.recent_tokenizers.push_back(path.get<std::string>());
    // Recent checkpoint folders: strings only, at most a handful (a damaged entry is skipped).
    if (const auto recent = j.find("recent_checkpoints"); recent != j.end() && recent->is_array())
      for (const auto& dir : *recent)
        if (dir.is_string() && !dir.get<std::string>().empty() && p.recent_checkpoints.size() < 16)
          p.recent_checkpoints.push_back(dir.get<std::string>());
  } catch (const std::exception&) {
    // A damaged preferences file only means the defaults.
  }
  return p;
}

std::string Persistence::save_scene(const Scene& scene) const {
  if (!enabled_) return {};
  try {
    ensure_directory(folder_);
    attnscope::save_scene(folder_ / "scene.json", scene);
  } catch (const std::exception& e) {  // InputError, or JSON refusing text that is not UTF-8
    return trf("could not save the scene: %s", e.what());
  }
  return {};
}

std::string Persistence::save_layout(const std::string& ini) const {
  if (!enabled_) return {};
  try {
    ensure_directory(folder_);
    write_file_atomic(folder_ / "imgui.ini", ini);
  } catch (const InputError& e) {
    return trf("could not save the window layout: %s", e.what());
  }
  return {};
}

std::string Persistence::save_preferences(const WindowPreferences& p) const {
  if (!enabled_) return {};
  try {
    ensure_directory(folder_);
    const nlohmann::json j = {{"ui_scale", p.ui_scale}, {"light_theme", p.light_theme}, {"width", p.width}, {"height", p.height},
                             {"language", p.language.empty() ? "en" : p.language},
                             {"recent_tokenizers", p.recent_tokenizers},
                             {"recent_checkpoints", p.recent_checkpoints}};
    write_file_atomic(folder_ / "window.json", j.dump(2) + "\n");
  } catch (const InputError& e) {
    return std::string("could not save the window preferences: ") + e.what();
  }
  return {};
}

}  // namespace attnscope::gui
