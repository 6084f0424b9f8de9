// wasm_packet.h — (private) four-float WebAssembly SIMD128 packets for the fused attention kernel
// (attention_kernel.cpp) in the browser build.
//
// Eigen 3.4 has no WebAssembly packet math: under emscripten its packet_traits<float> is plain float, so
// the kernel's tiles ran one float at a time (8.7× slower than native on one thread, bench/web_figures.sh).
// This header gives the kernel the same few packet operations it takes from Eigen::internal (pset1, ploadu,
// pstoreu, padd, psub, pmul, pmadd, pmax, pexp, predux, predux_max, ptranspose of a PacketBlock) on
// wasm_simd128.h's v128_t, and the kernel picks this namespace instead of Eigen's only when
// __wasm_simd128__ is defined (-msimd128): the desktop build is unchanged.
//
// Speed: V8 (node, Chromium) turns f32x4.min/max into about eight x86 instructions each (their NaN and −0 rules
// differ from minps/maxps) and i32x4.trunc_sat_f32x4_s into about seven; the pseudo-min/max (f32x4.pmin/pmax,
// one minps/maxps) and a float-to-int conversion by adding 1.5·2^23 (exact for the integers pexp converts)
// give the same results for every finite and infinite input, and the row softmax about twice as fast.
//
// Exactness: pmadd is a multiply then an add (SIMD128 has no fused multiply–add), as Eigen's generic
// pmadd is; pexp is Eigen's own float algorithm (GenericPacketMathFunctions.h, pexp_float: range reduction
// by ln 2 in two parts, the same polynomial, 2^n built in the exponent bits as its pldexp), so the page's
// probabilities agree with the desktop's to float rounding (tests/engine/test_wasm_packet.cpp).
#pragma once
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstdint>

