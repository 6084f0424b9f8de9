// rng.h — a portable, seeded random number generator.
//
// std::uniform_real_distribution differs between standard libraries, so the engine draws from
// SplitMix64 and converts bits to floats itself: the same seed gives the same numbers everywhere.
#pragma once
#include <cstdint>
#include <string_view>

namespace attnscope {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits, exactly representable as float.
  float uniform01() { return float(next_u64() >> 40) * (1.0f / 16777216.0f); }
  // Uniform in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform01(); }

 private:
  uint64_t state_;
};

// FNV-1a 64-bit hash, used to derive per-token seeds from token text.
inline uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

}  // namespace attnscope
