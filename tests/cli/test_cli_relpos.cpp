// `attnscope relpos` and `attnscope conv` end to end: the files and numbers they write, and every
// invalid input exiting 2 with one line and no file.
#include <doctest/doctest.h>

#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(read_file(p, 1 << 24)); }


// A w×h RGB PNG with a diagonal ramp, written to `path`.
void write_png(const fs::path& path, int w, int h) {
  std::vector<unsigned char> px(size_t(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) px[(size_t(y) * w + x) * 3 + c] = (unsigned char)((x + y + 40 * c) % 256);
  std::string png;
  stbi_write_png_to_func(
      [](void* context, void* data, int size) { static_cast<std::string*>(context)->append(static_cast<char*>(data), size); },
      &png, w, h, 3, px.data(), w * 3);
  write_file_atomic(path, png);
}

}  // namespace

TEST_CASE("cli relpos: a grid writes probs [H,N,N], probs_query [H,R,C], outputs and relpos.json equal to the engine") {
  const fs::path out = fresh_dir("cli_relpos_grid") / "out";
  const CliRun r = run_cli("relpos --grid 12x10 --pattern rings --delta-preset conv3x3 --alpha 2 --query 3,4 --out " +
                           shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "wrote 4 files"));
  const NpyArray probs = read_npy(out / "probs.npy");
  CHECK(probs.shape == std::vector<int64_t>{9, 120, 120});
  const NpyArray query = read_npy(out / "probs_query.npy");
  CHECK(query.shape == std::vector<int64_t>{9, 12, 10});
  CHECK(read_npy(out / "outputs.npy").shape == std::vector<int64_t>{9, 120, 1});

  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.pattern = "rings";
  s.input.grid.rows = 12;
  s.input.grid.cols = 10;
  s.relpos.alpha = 2;
  s.relpos.query_row = 3;
  s.relpos.query_col = 4;
  const RelposAnalysis ra = analyse_relpos(s, nullptr);
  for (int h = 0; h < 9; ++h)
    for (int k = 0; k < 120; ++k) {
      CHECK(query.data[size_t(h * 120 + k)] == ra.probs_query(h, k));
      CHECK(probs.data[size_t((h * 120 + 34) * 120 + k)] == ra.probs[size_t(h)](34, k));
    }
  const auto j = read_json(out / "relpos.json");
  CHECK(j["dims"] == 2);
  CHECK(j["query"] == nlohmann::json{3, 4});
  REQUIRE(j["heads"].size() == 9);
  CHECK(j["heads"][0]["alpha"] == 2.0);
  CHECK(j["heads"][0]["delta"] == nlohmann::json{-1.0, -1.0});
  CHECK(j["heads"][8]["delta"] == nlohmann::json{1.0, 1.0});
  CHECK(j["grid"]["rows"] == 12);
  CHECK(j["pad_keys"] == false);
}

