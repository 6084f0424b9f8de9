// The browser build's SIMD128 packets (engine/src/attention/wasm_packet.h), compiled to WebAssembly and
// run under node (tests/web/engine/CMakeLists.txt: target engine_tests_wasm, tests/web/engine/run.sh, run by scripts/test.sh's browser stage),
// each operation against the plain float computation; the fused kernel that uses them is checked by the
// engine's own kernel tests in the same executable (tests/attention/test_attention_kernel.cpp and the
// grouped, latent and differential attention tests: odd sizes, transposes, strides, masks, padding).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "attention/wasm_packet.h"

#if !defined(__wasm_simd128__)
#error "test_wasm_packet.cpp is the browser build's (emscripten with -msimd128)"
#endif

using namespace attnscope::detail::wasm;

namespace {
std::vector<float> lanes(Packet4f p) {
  std::vector<float> out(4);
  pstoreu(out.data(), p);
  return out;
}
// Units in the last place between a and b (both finite, same sign or zero).
int64_t ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4), std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = std::numeric_limits<int32_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<int32_t>::min() - ib;
  return std::abs(int64_t(ia) - int64_t(ib));
}
}  // namespace

TEST_CASE("wasm packets: loads, stores, arithmetic and reductions equal the scalar ones") {
  const float a[5] = {1.5f, -2.25f, 3e-8f, 7e20f, 9.0f}, b[4] = {-0.5f, 4.0f, 1e-8f, -7e20f};
  // unaligned: from a + 1
  const Packet4f pa = ploadu<Packet4f>(a + 1), pb = ploadu<Packet4f>(b), pc = pset1<Packet4f>(0.25f);
  const std::vector<float> sum = lanes(padd(pa, pb)), diff = lanes(psub(pa, pb)), prod = lanes(pmul(pa, pb)),
                           fma = lanes(pmadd(pa, pb, pc)), mx = lanes(pmax(pa, pb));
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(sum[i] == a[i + 1] + b[i]);
    CHECK(diff[i] == a[i + 1] - b[i]);
    CHECK(prod[i] == a[i + 1] * b[i]);
    CHECK(fma[i] == a[i + 1] * b[i] + 0.25f);  // a multiply, then an add (no fused rounding)
    CHECK(mx[i] == std::max(a[i + 1], b[i]));
  }
  CHECK(predux(pa) == (a[1] + a[3]) + (a[2] + a[4]));
  CHECK(predux_max(pa) == 7e20f);
  CHECK(predux_max(pb) == 4.0f);
  CHECK(predux_max(pset1<Packet4f>(-std::numeric_limits<float>::infinity())) == -std::numeric_limits<float>::infinity());
}

TEST_CASE("wasm packets: a 4 × 4 block transposes") {
  float m[16];
  for (int i = 0; i < 16; ++i) m[i] = float(i);
  PacketBlock<Packet4f, 4> block;
  for (int r = 0; r < 4; ++r) block.packet[r] = ploadu<Packet4f>(m + 4 * r);
  ptranspose(block);
  for (int r = 0; r < 4; ++r) {
    const std::vector<float> row = lanes(block.packet[r]);
    for (int c = 0; c < 4; ++c) CHECK(row[size_t(c)] == m[4 * c + r]);
  }
}

TEST_CASE("wasm packets: exp within 2 ulp of std::exp over the normal range, tiny far below, inf above") {
  // A grid over [−87, 88] where exp is a normal float (the softmax's inputs are x − max ≤ 0; the positive
  // side for completeness), steps of 0.00137 so that the points fall at every position between ln 2's.
  int64_t worst = 0;
  float worst_at = 0;
  int checked = 0;
  for (int i = 0; i <= 127737; ++i) {
    const float x = -87.0f + float(i) * 0.00137f;
    const float got = lanes(pexp(pset1<Packet4f>(x)))[0], want = std::exp(x);
    const int64_t d = ulps(got, want);
    if (d > worst) worst = d, worst_at = x;
    ++checked;
  }
  CAPTURE(worst_at);
  CHECK(checked > 10000);
  CHECK(worst <= 2);
  // Lanes differ: each lane is its own.
  const float xs[4] = {0.0f, -1.0f, 1.0f, -20.5f};
  const std::vector<float> e = lanes(pexp(ploadu<Packet4f>(xs)));
  for (int i = 0; i < 4; ++i) CHECK(ulps(e[size_t(i)], std::exp(xs[i])) <= 2);
  CHECK(lanes(pexp(pset1<Packet4f>(0.0f)))[0] == 1.0f);
  // Underflow to 0 (a masked or far-below key carries no weight, never a negative or NaN one).
  for (float x : {-87.5f, -88.5f, -100.0f, -1000.0f, -std::numeric_limits<float>::infinity()}) {
    CAPTURE(x);
    const float got = lanes(pexp(pset1<Packet4f>(x)))[0];
    CHECK(got >= 0.0f);
    CHECK(got <= 1.2e-38f);
  }
  CHECK(std::isinf(lanes(pexp(pset1<Packet4f>(100.0f)))[0]));
  CHECK(std::isinf(lanes(pexp(pset1<Packet4f>(std::numeric_limits<float>::infinity())))[0]));
}
