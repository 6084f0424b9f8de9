// csv_close.h — two CSV texts that are the same table: the same lines and fields, the fields that are numbers
// within `tolerance` of each other (two runs of a forward pass may differ in the last bits), the others equal.
// Quoted fields are compared as text.
#pragma once
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace attnscope::test {

inline std::vector<std::string> csv_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// "" when the tables agree, else where they first differ.
inline std::string csv_difference(const std::string& a, const std::string& b, double tolerance) {
  const std::vector<std::string> la = csv_lines(a), lb = csv_lines(b);
  if (la.size() != lb.size()) return std::to_string(la.size()) + " lines against " + std::to_string(lb.size());
  for (size_t i = 0; i < la.size(); ++i) {
    const std::vector<std::string> fa = csv_fields(la[i]), fb = csv_fields(lb[i]);
    if (fa.size() != fb.size()) return "line " + std::to_string(i + 1) + ": field counts differ";
    for (size_t k = 0; k < fa.size(); ++k) {
      if (fa[k] == fb[k]) continue;
      char* ea = nullptr;
      char* eb = nullptr;
      const double x = std::strtod(fa[k].c_str(), &ea), y = std::strtod(fb[k].c_str(), &eb);
      const bool numbers = !fa[k].empty() && !fb[k].empty() && *ea == '\0' && *eb == '\0';
      if (!numbers || !(std::abs(x - y) <= tolerance))
        return "line " + std::to_string(i + 1) + ", field " + std::to_string(k + 1) + ": '" + fa[k] + "' against '" + fb[k] + "'";
    }
  }
  return "";
}

}  // namespace attnscope::test
