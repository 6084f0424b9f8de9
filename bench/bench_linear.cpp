// bench_linear — attention without a softmax (linear_attention.h): milliseconds and GFLOP/s of a layer's heads
// through the recurrence (linear_heads_recurrent) and the chunked form (linear_heads_chunked), for every kind,
// at T = 1024 and 4096, with d_k = d_v = 128 and 8 heads; each figure also as a share of the same run's sgemm
// rate (Eigen's float32 GEMM 2048³, the engine's own products, on every core). Not a test: it prints figures.
//
//   bench_linear                                   the standard table
//   bench_linear KIND T H DK DV CHUNK [REPS] [DIR] one shape, both forms; prints a JSON line, and with DIR writes
//                                                  the inputs and both forms' outputs there (compare_linear_torch.py)
//
// The inputs are drawn as a model makes them: Gated DeltaNet's q, k L2-normalised (q scaled by 1/√d_k),
// β = sigmoid(·), g = −A·Δ with A in [1, 16] per head and Δ log-uniform in [0.001, 0.1] (Qwen3-Next's
// A_log and dt_bias initialisation); Mamba-2 the same A and Δ and D = 1; RetNet's decays γ_h = 1 − 2^(−5−h).
//
// Flops (2 per multiply-add), per head, counted as each form multiplies:
//   recurrence   per token 4·d_k·d_v (the write and the read of the state; the delta rules 6·d_k·d_v, with the recall)
//   chunked      per chunk of n: 2n²(d_k + d_v) for QKᵀ and its block times V, 4n·d_k·d_v for Q·S and the state's
//                update; the delta rules add KKᵀ (2n²·d_k), the triangular solve (n²(d_k + d_v)) and W·S (2n·d_k·d_v)
#include <Eigen/Core>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/attention/linear_attention.h"
#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/io/npy.h"

using namespace attnscope;

namespace {

constexpr LinearKind all_kinds[] = {LinearKind::linear, LinearKind::linear_norm, LinearKind::decayed,
                                    LinearKind::mamba2, LinearKind::delta,       LinearKind::gated_delta};

bool is_delta(LinearKind k) { return k == LinearKind::delta || k == LinearKind::gated_delta; }

double recurrent_flops(LinearKind kind, int T, int dk, int dv) {
  return double(T) * (is_delta(kind) ? 6.0 : 4.0) * dk * dv;
}

double chunked_flops(LinearKind kind, int T, int dk, int dv, int chunk) {
  double f = 0;
  for (int c0 = 0; c0 < T; c0 += chunk) {
    const double n = std::min(chunk, T - c0);
    f += 2 * n * n * (dk + dv) + 4 * n * dk * dv;
    if (is_delta(kind)) f += 2 * n * n * dk + n * n * (dk + dv) + 2 * n * dk * dv;
  }
  return f;
}

Mat uniform(int rows, int cols, Rng& rng) {
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.uniform(-1, 1);
  return m;
}

Mat unit_rows(Mat m, float scale) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) m.row(i) *= scale / m.row(i).norm();
  return m;
}

// A layer's H heads of `kind`, T tokens.
std::vector<LinearHeadInput> layer_inputs(LinearKind kind, int T, int H, int dk, int dv) {
  Rng rng(39);
  std::vector<LinearHeadInput> heads(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) {
    LinearHeadInput& in = heads[size_t(h)];
    in.q = uniform(T, dk, rng), in.k = uniform(T, dk, rng), in.v = uniform(T, dv, rng);
    const float A = rng.uniform(1, 16);  // −A: Qwen3-Next's and Mamba-2's A = −exp(A_log), A_log = log U(1, 16)
    auto dt = [&] { return std::exp(rng.uniform(std::log(0.001f), std::log(0.1f))); };
    switch (kind) {
      case LinearKind::decayed: in.log_decay.assign(size_t(T), float(std::log1p(-std::ldexp(1.0, -5 - h)))); break;
      case LinearKind::mamba2:
        for (int t = 0; t < T; ++t) in.dt.push_back(dt());
        in.log_decay.assign(size_t(T), -A);
        in.d_skip = 1.0f;
        break;
      case LinearKind::delta:
      case LinearKind::gated_delta:
        in.q = unit_rows(in.q, 1.0f / std::sqrt(float(dk))), in.k = unit_rows(in.k, 1.0f);
        for (int t = 0; t < T; ++t) {
          in.beta.push_back(1.0f / (1.0f + std::exp(-rng.uniform(-2, 2))));
          if (kind == LinearKind::gated_delta) in.log_decay.push_back(-A * dt());
        }
        break;
      default: break;
    }
  }
  return heads;
}

