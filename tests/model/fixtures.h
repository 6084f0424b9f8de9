// fixtures.h — reading the PyTorch fixtures of tests/fixtures/train/ and comparing flat tensors.
//
// Each case folder holds meta.json (sizes) and one flattened float32 .npy per tensor, written by
// tests/fixtures/make_train_fixtures.py (see its header for the command that remakes them).
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnscope/core/rng.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "test_paths.h"

namespace attnscope::test {

struct Fixture {
  std::filesystem::path dir;
  nlohmann::json meta;

  explicit Fixture(const std::string& name)
      : dir(std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "train" / name) {
    meta = nlohmann::json::parse(read_file(dir / "meta.json", 1 << 20));
  }
  int size(const char* key) const { return meta.at(key).get<int>(); }
  double number(const char* key) const { return meta.at(key).get<double>(); }
  std::vector<float> tensor(const std::string& name) const { return read_npy(dir / (name + ".npy")).data; }
  std::vector<int32_t> ids(const std::string& name) const {
    std::vector<int32_t> out;
    for (float f : tensor(name)) out.push_back(int32_t(std::lround(f)));
    return out;
  }
};

// Largest |a − b| with its index, and the largest |b| (the scale a relative tolerance refers to).
struct FlatDiff {
  double diff = 0, scale = 0;
  size_t at = 0;
};

inline FlatDiff flat_diff(const std::vector<float>& a, const std::vector<float>& b) {
  FlatDiff d;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double e = std::isfinite(a[i]) && std::isfinite(b[i]) ? std::abs(double(a[i]) - b[i]) : INFINITY;
    if (e > d.diff) d.diff = e, d.at = i;
    d.scale = std::max(d.scale, std::abs(double(b[i])));
  }
  return d;
}

// CHECKs that a and b have the same length and max|a − b| ≤ rel · max(max|b|, 1e-3) — relative to
// the tensor's largest entry, so near-zero entries do not make the test flaky — reporting where.
inline void check_rel(const std::vector<float>& a, const std::vector<float>& b, double rel, const std::string& what) {
  INFO(what);
  REQUIRE(a.size() == b.size());
  const FlatDiff d = flat_diff(a, b);
  INFO("largest difference " << d.diff << " at flat index " << d.at << " (" << (d.at < a.size() ? a[d.at] : 0)
                             << " vs " << (d.at < b.size() ? b[d.at] : 0) << "), largest |expected| " << d.scale);
  CHECK(d.diff <= rel * std::max(d.scale, 1e-3));
}

// Bit-for-bit equality, reporting the first differing index.
inline void check_identical(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  INFO(what);
  REQUIRE(a.size() == b.size());
  size_t first = a.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      first = i;
      break;
    }
  INFO("first difference at flat index " << first);
  CHECK(first == a.size());
}

inline std::vector<float> random_floats(size_t n, uint64_t seed, float scale = 1.0f, float offset = 0.0f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = offset + rng.uniform(-scale, scale);
  return v;
}

}  // namespace attnscope::test
