// Replays every committed fuzz input (seed corpus and crash regressions) through the fuzz entry
// points, so the normal suite — and the sanitizer build — keep every input found by fuzzing fixed.
#include <doctest/doctest.h>

#include <filesystem>

#include "attnscope/io/file_io.h"
#include "fuzz/fuzz_entries.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

size_t replay(const std::string& target, attnscope::fuzz::Entry entry) {
  size_t count = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fuzz" / kind / target;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      const std::string bytes = attnscope::read_file(e.path(), 1 << 24);
      CAPTURE(e.path().string());
      entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++count;
    }
  }
  return count;
}

}  // namespace

TEST_CASE("fuzz corpus: every committed input runs cleanly through its target") {
  for (const auto& t : attnscope::fuzz::targets) {
    CAPTURE(t.name);
    CHECK(replay(t.name, t.entry) >= size_t(t.min_corpus));
  }
  // Every corpus folder belongs to a target.
  for (const auto& e : fs::directory_iterator(fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fuzz/corpus")) {
    bool known = false;
    for (const auto& t : attnscope::fuzz::targets) known = known || e.path().filename() == t.name;
    CHECK_MESSAGE(known, e.path() << " has no fuzz target");
  }
}

TEST_CASE("fuzz regressions: a PNG chunk claiming more bytes than the file holds is refused before decoding") {
  // Found by fuzz_image: stb_image allocated the claimed 1.35 GB before noticing the file was short.
  const std::string bytes = attnscope::read_file(
      fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fuzz/regressions/image/oom-png-chunk-length.png", 1 << 20);
  CHECK_THROWS_WITH_AS(attnscope::decode_image_grid(bytes, "x.png", 64, 64, false),
                       doctest::Contains("claims 1350960968 bytes but the file ends sooner"), attnscope::InputError);
}

TEST_CASE("fuzz regressions: an image header claiming more than 2^24 pixels is refused before decoding") {
  // Found by fuzz_image: 62 bytes of TGA claiming 8224×8224 pixels took seconds and gigabytes.
  const std::string bytes = attnscope::read_file(
      fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fuzz/regressions/image/timeout-huge-header.tga", 1 << 20);
  CHECK_THROWS_WITH_AS(attnscope::decode_image_grid(bytes, "x.tga", 64, 64, false),
                       doctest::Contains("claims 8224×8224 pixels but the file holds 62 bytes"), attnscope::InputError);
  // A file large enough to be honest about 5000×5000 still exceeds the 2^24-pixel decode limit.
  auto be32 = [](uint32_t v) {
    return std::string{char(v >> 24), char((v >> 16) & 0xFF), char((v >> 8) & 0xFF), char(v & 0xFF)};
  };
  auto chunk = [&](const std::string& type, const std::string& data) {
    return be32(uint32_t(data.size())) + type + data + be32(0);  // stb_image does not check CRCs
  };
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) +
                          chunk("IHDR", be32(5000) + be32(5000) + std::string("\x08\x00\x00\x00\x00", 5)) +
                          chunk("tEXt", std::string(8000, 'a')) + chunk("IEND", "");
  CHECK_THROWS_WITH_AS(attnscope::decode_image_grid(png, "big.png", 64, 64, false),
                       doctest::Contains("5000×5000 pixels is more than 16777216 pixels"), attnscope::InputError);
}

TEST_CASE("fuzz regressions: a tiny file whose header claims millions of pixels is refused before decoding") {
  // Found by fuzz_image: 21 bytes of TGA claiming 160×32800 pixels, decoded in full before the shrink.
  const std::string bytes = attnscope::read_file(
      fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fuzz/regressions/image/timeout-tiny-file-huge-claim.tga", 1 << 20);
  CHECK_THROWS_WITH_AS(attnscope::decode_image_grid(bytes, "x.tga", 64, 64, false),
                       doctest::Contains("claims 160×32800 pixels but the file holds 21 bytes"), attnscope::InputError);
}
