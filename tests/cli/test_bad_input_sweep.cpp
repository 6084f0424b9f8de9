// The bad-input sweep: the command-line tools fed broken files, broken text, impossible
// sizes and unusable paths. For each: exit code 2 (not a crash), one "error: …" line naming the
// problem, and nothing left behind at the output path.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

struct BadInput {
  std::string args;     // everything but --out
  std::string message;  // a piece of the error line that names the problem
};

// Broken files the sweep points at, made fresh for each run.
fs::path make_fixtures() {
  const fs::path d = fresh_dir("sweep_fixtures");
  const Mat x = Mat::Ones(4, 8);
  const std::string good = serialize_npy(x.data(), {4, 8});
  write_file_atomic(d / "truncated.npy", good.substr(0, good.size() - 7));
  write_file_atomic(d / "header_only.npy", good.substr(0, 60));
  std::string lying = good;
  lying.replace(lying.find("(4, 8)"), 6, "(9, 8)");
  write_file_atomic(d / "lying.npy", lying);
  std::string int32 = good;
  int32.replace(int32.find("<f4"), 3, "<i4");
  write_file_atomic(d / "int32.npy", int32);
  std::string big_endian = good;
  big_endian.replace(big_endian.find("<f4"), 3, ">f4");
  write_file_atomic(d / "big_endian.npy", big_endian);
  const float v[] = {1, 2, 3};
  write_npy(d / "vector.npy", v, {3});
  Mat nan = Mat::Ones(3, 8);
  nan(1, 2) = NAN;
  write_npy(d / "nan.npy", nan);
  write_file_atomic(d / "not_numpy.npy", "just some text\n");
  write_file_atomic(d / "empty.png", "");
  write_file_atomic(d / "corrupt.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR garbage", 24));
  write_file_atomic(d / "text.jpg", "this is not a JPEG");
  write_file_atomic(d / "bad_scene.json", "{\"model\": {\"heads\": 4");
  write_file_atomic(d / "wrong_type_scene.json", "{\"model\": {\"heads\": \"four\"}}");
  write_file_atomic(d / "huge_text_scene.json", "{\"input\": {\"text\": \"" + std::string(1100000, 'a') + "\"}}");
  fs::create_directories(d / "a_folder");
  write_file_atomic(d / "a_file", "x");
  REQUIRE(::mkfifo((d / "a_fifo").c_str(), 0600) == 0);  // would block a read forever
  return d;
}

}  // namespace

