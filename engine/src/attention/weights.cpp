// weights.cpp — seeded Xavier weights, MHA → GQA/MQA mean-pooling, and loading from .npy.
#include "attnscope/attention/weights.h"

#include <cmath>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/io/npy.h"
#include "attnscope/core/rng.h"

namespace attnscope {
namespace fs = std::filesystem;

void validate_shape(const AttentionShape& s) {
  using std::to_string;
  require(s.d_model >= 1 && s.d_model <= limits::max_d_model,
          "d_model must be between 1 and " + to_string(limits::max_d_model) + ", got " + to_string(s.d_model));
  require(s.heads >= 1 && s.heads <= limits::max_heads,
          "heads must be between 1 and " + to_string(limits::max_heads) + ", got " + to_string(s.heads));
  if (s.d_model % s.heads != 0) {
    std::string valid;
    for (int h = 1; h <= std::min(s.d_model, limits::max_heads); ++h)
      if (s.d_model % h == 0) valid += (valid.empty() ? "" : ", ") + to_string(h);
    throw InputError("heads must divide d_model: " + to_string(s.d_model) + " / " + to_string(s.heads) +
                     " is not whole (valid heads for d_model " + to_string(s.d_model) + ": " + valid + ")");
  }
  require(s.groups >= 1, "groups (kv heads) must be at least 1, got " + to_string(s.groups));
  if (s.heads % s.groups != 0) {
    std::string valid;
    for (int g = 1; g <= s.heads; ++g)
      if (s.heads % g == 0) valid += (valid.empty() ? "" : ", ") + to_string(g);
    throw InputError("groups must divide heads: " + to_string(s.heads) + " heads cannot be split into " +
                     to_string(s.groups) + " equal kv groups (valid groups for " + to_string(s.heads) +
                     " heads: " + valid + ")");
  }
}

namespace {

// W ~ U(−b, b), b = √(6 / (fan_in + fan_out)), drawn row by row from one stream.
Mat xavier_uniform(int out, int in, Rng& rng) {
  const float bound = float(std::sqrt(6.0 / double(in + out)));
  Mat w(out, in);
  for (int i = 0; i < out; ++i)
    for (int j = 0; j < in; ++j) w(i, j) = rng.uniform(-bound, bound);
  return w;
}

// Rows [g·d_k, (g+1)·d_k) of the pooled matrix = mean of the rows of the group's heads.
Mat mean_pool_heads(const Mat& per_head, int heads, int groups, int head_dim) {
  const int per_group = heads / groups;
  Mat pooled = Mat::Zero(Eigen::Index(groups) * head_dim, per_head.cols());
  for (int h = 0; h < heads; ++h)
    pooled.middleRows(Eigen::Index(kv_group_of_head(h, heads, groups)) * head_dim, head_dim) +=
        per_head.middleRows(Eigen::Index(h) * head_dim, head_dim);
  pooled /= float(per_group);
  return pooled;
}

}  // namespace

AttentionWeights random_weights(const AttentionShape& shape, uint64_t seed) {
  validate_shape(shape);
  const int c = shape.d_model, dk = shape.head_dim(), hd = shape.heads * dk, gd = shape.groups * dk;
  // One stream per matrix so that W_Q does not change when G changes.
  Rng rq(seed * 4 + 1), rk(seed * 4 + 2), rv(seed * 4 + 3), ro(seed * 4 + 4);
  AttentionWeights w;
  w.wq = xavier_uniform(hd, c, rq);
  w.wk = xavier_uniform(gd, c, rk);
  w.wv = xavier_uniform(gd, c, rv);
  w.wo = xavier_uniform(c, hd, ro);
  return w;
}

AttentionWeights convert_mha_to_grouped(const AttentionWeights& mha, int heads, int groups) {
  require(heads >= 1 && groups >= 1 && heads % groups == 0,
          "groups must divide heads: cannot pool " + std::to_string(heads) + " heads into " +
              std::to_string(groups) + " kv groups");
  require(mha.wk.rows() % heads == 0, "MHA base has " + std::to_string(mha.wk.rows()) +
                                          " K rows, not a multiple of " + std::to_string(heads) + " heads");
  const int dk = int(mha.wk.rows()) / heads;
  AttentionWeights out = mha;
  out.wk = mean_pool_heads(mha.wk, heads, groups, dk);
  out.wv = mean_pool_heads(mha.wv, heads, groups, dk);
  if (mha.bk.size()) out.bk = mean_pool_heads(Mat(mha.bk), heads, groups, dk).col(0);
  if (mha.bv.size()) out.bv = mean_pool_heads(Mat(mha.bv), heads, groups, dk).col(0);
  return out;
}

void validate_weights(const AttentionWeights& w, const AttentionShape& s) {
  validate_shape(s);
  const int64_t c = s.d_model, hd = int64_t(s.heads) * s.head_dim(), gd = int64_t(s.groups) * s.head_dim();
  auto check = [](const char* name, const Mat& m, int64_t rows, int64_t cols) {
    require(m.rows() == rows && m.cols() == cols,
            std::string(name) + " has shape [" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) +
                "] but [" + std::to_string(rows) + ", " + std::to_string(cols) +
                "] is needed (PyTorch nn.Linear layout [out, in])");
    require(all_finite(m), std::string(name) + " contains NaN or infinite values");
  };
  check("W_Q", w.wq, hd, c);
  check("W_K", w.wk, gd, c);
  check("W_V", w.wv, gd, c);
  check("W_O", w.wo, c, hd);
  auto check_bias = [](const char* name, const Vec& b, int64_t size) {
    require(b.size() == 0 || b.size() == size, std::string(name) + " has " + std::to_string(b.size()) +
                                                    " values but " + std::to_string(size) + " are needed");
    require(all_finite(b), std::string(name) + " contains NaN or infinite values");
  };
  check_bias("b_Q", w.bq, hd);
  check_bias("b_K", w.bk, gd);
  check_bias("b_V", w.bv, gd);
  check_bias("b_O", w.bo, c);
}