namespace attnscope::detail::wasm {

struct Packet4f {
  v128_t v;
};

// The same shape as Eigen::internal::PacketBlock: N packets transposed together.
template <class P, int N>
struct PacketBlock {
  P packet[N];
};

template <class P>
inline P pset1(float a) {
  return {wasm_f32x4_splat(a)};
}
template <class P>
inline P ploadu(const float* p) {
  return {wasm_v128_load(p)};
}
inline void pstoreu(float* p, Packet4f a) { wasm_v128_store(p, a.v); }
inline Packet4f padd(Packet4f a, Packet4f b) { return {wasm_f32x4_add(a.v, b.v)}; }
inline Packet4f psub(Packet4f a, Packet4f b) { return {wasm_f32x4_sub(a.v, b.v)}; }
inline Packet4f pmul(Packet4f a, Packet4f b) { return {wasm_f32x4_mul(a.v, b.v)}; }
inline Packet4f pmadd(Packet4f a, Packet4f b, Packet4f c) { return {wasm_f32x4_add(wasm_f32x4_mul(a.v, b.v), c.v)}; }
// The larger of each pair, as std::max: a < b ? b : a (f32x4.pmax, one maxps). A NaN may be dropped; the
// kernel checks finiteness separately (x − x), so which NaN rule applies does not change a result.
inline Packet4f pmax(Packet4f a, Packet4f b) { return {wasm_f32x4_pmax(a.v, b.v)}; }

inline float predux(Packet4f a) {
  // ((a0 + a2) + (a1 + a3)), Eigen's pairwise order for a 4-float packet
  const v128_t h = wasm_f32x4_add(a.v, wasm_i32x4_shuffle(a.v, a.v, 2, 3, 0, 1));
  return wasm_f32x4_extract_lane(h, 0) + wasm_f32x4_extract_lane(h, 1);
}
inline float predux_max(Packet4f a) {
  const v128_t h = wasm_f32x4_max(a.v, wasm_i32x4_shuffle(a.v, a.v, 2, 3, 0, 1));
  const v128_t m = wasm_f32x4_max(h, wasm_i32x4_shuffle(h, h, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(m, 0);
}

// exp(x) per lane, Eigen 3.4's pexp_float: x clamped to [−88.38, 88.38], n = floor(x·log2(e) + ½),
// r = x − n·ln 2 (ln 2 in two parts), exp(r) by Cephes' polynomial, times 2^n through the exponent.
inline Packet4f pexp(Packet4f in) {
  const v128_t exp_hi = wasm_f32x4_splat(88.723f), exp_lo = wasm_f32x4_splat(-88.723f);
  const v128_t log2e = wasm_f32x4_splat(1.44269504088896341f), half = wasm_f32x4_splat(0.5f);
  const v128_t c1 = wasm_f32x4_splat(-0.693359375f), c2 = wasm_f32x4_splat(2.12194440e-4f);
  const v128_t x = wasm_f32x4_pmax(wasm_f32x4_pmin(in.v, exp_hi), exp_lo);  // ±inf clamped too
  const v128_t m = wasm_f32x4_floor(wasm_f32x4_add(wasm_f32x4_mul(x, log2e), half));
  // r = x − m·ln 2, with ln 2 = −(c1 + c2) taken in two steps to keep r exact
  v128_t r = wasm_f32x4_add(wasm_f32x4_mul(m, c1), x);
  r = wasm_f32x4_add(wasm_f32x4_mul(m, c2), r);
  const v128_t r2 = wasm_f32x4_mul(r, r), r3 = wasm_f32x4_mul(r2, r);
  auto madd = [](v128_t a, v128_t b, v128_t c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); };
  // the polynomial in two halves, as Eigen evaluates it
  v128_t y = madd(wasm_f32x4_splat(1.9875691500E-4f), r, wasm_f32x4_splat(1.3981999507E-3f));
  v128_t y1 = madd(wasm_f32x4_splat(4.1665795894E-2f), r, wasm_f32x4_splat(1.6666665459E-1f));
  const v128_t y2 = wasm_f32x4_add(r, wasm_f32x4_splat(1.0f));
  y = madd(y, r, wasm_f32x4_splat(8.3334519073E-3f));
  y1 = madd(y1, r, wasm_f32x4_splat(5.0000001201E-1f));
  y = madd(y, r3, y1);
  y = madd(y, r2, y2);
  // 2^m · y as Eigen's pldexp: with b = floor(m / 4), y · 2^b · 2^b · 2^b · 2^(m − 3b), every factor a
  // normal float for m in [−128, 128] (a single 2^m would not be at m = ±128)
  // m as an integer: m + 1.5·2^23 holds m in its low mantissa bits, exactly for |m| < 2^22
  const v128_t magic = wasm_f32x4_splat(12582912.0f);
  const v128_t mi = wasm_i32x4_sub(wasm_f32x4_add(m, magic), magic), bias = wasm_i32x4_splat(127);
  const v128_t b = wasm_i32x4_shr(mi, 2);
  const v128_t c = wasm_i32x4_shl(wasm_i32x4_add(b, bias), 23);
  v128_t out = wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_mul(y, c), c), c);
  const v128_t rest = wasm_i32x4_sub(mi, wasm_i32x4_add(b, wasm_i32x4_add(b, b)));
  out = wasm_f32x4_mul(out, wasm_i32x4_shl(wasm_i32x4_add(rest, bias), 23));
  return {wasm_f32x4_pmax(out, in.v)};  // +inf stays +inf
}

// A 4 × 4 block of floats transposed in registers (rows become columns).
inline void ptranspose(PacketBlock<Packet4f, 4>& b) {
  const v128_t t0 = wasm_i32x4_shuffle(b.packet[0].v, b.packet[1].v, 0, 4, 1, 5);  // a0 b0 a1 b1
  const v128_t t1 = wasm_i32x4_shuffle(b.packet[2].v, b.packet[3].v, 0, 4, 1, 5);  // c0 d0 c1 d1
  const v128_t t2 = wasm_i32x4_shuffle(b.packet[0].v, b.packet[1].v, 2, 6, 3, 7);  // a2 b2 a3 b3
  const v128_t t3 = wasm_i32x4_shuffle(b.packet[2].v, b.packet[3].v, 2, 6, 3, 7);  // c2 d2 c3 d3
  b.packet[0].v = wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5);
  b.packet[1].v = wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7);
  b.packet[2].v = wasm_i32x4_shuffle(t2, t3, 0, 1, 4, 5);
  b.packet[3].v = wasm_i32x4_shuffle(t2, t3, 2, 3, 6, 7);
}

}  // namespace attnscope::detail::wasm
#endif
