// positions.h — how positions enter the scores (SPEC "Variants after GQA"): RoPE with its layouts and
// scalings, ALiBi's slopes, NoPE, and the Cordonnier relative-position scores; and the data of the
// Positions view (positions_profile).
//
// Legend: T tokens, H heads, d = d_k the rotated width (even), k < d/2 a pair, s the scaling factor,
// L the original ("trained") context.
//   RoPE      θ_k = base^(−2k/d); the pair (x_a, x_b) of token t turns by the angle t·θ_k:
//             x_a' = x_a·cos − x_b·sin, x_b' = x_b·cos + x_a·sin   (times YaRN's attention factor)
//             pairs: half (Llama, rotate_half): a = k, b = k + d/2; interleaved (GPT-J, DeepSeek): a = 2k, b = 2k + 1
//   linear    θ_k' = θ_k / s                        (position interpolation, Chen et al. 2023)
//   ntk       base' = base·s^(d/(d−2))               (NTK-aware, bloc97 2023; YaRN paper eq. 16)
//   yarn      θ_k' = θ_k/s·(1 − γ_k) + θ_k·γ_k, γ_k = 1 − clamp((k − low)/(high − low), 0, 1) over Hugging
//             Face's correction range [low, high] of β_fast = 32, β_slow = 1 at context L; cos and sin
//             × the attention factor (explicit, else mscale(s, mscale)/mscale(s, mscale_all_dim) when
//             both are given, else 0.1·ln s + 1)   (Peng et al. 2023, transformers' _compute_yarn_parameters)
//   ALiBi     score_h(i, j) += −m_h·(i − j), m_h = 2^(−8h/H), h = 1 … H for H a power of two; otherwise
//             the slopes of the closest power of two n < H, then every other slope of 2n (Press et al. 2022)
//   relpos    score_h(i, j) += λ·(−α_h((j − i − Δ_h)² − m_i)), the relpos settings' heads (relative_position.h)
//
// Sections: RoPE · ALiBi · one layer's encoding · the Positions view's data
#pragma once
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnscope/core/types.h"