AttentionWeights load_weights(const fs::path& dir, const AttentionShape& s) {
  validate_shape(s);
  std::error_code ec;
  require(fs::is_directory(dir, ec), "weights folder '" + dir.string() + "' does not exist or is not a folder");
  const int64_t c = s.d_model, hd = int64_t(s.heads) * s.head_dim(), gd = int64_t(s.groups) * s.head_dim();
  auto need = [&](const char* file) {
    const fs::path p = dir / file;
    require(fs::exists(p, ec), "weights folder '" + dir.string() + "' has no " + file +
                                   " (needed: wq.npy, wk.npy, wv.npy, wo.npy; optional: bq, bk, bv, bo)");
    return p;
  };
  AttentionWeights w;
  w.wq = read_npy_matrix(need("wq.npy"), hd, c);
  w.wk = read_npy_matrix(need("wk.npy"), gd, c);
  w.wv = read_npy_matrix(need("wv.npy"), gd, c);
  w.wo = read_npy_matrix(need("wo.npy"), c, hd);
  const char* bias_files[] = {"bq.npy", "bk.npy", "bv.npy", "bo.npy"};
  int present = 0;
  for (const char* f : bias_files) present += fs::exists(dir / f, ec);
  require(present == 0 || present == 4, "weights folder '" + dir.string() + "' has " + std::to_string(present) +
                                            " of the 4 bias files: give all of bq, bk, bv, bo.npy or none");
  if (present == 4) {
    w.bq = read_npy_vector(dir / "bq.npy", hd);
    w.bk = read_npy_vector(dir / "bk.npy", gd);
    w.bv = read_npy_vector(dir / "bv.npy", gd);
    w.bo = read_npy_vector(dir / "bo.npy", c);
  }
  validate_weights(w, s);
  return w;
}

}  // namespace attnscope
