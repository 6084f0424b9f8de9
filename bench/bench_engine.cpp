// bench_engine — milliseconds and GFLOP/s of grouped_attention, probabilities materialised for
// every head, on four standard shapes (T = 64 … 1024), and of multi-head latent attention (MLA) in its
// naive and absorbed forms on two. Not a test: it prints figures.
//
//   bench_engine                      the standard shapes
//   bench_engine T C H G [reps]       one shape; prints a JSON line (used by compare_torch.py)
//   bench_engine mla T C H R_KV R_Q D_ROPE [reps] [DIR]
//                                     one MLA shape, both forms; prints a JSON line, and with DIR writes X, the
//                                     seeded weights and the probabilities/output there (compare_torch.py --mla)
// The browser build makes it for node too (build-web/bench/bench_engine.js: WebAssembly, one thread,
// SIMD128), which bench/web_figures.sh runs beside the native one on the same shape.
#include <Eigen/Core>
#ifndef __EMSCRIPTEN__
#include <malloc.h>
#endif

#include <filesystem>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <string>

#include "attnscope/attention/grouped_attention.h"
#include "attnscope/attention/latent_attention.h"
#include "attnscope/core/rng.h"
#include "attnscope/io/npy.h"

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

// ---- MLA ----------------------------------------------------------------------------------------
// FLOPs of one MLA pass (latent_attention.h), 2 per multiply-add. Both forms share the query path and the
// compression; naive expands K and V per head, absorbed folds W_UK into the queries and W_UV into W_O.
double mla_flops(const LatentShape& s, int T, bool absorbed) {
  const double C = s.d_model, H = s.heads, dN = s.head_dim(), dR = s.rope_dim, r = s.kv_rank, rq = s.q_rank;
  double f = rq > 0 ? 2.0 * T * C * rq + 2.0 * T * rq * H * (dN + dR) : 2.0 * T * C * H * (dN + dR);
  f += 2.0 * T * C * (r + dR);
  if (absorbed)
    f += 2.0 * T * H * dN * r + H * 2.0 * T * T * (r + dR) + H * 2.0 * T * T * r + 2.0 * C * dN * r * H + 2.0 * T * H * r * C;
  else
    f += 2.0 * T * r * H * 2 * dN + H * 2.0 * T * T * (dN + dR) + H * 2.0 * T * T * dN + 2.0 * T * H * dN * C;
  return f;
}

struct MlaFigures {
  Figures naive, absorbed;
};

MlaFigures run_mla(int T, const LatentShape& shape, int reps, const std::string& dump) {
  Rng rng(1);
  Mat x(T, shape.d_model);
  for (int i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform(-1, 1);
  const LatentWeights w = random_latent_weights(shape, 2);
  auto time = [&](bool absorbed) {
    auto pass = [&] {
      return absorbed ? latent_attention_absorbed(x, w, shape, {}, {}) : latent_attention(x, w, shape, {}, {});
    };
    for (int i = 0; i < 2; ++i) pass();
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const AttentionResult r = pass();
      const auto t1 = std::chrono::steady_clock::now();
      if (r.probs.size() != size_t(shape.heads)) std::abort();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return Figures{ms[ms.size() / 2], ms.front(), mla_flops(shape, T, absorbed) / (ms[ms.size() / 2] * 1e6)};
  };
  if (!dump.empty()) {  // the same numbers for PyTorch: X, the seeded weights, and what attnscope made of them
    const std::filesystem::path d(dump);
    write_npy(d / "x.npy", x);
    if (shape.q_rank > 0) {
      write_npy(d / "wdq.npy", w.wdq);
      write_npy(d / "q_norm.npy", Mat(w.q_norm.transpose()));
    }
    write_npy(d / "wuq.npy", w.wuq), write_npy(d / "wqr.npy", w.wqr), write_npy(d / "wdkv.npy", w.wdkv);
    write_npy(d / "kv_norm.npy", Mat(w.kv_norm.transpose())), write_npy(d / "wkr.npy", w.wkr);
    write_npy(d / "wuk.npy", w.wuk), write_npy(d / "wuv.npy", w.wuv), write_npy(d / "wo.npy", w.wo);
    const AttentionResult naive = latent_attention(x, w, shape, {}, {});
    write_npy(d / "probs.npy", naive.probs);
    write_npy(d / "output.npy", naive.output);
    write_npy(d / "output_absorbed.npy", latent_attention_absorbed(x, w, shape, {}, {}).output);
  }
  return {time(false), time(true)};
}

}  // namespace

int main(int argc, char** argv) {
  // As in app/main.cpp: freed tensors are reused instead of faulted in afresh on every call.
#ifndef __EMSCRIPTEN__  // WebAssembly's memory only grows: nothing is given back to trim
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  if (argc >= 8 && std::string(argv[1]) == "mla") {
    const int T = std::atoi(argv[2]);
    const LatentShape shape{std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), std::atoi(argv[6]), std::atoi(argv[7])};
    const int reps = argc >= 9 ? std::atoi(argv[8]) : 20;
    const MlaFigures f = run_mla(T, shape, reps, argc >= 10 ? argv[9] : "");
    std::printf("{\"T\": %d, \"C\": %d, \"H\": %d, \"kv_rank\": %d, \"q_rank\": %d, \"rope_dim\": %d, "
                "\"naive_median_ms\": %.4f, \"naive_best_ms\": %.4f, \"naive_gflops\": %.2f, "
                "\"absorbed_median_ms\": %.4f, \"absorbed_best_ms\": %.4f, \"absorbed_gflops\": %.2f}\n",
                T, shape.d_model, shape.heads, shape.kv_rank, shape.q_rank, shape.rope_dim, f.naive.median_ms,
                f.naive.best_ms, f.naive.gflops, f.absorbed.median_ms, f.absorbed.best_ms, f.absorbed.gflops);
    return 0;
  }
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
  std::printf("\nmulti-head latent attention (latent_attention.h), naive and absorbed forms\n");
  std::printf("%6s %6s %4s %5s %5s %4s %12s %12s %10s %12s %12s %10s\n", "T", "C", "H", "r_kv", "r_q", "d_R",
              "naive med ms", "best ms", "GFLOP/s", "absorb med", "best ms", "GFLOP/s");
  const int mla_shapes[][6] = {{256, 512, 8, 64, 0, 16}, {1024, 768, 12, 128, 192, 32}};
  for (const auto& s : mla_shapes) {
    const MlaFigures f = run_mla(s[0], {s[1], s[2], s[3], s[4], s[5]}, s[0] >= 1024 ? 10 : 30, "");
    std::printf("%6d %6d %4d %5d %5d %4d %12.3f %12.3f %10.1f %12.3f %12.3f %10.1f\n", s[0], s[1], s[2], s[3], s[4], s[5],
                f.naive.median_ms, f.naive.best_ms, f.naive.gflops, f.absorbed.median_ms, f.absorbed.best_ms,
                f.absorbed.gflops);
  }
  return 0;
}
