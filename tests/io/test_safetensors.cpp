// Tests of the safetensors reader: every way a header can be wrong, the dtype conversions, the
// mapped file's refusals, and the writer's round trip.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/safetensors.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using attnscope::test::contains;
using attnscope::test::error_of;

namespace {

// A file: 8-byte length, the header text as given, then `data_bytes` zero bytes.
std::string file_with_header(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((n >> (8 * i)) & 0xFF);
  return out + header + std::string(data_bytes, '\0');
}

std::string parse_error(const std::string& bytes) {
  return error_of([&] { (void)parse_safetensors_header(bytes, bytes.size(), "x.safetensors"); });
}

std::string entry(const std::string& dtype, const std::string& shape, uint64_t b, uint64_t e) {
  return "{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" + std::to_string(b) + "," +
         std::to_string(e) + "]}";
}

}  // namespace

TEST_CASE("safetensors: a valid header lists its tensors sorted by offset, with metadata") {
  const std::string h = "{\"b\":" + entry("F32", "[2,3]", 8, 32) + ",\"a\":" + entry("BF16", "[4]", 0, 8) +
                        ",\"__metadata__\":{\"format\":\"pt\"}}  ";
  const std::string bytes = file_with_header(h, 32);
  const SafetensorsHeader header = parse_safetensors_header(bytes, bytes.size(), "x");
  REQUIRE(header.tensors.size() == 2);
  CHECK(header.tensors[0].name == "a");
  CHECK(header.tensors[0].dtype == TensorDtype::bf16);
  CHECK(header.tensors[1].shape == std::vector<int64_t>{2, 3});
  CHECK(header.tensors[1].count() == 6);
  CHECK(header.data_start == 8 + h.size());
  CHECK(header.metadata.at("format") == "pt");
  CHECK(header.find("b") == &header.tensors[1]);
  CHECK(header.find("c") == nullptr);
}

TEST_CASE("safetensors: a scalar and an empty tensor are valid") {
  const std::string bytes = file_with_header("{\"s\":" + entry("F32", "[]", 0, 4) + ",\"e\":" + entry("F16", "[0,5]", 4, 4) + "}", 4);
  const SafetensorsHeader header = parse_safetensors_header(bytes, bytes.size(), "x");
  CHECK(header.find("s")->count() == 1);
  CHECK(header.find("e")->count() == 0);
}

TEST_CASE("safetensors: every malformed header is refused with a message naming the problem") {
  const std::string ok = entry("F32", "[2]", 0, 8);
  CHECK(contains(parse_error(std::string("\x05\0\0", 3)), "truncated"));
  CHECK(contains(parse_error(file_with_header("{}", 0).substr(0, 9)), "runs past the end of the file"));
  // A header length far beyond the file.
  std::string huge = file_with_header("{}", 0);
  huge[5] = '\x01';
  CHECK(contains(parse_error(huge), "runs past the end of the file"));
  CHECK(contains(parse_error(file_with_header("not json", 0)), "does not start with '{'"));
  CHECK(contains(parse_error(file_with_header("{\"a\": [1,", 0)), "not valid JSON"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + ok + ",\"a\":" + ok + "}", 8)), "names tensor 'a' twice"));
  CHECK(contains(parse_error(file_with_header("{\"a\":3}", 0)), "tensor 'a' is not described by a JSON object"));
  CHECK(contains(parse_error(file_with_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4)), "data_offsets"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + entry("Q4", "[2]", 0, 8) + "}", 8)), "unknown dtype 'Q4'"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + entry("F32", "[-2]", 0, 8) + "}", 8)), "not a whole number"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + entry("F32", "[3]", 0, 8) + "}", 8)),
                 "needs 12 bytes, but its data_offsets [0, 8] hold 8"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + entry("F32", "[2]", 8, 0) + "}", 8)), "end before they begin"));
  // Offsets that overlap, leave a gap, run past the end, or leave bytes undescribed.
  CHECK(contains(parse_error(file_with_header("{\"a\":" + ok + ",\"b\":" + entry("F32", "[2]", 4, 12) + "}", 12)),
                 "overlaps tensor 'a'"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + ok + ",\"b\":" + entry("F32", "[2]", 12, 20) + "}", 20)),
                 "gap of 4 bytes before tensor 'b'"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + entry("F32", "[2]", 4, 12) + "}", 12)), "gap of 4 bytes"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + ok + "}", 4)), "past the end of the data area"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + ok + "}", 12)), "4 bytes after the last tensor"));
  CHECK(contains(parse_error(file_with_header("{\"a\":" + ok + ",\"__metadata__\":{\"k\":1}}", 8)), "is not a string"));
  CHECK(contains(parse_error(file_with_header("[1,2]", 0)), "does not start with '{'"));
  CHECK(contains(parse_error(file_with_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", 8)),
                 "unknown field 'x'"));
  // Dimensions whose product overflows.
  CHECK(contains(parse_error(file_with_header("{\"a\":" + entry("F32", "[4294967296,4294967296]", 0, 8) + "}", 8)),
                 "absurdly large"));
}

TEST_CASE("safetensors: every message names the file") {
  CHECK(contains(parse_error(file_with_header("{\"a\":" + entry("F32", "[3]", 0, 8) + "}", 8)), "'x.safetensors'"));
}

