// token_quote.h — a token or piece of text quoted for an error message: in single quotes, control
// bytes as \xNN, cut after about 40 bytes (at a character boundary), so a message stays one readable line.
#pragma once
#include <string>
#include <string_view>

namespace attnscope::text_detail {

inline std::string quote_token(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "'";
  size_t shown = s.size() > 40 ? 40 : s.size();
  while (shown < s.size() && shown > 0 && (static_cast<unsigned char>(s[shown]) & 0xC0) == 0x80) --shown;
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  if (shown < s.size()) out += "…";
  return out + "'";
}

}  // namespace attnscope::text_detail
