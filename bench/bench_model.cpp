// bench_model — opening a checkpoint and its forward pass with every layer's attentions kept.
// Not a test: it prints figures (one JSON line), read by bench/compare_model_torch.py.
//
//   bench_model DIR T [reps] [--out OUT] [--open-only] [--packed]
// DIR is a checkpoint folder, opened once (run it twice for a warm-cache figure: compare_model_torch.py
// does); T tokens of ids (t·7919 + 11) mod V are run `reps` times (default 5) with the lazy packing
// turned off (PackingState::enabled): every product reads the mapped file, as a model whose packed
// copies do not fit in memory does (forward_median_ms, forward_best_ms). --packed then times the forwards the
// window repeats (every slider change, every ablation) in the same process, the lazy packing on (model.h
// WeightPacking): the first forward with it on, which still reads in place and copies nothing (what a
// one-shot `compute` runs; first_forward_ms, with first_forward_packed_mb the copies it made: 0), the
// second, which packs each matrix (packing_forward_ms: what the window's second forward costs), then
// `reps` on the packed copies (packed_median_ms,
// packed_best_ms), each after an in-place one (the in-place figures then come from those: both see the
// same load on a shared machine). --out writes the last pass's attentions [L·H, T, T] and logits [T, V]
// as .npy (the packed pass's with --packed), for the comparison with PyTorch. Peak RSS is VmHWM (the whole
// process: mapped file pages still resident count too): peak_rss_mb at the end, and with --packed
// peak_rss_in_place_mb before the packing forward (what the model holds unpacked).
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/forward.h"
#include "bench_util.h"

using namespace attnscope;
using attnscope::bench::peak_rss_mb;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // as app/main.cpp: freed tensors are reused
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_model DIR T [reps] [--out OUT] [--open-only] [--packed]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int T = std::atoi(argv[2]);
  int reps = 5;
  std::string out;
  bool open_only = false, packed = false;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
    else if (std::strcmp(argv[i], "--packed") == 0) packed = true;
    else if (std::strcmp(argv[i], "--open-only") == 0) open_only = true;
    else reps = std::max(1, std::atoi(argv[i]));
  }
  try {
    auto t0 = std::chrono::steady_clock::now();
    const auto m = model::open(dir);
    const double open_s = seconds_since(t0);
    const model::ModelConfig& c = m->config;
    if (open_only) {
      std::printf("{\"model\": \"%s\", \"open_s\": %.3f, \"peak_rss_mb\": %.0f}\n", m->name.c_str(), open_s, peak_rss_mb());
      return 0;
    }

    std::vector<int32_t> ids(size_t(std::max(T, 0)));
    for (int t = 0; t < T; ++t) ids[size_t(t)] = int32_t((int64_t(t) * 7919 + 11) % c.vocab);
    const model::WeightPacking& packing = m->weights->packing;
    model::ForwardResult r;
    auto timed = [&](int n) {  // n passes, ms, sorted
      std::vector<double> ms;
      for (int i = 0; i < n; ++i) {
        const auto start = std::chrono::steady_clock::now();
        r = model::forward(*m, ids);
        ms.push_back(seconds_since(start) * 1e3);
      }
      std::sort(ms.begin(), ms.end());
      return ms;
    };
    if (packing.state) packing.state->enabled = false;  // unpacked: every product in place
    (void)model::forward(*m, ids);  // warm-up: threads, first-touch pages
    std::string packed_json;
    std::vector<double> in_place_ms, packed_ms;
    if (!packed || !packing.state) {
      in_place_ms = timed(reps);
    } else {
      (void)model::forward(*m, ids);
      const double peak_in_place = peak_rss_mb();
      packing.state->enabled = true;
      const double first_ms = timed(1).front();  // the first use of each matrix reads in place
      const double first_packed_mb = double(packing.state->bytes.load()) / (1 << 20);
      const double peak_first = peak_rss_mb();
      const double packing_ms = timed(1).front();  // the second packs each matrix
      // In place and packed in turns, so that both see the same load on a shared machine.
      for (int i = 0; i < reps; ++i) {
        packing.state->enabled = false;
        in_place_ms.push_back(timed(1).front());
        packing.state->enabled = true;
        packed_ms.push_back(timed(1).front());
      }
      std::sort(in_place_ms.begin(), in_place_ms.end());
      std::sort(packed_ms.begin(), packed_ms.end());
      char text[512];
      std::snprintf(text, sizeof text,
                    ", \"packed_median_ms\": %.2f, \"packed_best_ms\": %.2f, \"first_forward_ms\": %.2f, "
                    "\"first_forward_packed_mb\": %.0f, \"peak_rss_first_forward_mb\": %.0f, \"packing_forward_ms\": %.2f, "
                    "\"packed_mb\": %.0f, \"peak_rss_in_place_mb\": %.0f, \"peak_rss_packed_mb\": %.0f",
                    packed_ms[packed_ms.size() / 2], packed_ms.front(), first_ms, first_packed_mb, peak_first, packing_ms,
                    double(packing.state->bytes.load()) / (1 << 20), peak_in_place, peak_rss_mb());
      packed_json = text;
    }
    const double in_place_median = in_place_ms[in_place_ms.size() / 2], in_place_best = in_place_ms.front();
    if (!out.empty()) {
      write_npy(out + "/attentions.npy", r.attentions.data(), {int64_t(r.layers) * r.heads, r.tokens, r.tokens});
      write_npy(out + "/logits.npy", r.logits);
    }
    const double weights_mb = double(c.parameter_count()) * 4 / (1 << 20);
    const double attentions_mb = double(r.attentions.size()) * 4 / (1 << 20);
    std::printf(
        "{\"model\": \"%s\", \"tokens\": %d, \"open_s\": %.3f, \"forward_median_ms\": %.2f, "
        "\"forward_best_ms\": %.2f, \"peak_rss_mb\": %.0f, \"weights_f32_mb\": %.0f, \"attentions_mb\": %.1f, "
        "\"parameters\": %lld, \"packing\": \"%s\"%s}\n",
        m->name.c_str(), T, open_s, in_place_median, in_place_best, peak_rss_mb(), weights_mb, attentions_mb,
        static_cast<long long>(c.parameter_count()), model::packing_text(packing).c_str(), packed_json.c_str());
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
