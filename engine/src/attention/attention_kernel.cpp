// attention_kernel.cpp — the fused per-head kernel of attention_kernel.h: score tiles, the row passes
// (bias, mask, max, exp, sum, normalise) and the weighted-sum tiles, on Eigen's vector packets
// (on wasm_packet.h's SIMD128 packets in the browser build).
//
// Sections: packets and sizes · Kᵀ and V layouts · score tiles · row softmax · weighted-sum tiles · driver
#include "attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Core>

#include "wasm_packet.h"

// Eigen's packet types carry vector attributes that GCC drops (and warns about) when they are template
// arguments; nothing here depends on those attributes.
#pragma GCC diagnostic ignored "-Wignored-attributes"
// Eigen's horizontal reductions (predux, predux_max) extract 128-bit quarters with GCC 12's AVX-512
// intrinsics, which start from an "undefined" register and warn falsely (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace attnscope::detail {

// ---- packets and sizes -------------------------------------------------------------------------------
namespace {
#if defined(__wasm_simd128__)
// Eigen 3.4 has no WebAssembly packets (its float "packet" there is one float): the browser build's own
namespace ei = wasm;  // four-float SIMD128 packets with the same operations (wasm_packet.h)
using Packet = wasm::Packet4f;
constexpr int L = 4;
#else
namespace ei = Eigen::internal;
using Packet = ei::packet_traits<float>::type;
constexpr int L = ei::unpacket_traits<Packet>::size;  // floats per register
#endif
constexpr int KP = 2 * L;                             // keys per score tile
constexpr int score_rows = 8;                         // rows per score tile: 16 accumulators with 2 loads
constexpr int strip_rows = 24;                        // rows per strip: a multiple of every tile height below
constexpr float inf = std::numeric_limits<float>::infinity();

int round_up(int n, int m) { return (n + m - 1) / m * m; }
}  // namespace

int key_panel_width() { return KP; }
int value_lane_width() { return L; }

// ---- Kᵀ and V layouts --------------------------------------------------------------------------------
void KeysT::resize(int T, int d) {
  dim = d;
  kt.setZero((std::max(T, 1) + KP - 1) / KP, Eigen::Index(d) * KP);
}

void KeysT::set_rows(const float* k, Eigen::Index ld, int r0, int rows) {
  for (int t = 0; t < rows; ++t) {
    const int key = r0 + t;
    float* dst = kt.data() + Eigen::Index(key / KP) * dim * KP + key % KP;
    const float* src = k + t * ld;
    for (int c = 0; c < dim; ++c) dst[c * KP] = src[c];
  }
}

bool PaddedValues::direct_ok(int dv) { return dv % L == 0; }

void PaddedValues::resize(int T, int dv) {
  if (direct_ok(dv)) return;
  padded.setZero(T, round_up(dv, L));
  view = {padded.data(), padded.cols(), dv};
}

void PaddedValues::set_rows(const float* v, Eigen::Index ld, int r0, int rows) {
  if (padded.size() == 0) return;
  for (int t = 0; t < rows; ++t)
    std::copy(v + t * ld, v + t * ld + view.dv, padded.data() + (r0 + t) * padded.cols());
}

