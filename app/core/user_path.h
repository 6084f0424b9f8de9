// user_path.h — a path as a user typed it into the window, made into the one the program opens and
// shows: "~" and "~/…" become the home folder ($HOME), a relative path is made absolute against the
// current folder, and "." / ".." steps are resolved on the text (the path need not exist). Every path
// field of the window (tokenizer, tensor, image, checkpoint, scene, export, training save folder)
// goes through it, so what the window reports ("saved to …") is the absolute path.
#pragma once
#include <filesystem>
#include <string>

namespace attnscope {

// Empty (or only spaces) stays empty: the field's "nothing given". "~user/…" is left as typed after
// the home-folder rule (only the user's own home is known without a lookup), then made absolute.
// Surrounding spaces — from a pasted path — are dropped. Without $HOME, "~" stays as typed.
std::filesystem::path user_path(const std::string& typed);
// user_path(typed) as text, for the window's fields and messages.
std::string user_path_text(const std::string& typed);

}  // namespace attnscope
