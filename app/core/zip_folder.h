// zip_folder.h — a folder as one .zip file (stored, not compressed), so that the browser build can offer
// a saved checkpoint folder (config.json, model.safetensors, vocab.json, loss.csv) as one download: the
// student unzips it into the same folder the desktop's Save checkpoint writes.
#pragma once
#include <filesystem>

namespace attnscope::gui {

// Writes `zip`: every regular file directly inside `folder`, sorted by name, as "<folder name>/<file>"
// entries with their CRC-32 (PKWARE APPNOTE 6.3, method 0 "stored"). Throws InputError (naming the file)
// when a file cannot be read, when one is 4 GiB or more, or the archive would be (no ZIP64 here), or when
// `zip` cannot be written; no partial zip is left behind.
void zip_folder(const std::filesystem::path& folder, const std::filesystem::path& zip);

}  // namespace attnscope::gui
