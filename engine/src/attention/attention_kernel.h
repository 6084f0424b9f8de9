// attention_kernel.h — (private) one head's scores, mask, softmax and weighted sum over a block of query rows,
// fused and register-blocked for the vector width of this CPU; shared by grouped_attention.cpp,
// latent_attention.cpp and differential_attention.cpp (through attend_head.h).
//
// Legend: T tokens, d_q the q·k width, d_v the value width, L floats per vector register (16 with AVX-512).
// The rows are taken in strips of strip_rows; per strip:
//   1. scores  S = Q·Kᵀ·scale for the keys any row of the strip sees: tiles of R rows × 2L keys, each key
//              panel read once for every tile of the strip (Kᵀ rows are contiguous over keys, so a tile
//              is R broadcasts and 2 loads per multiply–add step)
//   2. per row bias (ALiBi, relpos), mask (−inf), max, exp, sum and the normalisation, on the row
//              just written (still in L1)
//   3. weigh   O = P·V: tiles of R rows × up to 4L values, broadcasting P and loading rows of V
// Probabilities and scores are written for every row: a visualiser needs every head's map.
#pragma once
#include <functional>

#include "attnscope/attention/grouped_attention.h"

namespace attnscope::detail {

// Keys per score tile (two vector registers); Kᵀ is stored with its rows padded to a multiple of it.
int key_panel_width();
// Values per vector register.
int value_lane_width();

// The keys laid out for the score product: panels of key_panel_width() keys (the last one padded with
// zeros), each [d, key_panel_width()] and contiguous, so that a tile reads one short run per component
// (rows of a plain Kᵀ, a power-of-two apart, would fall into the same few L1 sets).
struct KeysT {
  Mat kt;  // [panels, d · key_panel_width()]
  int dim = 0;
  void resize(int T, int d);
  // Rows [r0, r0 + rows) of K, given row-major with stride ld (K[t, c] = k[t·ld + c]).
  void set_rows(const float* k, Eigen::Index ld, int r0, int rows);
};

// V [T, d_v] as the weighted sum reads it: row-major, the row stride a multiple of value_lane_width()
// (a padded copy only when d_v is not).
struct ValuesView {
  const float* v = nullptr;
  Eigen::Index ld = 0;
  int dv = 0;
};
struct PaddedValues {
  Mat padded;  // [T, d_v rounded up], used when d_v is not a multiple of the lane width
  ValuesView view;
  void resize(int T, int dv);  // view is set by set_rows or use_directly
  void set_rows(const float* v, Eigen::Index ld, int r0, int rows);
  // V itself when its width is a multiple of the lane width; otherwise the padded copy (filled by set_rows).
  static bool direct_ok(int dv);
};

// A weight matrix W [out, in] (PyTorch layout) packed for x·Wᵀ: panels of key_panel_width() output
// columns, each [in, width] contiguous (the last one padded with zeros). Packed once per call, in parallel
// over panels, it replaces the packing a general product does on every block of rows.
struct PackedWeights {
  Mat panels;  // [panel count, in · key_panel_width()]
  int out = 0, in = 0;
  void resize(const Mat& w);               // sizes for w, leaves the values unset
  void pack(const Mat& w, int p0, int p1);  // fills panels [p0, p1)
  int count() const { return int(panels.rows()); }
};
// out[r, (p − p0)·width + j] = Σ_k x[r, k]·W[p·width + j, k] for rows r < rows and panels p in [p0, p1)
// (width = key_panel_width()); x [rows, in] with stride ldx, out [rows, ≥ (p1 − p0)·width] with stride ldo.
void project_rows(const float* x, Eigen::Index ldx, int rows, const PackedWeights& w, int p0, int p1, float* out,
                  Eigen::Index ldo);

// What a row adds beyond Q·Kᵀ·scale and the mask. All optional.
struct RowHooks {
  // Adds the position bias of row i to its first `keys` scores (before the mask).
  std::function<void(int i, float* scores_row, int keys)> bias;
  // Row i's visible scores are not all finite (NaN, ±inf): fills scores row i, probs row i (and the sink
  // share) itself. Without it the row goes through softmax_rows' careful path.
  std::function<void(int i)> nonfinite;
  bool sink = false;           // the head's sink logit joins every row's denominator
  float sink_logit = 0;
  float* sink_share = nullptr;  // [T] written at rows [r0, r1) when sink
};

// Rows [r0, r1) of one head: scores = q·kᵀ·scale (+ bias), −inf where key j is not visible to query i
// (key_visible), probs = softmax over each row (+ sink), out = probs·v.
//   q [T, d_q] row-major with stride ldq; keys: Kᵀ of the head (KeysT); scores, probs [T, T] already sized;
//   values / out: out [T, ≥ d_v] with stride ldo, written at rows [r0, r1), columns [0, d_v); out null: no P·V.
void attend_block_fused(const float* q, Eigen::Index ldq, int dq, const KeysT& keys, const ValuesView& values, int r0,
                        int r1, float scale, const AttentionOptions& o, const RowHooks& hooks, Mat& scores, Mat& probs,
                        float* out, Eigen::Index ldo);

}  // namespace attnscope::detail
