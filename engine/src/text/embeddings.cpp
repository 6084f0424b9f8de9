// embeddings.cpp — deterministic token vectors plus sinusoidal positions.
#include "attnscope/text/embeddings.h"

#include <cmath>

#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"

namespace attnscope {

Vec token_embedding(std::string_view token_text, int d_model, uint64_t seed) {
  // The stream depends on (seed, lower-cased text) only, never on the token's position or sentence.
  Rng rng(fnv1a64(lower_ascii(token_text)) ^ (seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull));
  const float bound = std::sqrt(3.0f);  // U(−√3, √3) has unit variance
  Vec e(d_model);
  for (int i = 0; i < d_model; ++i) e[i] = rng.uniform(-bound, bound);
  return e;
}

Mat sinusoidal_positions(int num_tokens, int d_model) {
  // PE[p, 2i] = sin(p / 10000^(2i/C)),  PE[p, 2i+1] = cos(p / 10000^(2i/C))  (Vaswani et al. 2017)
  Mat pe(num_tokens, d_model);
  for (int p = 0; p < num_tokens; ++p)
    for (int j = 0; j < d_model; ++j) {
      const int even = j - (j % 2);
      const double angle = p / std::pow(10000.0, double(even) / d_model);
      pe(p, j) = float(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  return pe;
}

Mat embed_tokens(const std::vector<Token>& tokens, int d_model, uint64_t seed, bool positions) {
  require(!tokens.empty(), "the text has no tokens: type at least one word, character or punctuation mark");
  require(d_model >= 1, "d_model must be at least 1, got " + std::to_string(d_model));
  Mat x = positions ? sinusoidal_positions(int(tokens.size()), d_model) : Mat(Mat::Zero(Eigen::Index(tokens.size()), d_model));
  for (size_t t = 0; t < tokens.size(); ++t) x.row(Eigen::Index(t)) += token_embedding(tokens[t].text, d_model, seed).transpose();
  return x;
}

}  // namespace attnscope
