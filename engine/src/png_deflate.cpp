// png_deflate.cpp — PNG = signature · IHDR · IDAT (zlib stream) · IEND; the zlib stream is one
// deflate block with the fixed Huffman code (RFC 1951 §3.2.6), matching runs at two distances.
//
// Sections: checksums · bit writer · fixed Huffman code · deflate · PNG chunks
#include "png_deflate.h"

#include <array>
#include <cstring>

namespace attnscope::detail {

// ---- checksums -----------------------------------------------------------------------------------
uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint32_t adler32(const uint8_t* data, size_t size) {
  uint32_t a = 1, b = 0;
  while (size > 0) {
    const size_t n = size < 5552 ? size : 5552;  // the most bytes before b can overflow 32 bits
    for (size_t i = 0; i < n; ++i) {
      a += data[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
    data += n;
    size -= n;
  }
  return (b << 16) | a;
}

// ---- bit writer ----------------------------------------------------------------------------------
namespace {

class BitWriter {
 public:
  explicit BitWriter(std::string& out) : out_(out) {}
  // `count` bits of `value`, least significant first (how deflate packs everything but Huffman codes).
  void bits(uint32_t value, int count) {
    buffer_ |= uint64_t(value) << filled_;
    filled_ += count;
    while (filled_ >= 8) {
      out_ += char(buffer_ & 0xFF);
      buffer_ >>= 8;
      filled_ -= 8;
    }
  }
  // A Huffman code goes most significant bit first: reverse it, then write.
  void code(uint32_t code, int length) {
    uint32_t reversed = 0;
    for (int i = 0; i < length; ++i) reversed |= ((code >> i) & 1u) << (length - 1 - i);
    bits(reversed, length);
  }
  void flush() {
    if (filled_ > 0) out_ += char(buffer_ & 0xFF);
    buffer_ = 0;
    filled_ = 0;
  }

 private:
  std::string& out_;
  uint64_t buffer_ = 0;
  int filled_ = 0;
};

// ---- fixed Huffman code --------------------------------------------------------------------------
// Literal/length symbol 0–287 → (code, length) of the fixed code.
void put_symbol(BitWriter& w, int symbol) {
  if (symbol < 144) w.code(0x30u + uint32_t(symbol), 8);
  else if (symbol < 256) w.code(0x190u + uint32_t(symbol - 144), 9);
  else if (symbol < 280) w.code(uint32_t(symbol - 256), 7);
  else w.code(0xC0u + uint32_t(symbol - 280), 8);
}

constexpr int length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr int length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr int distance_base[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
                                   193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr int distance_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

struct Coded {
  int symbol = 0, extra_bits = 0;
  uint32_t extra_value = 0;
};

Coded code_length(int length) {  // 3 … 258
  int k = 28;
  while (length_base[k] > length) --k;
  return {257 + k, length_extra[k], uint32_t(length - length_base[k])};
}

Coded code_distance(size_t distance) {  // 1 … 32768
  int k = 29;
  while (size_t(distance_base[k]) > distance) --k;
  return {k, distance_extra[k], uint32_t(distance - size_t(distance_base[k]))};
}

// How many bytes from `i` repeat the bytes `distance` back (at most 258, the longest deflate match).
size_t match_length(const uint8_t* data, size_t size, size_t i, size_t distance) {
  if (distance == 0 || distance > i) return 0;
  const size_t limit = std::min<size_t>(258, size - i);
  size_t n = 0;
  // Eight bytes at a time while they agree.
  while (n + 8 <= limit) {
    uint64_t a, b;
    std::memcpy(&a, data + i + n, 8);
    std::memcpy(&b, data + i + n - distance, 8);
    if (a != b) break;
    n += 8;
  }
  while (n < limit && data[i + n] == data[i + n - distance]) ++n;
  return n;
}

}  // namespace

// ---- deflate -------------------------------------------------------------------------------------
std::string deflate_runs(const uint8_t* data, size_t size, size_t distance_a, size_t distance_b) {
  std::string out;
  out.reserve(size / 16 + 64);
  out += char(0x78);  // CMF: deflate, 32 KiB window
  out += char(0x01);  // FLG: (0x78·256 + 0x01) is a multiple of 31; no dictionary, fastest level
  if (distance_a > 32768) distance_a = 0;
  if (distance_b > 32768) distance_b = 0;
  const Coded code_a = distance_a ? code_distance(distance_a) : Coded{};
  const Coded code_b = distance_b ? code_distance(distance_b) : Coded{};
  BitWriter w(out);
  w.bits(1, 1);  // BFINAL: the only block
  w.bits(1, 2);  // BTYPE 01: fixed Huffman code
  size_t i = 0;
  while (i < size) {
    const size_t la = match_length(data, size, i, distance_a);
    const size_t lb = match_length(data, size, i, distance_b);
    const size_t length = std::max(la, lb);
    if (length < 3) {
      put_symbol(w, data[i]);
      ++i;
      continue;
    }
    const Coded& d = la >= lb ? code_a : code_b;
    const Coded l = code_length(int(length));
    put_symbol(w, l.symbol);
    if (l.extra_bits) w.bits(l.extra_value, l.extra_bits);
    w.code(uint32_t(d.symbol), 5);
    if (d.extra_bits) w.bits(d.extra_value, d.extra_bits);
    i += length;
  }
  put_symbol(w, 256);  // end of block
  w.flush();
  const uint32_t adler = adler32(data, size);
  for (int shift = 24; shift >= 0; shift -= 8) out += char((adler >> shift) & 0xFF);
  return out;
}

// ---- PNG chunks ----------------------------------------------------------------------------------
namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += char((v >> shift) & 0xFF);
}

void put_chunk(std::string& out, const char type[4], const char* data, size_t size) {
  put_u32(out, uint32_t(size));
  const size_t start = out.size();
  out.append(type, 4);
  if (size > 0) out.append(data, size);
  put_u32(out, crc32(reinterpret_cast<const uint8_t*>(out.data() + start), size + 4));
}

}  // namespace

std::string encode_png_rgba(const uint8_t* rgba, int width, int height) {
  const size_t pixels = size_t(width) * size_t(height);
  bool opaque = true;
  for (size_t p = 0; p < pixels && opaque; ++p) opaque = rgba[p * 4 + 3] == 255;
  const size_t bpp = opaque ? 3 : 4;
  const size_t stride = size_t(width) * bpp;

  // The filtered image: each row is filter byte 0 (None) and its pixels.
  std::string raw(size_t(height) * (stride + 1), '\0');
  for (int y = 0; y < height; ++y) {
    uint8_t* row = reinterpret_cast<uint8_t*>(raw.data()) + size_t(y) * (stride + 1);
    row[0] = 0;
    const uint8_t* src = rgba + size_t(y) * size_t(width) * 4;
    if (opaque)
      for (int x = 0; x < width; ++x) std::memcpy(row + 1 + size_t(x) * 3, src + size_t(x) * 4, 3);
    else
      std::memcpy(row + 1, src, stride);
  }
  // A run of one colour repeats one pixel back; a row like the one above repeats one row back.
  const std::string zlib = deflate_runs(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), bpp, stride + 1);

  std::string png("\x89PNG\r\n\x1a\n", 8);
  char header[13];
  for (int k = 0; k < 4; ++k) {
    header[k] = char((uint32_t(width) >> (24 - 8 * k)) & 0xFF);
    header[4 + k] = char((uint32_t(height) >> (24 - 8 * k)) & 0xFF);
  }
  header[8] = 8;                 // bits per channel
  header[9] = opaque ? 2 : 6;    // colour type: RGB or RGBA
  header[10] = header[11] = header[12] = 0;  // deflate, adaptive filtering, no interlace
  put_chunk(png, "IHDR", header, sizeof header);
  constexpr size_t idat_max = size_t(1) << 20;
  for (size_t at = 0; at < zlib.size(); at += idat_max)
    put_chunk(png, "IDAT", zlib.data() + at, std::min(idat_max, zlib.size() - at));
  put_chunk(png, "IEND", nullptr, 0);
  return png;
}

}  // namespace attnscope::detail
