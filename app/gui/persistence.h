// persistence.h — what the window remembers between interactive runs, in a per-user folder
// ($XDG_CONFIG_HOME/attnscope, else ~/.config/attnscope):
//   imgui.ini    window positions and sizes (ImGui's own format)
//   scene.json   the last scene (scene_json.h), restored when no scene option is given
//   window.json  UI scale, theme, window size, language, recent tokenizers and checkpoint folders
// Scripted runs (--screenshot) neither read nor write any of it, so tests are reproducible.
// Every file is written through write_file_atomic.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/scene/scene.h"

namespace attnscope::gui {

struct WindowPreferences {
  float ui_scale = 0.0f;    // 0 → not saved yet (use the monitor's scale)
  bool light_theme = true;  // light reads better on most projectors
  int width = 0, height = 0;  // the window's size (0: not saved), so the saved layout fits it
  std::string language;     // "en" | "zh" ("": not saved)
  std::vector<std::string> recent_tokenizers;  // the Input window's recent tokenizer paths, newest first
  std::vector<std::string> recent_checkpoints;  // the Checkpoint window's, most recent first
};
inline constexpr size_t max_recent_tokenizers = 8;

class Persistence {
 public:
  // enabled = false (scripted runs): every load returns nothing and every save does nothing.
  explicit Persistence(bool enabled);

  bool enabled() const { return enabled_; }
  const std::filesystem::path& folder() const { return folder_; }

  std::optional<Scene> load_scene(std::string& warning) const;
  std::optional<std::string> load_layout() const;  // imgui.ini contents
  WindowPreferences load_preferences() const;

  // Save failures are returned as a message (shown in the status bar), never thrown.
  std::string save_scene(const Scene& scene) const;
  std::string save_layout(const std::string& ini) const;
  std::string save_preferences(const WindowPreferences& preferences) const;

 private:
  bool enabled_;
  std::filesystem::path folder_;
};

}  // namespace attnscope::gui
