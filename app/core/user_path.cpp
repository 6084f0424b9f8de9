#include "core/user_path.h"

#include <cstdlib>
#include <system_error>

namespace attnscope {

std::filesystem::path user_path(const std::string& typed) {
  namespace fs = std::filesystem;
  const size_t first = typed.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const size_t last = typed.find_last_not_of(" \t\r\n");
  std::string text = typed.substr(first, last - first + 1);
  if (text[0] == '~' && (text.size() == 1 || text[1] == '/')) {
    const char* home = std::getenv("HOME");
    if (home && *home) text = std::string(home) + text.substr(1);
  }
  fs::path p(text);
  if (p.is_relative()) {
    std::error_code ec;
    const fs::path here = fs::current_path(ec);
    if (!ec) p = here / p;
  }
  p = p.lexically_normal();
  // "/a/b/" → "/a/b": a folder typed with its slash is the same folder.
  if (p.has_relative_path() && !p.has_filename()) p = p.parent_path();
  return p;
}

std::string user_path_text(const std::string& typed) { return user_path(typed).string(); }

}  // namespace attnscope
