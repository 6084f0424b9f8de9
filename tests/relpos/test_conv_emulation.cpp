// Convolution as attention: kernels, the true convolution's semantics, the fast emulation against
// the per-head oracle, and the error's behaviour in α, inside and at the border, with and without
// padding keys.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "attnscope/analysis/analysis.h"
#include "attnscope/relpos/conv_emulation.h"
#include "attnscope/core/error.h"
#include "attnscope/relpos/grids.h"
#include "attnscope/core/rng.h"
#include "check.h"

using namespace attnscope;
using attnscope::test::check_close;

namespace {

using attnscope::test::contains;
using attnscope::test::error_of;

MatD pattern_image(const std::string& name, int rows, int cols) {
  const Grid g = make_pattern(name, rows, cols, 9);
  return Eigen::Map<const Mat>(g.values.data(), rows, cols).cast<double>();
}

std::vector<Kernel> every_kernel() {
  std::vector<Kernel> kernels;
  for (const std::string& name : kernel_preset_names()) kernels.push_back(kernel_preset(name));
  std::vector<double> five(25);
  Rng rng(4);
  for (double& v : five) v = rng.uniform(-1, 1);
  kernels.push_back(custom_kernel(five));
  return kernels;
}

}  // namespace

TEST_CASE("kernels: presets hold the documented values") {
  const Kernel sobel = kernel_preset("sobel_x");
  CHECK(sobel.size == 3);
  CHECK(sobel.weights(0, 0) == -1);
  CHECK(sobel.weights(1, 2) == 2);
  CHECK(sobel.weights(2, 1) == 0);
  check_close(kernel_preset("sobel_y").weights, sobel.weights.transpose(), 0, "sobel_y = sobel_xᵀ");
  CHECK(kernel_preset("box").weights.sum() == doctest::Approx(1.0));
  CHECK(kernel_preset("gaussian").weights.sum() == doctest::Approx(1.0));
  CHECK(kernel_preset("gaussian").weights(1, 1) == 0.25);
  CHECK(kernel_preset("laplacian").weights.sum() == 0.0);
  CHECK(kernel_preset("laplacian").weights(1, 1) == -4);
  CHECK(kernel_preset("sharpen").weights.sum() == 1.0);
  CHECK(kernel_preset("identity").weights.sum() == 1.0);
  CHECK(kernel_preset("identity").weights(1, 1) == 1.0);
  const std::string e = error_of([] { kernel_preset("emboss"); });
  CHECK(contains(e, "emboss"));
  CHECK(contains(e, "identity, box, gaussian, sobel_x, sobel_y, laplacian, sharpen"));
}

