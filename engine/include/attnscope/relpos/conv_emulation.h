// conv_emulation.h — a K×K convolution as K² relative-position heads (SPEC "Convolution as
// attention"), next to the true convolution, and how far apart they are.
//
// Legend: R×C grid, N = R·C cells, K kernel side (3 or 5), H = K² heads.
//   head h = i·K + j  ↔  Δ_h = (i − ⌊K/2⌋, j − ⌊K/2⌋),  W_h = kernel[i, j],  α_h = α for every head
//   mhsa  [R, C] = Σ_h W_h · (P_h·X)                        (X [N, 1] one channel)
//   conv  [R, C]: conv[r, c] = Σ_{i,j} kernel[i, j]·X[r + i − ⌊K/2⌋, c + j − ⌊K/2⌋], 0 outside
//                 (cross-correlation, PyTorch conv2d with padding = ⌊K/2⌋)
// As α → ∞ each P_h becomes one-hot on the cell q + Δ_h, so mhsa → conv; the gap shrinks like e^(−α).
// Interior cells (whose K×K neighbourhood lies inside the grid) match without help; border cells
// match only with padding keys (RelposSettings::pad_keys), which stand for the zero padding.
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "attnscope/relpos/relative_position.h"
#include "attnscope/scene/scene.h"
#include "attnscope/core/types.h"

namespace attnscope {

struct Kernel {
  std::string name;  // a preset name, or "custom"
  int size = 3;      // K
  MatD weights;      // [K, K], weights(i, j) ↔ Δ = (i − ⌊K/2⌋, j − ⌊K/2⌋)
};

// "identity", "box", "gaussian", "sobel_x", "sobel_y", "laplacian", "sharpen" (all 3×3).
//   identity  centre 1          box       all 1/9              gaussian  [1 2 1; 2 4 2; 1 2 1]/16
//   sobel_x   [−1 0 1; −2 0 2; −1 0 1]    sobel_y  its transpose (responds to changes down the rows)
//   laplacian [0 1 0; 1 −4 1; 0 1 0]      sharpen  [0 −1 0; −1 5 −1; 0 −1 0]
const std::vector<std::string>& kernel_preset_names();

// Throws InputError for an unknown name, listing the presets and the custom form.
Kernel kernel_preset(const std::string& name);

// K² numbers row-major, K = 3 or 5. Throws InputError for another count or a non-finite number.
Kernel custom_kernel(const std::vector<double>& values);

// settings.kernel == "custom" → custom_kernel(settings.custom), else kernel_preset(settings.kernel).
Kernel kernel_from_settings(const ConvSettings& settings);

// Throws InputError unless heads == K² ("a 3×3 kernel needs 9 heads …").
void require_heads_match_kernel(int heads, const Kernel& kernel);

// The K² heads of a kernel, all with width α (InputError for α negative, NaN or infinite).
std::vector<RelposHead> conv_heads(const Kernel& kernel, double alpha);

// The emulation computes in double so the error curve shows the true gap down to ~1e-16, not float
// rounding; views cast the results to float.

// conv  [R, C]  the zero-padded cross-correlation of image [R, C] with kernel [K, K] (plain loops).
MatD conv2d_zero_padded(const MatD& image, const MatD& kernel);

// mhsa  [R, C]  Σ_h W_h·(P_h·X) for image [R, C]. Fast: the heads of one kernel row share their row
// window A_i, so mhsa = Σ_i A_i·X·(Σ_j W[i, j]·B_j)ᵀ — 2K small products instead of 2K².
// Checks *cancel between kernel rows (throws Cancelled).
MatD conv_attention(const MatD& image, const Kernel& kernel, double alpha, bool pad_keys,
                    const std::atomic<bool>* cancel = nullptr);

// Oracle for conv_attention: Σ_h W_h·relpos_outputs_reference(...)[h] (float, plain loops).
Mat conv_attention_reference(const Mat& image, const Kernel& kernel, double alpha, bool pad_keys);

// The largest |mhsa − conv| over interior cells (at least ⌊K/2⌋ from every edge) and over border
// cells (the rest). A set with no cells reports 0 and a count of 0.
struct ConvErrors {
  double interior = 0;
  double border = 0;
  int interior_cells = 0;
  int border_cells = 0;
};
ConvErrors conv_errors(const MatD& mhsa, const MatD& conv, int kernel_size);

struct ConvCurvePoint {
  double alpha = 0;
  double interior = 0;  // max |mhsa − conv| over interior cells at this α
  double border = 0;    // … over border cells
};

// `count` values from lo to hi evenly spaced in log10 (count ≥ 2, 0 < lo < hi).
std::vector<double> log_spaced(double lo, double hi, int count);

// The error-versus-α curve at each α of `alphas`. Checks *cancel between points.
std::vector<ConvCurvePoint> conv_error_curve(const MatD& image, const Kernel& kernel, bool pad_keys,
                                             const std::vector<double>& alphas,
                                             const std::atomic<bool>* cancel = nullptr);

// The curve's default α grid: 25 points log-spaced from 0.01 to 1000.
std::vector<double> default_conv_curve_alphas();

}  // namespace attnscope
