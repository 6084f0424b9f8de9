// designed_heads.h — hand-built MHA weights whose heads each show one textbook pattern on any sentence.
//
// Random weights make every head look like noise. A designed layer instead gives each head one pattern
// that lectures talk about (Clark et al. 2019, "What does BERT look at?"; Xiao et al. 2023 on the
// attention sink; Olsson et al. 2022 on duplicate-token heads):
//   previous  row i attends to i − 1            next    row i attends to i + 1 (needs non-causal)
//   self      row i attends to i                first   every row attends to token 0 (attention sink)
//   punct     rows attend to punctuation (to token 0 when the sentence has none)
//   local     a window of ±2 around i           repeat  an earlier occurrence of the same word
//   broad     uniform over the allowed keys (the head averages the sentence)
//
// Sections: the designed embedding · position kernels · patterns · weights
//
// ---- The designed embedding X [T, C] (designed_embedding) --------------------------------------
// A designed scene does not use the random sample embedding (embeddings.h); it uses this one, so that
// every head can read positions and token features exactly. C ≥ 64; channel c of token p:
//   c = 2f, 2f+1 (f = 0 … 11)  cos(π·p / 2^f), sin(π·p / 2^f): clean sinusoids with wavelengths
//                              2, 4, …, 4096 tokens (one full period covers every offset −2048 … 2048)
//   c = 24                     1 (a constant, so keys can carry a bias)
//   c = 25                     1 if p is the first token, else 0
//   c = 26                     1 if the token is punctuation (tokenizer.h TokenKind::punctuation)
//   c = 27                     1 if this is the first occurrence of its lower-cased text in the sentence
//   c = 28 … C − 1             token identity: ±1, a deterministic function of (seed, lower-cased text)
// So the same word gets the same identity channels in every sentence, as the SPEC asks of embeddings.
//
// ---- Head layout (designed_weights) -------------------------------------------------------------
// Every head has d_k = 64 (designed_head_dim), so C = 64·H. All heads share one query map; the
// pattern lives in the keys, which is exactly what MHA → GQA/MQA mean-pooling averages (SPEC): heads
// that share a kv group end with the mean of their keys, i.e. the mean of their score functions.
//   query dims 0 … 23   ← position channels 0 … 23       query dim 24 ← the constant channel
//   query dims 25 … 60  ← identity channels 28 … 63       query dims 61 … 63 = 0
// The key block of a head is chosen so that, after the 1/√d_k scale, the score (logit) of key j
// for query i is:
//   previous, next, self   −8·κ_sharp(j − i − Δ)          Δ = −1, +1, 0
//   local                  −0.4·κ_window(j − i)
//   first                  10·[j = 0]
//   punct                  10·[j is punctuation] + 5·[j = 0]
//   repeat                 16·sim(i, j) + 6·[j is the first occurrence of its word]
//                          sim = (identity_i · identity_j)/36 over identity channels 28 … 63 (1 for the same word)
//   broad                  0
// with the position kernels (normalised so that κ(±1) = 1, κ(0) = 0, and κ(d) ≥ κ(±1) for every
// other offset |d| ≤ 2048):
//   κ_a(d) = Σ_f a_f·(1 − cos(π·d / 2^f)) / Σ_f a_f·(1 − cos(π / 2^f))
//   κ_sharp:  a_f = 2^f                       (grows about linearly in |d|: a Laplace-like peak)
//   κ_window: a_f = 4^f for f ≤ 6, 4^6·2^(f−6) after (grows like d² near 0: a Gaussian-like window)
// W_V and W_O are identity matrices [C, C]: head h passes on channels 64h … 64h+63 of X, mixed along
// its pattern. No biases.
//
// With scale_scores off (lesson 2) every logit above is √64 = 8 times larger.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/core/language.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/core/types.h"
#include "attnscope/attention/weights.h"

namespace attnscope {

// ---- the designed embedding ---------------------------------------------------------------------
inline constexpr int designed_head_dim = 64;          // d_k of every designed head
inline constexpr int designed_frequencies = 12;       // f = 0 … 11
inline constexpr int designed_channel_constant = 24;
inline constexpr int designed_channel_first = 25;
inline constexpr int designed_channel_punct = 26;
inline constexpr int designed_channel_first_occurrence = 27;
inline constexpr int designed_channel_identity = 28;  // first identity channel
inline constexpr int designed_identity_dims = 36;     // identity channels a head reads (28 … 63)
inline constexpr int designed_min_d_model = designed_channel_identity + designed_identity_dims;  // 64

// C = 64·H for a designed layer of H heads.
inline int designed_d_model(int heads) { return designed_head_dim * heads; }

// X  [T, C] as described above. Throws InputError when tokens is empty, d_model < 64, or there are
// more than limits::max_tokens tokens.
Mat designed_embedding(const std::vector<Token>& tokens, int d_model, uint64_t seed);

// κ_sharp(d) and κ_window(d) as defined above (exact, in double).
double designed_kernel_sharp(double offset);
double designed_kernel_window(double offset);

// ---- patterns -----------------------------------------------------------------------------------
enum class DesignedPattern { previous, next, self, first, punct, local, repeat, broad };

// Every pattern, in the order above.
const std::vector<DesignedPattern>& all_designed_patterns();
const char* to_string(DesignedPattern pattern);  // "previous", "next", …
// Throws InputError "unknown designed pattern 'x' (valid: previous, next, …)".
DesignedPattern parse_designed_pattern(std::string_view name);
// Each name in turn; throws InputError for an empty list, more than limits::max_heads names, or an
// unknown name (naming its position).
std::vector<DesignedPattern> parse_designed_patterns(const std::vector<std::string>& names);
// "previous,self, first" → {"previous", "self", "first"} (spaces trimmed), validated as above.
std::vector<std::string> split_designed_list(std::string_view comma_separated);

// Short names and one-sentence descriptions in English and Chinese, for labels and tooltips.
const LocalizedText& designed_pattern_label(DesignedPattern pattern);
const LocalizedText& designed_pattern_description(DesignedPattern pattern);
// The shortest name a head's caption can carry: in English the name `--designed` takes ("previous",
// "punct"), in Chinese two or three characters ("前一个", "标点").
const LocalizedText& designed_pattern_caption(DesignedPattern pattern);

// ---- weights ------------------------------------------------------------------------------------
// An MHA layer (G = H = patterns.size(), C = 64·H, d_k = 64) in the PyTorch nn.Linear layout
// (weights.h), head h showing patterns[h]. Convert it to GQA/MQA with convert_mha_to_grouped.
// Throws InputError for an empty list or more than limits::max_heads patterns.
AttentionWeights designed_weights(const std::vector<DesignedPattern>& patterns);

}  // namespace attnscope
