// Tests of the packed weight layout and its product: every shape edge (rows not a multiple of the
// 32-row panel, row counts not a multiple of the register block, one column) against the plain loops.
#include <doctest/doctest.h>

#include "attnscope/core/rng.h"
#include "attnscope/model/packed_matrix.h"
#include "check.h"

using namespace attnscope;
using namespace attnscope::model;

namespace {

Mat random_mat(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = float(rng.uniform(-1, 1));
  return m;
}

}  // namespace

TEST_CASE("packed matrix: packing keeps every value, from rows, from the transpose and back") {
  // Plain ints, not a structured binding: CAPTURE's lambda cannot name one in clang 14.
  for (const auto& shape : std::vector<std::pair<int, int>>{{1, 1}, {31, 5}, {32, 7}, {33, 3}, {100, 17}}) {
    const int rows = shape.first, cols = shape.second;
    CAPTURE(rows);
    const Mat w = random_mat(rows, cols, uint64_t(rows * 100 + cols));
    const PackedMatrix p = PackedMatrix::from(w);
    CHECK(p.to_mat() == w);
    PackedMatrix t(rows, cols);
    const Mat wt = w.transpose();
    t.set_from_transposed(wt.data());
    CHECK(t.to_mat() == w);
    std::vector<float> row(static_cast<size_t>(cols));
    p.row(rows - 1, row.data());
    for (int c = 0; c < cols; ++c) CHECK(row[size_t(c)] == w(rows - 1, c));
    CHECK(p(rows / 2, cols - 1) == w(rows / 2, cols - 1));
  }
}

TEST_CASE("packed matrix: the product equals the plain-loop reference on every edge shape") {
  for (const int BT : {1, 3, 7, 8, 9, 17, 64, 300})
    for (const auto& shape : std::vector<std::pair<int, int>>{{1, 1}, {5, 3}, {32, 16}, {33, 64}, {100, 40}, {768, 96}}) {
      const int out = shape.first, in = shape.second;
      CAPTURE(BT);
      CAPTURE(out);
      CAPTURE(in);
      const Mat x = random_mat(BT, in, 1), w = random_mat(out, in, 2);
      const Mat b = random_mat(1, out, 3);
      const PackedMatrix p = PackedMatrix::from(w);
      Mat fast(BT, out), ref(BT, out);
      linear_forward_packed(fast.data(), x.data(), p, b.data(), BT);
      linear_forward_packed_reference(ref.data(), x.data(), p, b.data(), BT);
      test::check_close(fast, ref, 1e-5 * std::max(1, in / 16), "x·Wᵀ + b");
      linear_forward_packed(fast.data(), x.data(), p, nullptr, BT);
      const Mat eigen = x * w.transpose();
      test::check_close(fast, eigen, 1e-5 * std::max(1, in / 16), "x·Wᵀ (Eigen)");
    }
}