namespace {

// ---- score tiles -----------------------------------------------------------------------------------
// s[r, 0..width) = scale · Σ_k q[r, k]·kt[k, 0..width) for r < R; width ≤ KP (the panel's keys that exist).
template <int R>
inline void score_tile(const float* q, Eigen::Index ldq, int dq, const float* kt, Eigen::Index ldk, float scale, float* s,
                       Eigen::Index lds, int width) {
  Packet acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = ei::pset1<Packet>(0.0f);
  for (int k = 0; k < dq; ++k) {
    const Packet b0 = ei::ploadu<Packet>(kt + k * ldk), b1 = ei::ploadu<Packet>(kt + k * ldk + L);
    for (int r = 0; r < R; ++r) {
      const Packet a = ei::pset1<Packet>(q[r * ldq + k]);
      acc[r][0] = ei::pmadd(a, b0, acc[r][0]);
      acc[r][1] = ei::pmadd(a, b1, acc[r][1]);
    }
  }
  const Packet sc = ei::pset1<Packet>(scale);
  if (width == KP) {
    for (int r = 0; r < R; ++r) {
      ei::pstoreu(s + r * lds, ei::pmul(acc[r][0], sc));
      ei::pstoreu(s + r * lds + L, ei::pmul(acc[r][1], sc));
    }
    return;
  }
  alignas(64) float tmp[KP];
  for (int r = 0; r < R; ++r) {
    ei::pstoreu(tmp, ei::pmul(acc[r][0], sc));
    ei::pstoreu(tmp + L, ei::pmul(acc[r][1], sc));
    std::copy(tmp, tmp + width, s + r * lds);
  }
}

// Rows [0, rows) of the strip against one key panel, in tiles of R rows and then smaller ones.
template <int R = score_rows>
void score_rows_panel(const float* q, Eigen::Index ldq, int dq, int rows, const float* kt, Eigen::Index ldk, float scale,
                      float* s, Eigen::Index lds, int width) {
  int r = 0;
  for (; r + R <= rows; r += R) score_tile<R>(q + r * ldq, ldq, dq, kt, ldk, scale, s + r * lds, lds, width);
  if constexpr (R > 1)
    if (r < rows) score_rows_panel<R - 1>(q + r * ldq, ldq, dq, rows - r, kt, ldk, scale, s + r * lds, lds, width);
}

// ---- row softmax -------------------------------------------------------------------------------------
// Largest of s[a, b), and whether every one is finite (x − x is NaN exactly for ±inf and NaN).
inline void max_and_finite(const float* s, int a, int b, Packet& vmax, Packet& vcheck, float& smax, float& scheck) {
  int j = a;
  for (; j + L <= b; j += L) {
    const Packet x = ei::ploadu<Packet>(s + j);
    vmax = ei::pmax(vmax, x);
    vcheck = ei::padd(vcheck, ei::psub(x, x));
  }
  for (; j < b; ++j) {
    smax = std::max(smax, s[j]);
    scheck += s[j] - s[j];
  }
}

// p[a, b) = exp(s[a, b) − max); returns their sum.
inline float exp_segment(const float* s, float* p, int a, int b, float max) {
  const Packet m = ei::pset1<Packet>(max);
  Packet vsum = ei::pset1<Packet>(0.0f);
  int j = a;
  for (; j + L <= b; j += L) {
    const Packet e = ei::pexp(ei::psub(ei::ploadu<Packet>(s + j), m));
    ei::pstoreu(p + j, e);
    vsum = ei::padd(vsum, e);
  }
  float sum = ei::predux(vsum);
  for (; j < b; ++j) sum += p[j] = std::exp(s[j] - max);
  return sum;
}

inline void scale_segment(float* p, int a, int b, float factor) {
  const Packet f = ei::pset1<Packet>(factor);
  int j = a;
  for (; j + L <= b; j += L) ei::pstoreu(p + j, ei::pmul(ei::ploadu<Packet>(p + j), f));
  for (; j < b; ++j) p[j] *= factor;
}

// Row i's mask, softmax and normalisation; its scores [0, computed) are written, the rest is not.
void softmax_row(int i, int T, int computed, const AttentionOptions& o, const RowHooks& hooks, Mat& scores, Mat& probs) {
  const bool causal = o.causal || o.window > 0;
  const int n = causal ? i + 1 : T;                                  // keys [0, n) may be seen
  const int lo = o.window > 0 ? std::max(0, i - o.window + 1) : 0;  // the window's first key
  const int sink_end = std::min(o.sinks, lo);                       // sink keys [0, sink_end) before it
  float* srow = scores.row(i).data();
  float* prow = probs.row(i).data();
  std::fill(srow + std::min(n, computed), srow + T, -inf);
  std::fill(srow + sink_end, srow + lo, -inf);
  Packet vmax = ei::pset1<Packet>(-inf), vcheck = ei::pset1<Packet>(0.0f);
  float smax = -inf, scheck = 0;
  max_and_finite(srow, 0, sink_end, vmax, vcheck, smax, scheck);
  max_and_finite(srow, lo, n, vmax, vcheck, smax, scheck);
  const float max = std::max(smax, ei::predux_max(vmax)), check = scheck + ei::predux(vcheck);
  if (!std::isfinite(max) || !std::isfinite(check)) {
    if (hooks.nonfinite) {
      hooks.nonfinite(i);
    } else {
      Mat row = scores.row(i);
      softmax_rows(row);
      probs.row(i) = row;
    }
    return;
  }
  const float top = hooks.sink ? std::max(max, hooks.sink_logit) : max;
  float sum = exp_segment(srow, prow, 0, sink_end, top) + exp_segment(srow, prow, lo, n, top);
  if (hooks.sink) {
    const float sink = std::exp(hooks.sink_logit - top);
    sum += sink;
    hooks.sink_share[i] = sink / sum;
  }
  const float inv = 1.0f / sum;
  scale_segment(prow, 0, sink_end, inv);
  scale_segment(prow, lo, n, inv);
  std::fill(prow + sink_end, prow + lo, 0.0f);
  std::fill(prow + n, prow + T, 0.0f);
}

// ---- weighted-sum tiles ------------------------------------------------------------------------------
// o[r, 0..NP·L) = Σ_j p[r, j]·v[j, 0..NP·L) for r < R, j < keys; `width` ≤ NP·L columns stored.
template <int R, int NP>
inline void weigh_tile(const float* p, Eigen::Index ldp, int keys, const float* v, Eigen::Index ldv, float* o,
                       Eigen::Index ldo, int width, float scale = 1.0f) {
  Packet acc[R][NP];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < NP; ++c) acc[r][c] = ei::pset1<Packet>(0.0f);
#if defined(__wasm_simd128__)
  // Each row's pointer steps by one float and V's by its stride, so that every load's address is a
  // pointer and no index arithmetic (the browser's compiler keeps the index sums otherwise: 5% slower).
  // Two keys per step halve those pointer steps (3% faster); the sums keep their order.
  const float* pr[R];
  for (int r = 0; r < R; ++r) pr[r] = p + r * ldp;
  const float* vj = v;
  int j = 0;
  for (; j + 2 <= keys; j += 2, vj += 2 * ldv) {
    Packet b[NP], b2[NP];
    for (int c = 0; c < NP; ++c) b[c] = ei::ploadu<Packet>(vj + c * L);
    for (int c = 0; c < NP; ++c) b2[c] = ei::ploadu<Packet>(vj + ldv + c * L);
    for (int r = 0; r < R; ++r) {
      const Packet a = ei::pset1<Packet>(pr[r][0]);
      for (int c = 0; c < NP; ++c) acc[r][c] = ei::pmadd(a, b[c], acc[r][c]);
      const Packet a2 = ei::pset1<Packet>(pr[r][1]);
      for (int c = 0; c < NP; ++c) acc[r][c] = ei::pmadd(a2, b2[c], acc[r][c]);
      pr[r] += 2;
    }
  }
  for (; j < keys; ++j, vj += ldv) {
    Packet b[NP];
    for (int c = 0; c < NP; ++c) b[c] = ei::ploadu<Packet>(vj + c * L);
    for (int r = 0; r < R; ++r) {
      const Packet a = ei::pset1<Packet>(*pr[r]++);
      for (int c = 0; c < NP; ++c) acc[r][c] = ei::pmadd(a, b[c], acc[r][c]);
    }
  }
#else
  for (int j = 0; j < keys; ++j) {
    Packet b[NP];
    for (int c = 0; c < NP; ++c) b[c] = ei::ploadu<Packet>(v + j * ldv + c * L);
    for (int r = 0; r < R; ++r) {
      const Packet a = ei::pset1<Packet>(p[r * ldp + j]);
      for (int c = 0; c < NP; ++c) acc[r][c] = ei::pmadd(a, b[c], acc[r][c]);
    }
  }
#endif
  if (scale != 1.0f) {
    const Packet sc = ei::pset1<Packet>(scale);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < NP; ++c) acc[r][c] = ei::pmul(acc[r][c], sc);
  }
  if (width == NP * L) {
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < NP; ++c) ei::pstoreu(o + r * ldo + c * L, acc[r][c]);
    return;
  }
  alignas(64) float tmp[NP * L];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < NP; ++c) ei::pstoreu(tmp + c * L, acc[r][c]);
    std::copy(tmp, tmp + width, o + r * ldo);
  }
}

