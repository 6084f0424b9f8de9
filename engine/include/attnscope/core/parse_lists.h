// parse_lists.h — the comma/semicolon lists users type on the command line and in the GUI.
//
//   parse_number_list("0.5,1,2")         → {0.5, 1, 2}         (α per head, kernels)
//   parse_delta_list("-1,0;0,1", 2)      → {{-1,0},{0,1}}      (2D Δ per head)
//   parse_delta_list("-1;0;1", 1)        → {{0,-1},{0,0},{0,1}} (1D Δ stored in [1])
// Every number must be finite; anything else raises InputError naming the item and its position.
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

std::vector<double> parse_number_list(std::string_view text, std::string_view what);
std::vector<std::array<double, 2>> parse_delta_list(std::string_view text, int dims);
// "16x16" or "16X16" → {16, 16}; throws InputError for anything else.
std::array<int, 2> parse_grid_size(std::string_view text);

}  // namespace attnscope