TEST_CASE("safetensors: half and bfloat16 convert exactly") {
  CHECK(half_to_float(0x3C00) == 1.0f);
  CHECK(half_to_float(0xC000) == -2.0f);
  CHECK(half_to_float(0x7BFF) == 65504.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // the smallest subnormal
  CHECK(half_to_float(0x03FF) == std::ldexp(1023.0f, -24));
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(std::isinf(half_to_float(0x7C00)));
  CHECK(std::isnan(half_to_float(0x7E00)));
  CHECK(bfloat16_to_float(0x3F80) == 1.0f);
  CHECK(bfloat16_to_float(0xC049) == -3.140625f);
  // Every half value round-trips through float back to the same bits (normal, subnormal, zero).
  for (uint32_t bits = 0; bits < 0x7C00; ++bits) {
    const float f = half_to_float(uint16_t(bits));
    const int e = std::ilogb(f);
    const float quantum = f == 0 ? 1 : std::ldexp(1.0f, std::max(e, -14) - 10);
    REQUIRE(std::fmod(f, quantum) == 0);
    if (bits > 0) REQUIRE(f > half_to_float(uint16_t(bits - 1)));
  }
  // From unaligned bytes.
  const unsigned char raw[] = {0xFF, 0x00, 0x3C, 0x00, 0xC0};
  float out[2];
  convert_to_float32(raw + 1, TensorDtype::f16, 2, out);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == -2.0f);
}

TEST_CASE("safetensors: the writer's files read back, and NaN or infinity in a tensor is refused by name") {
  const auto dir = test::fresh_dir("safetensors_rw");
  const std::vector<float> a{1, 2, 3, 4, 5, 6}, b{0.5f};
  write_file_atomic(dir / "ok.safetensors",
                    serialize_safetensors({{"w", {2, 3}, a.data()}, {"s", {1}, b.data()}}, {{"format", "pt"}}));
  const SafetensorsFile f(dir / "ok.safetensors");
  CHECK(f.header().data_start % 8 == 0);
  std::vector<float> got(6);
  f.read_float32(*f.header().find("w"), got.data());
  CHECK(got == a);
  CHECK(f.header().metadata.at("format") == "pt");

  const std::vector<float> bad{1, NAN, 3}, inf{1, 2, -INFINITY};
  write_file_atomic(dir / "nan.safetensors", serialize_safetensors({{"layer.0.w", {3}, bad.data()}}));
  write_file_atomic(dir / "inf.safetensors", serialize_safetensors({{"layer.1.w", {3}, inf.data()}}));
  const SafetensorsFile n(dir / "nan.safetensors"), i(dir / "inf.safetensors");
  std::vector<float> out(3);
  const std::string nan_error = error_of([&] { n.read_float32(n.header().tensors[0], out.data()); });
  CHECK(contains(nan_error, "tensor 'layer.0.w' holds NaN at flat index 1"));
  CHECK(contains(nan_error, "nan.safetensors"));
  CHECK(contains(error_of([&] { i.read_float32(i.header().tensors[0], out.data()); }),
                 "tensor 'layer.1.w' holds infinity at flat index 2"));
}

TEST_CASE("safetensors: a tensor of another dtype passes the header but is refused as weights, by name") {
  const std::string h = "{\"mask\":" + entry("BOOL", "[2,2]", 0, 4) + ",\"idx\":" + entry("I64", "[1]", 4, 12) + "}";
  const auto dir = test::fresh_dir("safetensors_dtype");
  write_file_atomic(dir / "m.safetensors", file_with_header(h, 12));
  const SafetensorsFile f(dir / "m.safetensors");
  float out[4];
  CHECK(contains(error_of([&] { f.read_float32(*f.header().find("idx"), out); }),
                 "tensor 'idx' has dtype I64, which attnscope cannot read as weights (valid: F32, F16, BF16)"));
}

TEST_CASE("atomic write: a FIFO where the file belongs is refused and left in place, not replaced by a file") {
  // (As root the rename of a write would even replace /dev/null with a regular file.)
  const auto dir = test::fresh_dir("atomic_write_special");
  const auto fifo = dir / "figure.png";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(contains(error_of([&] { write_file_atomic(fifo, "bytes"); }), "it is a named pipe (FIFO), not a regular file"));
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // No temporary file left beside it.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.path() != fifo;
  CHECK(entries == 0);
  // A regular file is still replaced whole.
  write_file_atomic(dir / "ok.txt", "one");
  write_file_atomic(dir / "ok.txt", "two");
  CHECK(read_file(dir / "ok.txt", 16) == "two");
}

TEST_CASE("mapped file: a FIFO, a folder and a missing file are refused without blocking") {
  const auto dir = test::fresh_dir("mapped_file");
  const auto fifo = dir / "pipe.safetensors";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(contains(error_of([&] { SafetensorsFile f(fifo); }), "it is a FIFO (named pipe), not a regular file"));
  CHECK(contains(error_of([&] { SafetensorsFile f(dir); }), "it is a folder, not a regular file"));
  CHECK(contains(error_of([&] { SafetensorsFile f(dir / "none.safetensors"); }), "no such file"));
  CHECK(contains(error_of([&] { SafetensorsFile f("/dev/null"); }), "character device"));
  write_file_atomic(dir / "empty.safetensors", "");
  CHECK(contains(error_of([&] { SafetensorsFile f(dir / "empty.safetensors"); }), "truncated"));
}
