// bench_long — long inputs (issue 38 item 6, model/head_maps.h) on a model with Llama-3.2-1B's shape. Not a test:
// it prints figures (JSON lines).
//
//   bench_long [T] [--config CONFIG.json] [--pixels P] [--no-torch]
// The model: tests/fixtures/real-configs/meta-llama/Llama-3.2-1B-Instruct.json (16 layers, 2048 wide, 32 query heads
// sharing 8 K/V heads of 64, vocabulary 128256, tied embeddings, llama3 RoPE), random float32 weights (std 0.02)
// built in memory — no download, no file. The input: T (default 4096) random token ids: no Llama 3 tokenizer is
// on this machine, so no real text (the map's cost does not depend on the ids; a real page's map differs in
// what it shows, not in what it costs).
// Measured, in this one process:
//   first compute   model::forward with AttentionKeep::on_demand (the page opened): wall time, peak RSS (VmHWM)
//                   before and after, the bytes of q and k kept (HeadMaps::kept_bytes) and what the whole stack
//                   would take ([L, H, T, T] floats)
//   head change     a new (layer, head): HeadMaps::head_into (the exact [T, T] map) and pool_map to 1024×1024 (max),
//                   the median of 12 changes over different layers and heads: the redraw a view waits for (goal ≤ 100 ms)
//   window head     what the window's worker does per head of a layer (app/core/long_heads.cpp): the head change,
//                   then the pooled map coloured as the export colours it (pooled_figure + panel_colors); a layer
//                   change in the Heads view is H of these, on the worker (the old heads stay on screen meanwhile)
//   window cache    what the window's worker does (app/core/long_heads.h), with its cache of pooled heads: the first
//                   compute of a layer (its H maps made, each pooled by max and mean to the Heads view's tiles,
//                   --pixels, default 256, and the Model view's 64-block thumbnails; then coloured), the prefetch
//                   of every other layer's heads (the whole model's), a cached layer change (the pictures of H heads
//                   from the cache: colouring only; goal ≤ 100 ms), a max↔mean switch (the same), and the Model
//                   view's overview of every head (the thumbnails coloured)
//   PyTorch         bench/compare_long_torch.py, run from here: the same head's map from the same q and k (written
//                   to a temporary folder) by torch (2 threads, bench/anchor.py), its pooling by max_pool2d, the
//                   largest difference from ours, and both head maps as shares of the run's sgemm rate (the map's
//                   Q·Kᵀ is 2·T²·D flop; the softmax and the mask are extra work the share counts against it)
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/pooled_figure.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/config.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/head_maps.h"
#include "bench_util.h"
#include "core/long_heads.h"

using namespace attnscope;
using attnscope::bench::load_average_1min;
using attnscope::bench::median;
using attnscope::bench::ms_since;
using attnscope::bench::peak_rss_mb;
namespace fs = std::filesystem;

