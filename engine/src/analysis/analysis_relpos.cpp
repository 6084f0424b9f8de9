// analysis_relpos.cpp — the relative-position and convolution parts of an Analysis.
//
// Sections: helpers · relative position (grid or sentence, pure or mixed) · convolution as attention
#include <algorithm>
#include <cmath>

#include "attnscope/analysis/analysis.h"
#include "attnscope/core/error.h"
#include "attnscope/relpos/grids.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/core/limits.h"

namespace attnscope {
namespace {

// −1 → the centre; anything else must lie in 0 … size − 1.
// what = "row" or "column"; grid = "16x16".
int resolve_coordinate(int value, int size, const std::string& what, const std::string& grid) {
  if (value == -1) return size / 2;
  require(value >= 0 && value < size, "the query " + what + " " + std::to_string(value) + " is outside the " + grid +
                                          " grid: " + what + "s are 0 to " + std::to_string(size - 1));
  return value;
}

// Mixed mode on a sentence, one head (SPEC "Optional mixed mode"):
//   S[q, k] = content[q, k] + λ·(−α((k − q − Δ)² − m_q))        [T, T]
// (relative_position_scores_1d, attention/positions.h, says why m_q).
Mat mixed_scores(const Mat& content, const RelposHead& head, double lambda) {
  const MatD positional = relative_position_scores_1d(head.alpha, head.delta[1], int(content.rows()));
  return (content.cast<double>() + lambda * positional).cast<float>();
}

}  // namespace

// ---- relative position --------------------------------------------------------------------------

RelposAnalysis analyse_relpos(const Scene& scene, const AttentionAnalysis* attention, const std::atomic<bool>* cancel) {
  const RelposSettings& s = scene.relpos;
  RelposAnalysis ra;
  ra.mixed = s.mixed;
  ra.lambda = s.lambda;

  // 1. Positions and X.
  if (scene.input.source == InputSource::grid) {
    require(!s.mixed, "mixed mode (content + lambda * positional scores) works on sentences; a grid has no content "
                      "scores, so turn mixed mode off");
    Grid grid = grid_from_settings(scene.input.grid, /*keep_color=*/true);
    ra.dims = 2;
    ra.rows = grid.rows;
    ra.cols = grid.cols;
    ra.x = std::move(grid.values);
    ra.input_note = grid.description;
    const std::string size = std::to_string(ra.rows) + "x" + std::to_string(ra.cols);
    ra.query_row = resolve_coordinate(s.query_row, ra.rows, "row", size);
    ra.query_col = resolve_coordinate(s.query_col, ra.cols, "column", size);
  } else {
    require(attention != nullptr, "relative position on a sentence needs its tokens: analyse the text first");
    ra.dims = 1;
    ra.rows = 1;
    ra.cols = int(attention->x.rows());
    ra.x = attention->x;
    ra.labels = attention->labels;
    ra.input_note = std::to_string(ra.cols) + " tokens";
    ra.query_row = 0;
    require(s.query_index >= -1 && s.query_index < ra.cols,
            "the query token " + std::to_string(s.query_index) + " is outside the sentence: tokens are 0 to " +
                std::to_string(ra.cols - 1));
    ra.query_col = s.query_index == -1 ? ra.cols / 2 : s.query_index;
  }
  ra.query = ra.query_row * ra.cols + ra.query_col;
  const int n = ra.rows * ra.cols;

  // 2. Heads and geometry.
  ra.heads = resolve_relpos_heads(s, ra.dims);
  const int h_count = int(ra.heads.size());
  require(!(s.mixed && s.pad_keys), "padding keys do not combine with mixed mode: padding tokens have no content "
                                    "scores; turn one of them off");
  ra.geometry = relpos_geometry(ra.dims, ra.rows, ra.cols, ra.heads, s.pad_keys);
  check_cancel(cancel);

  // 3. Scores, probabilities, outputs.
  if (s.mixed) {
    require(std::isfinite(s.lambda) && s.lambda >= 0,
            "lambda (the weight of the positional scores) must be a finite number >= 0, got " + std::to_string(s.lambda));
    const Tensor3& content = attention->result.scores;
    require(int(content.size()) == h_count,
            "mixed mode adds each relative-position head's scores to one attention head's content scores, so the "
            "relative-position heads (" + std::to_string(h_count) + ") must equal the model's heads (" +
                std::to_string(content.size()) + ")");
    const Mat positional = relpos_scores_query(ra.heads, ra.geometry, ra.query);
    ra.scores_query.resize(h_count, n);
    ra.probs_query.resize(h_count, n);
    ra.padding_mass.assign(h_count, 0.0);
    for (int h = 0; h < h_count; ++h) {
      check_cancel(cancel);
      Mat probs = mixed_scores(content[h], ra.heads[h], s.lambda);
      softmax_rows(probs);
      ra.scores_query.row(h) = content[h].row(ra.query) + float(s.lambda) * positional.row(h);
      ra.probs_query.row(h) = probs.row(ra.query);
      ra.outputs.push_back(probs * ra.x);
      if (n <= relpos_full_probs_max_positions) ra.probs.push_back(std::move(probs));
    }
  } else {
    ra.scores_query = relpos_scores_query(ra.heads, ra.geometry, ra.query);
    ra.probs_query = relpos_probs_query(ra.heads, ra.geometry, ra.query);
    ra.padding_mass = relpos_padding_mass(ra.heads, ra.geometry, ra.query);
    ra.outputs = relpos_outputs(ra.heads, ra.geometry, ra.x, cancel);
    if (n <= relpos_full_probs_max_positions) ra.probs = relpos_probs(ra.heads, ra.geometry, cancel);
  }

  // 4. The heads together: where a randomly chosen head looks from the query.
  const Mat mean = ra.probs_query.colwise().mean();
  ra.combined = Eigen::Map<const Mat>(mean.data(), ra.rows, ra.cols);
  check_cancel(cancel);
  return ra;
}

// ---- convolution as attention -------------------------------------------------------------------

ConvAnalysis analyse_conv(const Scene& scene, const std::atomic<bool>* cancel) {
  require(scene.input.source == InputSource::grid,
          "convolution as attention needs a grid input (a pattern or an image), not a sentence or tensor");
  ConvAnalysis ca;
  ca.kernel = kernel_from_settings(scene.conv);
  ca.alpha = scene.conv.alpha;
  ca.pad_keys = scene.relpos.pad_keys;
  ca.heads = conv_heads(ca.kernel, ca.alpha);  // validates α

  const Grid grid = grid_from_settings(scene.input.grid, /*keep_color=*/false);
  ca.rows = grid.rows;
  ca.cols = grid.cols;
  ca.input_note = grid.description;
  const MatD image = Eigen::Map<const Mat>(grid.values.data(), ca.rows, ca.cols).cast<double>();
  check_cancel(cancel);

  const MatD conv = conv2d_zero_padded(image, ca.kernel.weights);
  const MatD mhsa = conv_attention(image, ca.kernel, ca.alpha, ca.pad_keys, cancel);
  const ConvErrors e = conv_errors(mhsa, conv, ca.kernel.size);
  ca.input = image.cast<float>();
  ca.mhsa = mhsa.cast<float>();
  ca.conv = conv.cast<float>();
  ca.difference = (mhsa - conv).cast<float>();
  ca.max_abs_interior = e.interior;
  ca.max_abs_border = e.border;
  ca.interior_cells = e.interior_cells;
  ca.border_cells = e.border_cells;
  ca.curve = conv_error_curve(image, ca.kernel, ca.pad_keys, default_conv_curve_alphas(), cancel);
  return ca;
}

}  // namespace attnscope