TEST_CASE("cli relpos: a sentence takes 1D deltas and per-head alphas and writes probs_query [H, T]") {
  const fs::path out = fresh_dir("cli_relpos_text") / "out";
  const CliRun r = run_cli("relpos --text 'The cat sat on the mat.' --deltas '-1;0;1' --alphas 0,1,1000 --query 2 --out " +
                           shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const NpyArray q = read_npy(out / "probs_query.npy");
  REQUIRE(q.shape == std::vector<int64_t>{3, 7});
  for (int k = 0; k < 7; ++k) CHECK(q.data[size_t(k)] == doctest::Approx(1.0 / 7));  // α = 0: uniform
  CHECK(q.data[size_t(2 * 7 + 3)] == doctest::Approx(1.0));                            // α = 1000, Δ = 1: token 3
  CHECK(read_npy(out / "probs.npy").shape == std::vector<int64_t>{3, 7, 7});
  CHECK(read_npy(out / "outputs.npy").shape == std::vector<int64_t>{3, 7, 64});
  const auto j = read_json(out / "relpos.json");
  CHECK(j["dims"] == 1);
  CHECK(j["query"] == 2);
  CHECK(j["tokens"][2] == "sat");
  CHECK(j["heads"][0]["delta"] == -1.0);
  CHECK(j["heads"][2]["alpha"] == 1000.0);

  // Without offsets a sentence uses the line preset; --mixed adds the content scores of the model.
  const fs::path mixed = fresh_dir("cli_relpos_mixed") / "out";
  const CliRun m = run_cli("relpos --text 'The cat sat on the mat.' --mixed --heads 4 --lambda 0.5 --out " +
                           shell_quote(mixed.string()));
  INFO(m.err);
  REQUIRE(m.exit_code == 0);
  CHECK(read_npy(mixed / "probs_query.npy").shape == std::vector<int64_t>{4, 7});
  const auto jm = read_json(mixed / "relpos.json");
  CHECK(jm["mixed"] == true);
  CHECK(jm["lambda"] == 0.5);
  CHECK(jm["heads"][0]["delta"] == -2.0);
}

TEST_CASE("cli relpos: more than 1024 cells skips probs.npy but always writes probs_query.npy; pad-keys is recorded") {
  const fs::path out = fresh_dir("cli_relpos_big") / "out";
  const CliRun r = run_cli("relpos --grid 40x40 --pad-keys --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(!fs::exists(out / "probs.npy"));
  CHECK(read_npy(out / "probs_query.npy").shape == std::vector<int64_t>{9, 40, 40});
  const auto j = read_json(out / "relpos.json");
  CHECK(j["pad_keys"] == true);
  CHECK(j["padding"]["rows"] == 1 + relpos_pad_margin);
  CHECK(j["query"] == nlohmann::json{20, 20});
  CHECK(contains(r.out, "probs.npy skipped"));
}

TEST_CASE("cli conv: writes input, mhsa, conv [R, C] and error.json; pad-keys makes the border exact") {
  const fs::path dir = fresh_dir("cli_conv");
  const CliRun r = run_cli("conv --pattern rings --grid 16x14 --kernel box --out " + shell_quote((dir / "plain").string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "--pad-keys"));
  for (const char* name : {"input.npy", "mhsa.npy", "conv.npy"})
    CHECK(read_npy(dir / "plain" / name).shape == std::vector<int64_t>{16, 14});
  const auto e = read_json(dir / "plain" / "error.json");
  CHECK(e["max_abs_interior"].get<double>() < 1e-4);
  CHECK(e["max_abs_border"].get<double>() > 0.05);  // reported, not hidden
  CHECK(e["alpha"] == 50.0);
  CHECK(e["heads"] == 9);
  CHECK(e["kernel"]["name"] == "box");
  REQUIRE(e["curve"].size() == 25);
  CHECK(e["curve"][0]["alpha"] == 0.01);
  CHECK(e["curve"][24]["alpha"] == 1000.0);
  // The files hold the engine's numbers.
  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.pattern = "rings";
  s.input.grid.rows = 16;
  s.input.grid.cols = 14;
  s.conv.kernel = "box";
  const ConvAnalysis ca = analyse_conv(s);
  check_close(read_npy_matrix(dir / "plain" / "conv.npy"), ca.conv, 0, "conv.npy");
  check_close(read_npy_matrix(dir / "plain" / "mhsa.npy"), ca.mhsa, 0, "mhsa.npy");
  CHECK(e["max_abs_border"].get<double>() == doctest::Approx(ca.max_abs_border));

  const CliRun p = run_cli("conv --pattern rings --grid 16x14 --kernel box --pad-keys --out " +
                           shell_quote((dir / "padded").string()));
  REQUIRE(p.exit_code == 0);
  const auto ep = read_json(dir / "padded" / "error.json");
  CHECK(ep["max_abs_border"].get<double>() < 1e-4);
  CHECK(ep["max_abs_interior"].get<double>() < 1e-4);
  CHECK(ep["pad_keys"] == true);
}

TEST_CASE("cli conv: a custom 5x5 kernel and an image fitted inside 64x64 as one gray channel") {
  const fs::path dir = fresh_dir("cli_conv_image");
  write_png(dir / "ramp.png", 100, 80);
  std::string five;
  for (int i = 0; i < 25; ++i) five += (i ? "," : "") + std::to_string(i == 12 ? 1.0 : (i % 3) * 0.1);
  const CliRun r = run_cli("conv --image " + shell_quote((dir / "ramp.png").string()) + " --kernel " + five +
                           " --alpha 60 --pad-keys --out " + shell_quote((dir / "out").string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(read_npy(dir / "out" / "input.npy").shape == std::vector<int64_t>{51, 64});
  const auto e = read_json(dir / "out" / "error.json");
  CHECK(e["kernel"]["size"] == 5);
  CHECK(e["heads"] == 25);
  CHECK(contains(e["input"].get<std::string>(), "ramp.png 100\u00d780 \u2192 64\u00d751 (area average"));
  CHECK(e["max_abs_border"].get<double>() < 1e-4);
}

TEST_CASE("cli relpos/conv: every invalid input exits 2 with one line and writes nothing") {
  const fs::path dir = fresh_dir("cli_relpos_errors");
  write_file_atomic(dir / "corrupt.png", std::string("\x89PNG\r\n\x1a\n but then nothing", 26));
  const std::string out = " --out " + shell_quote((dir / "out").string());
  const std::string corrupt = shell_quote((dir / "corrupt.png").string());
  const std::string missing = shell_quote((dir / "missing.png").string());
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"relpos --grid 8x8 --alpha -1", ">= 0"},
      {"relpos --grid 8x8 --alpha nan", "alpha"},
      {"relpos --grid 8x8 --alpha inf", "alpha"},
      {"relpos --grid 8x8 --alphas 1,-2,1,1,1,1,1,1,1", ">= 0"},
      {"relpos --grid 8x8 --alphas 1,2", "2 alphas were given for 9 heads"},
      {"relpos --grid 8x8 --deltas 'nan,0;0,0'", "not a finite number"},
      {"relpos --grid 8x8 --heads 3 --deltas '0,0;1,1'", "2 offsets (Delta) were given for 3 heads"},
      {"relpos --grid 8x8 --delta-preset conv3x3 --heads 8", "needs heads = 9"},
      {"relpos --grid 8x8 --delta-preset conv5x5 --heads 9", "needs heads = 25"},
      {"relpos --grid 8x8 --delta-preset diagonal", "conv3x3, conv5x5, line, random"},
      {"relpos --grid 65x65", "at most 64x64"},
      {"relpos --grid 0x5", "empty"},
      {"relpos --grid 8x8 --query 8,0", "query row 8 is outside the 8x8 grid"},
      {"relpos --grid 8x8 --query 0,9", "query column 9"},
      {"relpos --text 'a b c' --query 3", "outside the sentence"},
      {"relpos --text 'a b c' --delta-preset conv3x3", "needs a 2D grid"},
      {"relpos --text 'a b c' --mixed --deltas '-1;0;1'", "must equal the model's heads (8)"},
      {"relpos --pattern zebra", "checkerboard, gradient, rings, glyph, noise"},
      {"relpos --image " + corrupt, "cannot read image"},
      {"relpos --image " + missing, "missing.png"},
      {"conv --pattern rings --kernel emboss", "identity, box, gaussian, sobel_x, sobel_y, laplacian, sharpen"},
      {"conv --pattern rings --kernel 1,2,3,4", "K = 3 or 5"},
      {"conv --pattern rings --kernel sobel_x --heads 8", "3x3 kernel is emulated by K^2 = 9 heads"},
      {"conv --pattern rings --kernel 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 --heads 9", "25 heads"},
      {"conv --pattern rings --alpha -5", ">= 0"},
      {"conv --pattern rings --alpha nan", "alpha"},
      {"conv --grid 100x100", "at most 64x64"},
      {"conv --pattern rings --grid 0x0", "empty"},
      {"conv --image " + corrupt, "cannot read image"},
      {"conv --image " + missing, "missing.png"},
      {"conv --pattern zebra", "valid patterns are"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const CliRun r = run_cli(c.args + out);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(contains(r.err, c.expect));
    CHECK(count_files(dir / "out") == 0);
    CHECK(!fs::exists(dir / "out"));
  }
  CHECK(contains(run_cli("relpos --image " + corrupt + out).err, (dir / "corrupt.png").string()));
}