struct Figures {
  double median_ms, best_ms, gflops;  // gflops at the best time
};

template <class F>
Figures time_it(F pass, double flops, int reps) {
  pass();  // warm caches and the thread pool
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), flops / (ms.front() * 1e6)};
}

// Eigen's float32 GEMM rate on every core: C = A·B, n×n, best of `reps` after a warm-up, GFLOP/s.
double eigen_sgemm_gflops(int n = 2048, int reps = 5) {
  Rng rng(1);
  const Mat a = uniform(n, n, rng), b = uniform(n, n, rng);
  Mat c(n, n);
  c.noalias() = a * b;
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    c.noalias() = a * b;
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!std::isfinite(c(0, 0))) std::abort();
  return 2.0 * double(n) * n * n / best / 1e9;
}

// Heads stacked one above the other: [H·rows, cols].
Mat stacked(const std::vector<LinearHeadResult>& r, bool state) {
  const Mat& first = state ? r[0].state : r[0].output;
  Mat m(first.rows() * Eigen::Index(r.size()), first.cols());
  for (size_t h = 0; h < r.size(); ++h)
    m.middleRows(Eigen::Index(h) * first.rows(), first.rows()) = state ? r[h].state : r[h].output;
  return m;
}

Mat stacked_inputs(const std::vector<LinearHeadInput>& heads, const Mat LinearHeadInput::*field) {
  const Eigen::Index T = heads[0].q.rows();
  Mat m(T * Eigen::Index(heads.size()), (heads[0].*field).cols());
  for (size_t h = 0; h < heads.size(); ++h) m.middleRows(Eigen::Index(h) * T, T) = heads[h].*field;
  return m;
}

// [H, T] of a per-token vector (zeros when the kind has none).
Mat per_token(const std::vector<LinearHeadInput>& heads, const std::vector<float> LinearHeadInput::*field) {
  const Eigen::Index T = heads[0].q.rows();
  Mat m = Mat::Zero(Eigen::Index(heads.size()), T);
  for (size_t h = 0; h < heads.size(); ++h)
    if (!(heads[h].*field).empty())
      m.row(Eigen::Index(h)) = Eigen::Map<const Vec>((heads[h].*field).data(), T).transpose();
  return m;
}

struct Both {
  Figures recurrent, chunked;
};

Both run(LinearKind kind, int T, int H, int dk, int dv, int chunk, int reps, const std::string& dump) {
  const std::vector<LinearHeadInput> heads = layer_inputs(kind, T, H, dk, dv);
  std::vector<LinearHeadResult> rec, chk;
  const Figures r = time_it([&] { rec = linear_heads_recurrent(kind, heads); }, H * recurrent_flops(kind, T, dk, dv),
                            reps);
  const Figures c = time_it([&] { chk = linear_heads_chunked(kind, heads, chunk); },
                            H * chunked_flops(kind, T, dk, dv, chunk), reps);
  if (!dump.empty()) {
    const std::filesystem::path d(dump);
    write_npy(d / "q.npy", stacked_inputs(heads, &LinearHeadInput::q));
    write_npy(d / "k.npy", stacked_inputs(heads, &LinearHeadInput::k));
    write_npy(d / "v.npy", stacked_inputs(heads, &LinearHeadInput::v));
    write_npy(d / "beta.npy", per_token(heads, &LinearHeadInput::beta));
    write_npy(d / "log_decay.npy", per_token(heads, &LinearHeadInput::log_decay));
    write_npy(d / "dt.npy", per_token(heads, &LinearHeadInput::dt));
    Mat skip(H, 1);
    for (int h = 0; h < H; ++h) skip(h, 0) = heads[size_t(h)].d_skip;
    write_npy(d / "d_skip.npy", skip);
    write_npy(d / "recurrent_out.npy", stacked(rec, false));
    write_npy(d / "recurrent_state.npy", stacked(rec, true));
    write_npy(d / "chunked_out.npy", stacked(chk, false));
    write_npy(d / "chunked_state.npy", stacked(chk, true));
  }
  return {r, c};
}

