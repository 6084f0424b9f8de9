// relpos_separable.h — (private) out = A·plane·Bᵀ for the small matrices of the factorised
// relative-position path, as plain row-axpy loops.
//
//   A      [R, R]  row window (query row × key row)
//   plane  [R, C]  one channel of X
//   B      [C, C]  column window (query col × key col)
//   out    [R, C]  out[r, c] = Σ_{kr, kc} A[r, kr]·plane[kr, kc]·B[c, kc]
//
// Why not Eigen's GEMM: at these sizes (≤ 64) its OpenMP split costs more than it saves, and on a
// busy machine its spinning threads made the 64×64 case 10× slower. The loops below vectorise along
// contiguous rows, run on the calling thread, and skip the zeros a sharp window (large α) has, so
// they get faster as α grows.
#pragma once
#include <Eigen/Core>

namespace attnscope::detail {

template <class M>
M separable_apply(const M& a, const M& plane, const M& b) {
  using Scalar = typename M::Scalar;
  const Eigen::Index rows = plane.rows(), cols = plane.cols();
  const M bt = b.transpose();  // [C_key, C_query], rows contiguous
  // 1. Mix columns: t[kr, :] = Σ_kc plane[kr, kc]·bt[kc, :]
  M t = M::Zero(rows, cols);
  for (Eigen::Index kr = 0; kr < rows; ++kr) {
    Scalar* t_row = t.row(kr).data();
    for (Eigen::Index kc = 0; kc < cols; ++kc) {
      const Scalar s = plane(kr, kc);
      if (s == Scalar(0)) continue;
      const Scalar* b_row = bt.row(kc).data();
      for (Eigen::Index c = 0; c < cols; ++c) t_row[c] += s * b_row[c];
    }
  }
  // 2. Mix rows: out[r, :] = Σ_kr a[r, kr]·t[kr, :]
  M out = M::Zero(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) {
    Scalar* o_row = out.row(r).data();
    for (Eigen::Index kr = 0; kr < rows; ++kr) {
      const Scalar w = a(r, kr);
      if (w == Scalar(0)) continue;
      const Scalar* t_row = t.row(kr).data();
      for (Eigen::Index c = 0; c < cols; ++c) o_row[c] += w * t_row[c];
    }
  }
  return out;
}

}  // namespace attnscope::detail
