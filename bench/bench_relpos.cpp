// bench_relpos — milliseconds of relative-position attention on grids: the factorised fast path for
// all outputs (target: 64×64 with 25 heads well under 50 ms), the plain-loop N² reference it
// replaces, the full [H, N, N] tensor, and the whole relpos / conv analyses the GUI asks for.
// Not a test: it prints figures.
//
//   bench_relpos          the standard figures (the 64×64 direct reference is skipped: seconds)
//   bench_relpos all      also the 64×64 direct reference, once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/relpos/conv_emulation.h"
#include "attnscope/relpos/relative_position.h"
#include "attnscope/core/rng.h"

using namespace attnscope;

namespace {

// Median and best of `reps` runs, after one warm-up run.
void time_it(const char* what, int reps, const std::function<void()>& f) {
  f();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-58s median %9.2f ms   best %9.2f ms   (%d runs)\n", what, ms[ms.size() / 2], ms.front(), reps);
}

std::vector<RelposHead> heads_for(const char* preset, int count, double alpha) {
  std::vector<RelposHead> heads;
  for (const auto& d : delta_preset(preset, count, 2, 3)) heads.push_back({alpha, d});
  return heads;
}

Mat random_x(int n, int channels) {
  Rng rng(1);
  Mat x(n, channels);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform01();
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  const bool all = argc > 1 && std::strcmp(argv[1], "all") == 0;
  std::printf("relative-position attention, outputs O_h = P_h·X for every query (alpha = 1)\n");
  for (auto [side, count, preset] : {std::tuple{64, 25, "conv5x5"}, std::tuple{32, 9, "conv3x3"}})
    for (int channels : {1, 3}) {
      const std::vector<RelposHead> heads = heads_for(preset, count, 1.0);
      for (bool pad : {false, true}) {
        const RelposGeometry g = relpos_geometry(2, side, side, heads, pad);
        const Mat x = random_x(g.cells(), channels);
        char label[128];
        std::snprintf(label, sizeof label, "fast   %dx%d, %2d heads, %d ch%s", side, side, count, channels,
                      pad ? ", pad keys" : "");
        time_it(label, 21, [&] { relpos_outputs(heads, g, x); });
      }
    }
  {
    const std::vector<RelposHead> heads = heads_for("conv3x3", 9, 1.0);
    const RelposGeometry g = relpos_geometry(2, 32, 32, heads, false);
    const Mat x = random_x(g.cells(), 1);
    time_it("direct 32x32,  9 heads, 1 ch (plain-loop reference)", 3, [&] { relpos_outputs_reference(heads, g, x); });
    time_it("full probs [9, 1024, 1024] (32x32, fast)", 5, [&] { relpos_probs(heads, g); });
  }
  if (all) {
    const std::vector<RelposHead> heads = heads_for("conv5x5", 25, 1.0);
    const RelposGeometry g = relpos_geometry(2, 64, 64, heads, false);
    const Mat x = random_x(g.cells(), 1);
    time_it("direct 64x64, 25 heads, 1 ch (plain-loop reference)", 1, [&] { relpos_outputs_reference(heads, g, x); });
  }

  std::printf("\nwhole analyses (what the GUI worker computes per scene)\n");
  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.pattern = "rings";
  s.input.grid.rows = s.input.grid.cols = 64;
  s.relpos.heads = 25;
  s.relpos.delta_preset = "conv5x5";
  time_it("analyse_relpos 64x64, 25 heads (no [H,N,N]: N > 1024)", 11, [&] { analyse_relpos(s, nullptr); });
  s.input.grid.rows = s.input.grid.cols = 32;
  s.relpos.heads = 9;
  s.relpos.delta_preset = "conv3x3";
  time_it("analyse_relpos 32x32,  9 heads (with [9,1024,1024])", 11, [&] { analyse_relpos(s, nullptr); });
  s.input.grid.rows = s.input.grid.cols = 64;
  s.conv.kernel = "sobel_x";
  time_it("analyse_conv 64x64 3x3 kernel (+ 25-point alpha curve)", 11, [&] { analyse_conv(s); });
  s.conv.kernel = "custom";
  s.conv.custom.assign(25, 0.04);
  time_it("analyse_conv 64x64 5x5 kernel (+ 25-point alpha curve)", 11, [&] { analyse_conv(s); });
  return 0;
}
