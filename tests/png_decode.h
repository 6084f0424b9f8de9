// png_decode.h — PNG bytes and files decoded by stb_image, a decoder independent of the engine's encoder
// (render_png.h), into an Image: what the tests that check an export's or the window's pixels read them with.
#pragma once
#include <doctest/doctest.h>
#include <stb_image.h>

#include <filesystem>
#include <string>

#include "attnscope/figure/image.h"

namespace attnscope::test {

// stb_image's RGBA pixels `px` (w × h; null where it could not decode `what`) as an Image; frees them.
inline Image image_of_stb(unsigned char* px, int w, int h, const std::string& what) {
  REQUIRE_MESSAGE(px != nullptr, "cannot decode " << what << ": " << stbi_failure_reason());
  Image img;
  img.width = w;
  img.height = h;
  img.rgba.assign(px, px + size_t(w) * size_t(h) * 4);
  stbi_image_free(px);
  return img;
}

// A PNG in memory (an ExportedFile's bytes), as RGBA.
inline Image decode_png(const std::string& bytes) {
  int w = 0, h = 0, channels = 0;
  unsigned char* px = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(bytes.data()), int(bytes.size()),
                                            &w, &h, &channels, 4);
  return image_of_stb(px, w, h, "the PNG's " + std::to_string(bytes.size()) + " bytes");
}

// A PNG file, as RGBA.
inline Image load_png(const std::filesystem::path& path) {
  int w = 0, h = 0, channels = 0;
  unsigned char* px = stbi_load(path.string().c_str(), &w, &h, &channels, 4);
  return image_of_stb(px, w, h, path.string());
}

}  // namespace attnscope::test
