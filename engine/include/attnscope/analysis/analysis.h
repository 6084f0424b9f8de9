// analysis.h — the engine's answer to a Scene: every number the views and exports draw.
//
// analyse(scene, request) is the one entry point shared by the GUI worker, the CLI and the exporters.
// What it computes is an explicit AnalysisRequest; request_for(scene) builds the usual one from the
// scene's view and input, and is the only place where the view decides what is computed.
// An Analysis is immutable once made; views only read it. The head statistics (entropy, JS
// similarity, drift from MHA) are not part of it: callers that show them call attention_statistics().
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/relpos/conv_emulation.h"
#include "attnscope/core/error.h"
#include "attnscope/attention/differential_attention.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/attention/latent_attention.h"
#include "attnscope/attention/linear_layer.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/relpos/relative_position.h"
#include "attnscope/scene/scene.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/text/tokenizer_interface.h"
#include "attnscope/attention/trace.h"
#include "attnscope/attention/weights.h"

namespace attnscope {


struct AttentionAnalysis {
  // Empty when the input is a tensor. With a model's tokenizer (input.tokenizer_path) a token's text
  // is its label and its byte range indexes the tokenizer's decoded text (the tokens' bytes in order).
  std::vector<Token> tokens;
  std::vector<std::string> labels;  // [T] token labels (token_labels.h), or "0", "1", … for a tensor input
  // [T] the tokenizer's view: ids, vocabulary pieces, raw bytes, special flags (for hovers and
  // tokens.json). Ids are kNoTokenId with SPEC's word tokenizer; empty for a tensor input.
  Encoding encoding;
  Mat x;                            // [T, C]
  AttentionShape shape;             // effective C, H, G
  AttentionWeights weights;
  AttentionResult result;
  // What the scene's heads were computed with: mask (causal, window, sinks), sink logits, positions
  // (cancel cleared). Figures read window/sinks from here; statistics recompute MHA heads with it.
  AttentionOptions options;
  Trace trace;
  // Where the heads come from when it is not the scene's seeded layer: "gpt2 · layer 5 of 12" for a
  // checkpoint, "attentions.npy · layer 3 of 80" for a file (analysis/model_layer.h). Captions use it.
  std::string source_note;
  // A sliding-window layer (a checkpoint's model::ModelConfig::layer_window, or the scene's window):
  // query i sees keys i − window < j ≤ i, so figures mask the keys at or before i − window as well,
  // except the first `sinks` keys (StreamingLLM), which stay visible; 0 = no window.
  int window = 0;
  int sinks = 0;
  // The Positions view's data for the scene's model (positions_profile over positions_profile_distance
  // of its tokens); scheme nope and empty curves when positions are nope or the heads are a checkpoint's.
  PositionsProfile positions;
  // A multi-head latent attention layer (DeepSeek; empty otherwise): what every head's keys and values are
  // made from, and all the layer caches — the latent c_KV [T, kv_lora_rank] and the rotary key
  // [T, qk_rope_head_dim] (model::LayerDetail). The seeded layer's kind mla fills them too (result.c_kv,
  // result.k_rope) when it has a rotary part (rope_dim > 0).
  Mat shared_latent, shared_rope_key;
  // The seeded layer's variants after GQA: kind mla's weights (then `weights` is empty and the result
  // holds c_kv, c_q, k_rope) and differential attention's λ vectors and norm (empty otherwise).
  LatentShape latent_shape;
  LatentWeights latent_weights;
  DifferentialParams differential;
  // Heads without a softmax (ModelSettings::kind linear … gated_deltanet; linear_layer.h), when `linear`:
  // result.probs holds each head's explicit matrix M (signed), result.scores is empty, and linear_layer the
  // gates, the states and what each head ran on (its `attention` member is moved into result).
  bool linear = false;
  LinearLayerSpec linear_spec;
  LinearGates linear_gates;
  LinearLayerResult linear_layer;
};

// True when the analysis's maps are signed weights rather than probabilities: differential attention's
// A = P₁ − λ·P₂ and the explicit matrices of heads without a softmax. Views draw them on the diverging
// colormap over a range symmetric about 0.
bool signed_maps(const AttentionAnalysis& attention);
// What a signed map's values are, for colour bars and hovers: "differential weight" or "linear attention
// weight", "retention weight", "Mamba-2 weight", "DeltaNet weight", "Gated DeltaNet weight"; "probability"
// for softmax heads.
const char* map_value_word(const AttentionAnalysis& attention);
// The seeded layer's spec of a scene model without a softmax (ModelSettings::kind linear … gated_deltanet).
LinearLayerSpec linear_spec_of(const ModelSettings& model);

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

// What analyse() computes.
struct AnalysisRequest {
  bool attention = true;  // grouped attention, for a sentence or tensor input
  bool relpos = false;    // relative-position attention: the grid's, or 1D over a sentence's tokens
  bool conv = false;      // convolution as attention, grid input only (the α curve makes it the slowest)
  bool operator==(const AnalysisRequest&) const = default;
};

// The request a scene's view asks for:
//   sentence/tensor  attention; relpos too in the relpos1d view or in mixed mode
//   grid             relpos; conv too in the conv view
AnalysisRequest request_for(const Scene& scene);

struct Analysis {
  Scene scene;                                  // the settings this answers (normalise_scene applied)
  AnalysisRequest request;                      // what was asked for
  std::shared_ptr<const AttentionAnalysis> attention;  // request.attention on a sentence or tensor
  std::shared_ptr<const RelposAnalysis> relpos;        // request.relpos
  std::shared_ptr<const ConvAnalysis> conv;            // request.conv on a grid
};

// Throws InputError for invalid settings and Cancelled when *cancel becomes true.
// On a sentence, relpos without attention gives purely positional heads (any head count); mixed mode
// computes the content scores it needs. On a grid, `attention` is ignored.
Analysis analyse(const Scene& scene, const AnalysisRequest& request, const std::atomic<bool>* cancel = nullptr);
// analyse(scene, request_for(scene), cancel).
Analysis analyse(const Scene& scene, const std::atomic<bool>* cancel = nullptr);

// The head statistics of an attention analysis (head_stats.h); drift_from_mha too when the model's
// K/V were pooled from an MHA base (weights converted or designed, G < H), whose maps go to
// *mha_probs when given. Differential attention's signed maps A are described by their weight
// distribution |A| / Σ|A| per row (weight_distribution); its MHA base is differential too. `model` is the effective one (Analysis::scene.model).
// Throws Cancelled when *cancel becomes true.
HeadStats attention_statistics(const AttentionAnalysis& attention, const ModelSettings& model,
                               const std::atomic<bool>* cancel = nullptr, Tensor3* mha_probs = nullptr);

// Relative-position attention for a scene. Grid input: the grid of scene.input.grid (colour images
// keep RGB). Sentence/tensor input: 1D over the tokens of `attention` (required then), and in mixed
// mode scores = attention content scores + λ·positional scores, which needs relpos.heads equal to
// the model's heads. Throws InputError for invalid settings, Cancelled when *cancel becomes true.
RelposAnalysis analyse_relpos(const Scene& scene, const AttentionAnalysis* attention,
                              const std::atomic<bool>* cancel = nullptr);

// Convolution as attention on the scene's grid (scene.conv kernel and α, scene.relpos.pad_keys).
// Throws InputError for a non-grid input or invalid settings, Cancelled when *cancel becomes true.
ConvAnalysis analyse_conv(const Scene& scene, const std::atomic<bool>* cancel = nullptr);

// Kind mla: the latent shape of a (normalised) model — C, H, r_kv, r_q, d_R — and its rotary settings.
LatentShape latent_shape_of(const ModelSettings& model);
LatentRope latent_rope_of(const ModelSettings& model);
// ---- windows, sinks and positions of a scene model (attention/positions.h) --------------------------
// The RoPE settings of a scene model (checked by validate_rope).
RopeParams rope_params(const ModelSettings& model);
// The encoding of a scene model with H heads of width d_k; relpos takes one head per attention head
// from `relpos` (a 2D preset becomes the line of offsets; α and Δ lists must have H entries; λ ≥ 0).
// Throws InputError with what is valid.
PositionEncoding position_encoding(const ModelSettings& model, const RelposSettings& relpos, int heads, int head_dim);
// The Positions view's data for a scene model (H = effective_heads(model)), and the distances it shows
// for T tokens.
PositionsProfile positions_profile(const ModelSettings& model, int head_dim, int max_distance);
int positions_profile_distance(const ModelSettings& model, int tokens);

// Builds the weights a scene asks for (seeded, converted, loaded or designed) at `shape`.
AttentionWeights weights_for(const ModelSettings& model, const AttentionShape& shape);

// Tokens and X [T, C] for a text/tensor input; throws InputError on empty text, too many tokens,
// invalid UTF-8, a tokenizer file that cannot be read, or a tensor whose width differs from d_model.
// The text goes through input.tokenizer_path's tokenizer (with the special tokens its files add)
// or SPEC's word tokenizer; embeddings follow SPEC from each token's label.
// Sinusoidal positions are added to a text's embeddings unless `sinusoidal` is false (a model whose
// positions are RoPE, ALiBi, relative or none: ModelSettings::positions).
void prepare_input(const InputSettings& input, int d_model, uint64_t seed, std::vector<Token>& tokens,
                   std::vector<std::string>& labels, Mat& x, Encoding* encoding = nullptr, bool sinusoidal = true);

}  // namespace attnscope
