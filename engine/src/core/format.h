// format.h — (private) numbers as text for messages, captions and file names.
#pragma once
#include <cstdio>
#include <string>

namespace attnscope::detail {

// printf's %g: 6 significant digits, no trailing zeros ("0.5", "1e+06", "inf", "nan").
inline std::string format_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace attnscope::detail
