// png_deflate.h (private) — a fast PNG encoder for figures: large flat areas, some text.
//
// stb_image_write tries five row filters and hashes every byte; on a 4K figure that is ~0.5 s. A
// heatmap figure is mostly runs of one pixel colour and rows repeating the row above, so this
// encoder looks for exactly those two matches (distance one pixel and distance one row) with
// filter None, and codes them with deflate's fixed Huffman table: one pass, ~10× faster, files of
// similar size. Opaque images are written as RGB (colour type 2), others as RGBA (6).
// The output is checked against stb_image's decoder in tests/test_render_png_encoder.cpp.
#pragma once
#include <cstdint>
#include <string>

namespace attnscope::detail {

// PNG bytes of `height` rows of `width` RGBA pixels (row stride width·4). width, height ≥ 1.
std::string encode_png_rgba(const uint8_t* rgba, int width, int height);

// zlib stream (RFC 1950/1951) of `data`, matching only at the two given distances (0 = unused).
std::string deflate_runs(const uint8_t* data, size_t size, size_t distance_a, size_t distance_b);

uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc = 0);
uint32_t adler32(const uint8_t* data, size_t size);

}  // namespace attnscope::detail
