// embeddings.h — deterministic sample embeddings for tokens (SPEC "Tokens and sample embeddings").
//
// A token's vector depends only on (seed, lower-cased token text): the same word gets the same
// vector in every sentence. Values are uniform in [-√3, √3] (unit variance), drawn from Rng seeded
// by fnv1a64(lower-cased text) mixed with the seed. Sinusoidal positions (Vaswani et al. 2017) are
// added: PE[p, 2i] = sin(p / 10000^(2i/C)), PE[p, 2i+1] = cos(p / 10000^(2i/C)).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "attnscope/text/tokenizer.h"
#include "attnscope/core/types.h"

namespace attnscope {

// e  [C] the token vector (without position).
Vec token_embedding(std::string_view token_text, int d_model, uint64_t seed);

// PE  [T, C] sinusoidal position encodings.
Mat sinusoidal_positions(int num_tokens, int d_model);

// X  [T, C] token vectors plus positions (without them when `positions` is false: a scene model whose
// positions enter the scores instead, or not at all). Throws InputError when tokens is empty or d_model < 1.
Mat embed_tokens(const std::vector<Token>& tokens, int d_model, uint64_t seed, bool positions = true);

}  // namespace attnscope
