// token_set.cpp — a token set's parsing, checks and reduced row or column (token_set.h).
#include "attnscope/analysis/token_set.h"

#include <algorithm>
#include <cmath>

#include "attnscope/core/error.h"

namespace attnscope {

std::vector<int> parse_token_list(const std::string& text, const std::string& flag) {
  const std::string form = flag + " takes token numbers from 0 separated by commas, e.g. 3,5,7; got '" + text + "'";
  std::vector<int> out;
  size_t start = 0;
  require(!text.empty(), form);
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    std::string part = text.substr(start, end - start);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    require(!part.empty() && part.size() <= 9 && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }),
            form);
    out.push_back(std::stoi(part));
    start = end + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void check_token_set(const TokenSet& set, int tokens, const std::string& flag) {
  if (set.axis == TokenSetAxis::none) return;
  require(!set.tokens.empty(), flag + " names no token");
  for (const int t : set.tokens)
    require(t >= 0 && t < tokens, flag + ": token " + std::to_string(t) + " is outside this input of " +
                                      std::to_string(tokens) + (tokens == 1 ? " token: the valid token is 0"
                                                                            : " tokens: valid tokens 0-" + std::to_string(tokens - 1)));
}

std::vector<float> reduce_token_set(const Mat& m, const TokenSet& set) {
  if (!set.active()) return {};
  const bool queries = set.axis == TokenSetAxis::queries;
  const Eigen::Index n = queries ? m.cols() : m.rows();
  std::vector<float> out(size_t(n), 0.0f);
  for (Eigen::Index k = 0; k < n; ++k) {
    double s = 0;  // in double: a sum of a few floats, rounded once
    for (const int t : set.tokens) s += double(queries ? m(t, k) : m(k, t));
    if (set.reduce == SetReduce::mean) s /= double(set.tokens.size());
    out[size_t(k)] = float(s);
  }
  return out;
}

const char* token_set_label_key(const TokenSet& set) {
  const bool queries = set.axis == TokenSetAxis::queries, one = set.tokens.size() == 1;
  if (set.reduce == SetReduce::mean) return queries ? (one ? "mean of %d query" : "mean of %d queries") : (one ? "mean of %d key" : "mean of %d keys");
  return queries ? (one ? "Σ of %d query" : "Σ of %d queries") : (one ? "Σ of %d key" : "Σ of %d keys");
}

std::string token_set_list(const TokenSet& set, size_t most) {
  std::string out;
  for (size_t i = 0; i < set.tokens.size() && i < most; ++i) out += (i ? ", " : "") + std::to_string(set.tokens[i]);
  if (set.tokens.size() > most) out += ", …";
  return out;
}

}  // namespace attnscope
