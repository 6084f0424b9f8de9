#include "attnscope/core/printf_conversions.h"

#include <cctype>

namespace attnscope {

std::vector<std::string> printf_conversions(std::string_view f) {
  std::vector<std::string> out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') continue;
    const size_t start = i++;
    while (i < f.size() && std::string_view("-+ #0").find(f[i]) != std::string_view::npos) ++i;  // flags
    while (i < f.size() && (std::isdigit(static_cast<unsigned char>(f[i])) || f[i] == '*' || f[i] == '.')) ++i;
    while (i < f.size() && std::string_view("hljztL").find(f[i]) != std::string_view::npos) ++i;  // length
    if (i >= f.size()) {
      out.emplace_back(f.substr(start));  // a dangling '%': a conversion of its own, so it never matches
      break;
    }
    if (f[i] == '%' && i == start + 1) continue;  // "%%"
    out.emplace_back(f.substr(start, i - start + 1));
  }
  return out;
}

}  // namespace attnscope