// max |a − b| / max |b|: the two forms' agreement, relative to the output's scale.
double relative_gap(const std::vector<LinearHeadResult>& a, const std::vector<LinearHeadResult>& b) {
  double diff = 0, scale = 0;
  for (size_t h = 0; h < a.size(); ++h) {
    diff = std::max(diff, double((a[h].output - b[h].output).cwiseAbs().maxCoeff()));
    scale = std::max(scale, double(b[h].output.cwiseAbs().maxCoeff()));
  }
  return diff / scale;
}

}  // namespace

int main(int argc, char** argv) {
  // As in app/main.cpp: freed tensors are reused instead of faulted in afresh on every call.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  try {
    if (argc >= 7) {
      const LinearKind kind = parse_linear_kind(argv[1]);
      const int T = std::atoi(argv[2]), H = std::atoi(argv[3]), dk = std::atoi(argv[4]), dv = std::atoi(argv[5]);
      const int chunk = std::atoi(argv[6]), reps = argc >= 8 ? std::atoi(argv[7]) : 5;
      if (T < 1 || H < 1 || dk < 1 || dv < 1 || chunk < 1 || reps < 1) {
        std::fprintf(stderr, "error: T, H, DK, DV, CHUNK and REPS must be at least 1\n");
        return 2;
      }
      const Both f = run(kind, T, H, dk, dv, chunk, reps, argc >= 9 ? argv[8] : "");
      std::printf("{\"kind\": \"%s\", \"T\": %d, \"H\": %d, \"dk\": %d, \"dv\": %d, \"chunk\": %d, "
                  "\"recurrent_median_ms\": %.4f, \"recurrent_best_ms\": %.4f, \"recurrent_gflop\": %.6f, "
                  "\"chunked_median_ms\": %.4f, \"chunked_best_ms\": %.4f, \"chunked_gflop\": %.6f}\n",
                  argv[1], T, H, dk, dv, chunk, f.recurrent.median_ms, f.recurrent.best_ms,
                  H * recurrent_flops(kind, T, dk, dv) / 1e9, f.chunked.median_ms, f.chunked.best_ms,
                  H * chunked_flops(kind, T, dk, dv, chunk) / 1e9);
      return 0;
    }
    if (argc != 1) {
      std::fprintf(stderr, "usage: bench_linear [KIND T H DK DV CHUNK [REPS] [DIR]]\n");
      return 2;
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  const int H = 8, dk = 128, dv = 128, chunk = 64;
  const double rate = eigen_sgemm_gflops();
  std::printf("attention without a softmax: %d heads, d_k = d_v = %d, chunk %d, Eigen threads %d\n", H, dk, chunk,
              Eigen::nbThreads());
  std::printf("sgemm 2048³ (Eigen float32, the engine's own products, best of 5): %.0f GFLOP/s\n", rate);
  std::printf("%-12s %5s | %9s %9s %8s %7s | %9s %9s %8s %7s | %9s\n", "kind", "T", "rec best", "median", "GFLOP/s",
              "%sgemm", "chk best", "median", "GFLOP/s", "%sgemm", "rel. gap");
  for (const LinearKind kind : all_kinds)
    for (const int T : {1024, 4096}) {
      const std::vector<LinearHeadInput> heads = layer_inputs(kind, T, H, dk, dv);
      std::vector<LinearHeadResult> rec, chk;
      const int reps = T >= 4096 ? 3 : 7;
      const Figures r = time_it([&] { rec = linear_heads_recurrent(kind, heads); },
                                H * recurrent_flops(kind, T, dk, dv), reps);
      const Figures c = time_it([&] { chk = linear_heads_chunked(kind, heads, chunk); },
                                H * chunked_flops(kind, T, dk, dv, chunk), reps);
      std::printf("%-12s %5d | %9.2f %9.2f %8.1f %6.0f%% | %9.2f %9.2f %8.1f %6.0f%% | %9.1e\n", linear_kind_name(kind),
                  T, r.best_ms, r.median_ms, r.gflops, 100 * r.gflops / rate, c.best_ms, c.median_ms, c.gflops,
                  100 * c.gflops / rate, relative_gap(chk, rec));
    }
  std::printf("(GFLOP/s and %%sgemm from the best times, each form's flops as it multiplies; rel. gap = max|chunked −"
              " recurrent| / max|recurrent|)\n");
  return 0;
}
