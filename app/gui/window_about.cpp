// window_about.cpp — Help → About attnscope: the version and the git revision it was built from (the
// same line as `attnscope --version`), attnscope's licence, where its assets were found, and the
// libraries it uses with their licences (core/about.h, which packaging/copyright mirrors).
// A missing assets folder opens this window at start (window_main.cpp), with the folders tried.
#include <cstdio>
#include <string>

#include "attnscope/core/error.h"
#include "attnscope/io/assets.h"
#include "core/about.h"
#include "core/version.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {

bool LocateAssets(AppState& state) {
  AboutWindowState& about = state.about;
  if (!about.assets_checked) {
    about.assets_checked = true;
    try {
      about.assets_folder = assets_dir().string();
    } catch (const InputError& e) {
      about.assets_error = e.what();
      std::fprintf(stderr, "error: %s\n", e.what());  // also where a terminal or a log sees it
    }
  }
  return about.assets_error.empty();
}

void DrawAboutWindow(AppState& state) {
  if (!state.show_about) return;
  LocateAssets(state);
  PlaceNextWindow(state, Slot::dialog);
  if (!ImGui::Begin(WindowTitle("About attnscope", "about").c_str(), &state.show_about)) {
    ImGui::End();
    return;
  }
  ImGui::TextUnformatted((std::string("attnscope ") + version()).c_str());
  RecordLastItem(state, "about.version");
  ImGui::TextUnformatted(trf("Built from git revision %s", git_revision()).c_str());
  WrappedText(tr("See attention: single-head, multi-head, multi-query, grouped-query and relative-position "
                 "attention, computed and drawn live."));
  WrappedText(tr("MIT licence, copyright 2026 the attnscope authors."));

  SectionHeader(tr("Assets"));
  if (state.about.assets_error.empty()) {
    WrappedText(trf("Sample sentences, lessons and model presets come from %s", state.about.assets_folder.c_str()));
    RecordLastItem(state, "about.assets_folder");
  } else {
    ErrorText(tr("The assets folder was not found: the lessons and the model presets cannot be shown."));
    ErrorText(state.about.assets_error);
    RecordLastItem(state, "about.assets_missing");
  }

  SectionHeader(tr("Libraries used"));
  const ImGuiTableFlags table_flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("##libraries", 3, table_flags)) {
    ImGui::TableSetupColumn(tr("Library"), ImGuiTableColumnFlags_WidthStretch, 0.9f);
    ImGui::TableSetupColumn(tr("Licence"), ImGuiTableColumnFlags_WidthStretch, 1.2f);
    ImGui::TableSetupColumn(tr("Copyright"), ImGuiTableColumnFlags_WidthStretch, 2.0f);
    ImGui::TableHeadersRow();
    for (const LibraryNotice& lib : library_notices()) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", lib.name);
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", lib.licence);
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", lib.copyright);
    }
    ImGui::EndTable();
  }
  WrappedText(tr("The full licence texts are in share/doc/attnscope/copyright where attnscope is installed "
                 "(/usr/share/doc/attnscope/copyright from the Debian package)."));
  ImGui::Spacing();
  if (ImGui::Button(tr("Close"))) state.show_about = false;
  ImGui::End();
}

}  // namespace attnscope::gui