namespace attnscope {

// How positions enter: sinusoidal vectors added to the token embeddings (SPEC "Tokens and sample
// embeddings", the default), not at all (NoPE), rotary q and k (RoPE), ALiBi's linear biases, or the
// Cordonnier relative-position scores (added to each head's scores). All but `absolute` leave the
// embeddings without positions. Scene settings (scene.h) name them.
enum class PositionScheme { absolute, nope, rope, alibi, relpos };
// RoPE's pairs: rotate-half (Llama: dimension k with k + d/2) or interleaved (GPT-J, DeepSeek: 2k with 2k + 1).
enum class RopeLayout { half, interleaved };
// RoPE's context scalings: linear (position interpolation), NTK-aware (a larger base), YaRN.
enum class RopeScaling { none, linear, ntk, yarn };

const char* to_string(PositionScheme scheme);  // "nope" | "rope" | "alibi" | "relpos"
const char* to_string(RopeLayout layout);      // "half" | "interleaved"
const char* to_string(RopeScaling scaling);    // "none" | "linear" | "ntk" | "yarn"
// Each throws InputError listing the valid names.
PositionScheme parse_position_scheme(const std::string& name);
RopeLayout parse_rope_layout(const std::string& name);
RopeScaling parse_rope_scaling(const std::string& name);

// ---- RoPE ---------------------------------------------------------------------------------------

inline constexpr double default_rope_base = 10000.0;

struct RopeParams {
  double base = default_rope_base;
  RopeLayout layout = RopeLayout::half;
  RopeScaling scaling = RopeScaling::none;
  double factor = 1;           // s (unused without a scaling)
  double original_context = 32;  // L
  double beta_fast = 32, beta_slow = 1;   // YaRN's correction range (Hugging Face's defaults)
  double mscale = 0, mscale_all_dim = 0;  // YaRN's attention-factor rule (0 = not given)
  double attention_factor = 0;            // YaRN: an explicit factor; 0 = from the mscale rule
};

// Throws InputError (what is valid) for an odd or non-positive rotated width d, a base ≤ 1 or not
// finite, a scaling with factor ≤ 1 or above 1e6 (without a scaling the factor is unused), an original
// context < 1.
// (A scene model's RopeParams: rope_params in analysis.h.)
void validate_rope(const RopeParams& params, int dim);

// θ_k = base^(−2k/d) for k < d/2, in double.
std::vector<double> rope_inv_freq(double base, int dim);
// The scaled frequencies θ_k' of params.scaling (θ_k when none).
std::vector<double> rope_scaled_inv_freq(const RopeParams& params, int dim);
// NTK-aware base: base·s^(d/(d−2)) (base itself for d ≤ 2).
double ntk_base(double base, double factor, int dim);
// YaRN: mscale(s, m) = 0.1·m·ln s + 1 for s > 1, else 1.
double yarn_mscale(double factor, double m = 1);
// YaRN's attention factor for params (1 unless the scaling is yarn): see the legend.
double rope_attention_factor(const RopeParams& params);
// Hugging Face's find_correction_range: [max(⌊dim(β_fast)⌋, 0), min(⌈dim(β_slow)⌉, d − 1)] with
// dim(r) = d·ln(L/(2πr)) / (2 ln base) (not rounded when truncate is false).
std::array<double, 2> yarn_correction_range(double base, int dim, double original_context, double beta_fast,
                                            double beta_slow, bool truncate = true);

// Hugging Face's float32 values, as the checkpoint path computes them (model/config.cpp, model/ops.cpp):
// base^(float(2k)/float(d)) rounded to float, then 1/that (and YaRN's blend) in float.
std::vector<float> rope_inv_freq_float32(double base, int dim);
std::vector<float> yarn_inv_freq_float32(double base, int dim, double factor, double original_context,
                                         double beta_fast, double beta_slow, bool truncate = true);

// cos and sin of t·θ_k times the attention factor, for tokens t = 0 … T − 1.
struct RopeTables {
  RopeLayout layout = RopeLayout::half;
  MatD cos, sin;  // [T, d/2]
};
RopeTables rope_tables(const std::vector<double>& inv_freq, double attention_factor, int tokens, RopeLayout layout);

// Rotates rows of x in place: row r of x is token row0 + r, each of its `heads` consecutive d-wide
// blocks turned pair by pair (x [rows, heads·d], d = 2·tables.cos.cols()).
void rope_rotate(Eigen::Ref<Mat> x, const RopeTables& tables, int row0, int heads = 1);
// Plain-loop oracle: the angle t·θ_k recomputed per element in double.
void rope_rotate_reference(Mat& x, const std::vector<double>& inv_freq, double attention_factor, RopeLayout layout);

// ---- ALiBi --------------------------------------------------------------------------------------

// m_h for h = 0 … H − 1 (the paper's h = 1 … H): see the legend. Throws InputError for H < 1.
std::vector<double> alibi_slopes(int heads);

// ---- relative positions on a sentence --------------------------------------------------------------

// One relative-position head's scores (Cordonnier et al.; SPEC "Optional mixed mode") for every query q
// and key k of T tokens, shifted per row so that the nearest key scores 0:
//   −α((k − q − Δ)² − min_k' (k' − q − Δ)²)   [T, T]; rows row0 … row0 + rows − 1 only when rows ≥ 0
// Mixed mode (relpos) and the relpos position scheme add λ times this to content scores; the shift only
// moves row q by a constant, which the softmax cancels, and keeps a huge α from pushing a whole row to −inf.
MatD relative_position_scores_1d(double alpha, double delta, int tokens, int row0 = 0, int rows = -1);

// ---- one layer's encoding -------------------------------------------------------------------------

// What the attention routines need to put positions into the scores (grouped_attention.h). A scene
// model's: position_encoding in analysis.h.
struct PositionEncoding {
  PositionScheme scheme = PositionScheme::nope;
  RopeLayout rope_layout = RopeLayout::half;
  std::vector<double> rope_inv_freq;  // [d_k/2] θ_k' (scaled)
  double rope_attention_factor = 1;   // multiplies cos and sin
  std::vector<double> alibi_slopes;   // [H] m_h
  std::vector<double> relpos_alphas, relpos_deltas;  // [H] α_h, Δ_h of the relpos heads
  double relpos_lambda = 1;
};

// ---- the Positions view's data --------------------------------------------------------------------

// One curve over the distances 0 … max_distance.
struct DistanceCurve {
  std::string name;           // "none", "linear", "ntk", "yarn", "base 10000", …
  std::vector<double> value;  // [max_distance + 1]
};

// How a scheme shapes scores, for a model with H heads of width d_k.
//   RoPE: the score of q = k = all-ones (every pair (1, 1)) at distance δ = i − j,
//         score(δ) = a²·Σ_k 2·cos(δ·θ_k')  (a the attention factor; layout does not change it),
//         and RoFormer's bound (§3.4.3): (1/(d/2))·Σ_{j=1}^{d/2} |Σ_{k<j} e^{iδθ_k'}|.
//   ALiBi: each head's bias −m_h·δ.
struct PositionsProfile {
  PositionScheme scheme = PositionScheme::nope;
  int head_dim = 0;      // d_k
  int max_distance = 0;  // curves run over δ = 0 … max_distance
  // RoPE (empty otherwise)
  RopeParams rope;
  double attention_factor = 1;
  std::vector<double> theta, theta_scaled;            // [d/2] θ_k, θ_k' (radians per token)
  std::vector<double> wavelength, wavelength_scaled;  // [d/2] 2π/θ in tokens
  DistanceCurve decay;          // the chosen base and scaling
  DistanceCurve decay_bound;    // RoFormer's bound for the same
  DistanceCurve decay_default;  // base 10000, no scaling
  double comparison_factor = 0;           // the factor of decay_by_scaling: the chosen one, 4 when none is chosen
  std::vector<DistanceCurve> decay_by_scaling;  // none, linear, ntk, yarn at comparison_factor, the chosen base
  // ALiBi (empty otherwise)
  std::vector<double> alibi_slopes;       // [H]
  std::vector<DistanceCurve> alibi_bias;  // [H] −m_h·δ
};

// `rope` is used when scheme is rope, `heads` when it is alibi. Throws InputError for invalid settings
// (validate_rope) or max_distance outside 1 … limits::max_tokens. (A scene model's: analysis.h.)
PositionsProfile positions_profile(PositionScheme scheme, const RopeParams& rope, int heads, int head_dim,
                                   int max_distance);

// The distances a profile of T tokens shows: max(T − 1, 4·original_context), at most limits::max_tokens.
int positions_profile_distance(double original_context, int tokens);

// positions.json: every member of the profile by its name (curves as {"name", "value"}; scheme, layout and
// scaling by their scene names).
nlohmann::json positions_profile_json(const PositionsProfile& profile);

}  // namespace attnscope