TEST_CASE("bad-input sweep: every tool exits 2 with a named problem and leaves nothing behind") {
  const fs::path fx = make_fixtures();
  auto f = [&](const char* name) { return shell_quote((fx / name).string()); };
  const std::vector<BadInput> cases = {
      // --- npy inputs
      {"compute --input " + f("truncated.npy"), "truncated"},
      {"compute --input " + f("header_only.npy"), "ends inside its header"},
      {"compute --input " + f("lying.npy"), "truncated"},
      {"compute --input " + f("int32.npy"), "dtype '<i4' is not supported"},
      {"compute --input " + f("big_endian.npy"), "dtype '>f4' is not supported"},
      {"compute --input " + f("vector.npy"), "2D array"},
      {"compute --input " + f("nan.npy"), "NaN or infinite"},
      {"compute --input " + f("not_numpy.npy"), "magic"},
      {"compute --input " + f("a_folder"), "is a folder"},
      {"compute --input " + f("missing.npy"), "no such file"},
      {"compute --input " + f("a_fifo"), "is a named pipe (FIFO), not a regular file"},
      {"compute --input /dev/zero", "is a character device, not a regular file"},
      {"compute --scene " + f("a_fifo"), "named pipe"},
      {"conv --image " + f("a_fifo") + " --kernel box", "named pipe"},
      // --- text
      {"compute --text \"$(printf 'caf\\351')\"", "invalid UTF-8 at byte 3"},
      {"compute --text \"$(printf '\\340\\244')\"", "invalid UTF-8 at byte 0"},
      {"compute --text ''", "the text is empty"},
      {"compute --text \"$(printf 'w %.0s' $(seq 1 2049))\"", "limit is 2048"},
      {"compute --text \"$(printf 'ab %.0s' $(seq 1 33334))\"", "limit is 2048"},  // 100 002 characters
      {"compute --scene " + f("huge_text_scene.json"), "the limit is 1048576"},
      // --- sizes
      {"compute --text hi --d-model 64 --heads 5", "heads must divide d_model"},
      {"compute --text hi --kind gqa --heads 8 --groups 3", "groups must divide heads"},
      {"compute --text hi --kind gqa --heads 8 --groups 0", "at least 1"},
      {"compute --text hi --d-model 100000", "d_model must be between 1 and 4096"},
      {"compute --text hi --heads 128 --d-model 128", "heads must be between 1 and 64"},
      {"compute --text hi --heads abc", "heads"},
      {"compute --text hi --seed -1", "--seed must be a whole number from 0 to 18446744073709551615, got '-1'"},
      {"compute --text hi --seed 18446744073709551616", "got '18446744073709551616'"},
      {"compute --text hi --seed 1e3", "--seed must be a whole number"},
      {"export --what heads --format png --text hi --view spiral", "unknown view 'spiral'"},
      // --- relative position: alpha, deltas, grids, queries
      {"relpos --grid 8x8 --alpha -1", "--alpha must be >= 0"},
      {"relpos --grid 8x8 --alpha nan", "finite"},
      {"relpos --grid 8x8 --alpha inf", "finite"},
      {"relpos --grid 8x8 --alphas 1,nan,2", "not a finite number"},
      {"relpos --grid 8x8 --alphas 1,-2", "must be >= 0"},
      {"relpos --grid 8x8 --deltas '1,0;garbage'", "delta 2 'garbage' must have 2 numbers"},
      {"relpos --grid 8x8 --deltas '1,0;x,1'", "delta item 2 'x' is not a number"},
      {"relpos --grid 8x8 --deltas '1,0,3'", "must have 2 numbers"},
      {"relpos --grid 8x8 --deltas '0,nan'", "not a finite number"},
      {"relpos --grid 0x8", "empty"},
      {"relpos --grid 65x65", "64"},
      {"relpos --grid 8by8", "must be RxC"},
      {"relpos --grid 8x8 --query 9,9", "outside"},
      {"relpos --grid 8x8 --delta-preset spiral", "unknown delta preset 'spiral'"},
      {"relpos --grid 8x8 --heads 4 --delta-preset conv3x3", "conv3x3"},
      {"relpos --text 'a b c' --query 7", "outside"},
      // --- images and convolution
      {"conv --image " + f("empty.png") + " --kernel box", "empty"},
      {"conv --image " + f("corrupt.png") + " --kernel box", "cannot read image"},
      {"conv --image " + f("text.jpg") + " --kernel box", "cannot read image"},
      {"conv --image " + f("missing.png") + " --kernel box", "no such file"},
      {"conv --image " + f("a_folder") + " --kernel box", "folder"},
      {"conv --pattern spiral --kernel box", "unknown grid pattern 'spiral'"},
      {"conv --pattern rings --kernel emboss", "unknown kernel 'emboss'"},
      {"conv --pattern rings --kernel 1,2,3,4", "K = 3 or 5"},
      {"conv --pattern rings --kernel box --heads 4", "kernel is emulated by K^2"},
      // --- scene files
      {"compute --scene " + f("bad_scene.json"), "is not valid JSON"},
      {"compute --scene " + f("wrong_type_scene.json"), "'model.heads' must be a whole number"},
      {"compute --scene " + f("missing.json"), "no such file"},
  };
  CHECK(cases.size() >= 40);
  for (const BadInput& c : cases) {
    const fs::path out = fx / "out";
    fs::remove_all(out);
    const CliRun r = run_cli(c.args + " --out " + shell_quote(out.string()));
    CAPTURE(c.args.substr(0, 160));
    CAPTURE(r.err.substr(0, 300));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("bad-input sweep: unusable output paths are refused and nothing is half written") {
  const fs::path fx = make_fixtures();
  // --out names an existing file, or sits below a file.
  for (const std::string& out : {(fx / "a_file").string(), (fx / "a_file" / "sub").string()}) {
    const CliRun r = run_cli("compute --text hi --out " + shell_quote(out));
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
  }
  CHECK(read_file(fx / "a_file", 16) == "x");
  if (::geteuid() != 0) {  // root ignores permissions
    fs::create_directories(fx / "locked");
    fs::permissions(fx / "locked", fs::perms::owner_read | fs::perms::owner_exec);
    const CliRun r = run_cli("compute --text hi --out " + shell_quote((fx / "locked" / "out").string()));
    CHECK(r.exit_code == 2);
    CHECK(count_files(fx / "locked") == 0);
  }
  // /proc is not writable even for root: the folder cannot be created.
  const CliRun r = run_cli("relpos --grid 4x4 --out /proc/attnscope_out");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot create folder") != std::string::npos);
}