namespace {

Mat random_mat(int64_t rows, int64_t cols, Rng& rng) {
  Mat m(rows, cols);
  float* p = m.data();
  for (int64_t i = 0; i < m.size(); ++i) p[i] = 0.02f * (rng.uniform01() + rng.uniform01() + rng.uniform01() - 1.5f) * 2.0f;
  return m;
}

// A model of `config`'s shape (the dense Llama layout: RMSNorm, SwiGLU, no biases) with random weights.
std::shared_ptr<const model::Model> random_model(const model::ModelConfig& c) {
  Rng rng(2026);
  auto w = std::make_shared<model::ModelWeights>();
  const int C = c.d_model, H = c.heads, G = c.kv_heads, D = c.head_dim, F = c.ffn_dim;
  w->token_embedding = model::PackedMatrix::from(random_mat(c.vocab, C, rng));
  w->final_norm_weight = Vec::Ones(C);
  w->layers.resize(size_t(c.layers));
  for (model::LayerWeights& l : w->layers) {
    l.norm1_weight = Vec::Ones(C);
    l.norm2_weight = Vec::Ones(C);
    l.wq = model::PackedMatrix::from(random_mat(int64_t(H) * D, C, rng));
    l.kv.wk = model::PackedMatrix::from(random_mat(int64_t(G) * D, C, rng));
    l.kv.wv = model::PackedMatrix::from(random_mat(int64_t(G) * D, C, rng));
    l.wo = model::PackedMatrix::from(random_mat(C, int64_t(H) * D, rng));
    l.w_gate = model::PackedMatrix::from(random_mat(F, C, rng));
    l.w_up = model::PackedMatrix::from(random_mat(F, C, rng));
    l.w_down = model::PackedMatrix::from(random_mat(C, F, rng));
  }
  auto m = std::make_shared<model::Model>();
  m->name = "Llama-3.2-1B-shaped (random weights)";
  m->config = c;
  m->weights = std::move(w);
  m->original_kv_heads = G;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // as app/main.cpp: freed tensors are reused
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  int T = 4096;
  bool torch = true;
  int pixels = 256;
  std::string config_path = std::string(ATTNSCOPE_SOURCE_DIR) + "/tests/fixtures/real-configs/meta-llama/Llama-3.2-1B-Instruct.json";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) config_path = argv[++i];
    else if (std::strcmp(argv[i], "--no-torch") == 0) torch = false;
    else if (std::strcmp(argv[i], "--pixels") == 0 && i + 1 < argc) pixels = std::atoi(argv[++i]);
    else T = std::atoi(argv[i]);
  }
  try {
    const model::ModelConfig config = model::parse_model_config(read_file(config_path, 1 << 20), config_path);
    auto t0 = std::chrono::steady_clock::now();
    const auto m = random_model(config);
    const double build_s = ms_since(t0) / 1e3;
    const double rss_model = peak_rss_mb();
    const model::ModelConfig& c = m->config;
    Rng rng(38);
    std::vector<int32_t> ids(static_cast<size_t>(T));
    for (int32_t& id : ids) id = int32_t(rng.next_u64() % uint64_t(c.vocab));

    // 1. The first compute: the page opened.
    model::ForwardOptions options;
    options.keep = model::AttentionKeep::on_demand;
    t0 = std::chrono::steady_clock::now();
    const model::ForwardResult r = model::forward(*m, ids, options);
    const double first_ms = ms_since(t0);
    const double rss_first = peak_rss_mb();
    const model::HeadMaps& maps = *r.head_maps;
    const double stack_gb = double(c.layers) * c.heads * double(T) * T * 4 / double(int64_t(1) << 30);
    const double logits_mb = double(T) * c.vocab * 4 / (1 << 20);

    // 2. Head changes: the exact map, then pooled to 1024×1024 (max).
    std::vector<float> map(size_t(T) * size_t(T));
    std::vector<double> head_ms, pool_ms, change_ms, colour_ms, window_ms;
    for (int i = 0; i < 13; ++i) {
      const int layer = (i * 5) % c.layers, head = (i * 11) % c.heads;
      const auto a = std::chrono::steady_clock::now();
      maps.head_into(layer, head, map.data());
      const double h = ms_since(a);
      const auto b = std::chrono::steady_clock::now();
      const model::PooledMap p = model::pool_map(Eigen::Map<const Mat>(map.data(), T, T), maps.mask(layer),
                                                 model::Pooling::max, 1024);
      const double q = ms_since(b);
      const auto d = std::chrono::steady_clock::now();
      const FigureSpec figure = pooled_figure(PooledFigureInput{&p, layer, head, m->name}, ExportRequest{});
      const std::vector<Rgba> colours = panel_colors(figure, 0);
      const double e = ms_since(d);
      if (colours.empty()) return 1;
      if (i == 0) continue;  // warm-up
      head_ms.push_back(h), pool_ms.push_back(q), change_ms.push_back(h + q);
      colour_ms.push_back(e), window_ms.push_back(h + q + e);
    }
    const double load = load_average_1min();
    std::printf("{\"model\": \"%s\", \"layers\": %d, \"heads\": %d, \"kv_heads\": %d, \"head_dim\": %d, \"tokens\": %d, "
                "\"ids\": \"random (no Llama 3 tokenizer on this machine)\", \"build_model_s\": %.1f, "
                "\"first_compute_ms\": %.0f, \"peak_rss_model_mb\": %.0f, \"peak_rss_after_first_compute_mb\": %.0f, "
                "\"kept_qk_mb\": %.1f, \"on_demand_bytes_2_threads_mb\": %.1f, \"logits_mb\": %.0f, "
                "\"whole_stack_gb\": %.1f, \"head_map_median_ms\": %.1f, \"pool_1024_median_ms\": %.1f, "
                "\"head_change_median_ms\": %.1f, \"head_change_max_ms\": %.1f, \"colour_1024_median_ms\": %.1f, "
                "\"window_head_median_ms\": %.1f, \"window_layer_change_ms\": %.0f, \"load_average_1min\": %.2f}\n",
                m->name.c_str(), c.layers, c.heads, c.kv_heads, c.head_dim, T, build_s, first_ms, rss_model, rss_first,
                double(maps.kept_bytes()) / (1 << 20), double(model::on_demand_bytes(c, T, 2)) / (1 << 20), logits_mb,
                stack_gb, median(head_ms), median(pool_ms), median(change_ms),
                *std::max_element(change_ms.begin(), change_ms.end()), median(colour_ms), median(window_ms),
                median(window_ms) * c.heads, load);
    std::fflush(stdout);

    // 3. The window's worker with its cache (app/core/long_heads.h), as compute_worker.cpp runs it.
    {
      const int thumbs = 64, first = c.layers / 2;
      gui::LongHeadCache cache;
      cache.set_sizes({pixels, thumbs});
      std::vector<std::string> labels(static_cast<size_t>(T));
      for (int t = 0; t < T; ++t) labels[size_t(t)] = std::to_string(ids[size_t(t)]);
      auto layer_pictures = [&](int layer, model::Pooling pooling) {
        return gui::make_long_heads(maps, m->name, layer, pooling, pixels, Colormap::viridis, std::nullopt, labels,
                                    nullptr, cache);
      };
      auto a = std::chrono::steady_clock::now();
      const gui::LongHeads opened = layer_pictures(first, model::Pooling::max);
      const double first_layer_ms = ms_since(a);
      const int64_t maps_first = cache.maps_made();
      // The prefetch: every other head, the nearest layers first (the worker's order), until the cache is full.
      a = std::chrono::steady_clock::now();
      int prefetched = 0;
      bool full = false;
      for (int d = 1; d < 2 * c.layers + 1 && !full; ++d) {
        const int l = d % 2 == 0 ? first + d / 2 : first - (d + 1) / 2;
        if (l < 0 || l >= c.layers) continue;
        for (int h = 0; h < c.heads && !full; ++h) {
          if (cache.bytes() + cache.head_bytes(T) > cache.ceiling()) full = true;
          else cache.make(maps, l, h, model::Pooling::max, pixels), ++prefetched;
        }
      }
      const double prefetch_s = ms_since(a) / 1e3;
      // Cached layer changes (the pictures from the cache) and max↔mean switches: the median of several.
      const int64_t maps_before = cache.maps_made();
      std::vector<double> change, pool_switch;
      for (int i = 1; i <= 5; ++i) {
        const int l = (first + i) % c.layers;
        a = std::chrono::steady_clock::now();
        const gui::LongHeads changed = layer_pictures(l, model::Pooling::max);
        change.push_back(ms_since(a));
        a = std::chrono::steady_clock::now();
        const gui::LongHeads switched = layer_pictures(l, model::Pooling::mean);
        pool_switch.push_back(ms_since(a));
        if (changed.pictures.size() != size_t(c.heads) || switched.pictures.size() != size_t(c.heads)) return 1;
      }
      const bool from_cache = cache.maps_made() == maps_before;
      a = std::chrono::steady_clock::now();
      const gui::LongOverview overview =
          gui::make_long_overview(maps, cache, m->name, model::Pooling::max, thumbs, Colormap::viridis, nullptr);
      const double overview_ms = ms_since(a);
      const double load = load_average_1min();
      std::printf("{\"window_cache\": true, \"pixels\": %d, \"thumb_pixels\": %d, \"first_layer_ms\": %.0f, "
                  "\"first_layer_maps\": %lld, \"prefetch_heads\": %d, \"prefetch_model_s\": %.1f, "
                  "\"cache_full\": %s, \"cache_mb\": %.1f, \"cache_ceiling_mb\": %.0f, "
                  "\"cached_layer_change_median_ms\": %.1f, \"cached_layer_change_max_ms\": %.1f, "
                  "\"max_mean_switch_median_ms\": %.1f, \"layer_changes_made_no_map\": %s, "
                  "\"model_view_overview_ms\": %.1f, \"overview_heads_cached\": %d, \"load_average_1min\": %.2f}\n",
                  pixels, thumbs, first_layer_ms, (long long)maps_first, prefetched, prefetch_s, full ? "true" : "false",
                  double(cache.bytes()) / (1 << 20), double(cache.ceiling()) / (1 << 20), median(change),
                  *std::max_element(change.begin(), change.end()), median(pool_switch), from_cache ? "true" : "false",
                  overview_ms, overview.heads_cached, load);
      std::fflush(stdout);
      if (opened.pictures.empty()) return 1;
    }

    // 4. PyTorch: the same head from the same q and k.
    if (torch) {
      const int layer = c.layers / 2, head = 5;
      const model::KeptLayer& k = maps.layers[size_t(layer)];
      const int D = k.dim, H = k.heads, G = k.kv_heads, g = head / (H / G);
      Mat q(T, D), kk(T, D);
      for (int t = 0; t < T; ++t) {
        std::copy_n(k.q.data() + (int64_t(t) * H + head) * D, D, q.row(t).data());
        std::copy_n(k.k.data() + (int64_t(t) * G + g) * D, D, kk.row(t).data());
      }
      maps.head_into(layer, head, map.data());
      const fs::path dir = fs::temp_directory_path() / ("bench_long_" + std::to_string(::getpid()));
      fs::create_directories(dir);
      write_npy(dir / "q.npy", q);
      write_npy(dir / "k.npy", kk);
      write_npy(dir / "map.npy", map.data(), {T, T});
      const float scale = k.scale > 0 ? k.scale : 1.0f / std::sqrt(float(D));
      const std::string cmd = "/usr/bin/python3 " + std::string(ATTNSCOPE_SOURCE_DIR) + "/bench/compare_long_torch.py " +
                              dir.string() + " " + std::to_string(scale) + " " + std::to_string(median(head_ms)) + " " +
                              std::to_string(median(change_ms));
      const int status = std::system(cmd.c_str());
      fs::remove_all(dir);
      if (status != 0) std::fprintf(stderr, "compare_long_torch.py failed (%d)\n", status);
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
