// byte_level.cpp — GPT-2's bytes-to-unicode table, built once.
#include "attnscope/text/byte_level.h"

#include <array>

#include "attnscope/text/tokenizer.h"
#include "text/unicode_text.h"

namespace attnscope {
namespace {

struct Table {
  std::array<char32_t, 256> to_char{};
  std::array<std::string, 256> to_utf8;
  std::array<int16_t, 512> to_byte{};  // every table character is below U+0200
  Table() {
    to_byte.fill(-1);
    // Printable Latin-1 bytes map to themselves; the rest take U+0100, U+0101, … in byte order.
    auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
    int next = 0;
    for (int b = 0; b < 256; ++b) {
      const char32_t c = printable(b) ? char32_t(b) : char32_t(256 + next++);
      to_char[size_t(b)] = c;
      to_utf8[size_t(b)] = encode_utf8(c);
      to_byte[size_t(c)] = int16_t(b);
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

char32_t byte_to_unicode(uint8_t byte) { return table().to_char[byte]; }

int unicode_to_byte(char32_t c) { return c < 512 ? table().to_byte[c] : -1; }

std::string bytes_to_byte_level(std::string_view bytes) {
  const Table& t = table();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) out += t.to_utf8[b];
  return out;
}

bool byte_level_to_bytes(std::string_view text, std::string& bytes) {
  bytes.clear();
  for (size_t i = 0; i < text.size();) {
    const int b = unicode_to_byte(text_detail::next_code_point(text, i));
    if (b < 0) return false;
    bytes += char(b);
  }
  return true;
}

}  // namespace attnscope
