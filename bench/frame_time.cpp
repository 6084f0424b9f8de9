// frame_time — how smooth the window is: frame time (median, 95th percentile) and the time from a
// settings change to the new heatmaps on screen, under Xvfb with Mesa llvmpipe (no GPU).
//
// For each case it runs `attnscope --bench-json FILE` (the window's own benchmark mode: after the
// first result it changes a setting — a new seed on a sentence, another α on a grid — every few
// frames and times each change until the frame showing its result has finished on the GPU), reads
// the timings back and prints one line per case:
//   (T, H) = (16, 4), (128, 16), (512, 16) on the Heads view, and a 32×32 grid with 9 heads on the
//   relative-position 2D view.
// Targets: a new result on screen within one 60 Hz frame (16.7 ms) for T ≤ 128, and
// within 100 ms for T = 512.
// Xvfb has no vsync, so the window paces its frames to --fps (default 60) as a display would; with
// --fps 0 it draws as fast as it can, and llvmpipe's rendering then takes CPU from the engine.
//
// usage: frame_time [--bin PATH/TO/attnscope] [--changes N] [--size WxH] [--fps N]
// Needs xvfb-run (it starts its own X server); the attnscope binary defaults to ../app/attnscope
// next to this program's folder in the build tree.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5));
  return v[i];
}

// A sentence of exactly `tokens` word tokens (no punctuation), words repeating.
std::string words(int tokens) {
  const char* vocabulary[] = {"the", "cat", "sat", "on", "mat", "because", "it", "was", "tired", "and",
                              "then", "a", "dog", "ran", "past", "quickly"};
  std::string s;
  for (int i = 0; i < tokens; ++i) s += std::string(i ? " " : "") + vocabulary[i % 16];
  return s;
}

struct Case {
  std::string name;
  std::string args;
};

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::string bin = (fs::canonical("/proc/self/exe").parent_path().parent_path() / "app" / "attnscope").string();
  int changes = 20;
  std::string size = "1600x900";
  int fps = 60;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--bin") bin = argv[i + 1];
    else if (flag == "--changes") changes = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--size") size = argv[i + 1];
    else if (flag == "--fps") fps = std::clamp(std::atoi(argv[i + 1]), 0, 1000);
    else {
      std::fprintf(stderr, "usage: frame_time [--bin PATH] [--changes N] [--size WxH] [--fps N]\n");
      return 2;
    }
  }
  if (!fs::exists(bin)) {
    std::fprintf(stderr, "error: no attnscope binary at %s (build the attnscope target, or pass --bin)\n", bin.c_str());
    return 2;
  }
  if (std::system("command -v xvfb-run >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "error: xvfb-run not found (apt-get install xvfb)\n");
    return 2;
  }
  const std::vector<Case> cases = {
      {"T=16,  H=4   heads", "--heads 4 --text " + quote(words(16))},
      {"T=128, H=16  heads", "--heads 16 --text " + quote(words(128))},
      {"T=512, H=16  heads", "--heads 16 --text " + quote(words(512))},
      {"32x32 grid, 9 heads relpos2d", "--view relpos2d --grid 32x32 --pattern rings --delta-preset conv3x3"},
  };
  const fs::path dir = fs::temp_directory_path() / ("attnscope_frame_time_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::printf("frame_time: %s window under Xvfb (llvmpipe), %d settings changes per case, frames paced to %s\n",
              size.c_str(), changes, fps > 0 ? (std::to_string(fps) + " Hz").c_str() : "none (as fast as possible)");
  std::printf("%-30s %12s %12s %14s %14s %14s\n", "case", "frame med", "frame p95", "latency med", "latency p95",
              "compute med");
  int failures = 0;
  for (const Case& c : cases) {
    const fs::path out = dir / "bench.json";
    fs::remove(out);
    const std::string cmd = "xvfb-run -a -s '-screen 0 3840x2160x24' env XDG_CONFIG_HOME=" + quote((dir / "config").string()) +
                            " " + quote(bin) + " " + c.args + " --size " + size + " --bench-json " + quote(out.string()) +
                            " --bench-changes " + std::to_string(changes) + " --bench-fps " + std::to_string(fps) +
                            " >/dev/null 2>" + quote((dir / "err.txt").string());
    const int status = std::system(cmd.c_str());
    if (status != 0 || !fs::exists(out)) {
      std::ifstream err(dir / "err.txt");
      std::string line;
      std::getline(err, line);
      std::printf("%-30s failed (exit %d): %s\n", c.name.c_str(), WIFEXITED(status) ? WEXITSTATUS(status) : -1, line.c_str());
      ++failures;
      continue;
    }
    std::ifstream f(out);
    const nlohmann::json j = nlohmann::json::parse(f);
    const auto frame = j["frame_ms"].get<std::vector<double>>();
    const auto latency = j["latency_ms"].get<std::vector<double>>();
    const auto compute = j["compute_ms"].get<std::vector<double>>();
    std::printf("%-30s %9.2f ms %9.2f ms %11.2f ms %11.2f ms %11.2f ms\n", c.name.c_str(), percentile(frame, 0.5),
                percentile(frame, 0.95), percentile(latency, 0.5), percentile(latency, 0.95), percentile(compute, 0.5));
  }
  fs::remove_all(dir);
  std::printf("latency: settings change → the frame showing the new result finished (glFinish); compute: the worker's\n"
              "part of it (analysis + colouring). frame: the work of a frame (building, rendering, glFinish), without\n"
              "the wait for the next 60 Hz tick.\n");
  return failures == 0 ? 0 : 1;
}
