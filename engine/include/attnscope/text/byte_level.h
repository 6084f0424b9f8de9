// byte_level.h — GPT-2's bytes-to-unicode table (Radford et al. 2019, encoder.py bytes_to_unicode).
//
// Byte-level BPE works on bytes, but its vocabulary files are text: every byte is written as one
// printable character. The 188 printable Latin-1 bytes (! … ~, ¡ … ¬, ® … ÿ) stand for themselves;
// the other 68 (controls, space, DEL, NBSP, soft hyphen) become U+0100 + n in byte order, so the
// space 0x20 is written `Ġ` (U+0120) and the newline 0x0A `Ċ` (U+010A).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace attnscope {

char32_t byte_to_unicode(uint8_t byte);
// The byte a table character stands for, or −1 when `c` is not one of the 256 table characters.
int unicode_to_byte(char32_t c);

// Bytes → their table characters as UTF-8 ("héllo" → "hÃ©llo", " " → "Ġ").
std::string bytes_to_byte_level(std::string_view bytes);
// Table characters (UTF-8) → bytes. False when a character is not in the table (then `bytes` is
// unspecified): Hugging Face's ByteLevel decoder then keeps the token's own UTF-8 bytes.
bool byte_level_to_bytes(std::string_view text, std::string& bytes);

}  // namespace attnscope
