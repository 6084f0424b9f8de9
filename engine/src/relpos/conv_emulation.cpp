// conv_emulation.cpp — K² relative-position heads against the true K×K convolution.
//
// Sections: kernels · heads · convolution · attention emulation · errors and the α curve
#include "attnscope/relpos/conv_emulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnscope/core/error.h"
#include "core/format.h"
#include "relpos/relpos_separable.h"

namespace attnscope {
namespace {

Kernel make_kernel(const std::string& name, int k, std::initializer_list<double> values, double scale = 1.0) {
  Kernel kernel{name, k, MatD(k, k)};
  auto it = values.begin();
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) kernel.weights(i, j) = *it++ * scale;
  return kernel;
}

}  // namespace

// ---- kernels ------------------------------------------------------------------------------------

const std::vector<std::string>& kernel_preset_names() {
  static const std::vector<std::string> names{"identity", "box",       "gaussian", "sobel_x",
                                              "sobel_y",  "laplacian", "sharpen"};
  return names;
}

Kernel kernel_preset(const std::string& name) {
  if (name == "identity") return make_kernel(name, 3, {0, 0, 0, 0, 1, 0, 0, 0, 0});
  if (name == "box") return make_kernel(name, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}, 1.0 / 9.0);
  if (name == "gaussian") return make_kernel(name, 3, {1, 2, 1, 2, 4, 2, 1, 2, 1}, 1.0 / 16.0);
  if (name == "sobel_x") return make_kernel(name, 3, {-1, 0, 1, -2, 0, 2, -1, 0, 1});
  if (name == "sobel_y") return make_kernel(name, 3, {-1, -2, -1, 0, 0, 0, 1, 2, 1});
  if (name == "laplacian") return make_kernel(name, 3, {0, 1, 0, 1, -4, 1, 0, 1, 0});
  if (name == "sharpen") return make_kernel(name, 3, {0, -1, 0, -1, 5, -1, 0, -1, 0});
  std::string valid;
  for (const std::string& n : kernel_preset_names()) valid += n + ", ";
  throw InputError("unknown kernel '" + name + "': valid kernels are " + valid +
                   "or a custom list of 9 or 25 numbers (3x3 or 5x5, row-major)");
}

Kernel custom_kernel(const std::vector<double>& values) {
  const int k = values.size() == 9 ? 3 : values.size() == 25 ? 5 : 0;
  require(k != 0, "a custom kernel takes K*K numbers row-major with K = 3 or 5 (9 or 25 numbers), got " +
                      std::to_string(values.size()));
  Kernel kernel{"custom", k, MatD(k, k)};
  for (int i = 0; i < k * k; ++i) {
    require(std::isfinite(values[i]),
            "custom kernel value " + std::to_string(i + 1) + " is " + detail::format_g(values[i]) + ": kernel values must be finite");
    kernel.weights(i / k, i % k) = values[i];
  }
  return kernel;
}

Kernel kernel_from_settings(const ConvSettings& s) {
  return s.kernel == "custom" ? custom_kernel(s.custom) : kernel_preset(s.kernel);
}

void require_heads_match_kernel(int heads, const Kernel& kernel) {
  const int k = kernel.size;
  require(heads == k * k, "a " + std::to_string(k) + "x" + std::to_string(k) + " kernel is emulated by K^2 = " +
                              std::to_string(k * k) + " heads, but heads = " + std::to_string(heads) + " was given");
}

// ---- heads --------------------------------------------------------------------------------------

std::vector<RelposHead> conv_heads(const Kernel& kernel, double alpha) {
  const int k = kernel.size;
  std::vector<RelposHead> heads;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) heads.push_back({alpha, {double(i - k / 2), double(j - k / 2)}});
  validate_relpos_heads(heads, 2);
  return heads;
}

// ---- convolution --------------------------------------------------------------------------------

MatD conv2d_zero_padded(const MatD& image, const MatD& kernel) {
  require(kernel.rows() == kernel.cols() && kernel.rows() % 2 == 1,
          "a convolution kernel must be square with an odd side, got [" + std::to_string(kernel.rows()) + ", " +
              std::to_string(kernel.cols()) + "]");
  const Eigen::Index rows = image.rows(), cols = image.cols(), k = kernel.rows(), half = k / 2;
  MatD out = MatD::Zero(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c) {
      double sum = 0;
      for (Eigen::Index i = 0; i < k; ++i)
        for (Eigen::Index j = 0; j < kernel.cols(); ++j) {
          const Eigen::Index y = r + i - half, x = c + j - half;
          if (y >= 0 && y < rows && x >= 0 && x < cols) sum += kernel(i, j) * image(y, x);
        }
      out(r, c) = sum;
    }
  return out;
}

