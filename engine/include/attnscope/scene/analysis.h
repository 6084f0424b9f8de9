// analysis.h — the engine's answer to a Scene: every number the views and exports draw.
//
// analyse(scene) is the one entry point shared by the GUI worker, the CLI and the exporters.
// An Analysis is immutable once made; views only read it.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/relpos/conv_emulation.h"
#include "attnscope/core/error.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/relpos/relative_position.h"
#include "attnscope/scene/scene.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/attention/trace.h"
#include "attnscope/attention/weights.h"

namespace attnscope {


struct AttentionAnalysis {
  std::vector<Token> tokens;        // empty when the input is a tensor
  std::vector<std::string> labels;  // [T] token texts, or "0", "1", … for a tensor input
  Mat x;                            // [T, C]
  AttentionShape shape;             // effective C, H, G
  AttentionWeights weights;
  AttentionResult result;
  Trace trace;
  // Per-head entropy, distance, first-token mass, the [H, H] JS matrix (head_stats.h); drift_from_mha
  // is filled when an MHA base was pooled to G < H (weight source converted or designed).
  HeadStats stats;
  Tensor3 mha_probs;                // [H, T, T] the MHA base's maps when it was pooled to G < H; else empty
};

// Relative-position attention (relative_position.h) on the scene's grid or sentence.
// Legend: H relpos heads, N positions (R·C cells row-major, or T tokens), ch channels of X.
struct RelposAnalysis {
  int dims = 2;                     // 1: sentence (rows = 1, cols = T), 2: grid
  int rows = 1, cols = 1;           // R, C (sentence: 1, T)
  std::vector<RelposHead> heads;    // the α and Δ actually used, per head (presets resolved)
  RelposGeometry geometry;          // including the padding actually used (pad_keys)
  bool mixed = false;               // sentence scores = content + λ·positional
  double lambda = 1.0;
  int query = 0;                    // the query position (cell r·C + c, or token index)
  int query_row = 0, query_col = 0; // its coordinates (sentence: 0, index)
  Mat x;                            // [N, ch]  grid cells (ch = 1 gray, 3 RGB) or token vectors (ch = C)
  std::vector<std::string> labels;  // [T] token texts on a sentence; empty on a grid
  std::string input_note;           // the grid's description ("rings pattern, 16×16 cells", the resize sentence)
  Mat scores_query;                 // [H, N]  score_h(query, k) = v_h·r_δ (+ content scores in mixed mode)
  Mat probs_query;                  // [H, N]  P_h[query, k] over the real keys
  std::vector<double> padding_mass; // [H]  mass on padding keys for the query (0 without pad_keys)
  Tensor3 probs;                    // [H, N, N] when N ≤ relpos_full_probs_max_positions, else empty
  Tensor3 outputs;                  // [H, N, ch]  O_h[q] = Σ_k P_h[q,k]·X[k] for every query
  Mat combined;                     // [R, C] (sentence: [1, T])  mean over heads of probs_query
};

// The full [H, N, N] tensor is kept only up to this many positions (32×32 grids, short texts).
inline constexpr int relpos_full_probs_max_positions = 1024;

// Convolution as attention (conv_emulation.h) on the scene's grid, as one gray channel.
struct ConvAnalysis {
  Kernel kernel;                    // name, K, weights [K, K]
  std::vector<RelposHead> heads;    // the K² heads (α = conv.alpha, Δ over {−⌊K/2⌋…⌊K/2⌋}² row-major)
  double alpha = 50;
  bool pad_keys = false;
  int rows = 0, cols = 0;           // R, C
  std::string input_note;           // the grid's description, including any resize
  Mat input;                        // [R, C]  the gray input (colour images: Rec. 601 luma)
  Mat mhsa;                         // [R, C]  Σ_h W_h·P_h·X
  Mat conv;                         // [R, C]  zero-padded cross-correlation
  Mat difference;                   // [R, C]  mhsa − conv
  double max_abs_interior = 0;      // over cells ⌊K/2⌋ or more from every edge
  double max_abs_border = 0;        // over the other cells
  int interior_cells = 0, border_cells = 0;
  std::vector<ConvCurvePoint> curve;  // error versus α, default_conv_curve_alphas()
};

struct Analysis {
  Scene scene;                                  // the settings this answers (effective H, G applied)
  std::shared_ptr<const AttentionAnalysis> attention;  // for text/tensor input
  // Grid input: always. Sentence/tensor input: when view.view == "relpos1d" or relpos.mixed.
  std::shared_ptr<const RelposAnalysis> relpos;
  // Grid input with view.view == "conv" (the α curve makes it the slowest view).
  std::shared_ptr<const ConvAnalysis> conv;
};

// Throws InputError for invalid settings and Cancelled when *cancel becomes true.
// head_statistics = false leaves AttentionAnalysis::stats and mha_probs empty (the window shows the
// heatmaps first and asks attention_statistics() for them afterwards).
Analysis analyse(const Scene& scene, const std::atomic<bool>* cancel = nullptr, bool head_statistics = true);

// The head statistics of an attention analysis (head_stats.h); drift_from_mha too when the model's
// K/V were pooled from an MHA base (weights converted or designed, G < H), whose maps go to
// *mha_probs when given. `model` is the effective one (Analysis::scene.model).
// Throws Cancelled when *cancel becomes true.
HeadStats attention_statistics(const AttentionAnalysis& attention, const ModelSettings& model,
                               const std::atomic<bool>* cancel = nullptr, Tensor3* mha_probs = nullptr);

// Relative-position attention for a scene. Grid input: the grid of scene.input.grid (colour images
// keep RGB). Sentence/tensor input: 1D over the tokens of `attention` (required then), and in mixed
// mode scores = attention content scores + λ·positional scores, which needs relpos.heads equal to
// the model's heads. Throws InputError for invalid settings, Cancelled when *cancel becomes true.
RelposAnalysis analyse_relpos(const Scene& scene, const AttentionAnalysis* attention,
                              const std::atomic<bool>* cancel = nullptr);

// Relative-position attention without grouped attention: the grid, or the sentence's tokens and their
// vectors (any head count works, as no attention weights are made); mixed mode, which needs the
// content scores, goes through analyse(). What `attnscope relpos` and `export --what relpos` compute.
RelposAnalysis analyse_relpos_only(const Scene& scene, const std::atomic<bool>* cancel = nullptr);

// Convolution as attention on the scene's grid (scene.conv kernel and α, scene.relpos.pad_keys).
// Throws InputError for a non-grid input or invalid settings, Cancelled when *cancel becomes true.
ConvAnalysis analyse_conv(const Scene& scene, const std::atomic<bool>* cancel = nullptr);

// Builds the weights a scene asks for (seeded, converted, loaded or designed) at `shape`.
AttentionWeights weights_for(const ModelSettings& model, const AttentionShape& shape);

// Tokens and X [T, C] for a text/tensor input; throws InputError on empty text, too many tokens,
// invalid UTF-8, or a tensor whose width differs from d_model.
void prepare_input(const InputSettings& input, int d_model, uint64_t seed, std::vector<Token>& tokens,
                   std::vector<std::string>& labels, Mat& x);

}  // namespace attnscope
