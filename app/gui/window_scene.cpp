// window_scene.cpp — Open scene… / Save scene… (scene_json.h): a modal dialog with a path field
// (Debian has no native file-dialog library for us), the outcome in the dialog and the status line:
// the full path written or read, the keys a loaded file had that were ignored, or why it failed.
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/scene/scene_json.h"
#include "core/scene_link.h"
#include "core/user_path.h"
#include "core/platform_download.h"
#include "gui/classroom_windows.h"
#include "gui/i18n.h"
#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

// The dialog body shared by Open and Save. Returns true when the popup should close.
bool DialogBody(AppState& state, bool saving) {
  SceneDialogState& d = state.scene_dialog;
  ImGui::TextUnformatted(tr("File (a path; ~ is your home folder, a relative path starts in the folder attnscope was started in)"));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 26);
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  const bool enter = ImGui::InputText("##scene_path", &d.path, ImGuiInputTextFlags_EnterReturnsTrue);
  bool close = false;
  if (ImGui::Button(saving ? tr("Save") : tr("Open")) || enter) {
    close = saving ? SaveSceneFile(state, d.path) : OpenSceneFile(state, d.path);
  }
  ImGui::SameLine();
  if (ImGui::Button(tr("Cancel"))) close = true;
  if (!d.ok) ErrorText(d.message);
  return close;
}

}  // namespace

bool SaveSceneFile(AppState& state, const std::string& path) {
  SceneDialogState& d = state.scene_dialog;
  d.warnings.clear();
  try {
    const std::string full = user_path_text(path);  // ~ expanded, absolute
    if (full.empty()) throw InputError(tr("type a file name, e.g. scene.json"));
    save_scene(full, state.scene);
    d.path = full;
    d.ok = true;
    d.message = trf("scene saved to %s", full.c_str());
    offer_download(full);  // the browser: the file as a download
  } catch (const std::exception& e) {  // InputError, or JSON refusing text that is not UTF-8
    d.ok = false;
    d.message = trf("could not save the scene: %s", e.what());
  }
  state.status = d.message;
  return d.ok;
}

bool OpenSceneFile(AppState& state, const std::string& path) {
  SceneDialogState& d = state.scene_dialog;
  d.warnings.clear();
  try {
    const std::string full = user_path_text(path);  // ~ expanded, absolute
    if (full.empty()) throw InputError(tr("type a file name, e.g. scene.json"));
    Scene scene = load_scene(full, &d.warnings);
    d.path = full;
    state.lessons.lesson = -1;  // the scene is no longer a lesson's step
    ReplaceScene(state, scene);
    d.ok = true;
    d.message = trf("scene read from %s", full.c_str());
    if (!d.warnings.empty()) d.message += " · " + trf("%d keys ignored: %s", int(d.warnings.size()), d.warnings.front().c_str());
  } catch (const std::exception& e) {
    d.ok = false;
    d.message = trf("could not open the scene: %s", e.what());
  }
  state.status = d.message;
  return d.ok;
}

bool OpenSceneLink(AppState& state, const std::string& link) {
  std::vector<std::string> warnings;
  try {
    const Scene scene = scene_from_link_text(scene_text_of_link(link), &warnings);
    state.lessons.lesson = -1;  // the scene is no longer a lesson's step
    ReplaceScene(state, scene);
    state.status = tr("Opened the scene of the link.");
    if (!warnings.empty()) state.status += " · " + trf("%d keys ignored: %s", int(warnings.size()), warnings.front().c_str());
    return true;
  } catch (const std::exception& e) {
    state.status = trf("The link's scene could not be opened (%s): this is the default scene.", e.what());
    return false;
  }
}

void DrawSceneDialogs(AppState& state) {
  SceneDialogState& d = state.scene_dialog;
  const std::string save_title = WindowTitle("Save scene", "save_scene");
  const std::string open_title = WindowTitle("Open scene", "open_scene");
  if (d.open_save) ImGui::OpenPopup(save_title.c_str()), d.ok = true;
  if (d.open_open) ImGui::OpenPopup(open_title.c_str()), d.ok = true;
  d.open_save = d.open_open = false;
  for (const bool saving : {true, false}) {
    if (!ImGui::BeginPopupModal((saving ? save_title : open_title).c_str(), nullptr, ImGuiWindowFlags_AlwaysAutoResize)) continue;
    if (DialogBody(state, saving)) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

}  // namespace attnscope::gui