TEST_CASE("kernels: a custom kernel is K*K numbers row-major with K = 3 or 5") {
  const Kernel k3 = custom_kernel({1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(k3.size == 3);
  CHECK(k3.name == "custom");
  CHECK(k3.weights(0, 2) == 3);
  CHECK(k3.weights(2, 0) == 7);
  std::vector<double> v25(25);
  for (int i = 0; i < 25; ++i) v25[size_t(i)] = i;
  CHECK(custom_kernel(v25).weights(3, 1) == 16);
  CHECK(contains(error_of([] { custom_kernel({1, 2, 3, 4}); }), "K = 3 or 5"));
  CHECK(contains(error_of([] { custom_kernel(std::vector<double>(16, 1.0)); }), "got 16"));
  CHECK(contains(error_of([] { custom_kernel({1, 2, 3, 4, std::nan(""), 6, 7, 8, 9}); }), "value 5"));
  ConvSettings s;
  s.kernel = "custom";
  s.custom = v25;
  CHECK(kernel_from_settings(s).size == 5);
}

TEST_CASE("conv2d: zero-padded cross-correlation with PyTorch conv2d semantics") {
  // A kernel whose only weight sits at [0, 0] reads the cell up-left: out[r, c] = X[r − 1, c − 1].
  MatD x(3, 4);
  x << 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12;
  MatD corner = MatD::Zero(3, 3);
  corner(0, 0) = 1;
  MatD shifted(3, 4);
  shifted << 0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7;
  check_close(conv2d_zero_padded(x, corner), shifted, 0, "kernel[0,0] reads X[r-1, c-1]");
  // Not flipped (cross-correlation): sobel_x at (1, 1) by hand: −1·1 + 1·3 − 2·5 + 2·7 − 1·9 + 1·11 = 8
  CHECK(conv2d_zero_padded(x, kernel_preset("sobel_x").weights)(1, 1) == 8.0);
  // At the corner (0, 0) the zero padding drops the out-of-grid terms: −2·0 + 2·2 − 0 + 1·6 = 10
  CHECK(conv2d_zero_padded(x, kernel_preset("sobel_x").weights)(0, 0) == 10.0);
}

TEST_CASE("conv emulation: the fast path equals the sum of the oracle's head outputs weighted by the kernel") {
  Rng rng(31);
  for (int trial = 0; trial < 8; ++trial) {
    const Kernel k = trial % 2 ? kernel_preset(kernel_preset_names()[size_t(trial) % 7]) : every_kernel().back();
    const int rows = 3 + int(rng.uniform01() * 9), cols = 3 + int(rng.uniform01() * 9);
    const double alpha = std::pow(10.0, rng.uniform(-2, 2));
    const bool pad = trial % 3 == 0;
    const MatD image = pattern_image("noise", rows, cols);
    CAPTURE(trial);
    check_close(conv_attention(image, k, alpha, pad).cast<float>(),
                conv_attention_reference(image.cast<float>(), k, alpha, pad), 1e-5, "fast vs oracle");
  }
}

// Monotone from α = 1 on, where each window (σ = 1/√(2α) ≤ 0.71 cell) is narrower than a cell and the
// gap behaves like e^(−α)·|kernel * (discrete Laplacian of X)|. Below α ≈ 1 the heads are wide
// averages and the worst-cell error is not monotone in general: checkerboard + laplacian rises by
// 0.06 near α = 0.75, and checkerboard + sobel is almost exact at α → 0 (the conv is ~0 there and a
// zero-sum kernel over uniform heads gives 0 too). The curve shows that regime as it is.
TEST_CASE("conv emulation: interior error falls monotonically with alpha and is below 1e-4 at alpha = 50, every kernel") {
  const std::vector<double> alphas = default_conv_curve_alphas();
  REQUIRE(alphas.size() == 25);
  CHECK(alphas.front() == 0.01);
  CHECK(alphas.back() == 1000.0);
  for (const std::string pattern : {"rings", "glyph", "noise", "checkerboard"})
    for (const Kernel& k : every_kernel())
      for (bool pad : {false, true}) {
        CAPTURE(pattern);
        CAPTURE(k.name);
        CAPTURE(pad);
        const MatD image = pattern_image(pattern, 16, 14);
        const std::vector<ConvCurvePoint> curve = conv_error_curve(image, k, pad, alphas);
        REQUIRE(curve.size() == 25);
        size_t first = 0;  // the first curve point with α ≥ 1
        while (curve[first].alpha < 1.0) ++first;
        REQUIRE(first + 3 < curve.size());  // α = 1.21 is point 10 of 25
        for (size_t i = first + 1; i < curve.size(); ++i) {
          CAPTURE(curve[i].alpha);
          CHECK(curve[i].interior <= curve[i - 1].interior + 1e-12);
          // Strictly falling until it reaches the floor of double rounding.
          if (curve[i - 1].interior > 1e-13) CHECK(curve[i].interior < curve[i - 1].interior);
        }
        const MatD conv = conv2d_zero_padded(image, k.weights);
        const ConvErrors at50 = conv_errors(conv_attention(image, k, 50.0, pad), conv, k.size);
        CHECK(at50.interior < 1e-4);
        CHECK(at50.interior_cells == (16 - 2 * (k.size / 2)) * (14 - 2 * (k.size / 2)));
        CHECK(at50.border_cells == 16 * 14 - at50.interior_cells);
      }
}

TEST_CASE("conv emulation: with padding keys the border error is below 1e-4 at alpha = 50 as well") {
  for (const std::string pattern : {"rings", "gradient", "noise"})
    for (const Kernel& k : every_kernel()) {
      CAPTURE(pattern);
      CAPTURE(k.name);
      const MatD image = pattern_image(pattern, 12, 15);
      const ConvErrors e = conv_errors(conv_attention(image, k, 50.0, true), conv2d_zero_padded(image, k.weights), k.size);
      CHECK(e.border < 1e-4);
      CHECK(e.interior < 1e-4);
    }
}

TEST_CASE("conv emulation: without padding keys the border error is reported, not hidden") {
  const MatD image = pattern_image("gradient", 12, 12);  // bright at the bottom-right border
  const Kernel box = kernel_preset("box");
  const MatD mhsa = conv_attention(image, box, 50.0, false);
  const MatD conv = conv2d_zero_padded(image, box.weights);
  const ConvErrors e = conv_errors(mhsa, conv, 3);
  double border = 0;
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 12; ++c)
      if (r == 0 || c == 0 || r == 11 || c == 11) border = std::max(border, std::abs(mhsa(r, c) - conv(r, c)));
  CHECK(e.border == border);
  CHECK(e.border > 0.1);  // the corner sees its own value where the conv sees zero padding
  CHECK(e.interior < 1e-4);
  // The curve reports the same border error at α = 50 and does not let it vanish at large α.
  const auto curve = conv_error_curve(image, box, false, {50.0, 1000.0});
  CHECK(curve[0].border == doctest::Approx(e.border));
  CHECK(curve[1].border > 0.1);
}

TEST_CASE("conv emulation: heads must be K^2 and alpha must be finite and >= 0") {
  CHECK(contains(error_of([] { require_heads_match_kernel(8, kernel_preset("box")); }), "3x3 kernel"));
  CHECK(contains(error_of([] { require_heads_match_kernel(9, custom_kernel(std::vector<double>(25, 1.0))); }),
                 "25 heads"));
  CHECK(error_of([] { require_heads_match_kernel(9, kernel_preset("box")); }).empty());
  CHECK(conv_heads(kernel_preset("box"), 2.0).size() == 9);
  CHECK(conv_heads(kernel_preset("box"), 2.0)[5].delta == std::array<double, 2>{0, 1});
  CHECK(contains(error_of([] { conv_heads(kernel_preset("box"), -1.0); }), ">= 0"));
  CHECK(contains(error_of([] { conv_heads(kernel_preset("box"), std::nan("")); }), "finite"));
  CHECK(contains(error_of([] { conv_heads(kernel_preset("box"), INFINITY); }), "finite"));
}

TEST_CASE("conv analysis: a scene gives input, mhsa, conv, difference, errors and the curve, consistently") {
  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.pattern = "rings";
  s.input.grid.rows = 20;
  s.input.grid.cols = 18;
  s.conv.kernel = "laplacian";
  s.conv.alpha = 8;
  const ConvAnalysis ca = analyse_conv(s);
  CHECK(ca.rows == 20);
  CHECK(ca.cols == 18);
  CHECK(ca.heads.size() == 9);
  CHECK(ca.heads[0].alpha == 8);
  CHECK(ca.kernel.name == "laplacian");
  const MatD image = pattern_image("rings", 20, 18);
  check_close(ca.input, image.cast<float>(), 0, "input");
  check_close(ca.conv, conv2d_zero_padded(image, ca.kernel.weights).cast<float>(), 1e-6, "conv");
  check_close(ca.mhsa, conv_attention(image, ca.kernel, 8, false).cast<float>(), 1e-6, "mhsa");
  check_close(ca.difference, (ca.mhsa - ca.conv), 1e-6, "difference = mhsa − conv");
  const ConvErrors e = conv_errors(conv_attention(image, ca.kernel, 8, false), conv2d_zero_padded(image, ca.kernel.weights), 3);
  CHECK(ca.max_abs_interior > 0);  // α = 8 is not yet exact
  CHECK(ca.max_abs_interior == doctest::Approx(e.interior));
  CHECK(ca.max_abs_border == doctest::Approx(e.border));
  CHECK(ca.interior_cells == 18 * 16);
  REQUIRE(ca.curve.size() == 25);
  CHECK(ca.curve[0].alpha == 0.01);
  s.relpos.pad_keys = true;
  s.conv.alpha = 50;
  const ConvAnalysis padded = analyse_conv(s);
  CHECK(padded.pad_keys);
  CHECK(padded.max_abs_border < 1e-4);
  s.input.source = InputSource::text;
  CHECK(contains(error_of([&] { analyse_conv(s); }), "needs a grid input"));
  s.input.source = InputSource::grid;
  s.conv.kernel = "custom";
  s.conv.custom = {1, 2, 3};
  CHECK(contains(error_of([&] { analyse_conv(s); }), "K = 3 or 5"));
}

TEST_CASE("log_spaced: ends exactly at lo and hi with a constant ratio") {
  const auto v = log_spaced(0.01, 1000, 6);
  REQUIRE(v.size() == 6);
  CHECK(v[0] == 0.01);
  CHECK(v[5] == 1000);
  for (size_t i = 1; i < v.size(); ++i) CHECK(v[i] / v[i - 1] == doctest::Approx(10.0));
  CHECK(contains(error_of([] { log_spaced(0, 1, 5); }), "0 < lo < hi"));
}
