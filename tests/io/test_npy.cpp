// .npy: round trips, float64 and Fortran input, and every malformed-file case.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "run_cli.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

// Builds a .npy byte string by hand, so the tests do not depend on the writer they check.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  const size_t n = header.size();
  out += char(n & 0xFF);
  out += char((n >> 8) & 0xFF);
  if (major != 1) out += std::string(2, '\0');
  return out + header + data;
}

template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string s(values.size() * sizeof(T), '\0');
  std::memcpy(s.data(), std::data(values), s.size());
  return s;
}

}  // namespace

TEST_CASE("npy: write then read round-trips matrices and 3D tensors") {
  const fs::path dir = attnscope::test::fresh_dir("npy_roundtrip");
  Mat m(2, 3);
  m << 1, 2, 3, 4.5f, -5, 6e-7f;
  write_npy(dir / "m.npy", m);
  CHECK(read_npy_matrix(dir / "m.npy", 2, 3) == m);
  const Tensor3 t{m, m * 2.0f};
  write_npy(dir / "t.npy", t);
  const NpyArray a = read_npy(dir / "t.npy");
  CHECK(a.shape == std::vector<int64_t>{2, 2, 3});
  CHECK(a.data[6 + 3] == 9.0f);
  const float v[] = {1, 2};
  write_npy(dir / "v.npy", v, {2});
  CHECK(read_npy(dir / "v.npy").shape == std::vector<int64_t>{2});
  // The header is what NumPy writes: version 1.0, '<f4', C order, data 64-byte aligned.
  const std::string bytes = read_file(dir / "m.npy", 1 << 20);
  CHECK(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") != std::string::npos);
  CHECK((bytes.size() - 24) % 64 == 0);
  CHECK(read_file(dir / "v.npy", 1 << 20).find("'shape': (2,)") != std::string::npos);
}

TEST_CASE("npy: float64 is converted, Fortran order re-laid, versions 2 and 3 read") {
  const std::string f8 = make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", raw<double>({1.5, 2, 3, 4}));
  NpyArray a = parse_npy(f8, "f8");
  CHECK(a.data == std::vector<float>{1.5f, 2, 3, 4});
  // Fortran [2, 3]: memory holds columns: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2).
  const std::string fo = make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", raw<float>({1, 4, 2, 5, 3, 6}));
  CHECK(parse_npy(fo, "fo").data == std::vector<float>{1, 2, 3, 4, 5, 6});
  const std::string fo3 =
      make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2, 2), }", raw<float>({0, 4, 2, 6, 1, 5, 3, 7}));
  CHECK(parse_npy(fo3, "fo3").data == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  // 4D (a model's [L, H, T, T] attention stack) only when asked for.
  const std::string fo4 =
      make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 2, 2), }", raw<float>({0, 4, 2, 6, 1, 5, 3, 7}));
  CHECK(parse_npy(fo4, "fo4", 4).data == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK_THROWS_WITH_AS(parse_npy(fo4, "fo4"), doctest::Contains("4 dimensions (valid: 1 to 3)"), InputError);
  const std::string v2 = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", raw<float>({7, 8}), 2);
  CHECK(parse_npy(v2, "v2").data == std::vector<float>{7, 8});
  const std::string v3 = make_npy("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1, 1), }", raw<float>({9}), 3);
  CHECK(parse_npy(v3, "v3").data == std::vector<float>{9});
}

TEST_CASE("npy: malformed files are rejected with the file name and the problem") {
  const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  const std::string data = raw<float>({1, 2, 3, 4});
  struct Bad { std::string bytes; const char* message; };
  const Bad cases[] = {
      {"", "magic"},
      {"PK\x03\x04 not numpy at all", "magic"},
      {make_npy(good_dict, data).substr(0, 40), "ends inside its header"},
      {make_npy(good_dict, data).substr(0, 100), "truncated"},
      {make_npy(good_dict, data) + "xx", "extra bytes"},
      {make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", data), "dtype '>f4' is not supported"},
      {make_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", data), "dtype '<i4'"},
      {make_npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 2), }", data), "fortran_order"},
      {make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", data), "non-negative integers"},
      {make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2 }", data), "not closed"},
      {make_npy("{'descr': '<f4', 'fortran_order': False, }", data), "no 'shape'"},
      {make_npy("{'fortran_order': False, 'shape': (2, 2), }", data), "no 'descr'"},
      {make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", raw<float>({1})), "0 dimensions"},
      {make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1), }", raw<float>({1})), "4 dimensions"},
      {make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 2), }", ""), "zero-length"},
      {make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999), }", data), "too large"},
      {make_npy("not a dict", data), "not a dict"},
      {make_npy(good_dict, data, 9), "version 9"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.message);
    CHECK_THROWS_WITH_AS(parse_npy(b.bytes, "x.npy"), doctest::Contains(b.message), InputError);
    CHECK_THROWS_WITH_AS(parse_npy(b.bytes, "x.npy"), doctest::Contains("'x.npy'"), InputError);
  }
  // Lying header: says [2, 2] but holds 3 floats.
  CHECK_THROWS_WITH_AS(parse_npy(make_npy(good_dict, raw<float>({1, 2, 3})), "lie.npy"), doctest::Contains("truncated"),
                       InputError);
}

TEST_CASE("npy: wrong shapes and missing files are named") {
  const fs::path dir = attnscope::test::fresh_dir("npy_shapes");
  const Mat m = Mat::Ones(3, 4);
  write_npy(dir / "m.npy", m);
  CHECK_THROWS_WITH_AS(read_npy_matrix(dir / "m.npy", 4, 3), doctest::Contains("has shape [3, 4] but [4, 3] is needed"),
                       InputError);
  CHECK_THROWS_WITH_AS(read_npy_vector(dir / "m.npy", 3), doctest::Contains("1D array of 3 values"), InputError);
  CHECK_THROWS_WITH_AS(read_npy(dir / "nope.npy"), doctest::Contains("no such file"), InputError);
  CHECK_THROWS_WITH_AS(read_npy(dir), doctest::Contains("is a folder"), InputError);
}

TEST_CASE("file io: a failed write leaves no file behind") {
  const fs::path dir = attnscope::test::fresh_dir("atomic");
  CHECK_THROWS_WITH_AS(write_file_atomic(dir / "missing" / "a.txt", "x"), doctest::Contains("does not exist"), InputError);
  CHECK_THROWS_WITH_AS(write_file_atomic(dir, "x"), doctest::Contains("is a folder"), InputError);
  write_file_atomic(dir / "a.txt", "hello");
  CHECK(attnscope::test::count_files(dir) == 1);
  if (::geteuid() != 0) {  // root ignores permissions
    fs::create_directories(dir / "ro");
    fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_THROWS_AS(write_file_atomic(dir / "ro" / "b.txt", "x"), InputError);
    CHECK(attnscope::test::count_files(dir / "ro") == 0);
  }
}
