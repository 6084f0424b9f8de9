// bench_rollout — attention rollout and attention flow (analysis/rollout.h) on random causal attention stacks
// of L = 12 layers and 12 heads at T = 32, 64 and 128: milliseconds of the rollout (every layer), of the flow
// into one position (the last, after the last layer: T max-flows on the largest graph, the costliest single
// position), of the flow into the last position after every layer (what a per-layer view of one query
// asks), and of every position after the last layer (one run). Not a test: it prints figures. CPU time counts
// every thread's, idle OpenMP threads' spinning included (run with OMP_WAIT_POLICY=PASSIVE to leave it out).
//
//   bench_rollout            the standard table
//   bench_rollout T L [REPS] one shape, one JSON line
//
// Each row of each head is a softmax of N(0, 2²)-like logits over the keys j ≤ i, as a trained model's are:
// dense (no zero below the diagonal), so the flow graphs are as large as a causal model's get.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "attnscope/analysis/rollout.h"
#include "attnscope/core/rng.h"

using namespace attnscope;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

model::AttentionStack random_stack(int L, int H, int T, uint64_t seed) {
  Rng rng(seed);
  model::AttentionStack s;
  s.layers = L, s.heads = s.kv_heads = H, s.tokens = T, s.causal = true;
  s.attentions.assign(size_t(L) * H * T * T, 0.0f);
  for (int lh = 0; lh < L * H; ++lh)
    for (int i = 0; i < T; ++i) {
      float* row = s.attentions.data() + (size_t(lh) * T + i) * T;
      double sum = 0;
      for (int j = 0; j <= i; ++j) sum += row[j] = std::exp(4.0f * (rng.uniform01() - 0.5f));
      for (int j = 0; j <= i; ++j) row[j] = float(row[j] / sum);
    }
  return s;
}

// Wall-clock and CPU milliseconds (the process's, every thread's) of one run: the CPU figure is the one to read
// on a shared machine, where the wall clock also counts the other programs' turns.
struct Time {
  double wall_ms = 0, cpu_ms = 0;
};

// The run with the median wall time of `reps` runs of f.
template <class F>
Time median_time(int reps, F&& f) {
  std::vector<Time> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    f();
    t.push_back({1e3 * seconds_since(t0), 1e3 * double(std::clock() - c0) / CLOCKS_PER_SEC});
  }
  std::sort(t.begin(), t.end(), [](const Time& a, const Time& b) { return a.wall_ms < b.wall_ms; });
  return t[t.size() / 2];
}

struct Row {
  int T = 0, L = 0;
  Time rollout, one_position, every_layer, every_position{-1, -1};
};

Row measure(int T, int L, int reps, bool every_position) {
  const model::AttentionStack stack = random_stack(L, 12, T, 2020 + uint64_t(T));
  Row row;
  row.T = T;
  row.L = L;
  Rollout r;
  row.rollout = median_time(reps, [&] { r = attention_rollout(stack); });
  FlowOptions one;
  one.layer = L - 1;
  one.position = T - 1;
  row.one_position = median_time(reps, [&] { attention_flow(r, one); });
  FlowOptions layers;
  layers.position = T - 1;
  row.every_layer = median_time(reps, [&] { attention_flow(r, layers); });
  if (every_position) {
    FlowOptions positions;
    positions.layer = L - 1;
    row.every_position = median_time(1, [&] { attention_flow(r, positions); });
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3) {
    const int T = std::atoi(argv[1]), L = std::atoi(argv[2]);
    const int reps = argc >= 4 ? std::max(1, std::atoi(argv[3])) : 3;
    if (T < 1 || T > 2048 || L < 1 || L > 256) {
      std::fprintf(stderr, "usage: bench_rollout [T L [REPS]]  (1 ≤ T ≤ 2048, 1 ≤ L ≤ 256)\n");
      return 2;
    }
    const Row row = measure(T, L, reps, false);
    std::printf("{\"T\": %d, \"L\": %d, \"heads\": 12, \"rollout_ms\": [%.3f, %.3f], \"flow_one_position_ms\": [%.3f, %.3f], "
                "\"flow_every_layer_ms\": [%.3f, %.3f], \"times\": \"[wall, cpu]\"}\n",
                row.T, row.L, row.rollout.wall_ms, row.rollout.cpu_ms, row.one_position.wall_ms, row.one_position.cpu_ms,
                row.every_layer.wall_ms, row.every_layer.cpu_ms);
    return 0;
  }
  std::printf("attention rollout and flow, random causal stacks, 12 heads; milliseconds as wall / CPU (every thread)\n"
              "(median of 3 runs; every position: 1 run). On a shared machine read the CPU figures.\n");
  std::printf("%5s %4s %18s %22s %22s %24s\n", "T", "L", "rollout", "flow 1 position", "flow every layer",
              "flow every position");
  for (int T : {32, 64, 128}) {
    const Row row = measure(T, 12, 3, true);
    std::printf("%5d %4d %8.1f / %7.1f %10.1f / %9.1f %10.1f / %9.1f ", row.T, row.L, row.rollout.wall_ms,
                row.rollout.cpu_ms, row.one_position.wall_ms, row.one_position.cpu_ms, row.every_layer.wall_ms,
                row.every_layer.cpu_ms);
    std::printf("%11.1f / %10.1f\n", row.every_position.wall_ms, row.every_position.cpu_ms);
    std::fflush(stdout);
  }
  return 0;
}