// ---- attention emulation ------------------------------------------------------------------------
//   head (i, j):  P[q, k] = A_i[q_r, k_r]·B_j[q_c, k_c],  P·X = A_i·X·B_jᵀ
//   mhsa = Σ_{i,j} W[i,j]·A_i·X·B_jᵀ = Σ_i (A_i·X)·(Σ_j W[i,j]·B_j)ᵀ

MatD conv_attention(const MatD& image, const Kernel& kernel, double alpha, bool pad_keys,
                    const std::atomic<bool>* cancel) {
  const int k = kernel.size, rows = int(image.rows()), cols = int(image.cols());
  const std::vector<RelposHead> heads = conv_heads(kernel, alpha);
  const RelposGeometry g = relpos_geometry(2, rows, cols, heads, pad_keys);
  std::vector<MatD> col_windows;
  for (int j = 0; j < k; ++j) col_windows.push_back(relpos_axis_window(cols, g.pad_cols, alpha, j - k / 2).probs);
  MatD out = MatD::Zero(rows, cols);
  for (int i = 0; i < k; ++i) {
    check_cancel(cancel);
    const MatD row_window = relpos_axis_window(rows, g.pad_rows, alpha, i - k / 2).probs;
    MatD cols_combined = MatD::Zero(cols, cols);
    for (int j = 0; j < k; ++j) cols_combined += kernel.weights(i, j) * col_windows[j];
    out += detail::separable_apply(row_window, image, cols_combined);
  }
  return out;
}

Mat conv_attention_reference(const Mat& image, const Kernel& kernel, double alpha, bool pad_keys) {
  const int rows = int(image.rows()), cols = int(image.cols()), k = kernel.size;
  const std::vector<RelposHead> heads = conv_heads(kernel, alpha);
  const RelposGeometry g = relpos_geometry(2, rows, cols, heads, pad_keys);
  const Mat x = Eigen::Map<const Mat>(image.data(), Eigen::Index(rows) * cols, 1);
  const Tensor3 outputs = relpos_outputs_reference(heads, g, x);
  Mat out = Mat::Zero(rows, cols);
  for (int h = 0; h < k * k; ++h)
    out += float(kernel.weights(h / k, h % k)) * Eigen::Map<const Mat>(outputs[h].data(), rows, cols);
  return out;
}

// ---- errors and the α curve ---------------------------------------------------------------------

ConvErrors conv_errors(const MatD& mhsa, const MatD& conv, int kernel_size) {
  require(mhsa.rows() == conv.rows() && mhsa.cols() == conv.cols(), "mhsa and conv must have the same shape");
  const Eigen::Index half = kernel_size / 2, rows = mhsa.rows(), cols = mhsa.cols();
  ConvErrors e;
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c) {
      const double diff = std::abs(mhsa(r, c) - conv(r, c));
      const bool interior = r >= half && r < rows - half && c >= half && c < cols - half;
      if (interior) {
        e.interior = std::max(e.interior, diff);
        ++e.interior_cells;
      } else {
        e.border = std::max(e.border, diff);
        ++e.border_cells;
      }
    }
  return e;
}

std::vector<double> log_spaced(double lo, double hi, int count) {
  require(count >= 2 && lo > 0 && hi > lo && std::isfinite(hi),
          "log_spaced needs count >= 2 and 0 < lo < hi, got " + std::to_string(count) + " points from " + detail::format_g(lo) +
              " to " + detail::format_g(hi));
  std::vector<double> values(count);
  const double a = std::log10(lo), b = std::log10(hi);
  for (int i = 0; i < count; ++i) values[i] = std::pow(10.0, a + (b - a) * i / (count - 1));
  values.front() = lo;
  values.back() = hi;
  return values;
}

std::vector<double> default_conv_curve_alphas() { return log_spaced(0.01, 1000.0, 25); }

std::vector<ConvCurvePoint> conv_error_curve(const MatD& image, const Kernel& kernel, bool pad_keys,
                                             const std::vector<double>& alphas, const std::atomic<bool>* cancel) {
  const MatD conv = conv2d_zero_padded(image, kernel.weights);
  std::vector<ConvCurvePoint> curve;
  for (double alpha : alphas) {
    check_cancel(cancel);
    const ConvErrors e = conv_errors(conv_attention(image, kernel, alpha, pad_keys, cancel), conv, kernel.size);
    curve.push_back({alpha, e.interior, e.border});
  }
  return curve;
}

}  // namespace attnscope