template <int NP>
constexpr int weigh_rows() {
#if defined(__wasm_simd128__)
  // V8 allocates 15 of x86-64's 16 xmm registers, and without a fused multiply–add every step needs the
  // NP loads of V, the broadcast and a product register beside the accumulators: 4 rows of 2 registers
  // need 12 in all, 7 rows 18. Measured in node on bench_engine's T 256 shape, CPU time of one
  // projection (T 256, C 512 → 512): 7 rows 4.4 ms, 5 rows 3.8, 4 rows 3.6 (native: 1.2).
  return NP == 1 ? 12 : NP == 2 ? 4 : 12 / NP;
#else
  return NP <= 2 ? 12 : NP == 3 ? 8 : 6;  // 24 accumulators (12 with one register per row)
#endif
}

template <int NP, int R = weigh_rows<NP>()>
void weigh_rows_chunk(const float* p, Eigen::Index ldp, int rows, int keys, const float* v, Eigen::Index ldv, float* o,
                      Eigen::Index ldo, int width, float scale = 1.0f) {
  int r = 0;
  for (; r + R <= rows; r += R) weigh_tile<R, NP>(p + r * ldp, ldp, keys, v, ldv, o + r * ldo, ldo, width, scale);
  if constexpr (R > 1)
    if (r < rows)
      weigh_rows_chunk<NP, R - 1>(p + r * ldp, ldp, rows - r, keys, v, ldv, o + r * ldo, ldo, width, scale);
}

// Column chunks of P·V: up to 4 registers wide; 2 in the browser, where 4 rows of 2 registers fit V8's
// registers (weigh_rows): 0.23 ms per head of bench_engine's T 256 shape in node, against
// 0.30 ms for 3 rows of 4 registers.
#if defined(__wasm_simd128__)
constexpr int weigh_chunk_registers = 2;
#else
constexpr int weigh_chunk_registers = 4;
#endif

