// platform_open.h — how a checkpoint folder on the user's disk reaches the window. On the desktop the
// window reads the disk itself: the Checkpoint window's path field, a folder dropped onto the window.
// In the browser the page cannot read a typed path: the student picks the folder in the page's file
// picker (or drops it onto the canvas), the page (app/web/checkpoint_picker.js) sums the sizes of the
// files attnscope reads, refuses a folder too big for the page's memory before copying anything, else
// copies them into the page's memory (/models/<name>/) and the window opens that folder with the same
// loader as the desktop's (CheckpointLoader).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace attnscope::gui {

// True where folders are picked in the page rather than typed (the browser build).
bool folders_are_picked();
// The browser: opens the page's folder picker. The desktop: nothing (its path field is the way).
void pick_checkpoint_folder();

// The largest total of a picked folder's files the page copies in: the page's memory is a 32-bit
// WebAssembly memory (4 GiB at most), which holds both the files' bytes and the weights as float32.
uint64_t picked_folder_limit();
// Tests lower it to see a folder refused without gigabytes of files (the browser test, through the
// page's Module._attnscope_web_set_folder_limit).
void set_picked_folder_limit(uint64_t bytes);

// Why the page did not copy a picked folder (the window says it in the UI language).
struct FolderRefusal {
  enum class Kind { too_big, unreadable } kind = Kind::too_big;
  std::string name;          // the folder's name
  double total = 0;          // too_big: the bytes of the files attnscope reads
  double limit = 0;          // too_big: picked_folder_limit()
  std::string file, reason;  // unreadable: the file the browser could not read, or copy into memory, and why
};
// What the page reports about a picked folder, on the UI thread (the browser calls in between frames).
struct PickedFolderHandler {
  std::function<void(const std::string& dir)> copied;         // its files are in memory at dir: open it
  std::function<void(const FolderRefusal& refusal)> refused;  // nothing was opened
};
void set_picked_folder_handler(PickedFolderHandler handler);

// The copy under way ("" name when none): the folder's name and bytes copied of its total.
struct FolderCopy {
  std::string name;
  double done = 0, total = 0;
};
const FolderCopy& folder_copy();

// A byte count as the window says it: "548.1 MiB", "2.00 GiB".
std::string byte_size_text(double bytes);

}  // namespace attnscope::gui
