// qk_attribution.cpp — one head's score split into query-part × key-part contributions (qk_attribution.h).
// Each side is the forward pass's own chain (forward.cpp layer_forward / mla_layer_forward) with its norms'
// scales frozen at the actual position's values, applied to every part's row at once, in double.
//
// Sections: the residual parts · the frozen chain · the attribution
#include "attnscope/model/qk_attribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnscope/core/error.h"

namespace attnscope::model {

namespace {

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowD = Eigen::Matrix<double, 1, Eigen::Dynamic>;

// ---- the residual parts ----------------------------------------------------------------------------
// The parts of the stream layer `layer` reads, at positions i and j: rows [P, C] and their kinds.
struct ResidualParts {
  std::vector<QkPart> parts;
  std::vector<RowD> at_i, at_j;
  void add(QkPart p, RowD a, RowD b) {
    parts.push_back(p);
    at_i.push_back(std::move(a));
    at_j.push_back(std::move(b));
  }
};

ResidualParts residual_parts(const Model& model, const ForwardTrace& tr, int layer, int i, int j) {
  const ModelConfig& c = model.config;
  const ModelWeights& w = *model.weights;
  const int C = c.d_model, H = c.heads;
  ResidualParts out;
  out.add({QkPartKind::embedding, -1, -1}, tr.embedding.row(i).cast<double>(), tr.embedding.row(j).cast<double>());
  if (tr.positions.size())
    out.add({QkPartKind::positions, -1, -1}, tr.positions.row(i).cast<double>(), tr.positions.row(j).cast<double>());
  for (int l = 0; l < layer; ++l) {
    const LayerWeights& lw = w.layers[size_t(l)];
    const Mat& z = tr.head_input[size_t(l)];
    if (z.size() == 0) {  // a linear/mixer layer: one part
      out.add({QkPartKind::mixer, l, -1}, tr.block[size_t(l)].row(i).cast<double>(), tr.block[size_t(l)].row(j).cast<double>());
    } else {
      // head h at t: z_h,t·W_O,hᵀ (Gemma: ⊙ w_post / rms(raw_t), raw_t = z_t·W_Oᵀ + b_O) × the residual multiplier
      const MatD wo = lw.wo.to_mat().cast<double>();  // [C, W]
      const int W = int(wo.cols()), Dh = W / H;
      const auto scale_at = [&](int t) {  // [C] the per-element factor at position t
        RowD s = RowD::Constant(C, c.residual_scale);
        if (c.sandwich_norms) {
          RowD raw = z.row(t).cast<double>() * wo.transpose();
          if (lw.bo.size()) raw += lw.bo.transpose().cast<double>();
          const double inv = 1.0 / std::sqrt(raw.squaredNorm() / C + c.norm_eps);
          s = s.cwiseProduct(lw.post_attn_norm.transpose().cast<double>()) * inv;
        }
        return s;
      };
      const RowD si = scale_at(i), sj = scale_at(j);
      for (int h = 0; h < H; ++h) {
        const auto part = [&](int t, const RowD& s) {
          RowD v = z.row(t).segment(int64_t(h) * Dh, Dh).cast<double>() * wo.middleCols(int64_t(h) * Dh, Dh).transpose();
          return RowD(v.cwiseProduct(s));
        };
        out.add({QkPartKind::head, l, h}, part(i, si), part(j, sj));
      }
      if (lw.bo.size()) {
        const RowD b = lw.bo.transpose().cast<double>();
        out.add({QkPartKind::attention_bias, l, -1}, b.cwiseProduct(si), b.cwiseProduct(sj));
      }
    }
    out.add({QkPartKind::mlp, l, -1}, tr.mlp[size_t(l)].row(i).cast<double>(), tr.mlp[size_t(l)].row(j).cast<double>());
  }
  return out;
}

MatD stack(const std::vector<RowD>& rows, int cols) {
  MatD m(int64_t(rows.size()), cols);
  for (size_t r = 0; r < rows.size(); ++r) m.row(int64_t(r)) = rows[r];
  return m;
}

// ---- the frozen chain ------------------------------------------------------------------------------
// Rows [first, first + n) of W as double [n, cols].
MatD rows_of(const PackedMatrix& W, int64_t first, int64_t n) {
  MatD m(n, W.cols());
  std::vector<float> row(size_t(W.cols()));
  for (int64_t r = 0; r < n; ++r) {
    W.row(first + r, row.data());
    for (int64_t k = 0; k < W.cols(); ++k) m(r, k) = row[size_t(k)];
  }
  return m;
}

// An RMSNorm's frozen factor 1/√(mean(y²) + eps) of the actual vector y.
double rms_inverse(const RowD& y, double eps) { return 1.0 / std::sqrt(y.squaredNorm() / double(y.size()) + eps); }

// The layer's input norm with its scale frozen at x (the actual stream at the position), applied to the
// parts' rows P [P, C]: LayerNorm (P − mean)·w/σ, RMSNorm P·w/rms, none (OLMo 2) P. Also the actual norm(x).
MatD frozen_input_norm(const ModelConfig& c, const LayerWeights& lw, const RowD& x, const MatD& P, RowD& normed) {
  if (lw.norm1_weight.size() == 0) {
    normed = x;
    return P;
  }
  const RowD w = lw.norm1_weight.transpose().cast<double>();
  MatD out = P;
  RowD xc = x;
  if (c.norm == NormKind::layernorm) {
    xc.array() -= x.mean();
    out.colwise() -= P.rowwise().mean();
  }
  const double inv = rms_inverse(xc, c.norm_eps);
  out = (out.array().rowwise() * (w.array() * inv)).matrix();
  normed = xc.cwiseProduct(w) * inv;
  if (c.norm == NormKind::layernorm && lw.norm1_bias.size()) normed += lw.norm1_bias.transpose().cast<double>();
  return out;
}

// Rotate-half RoPE of rows [n, D] at position t (forward.cpp rope_half: the same float angles and factor).
void rope_half_rows(MatD& rows, int t, const RopeFrequencies& f) {
  const int half = int(f.inv_freq.size());
  for (int k = 0; k < half; ++k) {
    const float angle = float(t) * f.inv_freq[size_t(k)];
    const double cs = double(float(std::cos(double(angle))) * f.attention_factor);
    const double sn = double(float(std::sin(double(angle))) * f.attention_factor);
    for (int64_t r = 0; r < rows.rows(); ++r) {
      const double x1 = rows(r, k), x2 = rows(r, k + half);
      rows(r, k) = x1 * cs - x2 * sn;
      rows(r, k + half) = x2 * cs + x1 * sn;
    }
  }
}

// Interleaved RoPE of columns [offset, offset + 2·|inv_freq|) of rows [n, ·] at position t (forward.cpp
// rope_interleaved, MLA's rotary part).
void rope_interleaved_rows(MatD& rows, int t, int offset, const std::vector<float>& inv_freq, double factor) {
  for (size_t k = 0; k < inv_freq.size(); ++k) {
    const float angle = float(t) * inv_freq[k];
    const double cs = double(float(std::cos(double(angle)) * factor)), sn = double(float(std::sin(double(angle)) * factor));
    const int64_t a = offset + 2 * int64_t(k);
    for (int64_t r = 0; r < rows.rows(); ++r) {
      const double x1 = rows(r, a), x2 = rows(r, a + 1);
      rows(r, a) = x1 * cs - x2 * sn;
      rows(r, a + 1) = x2 * cs + x1 * sn;
    }
  }
}

// One side of a softmax layer (forward.cpp layer_forward): the parts' rows [P, C] at position t → the head's
// q (query) or its group's k (key) per part [P', D], the affine parts appended to `parts` (norm bias, q/k bias).
MatD standard_side(const Model& model, const QkCell& cell, int T, bool query, const MatD& P, std::vector<QkPart>& parts) {
  const ModelConfig& c = model.config;
  const LayerWeights& lw = model.weights->layers[size_t(cell.layer)];
  const KvWeights& kv = model.kv(cell.layer);
  const int H = c.heads, G = c.kv_heads, D = c.head_dim, t = query ? cell.query : cell.key;
  const int heads = query ? H : G, index = query ? cell.head : cell.head / (H / G);
  const PackedMatrix& W = query ? lw.wq : kv.wk;
  const Vec& bias = query ? lw.bq : kv.bk;
  const Vec& qk_norm = query ? lw.q_norm : lw.k_norm;
  RowD normed;
  MatD n = frozen_input_norm(c, lw, P.colwise().sum(), P, normed);
  if (c.norm == NormKind::layernorm && lw.norm1_weight.size() && lw.norm1_bias.size()) {
    n.conservativeResize(n.rows() + 1, Eigen::NoChange);
    n.row(n.rows() - 1) = lw.norm1_bias.transpose().cast<double>();
    parts.push_back({QkPartKind::norm_bias, cell.layer, -1});
  }
  const MatD wh = rows_of(W, int64_t(index) * D, D);  // [D, C]
  MatD y = n * wh.transpose();                          // [P', D]
  if (bias.size()) {
    y.conservativeResize(y.rows() + 1, Eigen::NoChange);
    y.row(y.rows() - 1) = bias.segment(int64_t(index) * D, D).transpose().cast<double>();
    parts.push_back({QkPartKind::projection_bias, cell.layer, -1});
  }
  if (c.qk_norm || c.qk_norm_whole) {
    // the actual projection at t (before the q/k norm): its head (Qwen3, Gemma 3) or all heads (OLMo 2)
    const int64_t first = c.qk_norm_whole ? 0 : int64_t(index) * D, width = c.qk_norm_whole ? int64_t(heads) * D : D;
    RowD actual = normed * rows_of(W, first, width).transpose();
    if (bias.size()) actual += bias.segment(first, width).transpose().cast<double>();
    const double inv = rms_inverse(actual, c.norm_eps);
    const RowD w = qk_norm.segment(c.qk_norm_whole ? int64_t(index) * D : 0, D).transpose().cast<double>();
    y = (y.array().rowwise() * (w.array() * inv)).matrix();
  }
  if (c.positions == PositionKind::rotary && !c.nope_layer(cell.layer)) rope_half_rows(y, t, c.layer_rope(cell.layer, T));
  if (query && c.query_scale_beta > 0 && t >= c.query_scale_length) {  // Ministral 3 (forward.cpp query_scale)
    const float steps = std::floor(float(t) / float(c.query_scale_length));
    y *= double(1.0f + float(c.query_scale_beta) * std::log(1.0f + steps));
  }
  return y;
}

// One side of an MLA layer (forward.cpp mla_layer_forward): q_h = [q_nope ; RoPE(q_pe)] through q_a, its
// frozen RMSNorm and q_b (or q_proj); k_h = [kv_b's key rows of h · frozenRMSNorm(c_KV) ; RoPE(k_pe)].
MatD mla_side(const Model& model, const QkCell& cell, bool query, const MatD& P) {
  const ModelConfig& c = model.config;
  const MlaConfig& m = c.mla;
  const LayerWeights& lw = model.weights->layers[size_t(cell.layer)];
  const int N = m.nope_dim, R = m.rope_dim, Dqk = c.head_dim, Dv = m.v_dim, r = m.kv_lora_rank;
  const int t = query ? cell.query : cell.key, h = cell.head;
  const double eps = MlaConfig::latent_norm_eps;
  const std::vector<float> inv_freq = m.inv_freq(c.rope_theta);
  RowD normed;
  const MatD n = frozen_input_norm(c, lw, P.colwise().sum(), P, normed);
  if (query) {
    MatD q;
    if (m.q_lora_rank) {
      const MatD qa = rows_of(lw.mla.q_a, 0, m.q_lora_rank);
      const MatD cq = n * qa.transpose();
      const double inv = rms_inverse(normed * qa.transpose(), eps);
      const RowD w = lw.mla.q_a_norm.transpose().cast<double>();
      q = (cq.array().rowwise() * (w.array() * inv)).matrix() * rows_of(lw.mla.q_b, int64_t(h) * Dqk, Dqk).transpose();
    } else {
      q = n * rows_of(lw.wq, int64_t(h) * Dqk, Dqk).transpose();
    }
    rope_interleaved_rows(q, t, N, inv_freq, m.attention_factor);
    return q;
  }
  const MatD kva = rows_of(lw.mla.kv_a, 0, r + R);
  const MatD ckv = n * kva.transpose();  // [P, r + R]
  const RowD actual = normed * kva.topRows(r).transpose();
  const double inv = rms_inverse(actual, eps);
  const RowD w = lw.mla.kv_a_norm.transpose().cast<double>();
  const MatD latent = (ckv.leftCols(r).array().rowwise() * (w.array() * inv)).matrix();
  MatD k(ckv.rows(), Dqk);
  k.leftCols(N) = latent * rows_of(lw.mla.kv_b, int64_t(h) * (N + Dv), N).transpose();
  MatD pe = ckv.rightCols(R);
  rope_interleaved_rows(pe, t, 0, inv_freq, m.attention_factor);
  k.rightCols(R) = pe;
  return k;
}

std::string range(int n) { return n > 0 ? "0 to " + std::to_string(n - 1) : "none"; }

}  // namespace

// ---- the attribution -------------------------------------------------------------------------------
std::string qk_part_label(const QkPart& p, bool query_side) {
  const std::string layer = "L" + std::to_string(p.layer);
  switch (p.kind) {
    case QkPartKind::embedding: return "embedding";
    case QkPartKind::positions: return "positions";
    case QkPartKind::head: return layer + ".H" + std::to_string(p.head) + " attn";
    case QkPartKind::attention_bias: return layer + " attn bias";
    case QkPartKind::mixer: return layer + " mixer";
    case QkPartKind::mlp: return layer + " MLP";
    case QkPartKind::norm_bias: return "norm bias";
    case QkPartKind::projection_bias: return query_side ? "q bias" : "k bias";
  }
  return "?";
}

std::vector<double> QkAttribution::query_marginal() const {
  std::vector<double> m(size_t(table.rows()));
  for (int64_t p = 0; p < table.rows(); ++p) m[size_t(p)] = table.row(p).cast<double>().sum();
  return m;
}

std::vector<double> QkAttribution::key_marginal() const {
  std::vector<double> m(size_t(table.cols()));
  for (int64_t r = 0; r < table.cols(); ++r) m[size_t(r)] = table.col(r).cast<double>().sum();
  return m;
}

std::vector<QkEntry> largest_entries(const QkAttribution& a, int n) {
  std::vector<QkEntry> all;
  for (int64_t p = 0; p < a.table.rows(); ++p)
    for (int64_t r = 0; r < a.table.cols(); ++r) all.push_back({int(p), int(r), double(a.table(p, r))});
  const size_t k = std::min(all.size(), size_t(std::max(n, 0)));
  std::partial_sort(all.begin(), all.begin() + int64_t(k), all.end(), [](const QkEntry& x, const QkEntry& y) {
    if (std::abs(x.value) != std::abs(y.value)) return std::abs(x.value) > std::abs(y.value);
    return x.query_part != y.query_part ? x.query_part < y.query_part : x.key_part < y.key_part;
  });
  all.resize(k);
  return all;
}

std::string qk_attribution_csv(const QkAttribution& a) {
  const auto number = [](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return std::string(buf);
  };
  std::string out = "query part \\ key part";
  for (const QkPart& p : a.key_parts) out += "," + qk_part_label(p, false);
  out += ",total\n";
  const std::vector<double> rows = a.query_marginal(), cols = a.key_marginal();
  for (int64_t p = 0; p < a.table.rows(); ++p) {
    out += qk_part_label(a.query_parts[size_t(p)], true);
    for (int64_t r = 0; r < a.table.cols(); ++r) out += "," + number(a.table(p, r));
    out += "," + number(rows[size_t(p)]) + "\n";
  }
  out += "total";
  for (double v : cols) out += "," + number(v);
  out += "," + number(a.sum()) + "\n";
  return out;
}

void check_qk_cell(const ModelConfig& c, const std::vector<LayerMaps>& maps, int T, const QkCell& cell) {
  require(cell.layer >= 0 && cell.layer < c.layers,
          "layer " + std::to_string(cell.layer) + " is outside the model: its layers are " + range(c.layers));
  if (c.is_linear_layer(cell.layer)) {
    const std::string kind = size_t(cell.layer) < maps.size() && !maps[size_t(cell.layer)].kind.empty()
                                 ? maps[size_t(cell.layer)].kind
                                 : "linear/mixer";
    throw InputError("layer " + std::to_string(cell.layer) + " is a " + kind +
                     " layer: it has no softmax scores to attribute (choose a softmax-attention layer)");
  }
  require(cell.head >= 0 && cell.head < c.heads,
          "head " + std::to_string(cell.head) + " is outside layer " + std::to_string(cell.layer) + ": its heads are " +
              range(c.heads));
  require(cell.query >= 0 && cell.query < T,
          "query " + std::to_string(cell.query) + " is outside the input: its positions are " + range(T));
  const int window = c.layer_window.empty() ? 0 : c.layer_window[size_t(cell.layer)];
  const int lo = window > 0 ? std::max(0, cell.query - window + 1) : 0;
  require(cell.key >= lo && cell.key <= cell.query && cell.key < T,
          "key " + std::to_string(cell.key) + " is not seen by query " + std::to_string(cell.query) +
              " in layer " + std::to_string(cell.layer) + ": it sees keys " + std::to_string(lo) + " to " +
              std::to_string(cell.query) + (window > 0 ? " (a sliding window of " + std::to_string(window) + ")" : " (causal)"));
}

ForwardOptions qk_forward_options(int layer, ForwardOptions options) {
  options.taps.parts = true;
  options.detail_layer = layer;
  return options;
}

QkAttribution qk_attribution(const Model& model, const ForwardResult& r, const QkCell& cell) {
  const ModelConfig& c = model.config;
  check_qk_cell(c, r.layer_maps, r.tokens, cell);
  require(int(r.trace.block.size()) == r.layers && r.trace.embedding.rows() == r.tokens && r.detail &&
              r.detail->layer == cell.layer,
          "the QK attribution needs the forward pass's parts and layer " + std::to_string(cell.layer) +
              "'s detail (qk_forward_options)");
  const LayerDetail& d = *r.detail;
  const int T = r.tokens, C = c.d_model, H = c.heads;
  QkAttribution out;
  out.cell = cell;
  const ResidualParts rp = residual_parts(model, r.trace, cell.layer, cell.query, cell.key);
  const MatD Pi = stack(rp.at_i, C), Pj = stack(rp.at_j, C);
  out.query_parts = out.key_parts = rp.parts;
  MatD q, k;
  double scale = c.attn_scale;
  if (c.is_mla()) {
    q = mla_side(model, cell, true, Pi);
    k = mla_side(model, cell, false, Pj);
    scale = c.mla.softmax_scale;
  } else {
    q = standard_side(model, cell, T, true, Pi, out.query_parts);
    k = standard_side(model, cell, T, false, Pj, out.key_parts);
  }
  out.table = (q * k.transpose() * scale).cast<float>();
  out.query_vectors = Mat::Zero(int64_t(out.query_parts.size()), C);
  out.key_vectors = Mat::Zero(int64_t(out.key_parts.size()), C);
  out.query_vectors.topRows(Pi.rows()) = Pi.cast<float>();
  out.key_vectors.topRows(Pj.rows()) = Pj.cast<float>();
  // The forward's own score: its q and k after the rotary positions (MLA: one key per head).
  const int g = cell.head / (H / int(d.k.size()));
  out.score = float(double(d.q[size_t(cell.head)].row(cell.query).cast<double>().dot(
                        d.k[size_t(g)].row(cell.key).cast<double>())) * scale);
  out.before_softcap = c.attn_softcap > 0 && !c.is_mla();
  out.drawn = out.before_softcap ? float(std::tanh(double(out.score) / c.attn_softcap) * c.attn_softcap) : out.score;
  return out;
}

}  // namespace attnscope::model
