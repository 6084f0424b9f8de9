// token_labels.cpp — the label policy of token_labels.h.
#include "attnscope/text/token_labels.h"

#include "text/unicode_text.h"

namespace attnscope {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string escape_control(char32_t cp) {
  if (cp == '\r') return "\\r";
  static const char* hex = "0123456789ABCDEF";
  return std::string("\\x") + hex[(cp >> 4) & 15] + hex[cp & 15];
}

}  // namespace

std::string visible_label(std::string_view text) {
  using namespace text_detail;
  bool only_space = !text.empty();
  for (size_t i = 0; i < text.size() && only_space;) only_space = is_white_space(next_code_point(text, i));
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    const size_t begin = i;
    const char32_t cp = next_code_point(text, i);
    if (cp == '\n') {
      out += "↵";
    } else if (cp == '\t') {
      out += "⇥";
    } else if (only_space && cp != '\r' && cp != 0x0B && cp != 0x0C && cp != 0x85) {
      out += "␣";  // a space, no-break space, ideographic space …
    } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
      out += escape_control(cp);
    } else {
      out.append(text.substr(begin, i - begin));
    }
  }
  return out;
}

std::vector<std::string> token_labels(const std::vector<std::string>& bytes, const std::vector<uint8_t>& special) {
  using namespace text_detail;
  std::vector<std::string> labels(bytes.size());
  std::string pending;       // bytes of a character not yet complete
  size_t last_carrier = 0;   // the last token whose bytes went into `pending`
  auto flush_broken = [&] {  // a character that never completes: U+FFFD on the token that began to hold it
    if (pending.empty()) return;
    std::string& l = labels[last_carrier];
    l = l == kPartialCharacterMark ? std::string(kReplacement) : l + std::string(kReplacement);
    pending.clear();
  };
  for (size_t t = 0; t < bytes.size(); ++t) {
    if (t < special.size() && special[t]) {
      flush_broken();
      labels[t] = bytes[t].empty() ? std::string(kEmptyTokenMark) : visible_label(utf8_lossy(bytes[t]));
      continue;
    }
    const std::string buffer = pending + bytes[t];
    std::string text;
    size_t pos = 0;
    while (pos < buffer.size()) {
      size_t n;
      const Utf8Step step = utf8_step(buffer, pos, n);
      if (step == Utf8Step::truncated) break;  // wait for the next token's bytes
      if (step == Utf8Step::complete)
        text.append(buffer, pos, n);
      else
        text += kReplacement;
      pos += n;
    }
    pending = buffer.substr(pos);
    if (!pending.empty() && !bytes[t].empty()) last_carrier = t;
    if (!text.empty())
      labels[t] = visible_label(text);
    else
      labels[t] = std::string(bytes[t].empty() ? kEmptyTokenMark : kPartialCharacterMark);
  }
  flush_broken();
  return labels;
}

}  // namespace attnscope
