// `attnscope export` end to end: one line naming the written file and exit 0; exit 2, one line
// "error: …" and no file left behind for every kind of bad input.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "png_decode.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("cli export: writes each format and prints one line naming the file") {
  const fs::path dir = fresh_dir("cli_export_ok");
  const std::string text = shell_quote("The cat sat on the mat.");
  struct Case {
    std::string args, file;
  };
  const Case cases[] = {
      {"--what heads --format png --scale 2 --kind gqa --heads 8 --groups 2 --causal", "heads.png"},
      {"--what head:3 --format svg --colormap magma --scores", "head3.svg"},
      {"--what heads --format csv --kind mqa --heads 4", "heads.csv"},
      {"--what heads --format npy --kind single", "heads.npy"},
  };
  for (const Case& c : cases) {
    const fs::path out = dir / c.file;
    const CliRun r = run_cli("export " + c.args + " --text " + text + " --out " + shell_quote(out.string()));
    INFO(c.args << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(lines(r.out) == 1);
    CHECK(r.out.find(out.string()) != std::string::npos);
    CHECK(r.err.empty());
    CHECK(fs::is_regular_file(out));
  }
  CHECK(load_png(dir / "heads.png").width > 1000);  // 8 heads at 2×
  CHECK(read_npy(dir / "heads.npy").shape == std::vector<int64_t>{1, 7, 7});
  CHECK(count_files(dir) == 4);  // no temporary files left over
}

TEST_CASE("cli export: relpos and conv figures from grid and sentence flags") {
  const fs::path dir = fresh_dir("cli_export_grid");
  CliRun r = run_cli("export --what relpos --format png --grid 10x10 --alpha 2 --query 3,4 --out " +
                     shell_quote((dir / "relpos.png").string()));
  CHECK(r.exit_code == 0);
  r = run_cli("export --what relpos --format npy --text " + shell_quote("one two three four") + " --heads 3 --out " +
              shell_quote((dir / "relpos1d.npy").string()));
  CHECK(r.exit_code == 0);
  CHECK(read_npy(dir / "relpos1d.npy").shape == std::vector<int64_t>{3, 4, 4});
  r = run_cli("export --what conv --format svg --pattern checkerboard --grid 12x12 --kernel laplacian --pad-keys --out " +
              shell_quote((dir / "conv.svg").string()));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(count_files(dir) == 3);
}

TEST_CASE("cli export: --scale-mode draws its range and names it in the colour bar's title") {
  const fs::path dir = fresh_dir("cli_export_scale");
  const std::string text = " --text " + shell_quote("The cat sat on the mat.");
  struct Case {
    std::string flags, title;
  };
  const Case cases[] = {
      {"", ">probability<"},
      {" --scale-mode per-head", ">probability · per head<"},
      {" --scale-mode fixed", ">probability · fixed 0–1<"},
      {" --scale-mode locked --scale-range 0.02,0.61", ">probability · locked 0.02–0.61<"},
      {" --scores --scale-mode locked --scale-range=-2,3.5", ">score · locked -2–3.5<"},
  };
  for (const Case& c : cases) {
    const fs::path svg = dir / "scale.svg";
    const CliRun r = run_cli("export --what heads --format svg --heads 2" + c.flags + text + " --out " + shell_quote(svg.string()));
    INFO(c.flags << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(read_file(svg, 1 << 24).find(c.title) != std::string::npos);
  }
}

TEST_CASE("cli export: bad input exits 2 with one line and leaves no file") {
  const fs::path dir = fresh_dir("cli_export_bad");
  fs::create_directories(dir / "sub");
  const std::string text = " --text " + shell_quote("The cat sat.");
  const std::string out = " --out " + shell_quote((dir / "x.png").string());
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--what head:8 --format png" + text + out, "head 8 does not exist"},
      {"--what head:x --format png" + text + out, "head index"},
      {"--what picture --format png" + text + out, "valid: heads, head:N"},
      {"--what heads --format png --colormap rainbow" + text + out, "unknown colormap 'rainbow'"},
      {"--what heads --format jpg" + text + " --out " + shell_quote((dir / "x.jpg").string()), "unknown format"},
      {"--what heads --format png --scale 0.5" + text + out, "--scale must be between 1 and 4"},
      {"--what heads --format png --scale 5" + text + out, "--scale must be between 1 and 4"},
      {"--what heads --format png" + text + " --out " + shell_quote((dir / "sub").string()), "is a folder"},
      {"--what heads --format png" + text + " --out " + shell_quote((dir / "nope" / "x.png").string()), "does not exist"},
      {"--what heads --format png" + text + " --out /proc/attnscope_cli_test.png", "cannot write"},
      {"--what heads --format svg" + text + out, "format is svg"},
      {"--what heads --format png --grid 8x8" + out, "--what relpos"},
      {"--what relpos --format png --scores --grid 8x8" + out, "--scores applies"},
      {"--what heads --format png --heads 3" + text + out, "3"},
      // Colour scales: each bad value names the valid ones.
      {"--what heads --format png --scale-mode auto" + text + out, "valid: shared, per-head, fixed, locked"},
      {"--what heads --format png --scale-mode locked" + text + out, "add --scale-range LO,HI"},
      {"--what heads --format png --scale-mode locked --scale-range 0.6,0.1" + text + out, "LO < HI"},
      {"--what heads --format png --scale-mode locked --scale-range 0.5" + text + out, "LO < HI"},
      {"--what heads --format png --scale-mode locked --scale-range x,1" + text + out, "LO < HI"},
      {"--what heads --format png --scale-range 0,1" + text + out, "add --scale-mode locked"},
      {"--what heads --format png --scale-mode fixed --scores" + text + out, "valid here: shared, per-head, locked"},
      {"--what heads --format png --scale-mode fixed --per-head-scale" + text + out, "disagree"},
      {"--what conv --format png --scale-mode fixed --grid 8x8" + out, "scales of its own"},
  };
  for (const Case& c : cases) {
    const CliRun r = run_cli("export " + c.args);
    INFO(c.args << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.out.empty());
    CHECK(count_files(dir) == 0);
  }
  CHECK_FALSE(fs::exists("/proc/attnscope_cli_test.png"));
}
