// The bad-input sweep through the window: the scene-level inputs of
// tests/test_bad_input_sweep.cpp given to the scripted window. Each must render, show an on-screen
// error that names the problem (the layout JSON's "error" is the message drawn in the window), and
// exit normally — never crash.
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "gui_run.h"

namespace attnscope::test {

TEST_SUITE("gui_errors") {
  TEST_CASE("window: the bad-input sweep shows each problem on screen, never a crash") {
    namespace fs = std::filesystem;
    const fs::path d = fresh_dir("gui_sweep_fixtures");
    const Mat x = Mat::Ones(4, 8);
    const std::string good = serialize_npy(x.data(), {4, 8});
    write_file_atomic(d / "truncated.npy", good.substr(0, good.size() - 7));
    std::string int32 = good;
    int32.replace(int32.find("<f4"), 3, "<i4");
    write_file_atomic(d / "int32.npy", int32);
    write_file_atomic(d / "not_numpy.npy", "just some text\n");
    write_file_atomic(d / "corrupt.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR garbage", 24));
    write_file_atomic(d / "empty.png", "");
    write_file_atomic(d / "bad_scene.json", "{\"model\": {\"heads\": 4");
    auto f = [&](const char* name) { return shell_quote((d / name).string()); };
    struct Bad { std::string args, message; };
    const std::vector<Bad> cases = {
        {"--input " + f("truncated.npy"), "truncated"},
        {"--input " + f("int32.npy"), "'<i4'"},
        {"--input " + f("not_numpy.npy"), "magic"},
        {"--input " + f("missing.npy"), "no such file"},
        {"--text \"$(printf 'caf\\351')\"", "UTF-8"},
        {"--text ''", "empty"},
        {"--text \"$(printf 'w %.0s' $(seq 1 2049))\"", "2048"},
        {"--heads 5", "heads must divide d_model"},
        {"--kind gqa --heads 8 --groups 3", "groups must divide heads"},
        {"--kind mqa --groups 2", "one kv group"},
        {"--d-model 100000", "4096"},
        {"--view relpos2d --grid 8x8 --alpha -1", "--alpha must be >= 0"},
        {"--view relpos2d --grid 8x8 --alphas 1,nan", "finite"},
        {"--view relpos2d --grid 8x8 --deltas '1,0;garbage'", "garbage"},
        {"--view relpos2d --grid 0x8", "empty"},
        {"--view relpos2d --grid 65x65", "64"},
        {"--view relpos2d --grid 8x8 --query 9,9", "outside"},
        {"--view relpos2d --grid 8x8 --delta-preset spiral", "spiral"},
        {"--view conv --image " + f("corrupt.png"), "cannot read image"},
        {"--view conv --image " + f("empty.png"), "empty"},
        {"--view conv --pattern rings --kernel emboss", "emboss"},
        {"--view conv --pattern rings --kernel 1,2,3,4", "K = 3 or 5"},
        {"--scene " + f("bad_scene.json"), "not valid JSON"},
        {"--scene " + f("missing.json"), "no such file"},
    };
    int index = 0;
    for (const Bad& c : cases) {
      CAPTURE(c.args.substr(0, 120));
      const WindowRun w = run_window("sweep_" + std::to_string(index++), c.args);
      REQUIRE(w.layout.contains("error"));
      const std::string shown = w.layout["error"].get<std::string>();
      CAPTURE(shown);
      CHECK(shown.find(c.message) != std::string::npos);
      CHECK(w.png.width > 0);
    }
  }
}

}  // namespace attnscope::test