// Rows [0, rows) of o = p·v over the first `keys` keys, in column chunks of weigh_chunk_registers registers.
void weigh_strip(const float* p, Eigen::Index ldp, int rows, int keys, const ValuesView& v, float* o, Eigen::Index ldo) {
  constexpr int chunk = weigh_chunk_registers * L;
  for (int c0 = 0; c0 < v.dv; c0 += chunk) {
    const int width = std::min(chunk, v.dv - c0), np = (width + L - 1) / L;
    const float* vc = v.v + c0;
    float* oc = o + c0;
    switch (np) {
      case 1: weigh_rows_chunk<1>(p, ldp, rows, keys, vc, v.ld, oc, ldo, width); break;
      case 2: weigh_rows_chunk<2>(p, ldp, rows, keys, vc, v.ld, oc, ldo, width); break;
      case 3: weigh_rows_chunk<3>(p, ldp, rows, keys, vc, v.ld, oc, ldo, width); break;
      default: weigh_rows_chunk<4>(p, ldp, rows, keys, vc, v.ld, oc, ldo, width); break;
    }
  }
}

}  // namespace

// ---- packed projections ------------------------------------------------------------------------------
void PackedWeights::resize(const Mat& w) {
  out = int(w.rows()), in = int(w.cols());
  panels.resize((std::max(out, 1) + KP - 1) / KP, Eigen::Index(in) * KP);
}

void PackedWeights::pack(const Mat& w, int p0, int p1) {
  for (int p = p0; p < p1; ++p) {
    float* dst = panels.row(p).data();
    const int width = std::min(KP, out - p * KP);
    if (width < KP) std::fill(dst, dst + Eigen::Index(in) * KP, 0.0f);
    const float* src = w.row(Eigen::Index(p) * KP).data();
    int k0 = 0;
    if (width == KP)  // L × L blocks transposed in registers
      for (; k0 + L <= in; k0 += L)
        for (int j0 = 0; j0 < KP; j0 += L) {
          ei::PacketBlock<Packet, L> block;
          for (int j = 0; j < L; ++j) block.packet[j] = ei::ploadu<Packet>(src + Eigen::Index(j0 + j) * in + k0);
          ei::ptranspose(block);
          for (int k = 0; k < L; ++k) ei::pstoreu(dst + Eigen::Index(k0 + k) * KP + j0, block.packet[k]);
        }
    for (int j = 0; j < width; ++j)
      for (int k = k0; k < in; ++k) dst[k * KP + j] = src[Eigen::Index(j) * in + k];
  }
}

void project_rows(const float* x, Eigen::Index ldx, int rows, const PackedWeights& w, int p0, int p1, float* out,
                  Eigen::Index ldo) {
  for (int p = p0; p < p1; ++p)
    weigh_rows_chunk<2>(x, ldx, rows, w.in, w.panels.row(p).data(), KP, out + Eigen::Index(p - p0) * KP, ldo, KP);
}

// ---- driver ------------------------------------------------------------------------------------------
void attend_block_fused(const float* q, Eigen::Index ldq, int dq, const KeysT& keys, const ValuesView& values, int r0,
                        int r1, float scale, const AttentionOptions& o, const RowHooks& hooks, Mat& scores, Mat& probs,
                        float* out, Eigen::Index ldo) {
  const int T = int(scores.cols());
  const bool causal = o.causal || o.window > 0;
  const Eigen::Index lds = scores.cols();
  for (int i0 = r0; i0 < r1; i0 += strip_rows) {
    const int i1 = std::min(r1, i0 + strip_rows), rows = i1 - i0;
    const int seen = causal ? i1 : T;  // keys any row of the strip may see
    // 1. scores, panel by panel (the panel stays in L1 for every tile of the strip)
    for (int k0 = 0; k0 < seen; k0 += KP)
      weigh_rows_chunk<2>(q + i0 * ldq, ldq, rows, dq, keys.kt.data() + Eigen::Index(k0) * dq, KP,
                          scores.data() + i0 * lds + k0, lds, std::min(KP, seen - k0), scale);
    // 2. bias, mask, softmax per row
    for (int i = i0; i < i1; ++i) {
      if (hooks.bias) hooks.bias(i, scores.row(i).data(), seen);
      softmax_row(i, T, seen, o, hooks, scores, probs);
    }
    // 3. out = P·V over the keys the strip sees (the masked ones are exactly 0)
    if (out) weigh_strip(probs.data() + i0 * lds, lds, rows, seen, values, out + i0 * ldo, ldo);
  }
}

}  // namespace attnscope::detail
