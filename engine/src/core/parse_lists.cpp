// parse_lists.cpp — strict parsing of user-typed number lists.
#include "attnscope/core/parse_lists.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "attnscope/core/error.h"

namespace attnscope {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits on `sep`, keeping empty items so that "1,,2" is reported rather than skipped.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

double parse_number(std::string_view item, std::string_view what, size_t position) {
  const std::string text(trim(item));
  const std::string where = std::string(what) + " item " + std::to_string(position);
  require(!text.empty(), where + " is empty (expected a number)");
  require(text.size() < 64, where + " is too long to be a number");
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  require(end == text.c_str() + text.size(), where + " '" + text + "' is not a number");
  require(std::isfinite(v) && errno != ERANGE, where + " '" + text + "' is not a finite number");
  return v;
}

}  // namespace

std::vector<double> parse_number_list(std::string_view text, std::string_view what) {
  require(!trim(text).empty(), std::string(what) + " is empty (expected numbers separated by commas)");
  std::vector<double> values;
  size_t position = 1;
  for (std::string_view item : split(text, ',')) values.push_back(parse_number(item, what, position++));
  return values;
}

std::vector<std::array<double, 2>> parse_delta_list(std::string_view text, int dims) {
  require(dims == 1 || dims == 2, "deltas have 1 or 2 dimensions");
  const char* form = dims == 2 ? "\"dr,dc;dr,dc;...\"" : "\"d;d;...\"";
  require(!trim(text).empty(), std::string("the delta list is empty (expected ") + form + ")");
  std::vector<std::array<double, 2>> deltas;
  size_t position = 1;
  for (std::string_view item : split(text, ';')) {
    const auto numbers = split(item, ',');
    require(int(numbers.size()) == dims, "delta " + std::to_string(position) + " '" + std::string(trim(item)) +
                                             "' must have " + std::to_string(dims) + " number" +
                                             (dims == 2 ? "s dr,dc" : "") + " (expected " + form + ")");
    if (dims == 2)
      deltas.push_back({parse_number(numbers[0], "delta", position), parse_number(numbers[1], "delta", position)});
    else
      deltas.push_back({0.0, parse_number(numbers[0], "delta", position)});
    ++position;
  }
  return deltas;
}

std::array<int, 2> parse_grid_size(std::string_view text) {
  const std::string t(trim(text));
  const size_t x = t.find_first_of("xX");
  auto bad = [&] { return InputError("grid size '" + t + "' must be RxC with whole numbers, e.g. 16x16"); };
  if (x == std::string::npos || x == 0 || x + 1 >= t.size() || t.size() > 16) throw bad();
  auto whole = [&](const std::string& s) {
    if (s.size() > 6) throw bad();  // keeps stoi in range; real grids are at most 64
    for (char c : s)
      if (c < '0' || c > '9') throw bad();
    return std::stoi(s);
  };
  return {whole(t.substr(0, x)), whole(t.substr(x + 1))};
}

}  // namespace attnscope
