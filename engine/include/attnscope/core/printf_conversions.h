// printf_conversions.h — the printf conversions of a format, so that a translated format is used only
// when it reads the same arguments in the same order as the English one (translations of the window's
// words and of the figures' words both check it).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// printf conversions of `format` in order ("%d", "%.1f", "%lld", "%s"); "%%" is not one. A dangling
// '%' at the end is a conversion of its own ("%"), so it never matches a well-formed format.
std::vector<std::string> printf_conversions(std::string_view format);

}  // namespace attnscope
