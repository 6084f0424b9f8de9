// token_set.h — several tokens selected together as queries or as keys, and their attention summed or
// averaged (issue 38 item 5, BertViz issue 125): "where do these three query tokens look, together?",
// "how much attention do these two keys receive from each query?".
//
//   queries S: the reduced row   r[j] = Σ_{i∈S} A[i, j]   (mean: divided by |S|) over the keys j
//   keys S:    the reduced column c[i] = Σ_{j∈S} A[i, j]   (mean: divided by |S|) over the queries i
// A is whatever the view draws (probabilities, scores, a linear layer's matrix M). Masked scores (−inf)
// stay −inf in a sum or mean: the reduced cell is masked when any selected token's cell is. Tokens are
// numbered from 0, as everywhere.
#pragma once
#include <string>
#include <vector>

#include "attnscope/core/types.h"
#include "attnscope/scene/scene.h"

namespace attnscope {

// "3,5,7" → {3, 5, 7} (sorted, each once). Throws InputError naming `flag` and the form when it is not a
// comma-separated list of whole numbers ≥ 0; the range is checked against the input by check_token_set.
std::vector<int> parse_token_list(const std::string& text, const std::string& flag);

// Throws InputError when a token of the set is outside an input of `tokens` tokens ("--query-set: token 9 is
// outside this input of 6 tokens: valid tokens 0-5"), or when the set is empty while an axis is chosen.
void check_token_set(const TokenSet& set, int tokens, const std::string& flag);

// The reduced row (queries) of [T, T] `m`, [T] over its columns, or the reduced column (keys), [T] over its
// rows. An inactive set gives an empty vector.
std::vector<float> reduce_token_set(const Mat& m, const TokenSet& set);

// The strip's label in English, as a printf key of figure_word_keys(): "Σ of %d queries", "mean of %d keys"
// ("Σ of %d query" for one).
const char* token_set_label_key(const TokenSet& set);
// "2, 5, 7" (the first `most` tokens, then "…").
std::string token_set_list(const TokenSet& set, size_t most = 8);

}  // namespace attnscope
