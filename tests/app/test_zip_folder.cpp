// test_zip_folder.cpp — a saved folder as one zip (app/core/zip_folder.h), the browser's Save checkpoint
// download: read back here by the APPNOTE's own fields (central directory → local headers → bytes).
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "core/zip_folder.h"
#include "test_tmp.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {
uint32_t u16(const std::string& b, size_t at) { return uint32_t(uint8_t(b.at(at))) | uint32_t(uint8_t(b.at(at + 1))) << 8; }
uint32_t u32(const std::string& b, size_t at) { return u16(b, at) | u16(b, at + 2) << 16; }

struct Entry {
  std::string name, bytes;
  uint32_t crc = 0;
};

// The entries as an unzip tool finds them: the end record, the central directory, each local header.
std::vector<Entry> read_zip(const std::string& zip) {
  REQUIRE(zip.size() >= 22);
  const size_t end = zip.size() - 22;
  REQUIRE(u32(zip, end) == 0x06054b50);
  const uint32_t count = u16(zip, end + 10), dir_size = u32(zip, end + 12), dir_at = u32(zip, end + 16);
  REQUIRE(dir_at + dir_size == end);
  std::vector<Entry> entries;
  size_t at = dir_at;
  for (uint32_t i = 0; i < count; ++i) {
    REQUIRE(u32(zip, at) == 0x02014b50);
    CHECK(u16(zip, at + 10) == 0);  // stored
    const uint32_t crc = u32(zip, at + 16), size = u32(zip, at + 20), name_size = u16(zip, at + 28);
    CHECK(u32(zip, at + 24) == size);
    const uint32_t local = u32(zip, at + 42);
    Entry e;
    e.name = zip.substr(at + 46, name_size);
    e.crc = crc;
    REQUIRE(u32(zip, local) == 0x04034b50);
    CHECK(u32(zip, local + 14) == crc);
    CHECK(zip.substr(local + 30, u16(zip, local + 26)) == e.name);
    e.bytes = zip.substr(local + 30 + u16(zip, local + 26) + u16(zip, local + 28), size);
    entries.push_back(e);
    at += 46 + name_size + u16(zip, at + 30) + u16(zip, at + 32);
  }
  CHECK(at == end);
  return entries;
}
}  // namespace

TEST_CASE("zip folder: every file of the folder under its name, its bytes and CRC-32") {
  const fs::path dir = test::test_tmp() / "zip_folder" / "window";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir / "sub");
  write_file_atomic(dir / "config.json", "{\"model_type\": \"gpt2\"}\n");
  write_file_atomic(dir / "check.txt", "123456789");  // CRC-32's check value: 0xCBF43926
  std::string binary(70000, '\0');
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = char(i * 7 % 251);
  write_file_atomic(dir / "model.safetensors", binary);
  write_file_atomic(dir / "empty.csv", "");
  write_file_atomic(dir / "sub" / "not_in_zip.txt", "only the folder's own files");
  const fs::path zip = dir.parent_path() / "window.zip";
  gui::zip_folder(dir, zip);
  const std::vector<Entry> entries = read_zip(read_file(zip, 1 << 20));
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].name == "window/check.txt");  // sorted by name
  CHECK(entries[0].crc == 0xCBF43926u);
  CHECK(entries[1].name == "window/config.json");
  CHECK(entries[1].bytes == "{\"model_type\": \"gpt2\"}\n");
  CHECK(entries[2].name == "window/empty.csv");
  CHECK(entries[2].bytes.empty());
  CHECK(entries[2].crc == 0);
  CHECK(entries[3].name == "window/model.safetensors");
  CHECK(entries[3].bytes == binary);
  // A trailing separator names the same folder.
  gui::zip_folder(dir.string() + "/", dir.parent_path() / "again.zip");
  CHECK(read_zip(read_file(dir.parent_path() / "again.zip", 1 << 20))[0].name == "window/check.txt");
}

TEST_CASE("zip folder: a folder that is not there is an InputError naming it, and no zip is left") {
  const fs::path dir = test::test_tmp() / "zip_folder_missing";
  fs::remove_all(dir);
  fs::create_directories(dir);
  CHECK_THROWS_WITH_AS(gui::zip_folder(dir / "no_such", dir / "out.zip"), doctest::Contains("no_such"), InputError);
  CHECK_FALSE(fs::exists(dir / "out.zip"));
}
