#include "core/scene_link.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/scene/scene_json.h"

// stb's zlib coder (Debian's libstb on the desktop, app/web/stb_implementation.c in the browser). The
// compressor is public in stb_image_write.h's implementation but not declared in its header part.
extern "C" {
unsigned char* stbi_zlib_compress(unsigned char* data, int data_len, int* out_len, int quality);
int stbi_zlib_decode_buffer(char* obuffer, int olen, const char* ibuffer, int ilen);
const char* stbi_failure_reason(void);
}

namespace attnscope {
namespace {

constexpr char base64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode_base64url(const std::string& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  uint32_t bits = 0;
  int count = 0;
  for (const char c : bytes) {
    bits = (bits << 8) | uint8_t(c);
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += base64url[(bits >> count) & 63];
    }
  }
  if (count > 0) out += base64url[(bits << (6 - count)) & 63];
  return out;
}

int base64url_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

std::string decode_base64url(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);  // padding, if a tool added it
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const int v = base64url_value(text[i]);
    if (v < 0) {
      const unsigned char c = uint8_t(text[i]);
      const std::string shown = c >= 0x21 && c < 0x7f ? "'" + std::string(1, char(c)) + "'" : "byte " + std::to_string(c);
      throw InputError("the link's scene has " + shown + " at character " + std::to_string(i + 1) +
                       ", which base64url does not use (only A-Z a-z 0-9 - _)");
    }
    bits = (bits << 6) | uint32_t(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += char((bits >> count) & 0xff);
    }
  }
  // Checked after the characters: a wrong character says more than the length it leads to.
  if (text.size() % 4 == 1)
    throw InputError("the link's scene is " + std::to_string(text.size()) +
                     " characters long, a length base64 never has (was the link cut short?)");
  return out;
}

uint32_t adler32(const std::string& bytes) {
  uint32_t a = 1, b = 0;
  for (const char c : bytes) {
    a = (a + uint8_t(c)) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

std::string unpack(const std::string& packed) {
  // A zlib stream: a 2-byte header, the deflate data, and the Adler-32 of what it unpacks to.
  if (packed.size() < 7) throw InputError("the link's scene is too short to hold a scene (was the link cut short?)");
  std::string json(max_scene_link_json, '\0');
  const int n = stbi_zlib_decode_buffer(json.data(), int(json.size()), packed.data(), int(packed.size()));
  if (n < 0) {
    const char* why = stbi_failure_reason();
    if (why && std::strcmp(why, "output buffer limit") == 0)
      throw InputError("the link's scene unpacks to more than " + std::to_string(max_scene_link_json / 1024) +
                       " KB, more than any scene");
    throw InputError(std::string("the link's scene is not compressed scene data (") + (why ? why : "unreadable") +
                     "): was the link cut short or changed?");
  }
  json.resize(size_t(n));
  const auto* tail = reinterpret_cast<const uint8_t*>(packed.data() + packed.size() - 4);
  const uint32_t stored = (uint32_t(tail[0]) << 24) | (uint32_t(tail[1]) << 16) | (uint32_t(tail[2]) << 8) | tail[3];
  if (stored != adler32(json))
    throw InputError("the link's scene fails its checksum: was the link cut short or changed?");
  return json;
}

}  // namespace

std::string scene_link_text(const Scene& scene) { return pack_link_text(scene_to_json(scene).dump()); }

std::string pack_link_text(const std::string& text) {
  std::string json = text;  // stb's compressor takes a non-const pointer
  int size = 0;
  unsigned char* packed = stbi_zlib_compress(reinterpret_cast<unsigned char*>(json.data()), int(json.size()), &size, 9);
  if (!packed) throw InputError("the scene could not be compressed for a link");
  std::string bytes(reinterpret_cast<const char*>(packed), size_t(size));
  std::free(packed);  // stb_image_write allocates with malloc (STBIW_MALLOC)
  return encode_base64url(bytes);
}

std::string unpack_link_text(std::string_view text) {
  if (text.empty()) throw InputError("the link's scene is empty (…?scene= with nothing after it)");
  if (text.size() > max_scene_link_chars)
    throw InputError("the link's scene is " + std::to_string(text.size()) + " characters long, more than the " +
                     std::to_string(max_scene_link_chars) + " a scene's link ever needs");
  return unpack(decode_base64url(text));
}

Scene scene_from_link_text(std::string_view text, std::vector<std::string>* warnings) {
  const std::string json_text = unpack_link_text(text);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(std::string("the link's scene is not valid JSON: ") + e.what());
  }
  try {
    return scene_from_json(j, warnings);
  } catch (const InputError& e) {
    throw InputError(std::string("the link's scene: ") + e.what());
  }
}

std::string_view scene_text_of_link(std::string_view link) {
  for (const std::string_view key : {"?scene=", "&scene="}) {
    const size_t at = link.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view rest = link.substr(at + key.size());
    return rest.substr(0, rest.find_first_of("&#"));
  }
  return link;
}

std::string scene_link(std::string_view site, const Scene& scene) {
  std::string base(site.substr(0, site.find('#')));
  const char joint = base.find('?') == std::string::npos ? '?' : (base.back() == '?' || base.back() == '&') ? '\0' : '&';
  if (joint) base += joint;
  return base + "scene=" + scene_link_text(scene);
}

}  // namespace attnscope
