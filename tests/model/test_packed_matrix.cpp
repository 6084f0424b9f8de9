// Tests of the packed weight layout and its product: every shape edge (rows not a multiple of the
// 32-row panel, row counts not a multiple of the register block, one column) against the plain loops.
#include <doctest/doctest.h>

#include <cstring>

#include "attnscope/core/rng.h"
#include "attnscope/model/packed_matrix.h"
#include "check.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::random_mat;

namespace {

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

namespace {

// float → the nearest BF16 / F16 bit pattern (ties to even), so the in-place matrices hold exactly
// representable values whose float32 widening the oracle can compute independently.
uint16_t to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
uint16_t to_f16(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::half(f)); }
float from_bf16(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
float from_f16(uint16_t h) { return float(Eigen::numext::bit_cast<Eigen::half>(h)); }

}  // namespace

TEST_CASE("packed matrix: W read in place (F32, BF16, F16 rows, with a row stride) gives the reference product") {
  // ld > cols: each row is followed by values that are not W's (they must never be read as W);
  // odd sizes leave a k tail under 16 and W rows not a multiple of the 4-row block.
  for (const int BT : {1, 5, 6, 7, 13, 64})
    for (const auto& shape : std::vector<std::pair<int, int>>{{1, 1}, {3, 17}, {4, 16}, {37, 33}, {70, 100}, {130, 896}})
      for (const WeightStorage storage : {WeightStorage::f32, WeightStorage::bf16, WeightStorage::f16}) {
        const int out = shape.first, in = shape.second, ld = in + 5;
        CAPTURE(BT);
        CAPTURE(out);
        CAPTURE(in);
        CAPTURE(int(storage));
        const Mat x = random_mat(BT, in, 11), source = random_mat(out, ld, 12), b = random_mat(1, out, 13);
        Mat w(out, in);  // the values the product must use: the stored numbers, widened exactly
        std::vector<float> f32(size_t(out) * size_t(ld));
        std::vector<uint16_t> half(size_t(out) * size_t(ld));
        for (int r = 0; r < out; ++r)
          for (int c = 0; c < ld; ++c) {
            const size_t i = size_t(r) * size_t(ld) + size_t(c);
            const float v = source(r, c) * 3.0f;
            f32[i] = v;
            half[i] = storage == WeightStorage::bf16 ? to_bf16(v) : to_f16(v);
            if (c < in)
              w(r, c) = storage == WeightStorage::f32 ? v : storage == WeightStorage::bf16 ? from_bf16(half[i]) : from_f16(half[i]);
          }
        const void* data = storage == WeightStorage::f32 ? static_cast<const void*>(f32.data()) : half.data();
        const PackedMatrix p = PackedMatrix::in_place_rows(data, storage, out, in, ld, nullptr);
        CHECK(p.to_mat() == w);
        std::vector<float> row(static_cast<size_t>(in));
        p.row(out - 1, row.data());
        for (int c = 0; c < in; ++c) CHECK(row[size_t(c)] == w(out - 1, c));
        Mat fast(BT, out), ref(BT, out);
        linear_forward_packed(fast.data(), x.data(), p, b.data(), BT);
        linear_forward_packed_reference(ref.data(), x.data(), PackedMatrix::from(w), b.data(), BT);
        test::check_close(fast, ref, 1e-5 * std::max(1, in / 16) * 3, "x·Wᵀ + b, W in place");
        const PackedMatrix copy = p;  // a copy shares the source
        CHECK(copy.source() == p.source());
        linear_forward_packed(fast.data(), x.data(), copy, nullptr, BT);
        test::check_close(fast, Mat(x * w.transpose()), 1e-5 * std::max(1, in / 16) * 3, "x·Wᵀ (Eigen), W in place");
      }
}

TEST_CASE("packed matrix: Wᵀ read in place with a row stride, partial last panel included, gives the reference product") {
  for (const int BT : {1, 7, 9, 40})
    for (const auto& shape : std::vector<std::pair<int, int>>{{1, 1}, {31, 5}, {32, 16}, {33, 64}, {96, 40}, {100, 77}}) {
      const int out = shape.first, in = shape.second;
      CAPTURE(BT);
      CAPTURE(out);
      CAPTURE(in);
      // Wᵀ [in, out] as the middle columns of a wider [in, out + 40] matrix (GPT-2's c_attn holds
      // W_Q, W_K, W_V side by side): the other columns must never enter the product.
      const int ld = out + 40;
      const Mat wide = random_mat(in, ld, 21), x = random_mat(BT, in, 22), b = random_mat(1, out, 23);
      const int first = 8;
      const Mat w = wide.middleCols(first, out).transpose();
      // The buffer ends where Wᵀ's last value is: a read past the matrix would leave it.
      std::vector<float> t(size_t(in - 1) * size_t(ld) + size_t(first + out));
      for (int k = 0; k < in; ++k)
        for (int j = 0; j < ld && size_t(k) * size_t(ld) + size_t(j) < t.size(); ++j) t[size_t(k) * size_t(ld) + size_t(j)] = wide(k, j);
      const PackedMatrix p = PackedMatrix::in_place_transposed(t.data() + first, out, in, ld, nullptr);
      CHECK(p.to_mat() == w);
      CHECK((p.tail_panel() != nullptr) == (out % 32 != 0));
      Mat fast(BT, out), ref(BT, out);
      linear_forward_packed(fast.data(), x.data(), p, b.data(), BT);
      linear_forward_packed_reference(ref.data(), x.data(), p, b.data(), BT);
      test::check_close(fast, ref, 1e-5 * std::max(1, in / 16), "x·Wᵀ + b, Wᵀ in place");
      linear_forward_packed(fast.data(), x.data(), PackedMatrix(p), nullptr, BT);
      test::check_close(fast, Mat(x * w.transpose()), 1e-5 * std::max(1, in / 16), "x·Wᵀ (Eigen), Wᵀ in place");
    }
}
