// platform_download.h — a file the user asked the window to write (an export, a saved scene). On the
// desktop it is where its path says and nothing more is done. In the browser the path is in the page's
// memory, not on the student's disk, so the file is also offered as a download under its name.
#pragma once
#include <filesystem>

namespace attnscope::gui {

// True where written files reach the user only as downloads (the browser build).
bool files_are_downloads();
// The browser: the browser's download of `path` (read from the page's file system) under its file name.
// The desktop: nothing.
void offer_download(const std::filesystem::path& path);

}  // namespace attnscope::gui
