// head_maps.cpp — the on-demand mode's memory figures and the pooled overview of one head (head_maps.h).
// HeadMaps::head_into is in forward.cpp, beside the pass's own softmax code it reuses.
#include "attnscope/model/head_maps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnscope/core/error.h"
#include "attnscope/model/config.h"

namespace attnscope::model {

int64_t HeadMaps::kept_bytes() const {
  int64_t n = 0;
  for (const KeptLayer& k : layers) n += k.bytes();
  return n;
}

int64_t on_demand_kept_bytes(const ModelConfig& c, int tokens) {
  int64_t n = 0;
  for (int l = 0; l < c.layers; ++l) {
    if (c.is_linear_layer(l)) return 0;
    // q [T, H·D] and k [T, G·D] (MLA: every head's own key, G = H), + H sink logits
    const int64_t G = c.is_mla() ? c.heads : c.kv_heads;
    n += int64_t(tokens) * (int64_t(c.heads) + G) * c.head_dim + (c.attention_sinks ? c.heads : 0);
  }
  return n * int64_t(sizeof(float));
}

int64_t on_demand_bytes(const ModelConfig& c, int tokens, int threads) {
  const int64_t kept = on_demand_kept_bytes(c, tokens);
  if (kept == 0) return 0;
  return kept + int64_t(std::max(threads, 1)) * tokens * tokens * int64_t(sizeof(float));
}

std::string byte_size_text(int64_t bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) v /= 1024.0, ++u;
  char text[32];
  if (u == 0) std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  else std::snprintf(text, sizeof text, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return text;
}

// ---- pooling --------------------------------------------------------------------------------------
const char* to_string(Pooling pooling) { return pooling == Pooling::max ? "max" : "mean"; }

Pooling parse_pooling(const std::string& text, const std::string& what) {
  if (text == "max") return Pooling::max;
  if (text == "mean") return Pooling::mean;
  throw InputError(what + " takes max or mean, got '" + text + "'");
}

std::string PooledMap::label() const {
  if (block == 1) return "exact cells";
  return std::string(to_string(pooling)) + "-pooled " + std::to_string(block) + "\u00d7" + std::to_string(block);
}

int pool_block(int tokens, int pixels) {
  require(pixels >= 1, "the overview needs at least 1 pixel a side, got " + std::to_string(pixels));
  return std::max(1, (tokens + pixels - 1) / pixels);
}

PooledMap pool_map(const Eigen::Ref<const Mat>& map, const MapMask& mask, Pooling pooling, int pixels) {
  require(map.rows() == map.cols(), "a head's map is square [T, T]; got " + std::to_string(map.rows()) + " x " +
                                        std::to_string(map.cols()));
  PooledMap p;
  p.pooling = pooling;
  p.tokens = int(map.rows());
  p.block = pool_block(p.tokens, pixels);
  const int T = p.tokens, b = p.block;
  p.rows = p.cols = (T + b - 1) / b;
  p.values = Mat::Zero(p.rows, p.cols);
  p.masked.assign(size_t(p.rows) * size_t(p.cols), 1);
#pragma omp parallel for schedule(static) if (int64_t(T) * T >= (1 << 22))
  for (int r = 0; r < p.rows; ++r) {
    const int i0 = r * b, i1 = std::min(T, i0 + b);
    for (int c = 0; c < p.cols; ++c) {
      const int j0 = c * b, j1 = std::min(T, j0 + b);
      if (j0 > i1 - 1) break;  // this block and those right of it lie above the diagonal: masked
      double sum = 0;
      float best = -std::numeric_limits<float>::infinity();
      int64_t seen = 0;
      for (int i = i0; i < i1; ++i)
        for (int j = j0; j < j1; ++j) {
          if (mask.masked(i, j)) continue;
          const float v = map(i, j);
          best = std::max(best, v);
          sum += double(v);
          ++seen;
        }
      if (seen == 0) continue;  // the whole block is masked
      p.masked[size_t(r) * size_t(p.cols) + size_t(c)] = 0;
      p.values(r, c) = pooling == Pooling::max ? best : float(sum / double(seen));
    }
  }
  return p;
}

PooledMap pool_head(const HeadMaps& maps, int layer, int head, Pooling pooling, int pixels) {
  pool_block(maps.tokens, pixels);  // a bad pixel count before the map is made
  const Mat map = maps.head(layer, head);
  return pool_map(map, maps.mask(layer), pooling, pixels);
}

}  // namespace attnscope::model
