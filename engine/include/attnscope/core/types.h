// types.h — the tensor types every engine routine shares.
//
// Legend used in shape comments across the engine:
//   T tokens (or N = rows·cols grid cells), C d_model, H query heads, G kv groups, d_k = C / H.
// A 2D tensor is a row-major float32 Eigen matrix, exactly the memory layout of a C-order .npy file
// and of PyTorch tensors. A 3D tensor [A, B, D] is a std::vector of A matrices [B, D].
#pragma once
#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace attnscope {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::Matrix<float, Eigen::Dynamic, 1>;
using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Tensor3 = std::vector<Mat>;  // [A, B, D] as A matrices of [B, D]

// True when no entry is NaN or ±inf. x·0 is 0 for finite x and NaN otherwise, and the vectorised
// sum carries a NaN through (Eigen's allFinite() is several times slower on the hot path).
template <class Derived>
bool all_finite(const Eigen::DenseBase<Derived>& m) {
  return (m.derived().array() * typename Derived::Scalar(0)).sum() == typename Derived::Scalar(0);
}

}  // namespace attnscope
