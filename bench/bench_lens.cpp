// bench_lens — what the logit lens and the direct logit attribution cost beside the forward they read
// (pipeline steps logit_lens, logit_attribution; model/lens.h). Not a test: it prints one JSON line.
//
//   bench_lens DIR T [reps]
// DIR is a checkpoint folder (e.g. the GPT-2-small-shaped one bench/compare_model_torch.py writes, or
// `python3 bench/bench_lens.py` below); T tokens of ids (t·7919 + 11) mod V. Each figure is the median of `reps`
// (default 5) after one warm-up: the forward as the window runs it (no taps), the forward that keeps the
// residual stream and its parts (lens_forward_options), logit_lens with the top 5, direct_logit_attribution of
// each position's top-1, and the peak resident memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "attnscope/model/forward.h"
#include "attnscope/model/lens.h"
#include "bench_util.h"

using namespace attnscope;
using attnscope::bench::peak_rss_mb;

namespace {

template <class F>
double median_ms(int reps, F f) {
  std::vector<double> ms;
  f();  // warm-up (and the lazy packing of the weights)
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_lens DIR T [reps]\n");
    return 2;
  }
  const auto model = model::open(argv[1]);
  const int T = std::atoi(argv[2]);
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  const int V = model->config.vocab;
  std::vector<int32_t> ids;
  for (int t = 0; t < T; ++t) ids.push_back(int32_t((int64_t(t) * 7919 + 11) % V));
  const double plain = median_ms(reps, [&] { model::forward(*model, ids); });
  model::ForwardResult traced;
  const double taps = median_ms(reps, [&] { traced = model::forward(*model, ids, model::lens_forward_options()); });
  const double lens = median_ms(reps, [&] { model::logit_lens(*model, traced, 5); });
  const double attribution = median_ms(reps, [&] { model::direct_logit_attribution(*model, traced); });
  std::printf("{\"model\": \"%s\", \"layers\": %d, \"d_model\": %d, \"heads\": %d, \"vocab\": %d, \"tokens\": %d, "
              "\"forward_ms\": %.1f, \"forward_with_taps_ms\": %.1f, \"logit_lens_ms\": %.1f, \"attribution_ms\": %.1f, "
              "\"lens_over_forward\": %.2f, \"peak_rss_mb\": %.0f}\n",
              model->name.c_str(), model->config.layers, model->config.d_model, model->config.heads, V, T, plain, taps,
              lens, attribution, lens / plain, peak_rss_mb());
  return 0;
}
