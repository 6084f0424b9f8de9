// check.h — tensor comparison that reports the largest difference and where it is (llm.c's
// check_tensor), plus small helpers shared by the test files.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/core/types.h"

namespace attnscope::test {

struct MaxDiff {
  double value = 0;
  Eigen::Index row = -1, col = -1;
};

// Largest |a − b| over finite entries; matching infinities count as equal; a NaN or an infinity
// on one side only counts as an infinite difference.
template <class A, class B>
MaxDiff max_abs_diff(const A& a, const B& b) {
  MaxDiff d;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      const double x = a(i, j), y = b(i, j);
      double diff;
      if (std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0)) diff = 0;
      else if (!std::isfinite(x) || !std::isfinite(y)) diff = INFINITY;
      else diff = std::abs(x - y);
      if (diff > d.value || d.row < 0) d = {diff, i, j};
    }
  return d;
}

// CHECKs shape equality and max |a − b| ≤ tol, printing where the worst entry is.
template <class A, class B>
void check_close(const A& a, const B& b, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  const MaxDiff d = max_abs_diff(a, b);
  INFO("largest difference " << d.value << " at [" << d.row << ", " << d.col << "]");
  CHECK(d.value <= tol);
}

template <class T3>
void check_close3(const T3& a, const T3& b, double tol, const std::string& what) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) check_close(a[i], b[i], tol, what + "[" + std::to_string(i) + "]");
}

// The InputError message `f` raises, or "" when it raises none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// X [T, C] uniform in [−1.5, 1.5) from Rng(seed): the input of the attention variants' tests.
inline Mat random_x(int T, int C, uint64_t seed) {
  Rng rng(seed);
  Mat x(T, C);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < C; ++j) x(i, j) = rng.uniform(-1.5f, 1.5f);
  return x;
}

// Largest |a − b| over the flat arrays, and where; checks it ≤ tol · scale, scale = max(1, max |b|)
// when `relative`, else 1.
inline void check_flat(const float* a, const std::vector<float>& b, double tol, bool relative, const std::string& what) {
  double worst = 0, scale = 1;
  size_t at = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    scale = std::max(scale, relative ? std::abs(double(b[i])) : 1.0);
    const double d = std::isfinite(a[i]) ? std::abs(double(a[i]) - double(b[i])) : INFINITY;
    if (d > worst || i == 0) worst = d, at = i;
  }
  INFO(what << ": largest difference " << worst << " at flat index " << at << " (scale " << scale << ")");
  CHECK(worst <= tol * scale);
}

// A rows × cols matrix of uniform values in [−1, 1) from `seed`.
inline Mat random_mat(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = float(rng.uniform(-1, 1));
  return m;
}

}  // namespace attnscope::test
