// bench_engine — milliseconds and GFLOP/s of grouped_attention, probabilities materialised for
// every head, on four standard shapes (T = 64 … 1024). Not a test: it prints figures.
//
//   bench_engine                      the four standard shapes
//   bench_engine T C H G [reps]       one shape; prints a JSON line (used by compare_torch.py)
#include <Eigen/Core>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "attnscope/attention/grouped_attention.h"
#include "attnscope/core/rng.h"

using namespace attnscope;

namespace {

struct Figures {
  double median_ms, best_ms, gflops;
};

// FLOPs of one forward pass: four projections and, per head, Q·Kᵀ and P·V (2 FLOPs per multiply-add).
double flops(int T, int C, int H, int G) {
  const double dk = double(C) / H;
  return 2.0 * T * C * (H * dk) * 2 + 2.0 * T * C * (G * dk) * 2 + H * (2.0 * T * T * dk * 2);
}

Figures run(int T, int C, int H, int G, int reps) {
  Rng rng(1);
  Mat x(T, C);
  for (int i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform(-1, 1);
  const AttentionShape shape{C, H, G};
  const AttentionWeights w = random_weights(shape, 2);
  for (int i = 0; i < 2; ++i) grouped_attention(x, w, shape, {});  // warm caches and thread pool
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const AttentionResult r = grouped_attention(x, w, shape, {});
    const auto t1 = std::chrono::steady_clock::now();
    if (r.probs.size() != size_t(H)) std::abort();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  return {median, ms.front(), flops(T, C, H, G) / (median * 1e6)};
}

}  // namespace

int main(int argc, char** argv) {
  // As in app/main.cpp: freed tensors are reused instead of faulted in afresh on every call.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (argc >= 5) {
    const int T = std::atoi(argv[1]), C = std::atoi(argv[2]), H = std::atoi(argv[3]), G = std::atoi(argv[4]);
    const int reps = argc >= 6 ? std::atoi(argv[5]) : 20;
    const Figures f = run(T, C, H, G, reps);
    std::printf("{\"T\": %d, \"C\": %d, \"H\": %d, \"G\": %d, \"median_ms\": %.4f, \"best_ms\": %.4f, \"gflops\": %.2f}\n", T,
                C, H, G, f.median_ms, f.best_ms, f.gflops);
    return 0;
  }
  std::printf("grouped_attention, probabilities for every head, Eigen threads: %d\n", Eigen::nbThreads());
  std::printf("%6s %6s %4s %4s %11s %11s %9s\n", "T", "C", "H", "G", "median ms", "best ms", "GFLOP/s");
  const int shapes[][4] = {{64, 256, 8, 8}, {256, 512, 8, 2}, {512, 512, 16, 4}, {1024, 768, 12, 12}};
  for (const auto& s : shapes) {
    const Figures f = run(s[0], s[1], s[2], s[3], s[0] >= 1024 ? 10 : 30);
    std::printf("%6d %6d %4d %4d %11.3f %11.3f %9.1f\n", s[0], s[1], s[2], s[3], f.median_ms, f.best_ms, f.gflops);
  }
  return 0;
}
