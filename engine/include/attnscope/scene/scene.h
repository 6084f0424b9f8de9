// scene.h — every setting that determines what attnscope shows.
//
// The GUI widgets and the command-line flags both just fill a Scene; the engine turns a Scene into
// an Analysis (analysis.h). A Scene reads and writes JSON (scene_json.h).
//
// Sections: input · model (grouped attention) · relative position · convolution · view
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/attention/positions.h"

namespace attnscope {

// ---- input ------------------------------------------------------------------------------------
enum class InputSource {
  text,    // a sentence, tokenized and embedded (SPEC "Tokens and sample embeddings")
  tensor,  // X.npy [T, C] from input.tensor_path
  grid,    // a 2D grid (procedural pattern or image), for relative-position attention
};

struct GridSettings {
  std::string pattern = "rings";  // checkerboard | gradient | rings | glyph | noise (grids.h)
  std::string image_path;         // a PNG/JPEG; when set it replaces the pattern
  int rows = 16;
  int cols = 16;
  uint64_t seed = 7;              // for the noise pattern
  bool operator==(const GridSettings&) const = default;
};

struct InputSettings {
  InputSource source = InputSource::text;
  std::string text = "The cat sat on the mat because it was tired.";
  std::string tensor_path;
  // A real model's tokenizer for `text` (a tokenizer.json, a vocab.json with merges.txt beside it, or a
  // model folder; text/tokenizer_interface.h); empty → SPEC's words/ideographs/punctuation.
  std::string tokenizer_path;
  GridSettings grid;
  bool operator==(const InputSettings&) const = default;
};

// ---- model: grouped attention -----------------------------------------------------------------
// mla: DeepSeek's multi-head latent attention (SPEC "Variants after GQA"): H heads, d_nope = d_v = C/H,
// shown as H K/V groups of one head each (G = H); the cache holds the latent c_KV and the rotary key.
// linear … gated_deltanet: heads without a softmax (attention/linear_layer.h; docs/math.md "Attention without a
// softmax"): every head its own keys and values (G = H), causal by nature, each drawn as its explicit T×T
// matrix, which is signed and whose rows do not sum to 1.
enum class AttentionKind { single, mha, mqa, gqa, mla, linear, retention, mamba2, deltanet, gated_deltanet };
// True for the kinds without a softmax (linear, retention, mamba2, deltanet, gated_deltanet).
inline bool is_linear_kind(AttentionKind k) { return k >= AttentionKind::linear; }
enum class WeightSource {
  converted,    // one MHA weight set per seed; MQA/GQA by mean-pooling K/V (default)
  independent,  // seeded random weights drawn directly at the grouped shape
  loaded,       // .npy files from model.weights_dir
  designed,     // hand-built MHA heads, one textbook pattern each (designed_heads.h); MQA/GQA by pooling
};

// Windows, sinks and positions: PositionScheme (nope, rope, alibi, relpos — relpos adds the scores of the
// relpos settings below to each head), RopeLayout (half, interleaved) and RopeScaling (none, linear, ntk,
// yarn) with their names are those of attention/positions.h.
struct ModelSettings {
  AttentionKind kind = AttentionKind::mha;
  int d_model = 64;  // C
  int heads = 8;     // H (single forces 1)
  int groups = 8;    // G (mha forces H; mqa and single force 1)
  bool causal = false;
  bool scale_scores = true;  // divide scores by √d_k
  uint64_t seed = 42;
  WeightSource weights = WeightSource::converted;
  std::string weights_dir;
  // Weight source `designed`: one pattern name per head (previous, next, self, first, punct, local,
  // repeat, broad). Then H = designed.size() (single forces 1), C = 64·H, and X is the designed
  // embedding of designed_heads.h; the input must be text.
  std::vector<std::string> designed;
  // Kind mla (latent_attention.h): r_kv the K/V latent's width (1 … C), r_q the query's (0 = no query
  // compression, else 1 … C), d_rope the decoupled rotary part of every head's q and k (even, ≤ C/H;
  // 0 = none). MLA weights are their own seeded set (weight sources converted/independent).
  int kv_rank = 16;
  int q_rank = 0;
  int rope_dim = 8;
  // Differential attention (differential_attention.h; Ye et al. 2025): each head is softmax(Q₁K₁ᵀ) −
  // λ·softmax(Q₂K₂ᵀ) with halves of width d = C/(2H); single, mha, mqa, gqa (not mla).
  bool differential = false;
  // Kinds without a softmax (linear_layer.h): linear divides each row by its normaliser (rows sum to 1) unless
  // linear_normalize is off; retention's decay γ is one value in (0, 1] for every head, or 0 for the per-head
  // schedule from 0.5 to 0.97.
  bool linear_normalize = true;
  double decay = 0;
  // ---- windows, sinks and positions (SPEC "Variants after GQA"; attention/positions.h) ----
  int window = 0;             // W: query i sees keys i − W < j ≤ i (implies the causal mask); 0 = none
  int sinks = 0;              // StreamingLLM: keys 0 … sinks − 1 stay visible to every later query (needs a window)
  bool sink_logits = false;   // gpt-oss: one seeded sink logit per head joins each row's softmax denominator
  PositionScheme positions = PositionScheme::absolute;
  double rope_base = 10000;   // θ: θ_k = base^(−2k/d_k)
  RopeLayout rope_layout = RopeLayout::half;
  RopeScaling rope_scaling = RopeScaling::none;
  double rope_factor = 1;     // the scaling's factor s (> 1 when a scaling is on)
  int rope_original_context = 32;  // the "trained" context NTK-aware and YaRN scale from
  bool operator==(const ModelSettings&) const = default;
};

// ---- relative position (SPEC "Relative-position quadratic attention") ---------------------------
struct RelposSettings {
  int heads = 9;
  double alpha = 1.0;                         // global α, used for heads without a per-head value
  std::vector<double> alphas;                 // per-head α (empty → all heads use `alpha`)
  std::vector<std::array<double, 2>> deltas;  // per-head Δ = (Δ_row, Δ_col); 1D uses [1] only
  std::string delta_preset = "conv3x3";       // conv3x3 | conv5x5 | line | random; used when deltas is empty
  uint64_t delta_seed = 1;                    // for the random preset
  bool pad_keys = false;                      // zero-valued padding cells as keys
  int query_row = -1, query_col = -1;         // grid query; −1 → centre
  int query_index = -1;                       // sentence query; −1 → centre
  bool mixed = false;                         // sentences: content scores + λ·positional scores
  double lambda = 1.0;
  bool operator==(const RelposSettings&) const = default;
};

// ---- convolution as attention ------------------------------------------------------------------
struct ConvSettings {
  std::string kernel = "gaussian";   // identity | box | gaussian | sobel_x | sobel_y | laplacian | sharpen | custom
  std::vector<double> custom;        // K² numbers, row-major, K = 3 or 5, when kernel == custom
  double alpha = 50.0;
  bool operator==(const ConvSettings&) const = default;
};

// ---- view ---------------------------------------------------------------------------------------
// What the main area shows. It also decides what analyse() computes — through request_for()
// (analysis.h), the one place that reads it for that.
enum class View { heads, shapes, relpos1d, relpos2d, conv, positions };

// How a heatmap's colours span its values (colour_scale.h computes the ranges):
//   shared    one range over every head of the grid (the data's min–max)
//   per_head  each head its own range, with a colour bar of its own
//   fixed     0–1, for probabilities only: a probability p sits at p on the colormap
//   locked    a range frozen by the user (ViewSettings::locked_lo/hi); values beyond it clamp to the ends
enum class ScaleMode { shared, per_head, fixed, locked };

// A token set (token_set.h): several tokens selected as queries or as keys, whose attention the views show
// summed or averaged beside every head. Cleared when the tokens change.
enum class TokenSetAxis { none, queries, keys };
enum class SetReduce { sum, mean };
struct TokenSet {
  TokenSetAxis axis = TokenSetAxis::none;
  std::vector<int> tokens;  // sorted, each once, from 0
  SetReduce reduce = SetReduce::sum;
  bool active() const { return axis != TokenSetAxis::none && !tokens.empty(); }
  bool operator==(const TokenSet&) const = default;
};

struct ViewSettings {
  View view = View::heads;
  std::string colormap = "viridis";  // viridis | magma | grayscale | diverging
  bool show_scores = false;          // raw scores instead of probabilities
  ScaleMode scale = ScaleMode::shared;  // how the colours span the values
  double locked_lo = 0, locked_hi = 1;  // the range of ScaleMode::locked (lo < hi)
  int selected_query = -1;           // highlighted query row; −1 → none
  TokenSet token_set;                // selected queries or keys, summed or averaged (token_set.h)
  bool operator==(const ViewSettings&) const = default;
};

struct Scene {
  InputSettings input;
  ModelSettings model;
  RelposSettings relpos;
  ConvSettings conv;
  ViewSettings view;
  bool operator==(const Scene&) const = default;
};

// The (H, G) a kind implies: single → (1, 1), mha → (H, H), mqa → (H, 1), gqa → (H, G).
int effective_heads(const ModelSettings& m);
int effective_groups(const ModelSettings& m);

// How H query heads sharing G K/V heads are called: "MHA" (G = H), "MQA" (G = 1 < H), else "GQA".
const char* grouping_name(int heads, int groups);

const char* to_string(AttentionKind kind);
const char* to_string(WeightSource source);
const char* to_string(InputSource source);
const char* to_string(View view);  // "heads" | "shapes" | "relpos1d" | "relpos2d" | "conv" | "positions"
const char* to_string(TokenSetAxis axis);  // "none" | "queries" | "keys"
const char* to_string(SetReduce reduce);   // "sum" | "mean"
const char* to_string(ScaleMode mode);  // "shared" | "per-head" | "fixed" | "locked"
// Each throws InputError listing the valid names.
AttentionKind parse_attention_kind(const std::string& name);
WeightSource parse_weight_source(const std::string& name);
InputSource parse_input_source(const std::string& name);
View parse_view(const std::string& name);
TokenSetAxis parse_token_set_axis(const std::string& name);  // "none" | "queries" | "keys"
SetReduce parse_set_reduce(const std::string& name);          // "sum" | "mean"
ScaleMode parse_scale_mode(const std::string& name);
// Every attention kind, in menu order.
inline constexpr AttentionKind all_attention_kinds[] = {
    AttentionKind::single,    AttentionKind::mha,    AttentionKind::mqa,      AttentionKind::gqa,
    AttentionKind::mla,       AttentionKind::linear, AttentionKind::retention, AttentionKind::mamba2,
    AttentionKind::deltanet,  AttentionKind::gated_deltanet};
// Every view, in menu order.
inline constexpr View all_views[] = {View::heads, View::shapes, View::positions, View::relpos1d, View::relpos2d, View::conv};

}  // namespace attnscope
