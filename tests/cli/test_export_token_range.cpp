// `attnscope export --token-range I-J`: the heads keep queries and keys I..J (tokens from 0), the numbers
// those of the whole input's cells; a range that is malformed or does not fit the input exits 2 with a
// message naming the valid range 0..T-1, and leaves no file behind.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnscope/io/npy.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("cli export token range: heads [H, n, n] hold the whole input's cells I..J") {
  const fs::path dir = fresh_dir("cli_export_token_range_ok");
  const std::string scene = "--text " + shell_quote("The cat sat on the mat.") + " --kind gqa --heads 4 --groups 2 --causal";
  const fs::path all = dir / "all.npy", part = dir / "part.npy", one = dir / "one.npy";
  CliRun r = run_cli("export --what heads --format npy " + scene + " --out " + shell_quote(all.string()));
  REQUIRE(r.exit_code == 0);
  r = run_cli("export --what heads --format npy --token-range 2-5 " + scene + " --out " + shell_quote(part.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const NpyArray whole = read_npy(all), cut = read_npy(part);
  REQUIRE(whole.shape == std::vector<int64_t>{4, 7, 7});
  REQUIRE(cut.shape == std::vector<int64_t>{4, 4, 4});
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        CHECK(cut.data[size_t((h * 4 + i) * 4 + j)] == whole.data[size_t((h * 7 + 2 + i) * 7 + 2 + j)]);
  r = run_cli("export --what head:1 --format npy --token-range 6-6 " + scene + " --out " + shell_quote(one.string()));
  REQUIRE(r.exit_code == 0);
  const NpyArray single = read_npy(one);
  REQUIRE(single.shape == std::vector<int64_t>{1, 1});
  CHECK(single.data[0] == whole.data[size_t((1 * 7 + 6) * 7 + 6)]);
}

TEST_CASE("cli export token range: bad ranges exit 2 naming the valid range, and write nothing") {
  const fs::path dir = fresh_dir("cli_export_token_range_bad");
  const std::string scene = "--text " + shell_quote("The cat sat on the mat.");  // 7 tokens: 0..6
  struct Case {
    std::string range, what, says;
  };
  const Case cases[] = {
      {"3-7", "heads", "valid range 0..6"},   // one past the last token
      {"0-99", "head:0", "valid range 0..6"},
      {"5-2", "heads", "must not come after"},
      {"2", "heads", "give I-J"},
      {"-3", "heads", "give I-J"},
      {"a-b", "heads", "give I-J"},
      {"1-2", "relpos", "applies to --what heads"},
  };
  for (const Case& c : cases) {
    const fs::path out = dir / "x.png";
    const CliRun r = run_cli("export --what " + c.what + " --format png --token-range=" + shell_quote(c.range) + " " + scene +
                             " --out " + shell_quote(out.string()));
    INFO(c.range << " " << c.what << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
}
