// Replays every committed fuzz input (seed corpus and crash regressions) through the fuzz entry
// points, so the normal suite — and the sanitizer build — keep every input found by fuzzing fixed.
#include <doctest/doctest.h>

#include <filesystem>

#include "attnscope/file_io.h"
#include "fuzz/fuzz_entries.h"

namespace fs = std::filesystem;

namespace {

using Entry = void (*)(const uint8_t*, size_t);

size_t replay(const std::string& target, Entry entry) {
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
  namespace f = attnscope::fuzz;
  CHECK(replay("npy", f::npy) >= 4);
  CHECK(replay("scene_json", f::scene_json) >= 3);
  CHECK(replay("tokenizer", f::tokenizer) >= 3);
  CHECK(replay("lists", f::lists) >= 4);
  CHECK(replay("image", f::image) >= 2);
  CHECK(replay("cli", f::cli) >= 3);
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
                       doctest::Contains("8224×8224 pixels is more than 16777216 pixels"), attnscope::InputError);
}
