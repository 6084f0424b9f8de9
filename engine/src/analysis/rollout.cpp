// rollout.cpp — attention rollout and attention flow (formulas and the reading of layers without a softmax in
// rollout.h). Sections: 1. the capacities Â_l and the rollout Ã_l; 2. one max-flow on the layered graph
// (Dinic); 3. attention_flow: the targets, their sub-graphs, the batches on every core.
#include "attnscope/analysis/rollout.h"

#include <algorithm>
#include <string>

#include "attnscope/core/error.h"

namespace attnscope {

namespace {

// ---- 1. Â_l and Ã_l ------------------------------------------------------------------------------------

// Ā_l [T, T] in double: the head mean of layer l's probabilities, or of a linear layer's |M| with each row
// divided by its sum.
MatD head_mean(const model::AttentionStack& stack, int layer) {
  const int T = stack.tokens;
  const int heads = stack.layer_heads(layer);
  MatD mean = MatD::Zero(T, T);
  const bool absolute = stack.linear_layer(layer);
  for (int h = 0; h < heads; ++h) {
    const auto map = stack.map(layer, h);  // [T, T]
    if (absolute) mean += map.cast<double>().cwiseAbs();
    else mean += map.cast<double>();
  }
  if (absolute) {
    for (int i = 0; i < T; ++i) {
      const double sum = mean.row(i).sum();
      if (sum > 0) mean.row(i) /= sum;
    }
  } else {
    mean /= double(heads);
  }
  return mean;
}

// Â = rows of (0.5·Ā + 0.5·I) divided by their sum. The diagonal keeps every row's sum ≥ 0.5.
MatD augmented(const MatD& mean) {
  MatD a = 0.5 * mean;
  a.diagonal().array() += 0.5;
  for (int i = 0; i < a.rows(); ++i) a.row(i) /= a.row(i).sum();
  return a;
}

bool lower_triangular(const MatD& a) {
  for (int i = 0; i < a.rows(); ++i)
    for (int j = i + 1; j < a.cols(); ++j)
      if (a(i, j) != 0) return false;
  return true;
}

void check_stack(const model::AttentionStack& stack) {
  const int L = stack.layers, T = stack.tokens;
  require(L >= 1 && T >= 1 && stack.heads >= 1,
          "attention rollout needs at least one layer, head and token (got " + std::to_string(L) + " layers, " +
              std::to_string(stack.heads) + " heads, " + std::to_string(T) + " tokens)");
  require(int64_t(stack.attentions.size()) == int64_t(L) * stack.heads * T * T,
          "the attention stack holds " + std::to_string(stack.attentions.size()) + " values, not L·H·T·T = " +
              std::to_string(int64_t(L) * stack.heads * T * T));
  for (int l = 0; l < L; ++l) {
    if (!stack.linear_layer(l)) continue;
    const size_t values = stack.linear_maps[size_t(l)].size();
    require(values > 0 && values % (size_t(T) * size_t(T)) == 0,
            "layer " + std::to_string(l) + " (" + stack.layer_kind[size_t(l)] + ") holds " + std::to_string(values) +
                " values, not a whole number of [T, T] = [" + std::to_string(T) + ", " + std::to_string(T) +
                "] matrices");
  }
}

// Â_0 … Â_l as the Rollout stores them (float [T, T] each), read in place.
using Capacities = std::vector<Eigen::Map<const Mat>>;

// ---- 2. one max-flow -------------------------------------------------------------------------------------

// The sub-graph of one (source j, target (l, i)) pair: levels 0 … l + 1, level k's nodes `nodes[k]` (token
// positions, ascending), and between levels k and k + 1 a dense block of capacities cap[k] [n_{k+1}, n_k]
// (rows the upper nodes, columns the lower) and the flow on each edge. Residual arcs of a node at level k:
// forward to level k + 1 (cap − flow), backward to level k − 1 (the flow on the edge into it).
// Dinic: breadth-first levels from the source over the residual arcs, then a blocking flow along arcs that
// go one level further, until the sink is out of reach. Every phase's augmenting paths are longer than the
// last's, so there are at most as many phases as nodes; on these graphs a few.
class LayeredMaxFlow {
 public:
  static constexpr double eps = 1e-12;  // a residual below this is saturated (capacities are ≤ 1)

  // capacities[k] = Â_k [T, T]. `nodes` as above; nodes[0] = {j}, nodes.back() = {i}.
  double run(const Capacities& capacities, const std::vector<std::vector<int>>& nodes) {
    levels_ = int(nodes.size());
    nodes_ = &nodes;
    cap_.resize(size_t(levels_ - 1));
    flow_.resize(size_t(levels_ - 1));
    for (int k = 0; k + 1 < levels_; ++k) {
      const auto& lower = nodes[size_t(k)];
      const auto& upper = nodes[size_t(k + 1)];
      MatD& c = cap_[size_t(k)];
      c.resize(Eigen::Index(upper.size()), Eigen::Index(lower.size()));
      for (size_t a = 0; a < upper.size(); ++a)
        for (size_t b = 0; b < lower.size(); ++b) c(Eigen::Index(a), Eigen::Index(b)) = double(capacities[size_t(k)](upper[a], lower[b]));
      flow_[size_t(k)].setZero(c.rows(), c.cols());
    }
    dist_.resize(size_t(levels_));
    arc_.resize(size_t(levels_));
    for (int k = 0; k < levels_; ++k) {
      dist_[size_t(k)].assign(nodes[size_t(k)].size(), -1);
      arc_[size_t(k)].assign(nodes[size_t(k)].size(), 0);
    }
    double total = 0;
    while (bfs()) {
      for (auto& a : arc_) std::fill(a.begin(), a.end(), 0);
      while (true) {
        const double pushed = push(0, 0, 1e300);
        if (pushed <= eps) break;
        total += pushed;
      }
    }
    return total;
  }

 private:
  int up_count(int k) const { return k + 1 < levels_ ? int((*nodes_)[size_t(k + 1)].size()) : 0; }
  int down_count(int k) const { return k > 0 ? int((*nodes_)[size_t(k - 1)].size()) : 0; }
  // Residual of arc `a` of node (k, u): a < up_count → forward to (k + 1, a); else backward to (k − 1, a − up).
  double residual(int k, int u, int a) const {
    const int up = up_count(k);
    if (a < up) return cap_[size_t(k)](a, u) - flow_[size_t(k)](a, u);
    return flow_[size_t(k - 1)](u, a - up);
  }

  bool bfs() {
    for (auto& d : dist_) std::fill(d.begin(), d.end(), -1);
    queue_.clear();
    dist_[0][0] = 0;
    queue_.push_back({0, 0});
    for (size_t head = 0; head < queue_.size(); ++head) {
      const auto [k, u] = queue_[head];
      const int up = up_count(k), arcs = up + down_count(k);
      for (int a = 0; a < arcs; ++a) {
        const int k2 = a < up ? k + 1 : k - 1, v = a < up ? a : a - up;
        if (dist_[size_t(k2)][size_t(v)] >= 0 || residual(k, u, a) <= eps) continue;
        dist_[size_t(k2)][size_t(v)] = dist_[size_t(k)][size_t(u)] + 1;
        queue_.push_back({k2, v});
      }
    }
    return dist_[size_t(levels_ - 1)][0] >= 0;
  }

  // Pushes up to `limit` from node (k, u) towards the sink along arcs one BFS level further; the amount pushed.
  double push(int k, int u, double limit) {
    if (k == levels_ - 1) return limit;  // the sink (the last level holds only it)
    const int up = up_count(k), arcs = up + down_count(k);
    int& a = arc_[size_t(k)][size_t(u)];
    for (; a < arcs; ++a) {
      const int k2 = a < up ? k + 1 : k - 1, v = a < up ? a : a - up;
      if (dist_[size_t(k2)][size_t(v)] != dist_[size_t(k)][size_t(u)] + 1) continue;
      const double r = residual(k, u, a);
      if (r <= eps) continue;
      const double pushed = push(k2, v, std::min(limit, r));
      if (pushed > eps) {
        if (a < up) flow_[size_t(k)](a, u) += pushed;
        else flow_[size_t(k - 1)](u, v) -= pushed;
        return pushed;
      }
    }
    return 0;
  }

  int levels_ = 0;
  const std::vector<std::vector<int>>* nodes_ = nullptr;
  std::vector<MatD> cap_, flow_;                  // [levels − 1] blocks [n_{k+1}, n_k]
  std::vector<std::vector<int>> dist_, arc_;      // [levels][n_k]
  std::vector<std::pair<int, int>> queue_;        // (level, index)
};

// Which positions at each level 0 … l + 1 reach position i after layer l along positive capacities.
std::vector<std::vector<char>> reaching(const Capacities& capacities, int layer, int position, int T) {
  std::vector<std::vector<char>> reach(size_t(layer + 2), std::vector<char>(size_t(T), 0));
  reach[size_t(layer + 1)][size_t(position)] = 1;
  for (int k = layer; k >= 0; --k)
    for (int f = 0; f < T; ++f) {
      if (!reach[size_t(k + 1)][size_t(f)]) continue;
      for (int t = 0; t < T; ++t)
        if (capacities[size_t(k)](f, t) > 0) reach[size_t(k)][size_t(t)] = 1;
    }
  return reach;
}

// The nodes on some path from input token j to the target: level 0 {j}, then the positions reached from the
// level below that also reach the target. Empty when the target is out of j's reach.
std::vector<std::vector<int>> path_nodes(const Capacities& capacities, const std::vector<std::vector<char>>& reach,
                                         int source, int T) {
  const int levels = int(reach.size());
  auto nodes = std::vector<std::vector<int>>(size_t(levels));
  nodes[0] = {source};
  for (int k = 0; k + 1 < levels; ++k) {
    for (int f = 0; f < T; ++f) {
      if (!reach[size_t(k + 1)][size_t(f)]) continue;
      for (int t : nodes[size_t(k)])
        if (capacities[size_t(k)](f, t) > 0) {
          nodes[size_t(k + 1)].push_back(f);
          break;
        }
    }
    if (nodes[size_t(k + 1)].empty()) return {};
  }
  return nodes;
}

}  // namespace

Rollout attention_rollout(const model::AttentionStack& stack, const RolloutOptions& options) {
  check_stack(stack);
  const int L = stack.layers, T = stack.tokens;
  Rollout r;
  r.layers = L;
  r.tokens = T;
  const size_t cells = size_t(T) * size_t(T);
  r.means.resize(size_t(L) * cells);
  r.capacities.resize(size_t(L) * cells);
  r.joint.resize(size_t(L) * cells);
  MatD joint;
  for (int l = 0; l < L; ++l) {
    check_cancel(options.cancel);
    r.absolute_layers.push_back(stack.linear_layer(l));
    const MatD mean = head_mean(stack, l);
    Eigen::Map<Mat>(r.means.data() + size_t(l) * cells, T, T) = mean.cast<float>();
    const MatD a = augmented(mean);
    // Ã_l = Â_l · Ã_{l−1}; when Â_l is lower triangular (a causal layer) the product skips its upper zeros.
    if (l == 0) joint = a;
    else if (lower_triangular(a)) joint = MatD(a.triangularView<Eigen::Lower>() * joint);
    else joint = MatD(a * joint);
    Eigen::Map<Mat>(r.capacities.data() + size_t(l) * cells, T, T) = a.cast<float>();
    Eigen::Map<Mat>(r.joint.data() + size_t(l) * cells, T, T) = joint.cast<float>();
    if (options.progress) options.progress(double(l + 1) / double(L));
  }
  return r;
}

AttentionFlow attention_flow(const Rollout& rollout, const FlowOptions& options) {
  const int L = rollout.layers, T = rollout.tokens;
  require(L >= 1 && T >= 1, "attention flow needs a rollout of at least one layer and one token");
  require(options.layer >= -1 && options.layer < L,
          "layer " + std::to_string(options.layer) + " does not exist: this model has " + std::to_string(L) +
              " layers (0–" + std::to_string(L - 1) + ", or −1 for every layer)");
  require(options.position >= -1 && options.position < T,
          "position " + std::to_string(options.position) + " does not exist: the input has " + std::to_string(T) +
              " tokens (0–" + std::to_string(T - 1) + ", or −1 for every position)");
  AttentionFlow out;
  out.tokens = T;
  for (int l = 0; l < L; ++l)
    if (options.layer < 0 || options.layer == l) out.layers.push_back(l);
  for (int i = 0; i < T; ++i)
    if (options.position < 0 || options.position == i) out.positions.push_back(i);
  const int last_layer = out.layers.back();
  Capacities capacities;
  for (int l = 0; l <= last_layer; ++l) capacities.push_back(rollout.capacity(l));

  // Target by target (a target's reach is (l + 2)·T flags, made when its turn comes), its input tokens in
  // batches on every core; cancel and progress between batches (OpenMP regions cannot throw). An input token
  // that cannot reach the target is left at 0.
  const int P = int(out.positions.size());
  const int targets = int(out.layers.size()) * P;
  out.flow.assign(size_t(targets) * size_t(T), 0.0f);
  const int batch = 64;
  for (int t = 0; t < targets; ++t) {
    check_cancel(options.cancel);
    const auto reach = reaching(capacities, out.layers[size_t(t / P)], out.positions[size_t(t % P)], T);
    std::vector<int> sources;
    for (int j = 0; j < T; ++j)
      if (reach[0][size_t(j)]) sources.push_back(j);
    const int n = int(sources.size());
    for (int begin = 0; begin < n; begin += batch) {
      check_cancel(options.cancel);
      const int end = std::min(n, begin + batch);
#pragma omp parallel
      {
        LayeredMaxFlow solver;
#pragma omp for schedule(dynamic, 1)
        for (int q = begin; q < end; ++q) {
          const int source = sources[size_t(q)];
          const auto nodes = path_nodes(capacities, reach, source, T);
          if (!nodes.empty()) out.flow[size_t(t) * size_t(T) + size_t(source)] = float(solver.run(capacities, nodes));
        }
      }
      if (options.progress && end < n) options.progress((double(t) + double(end) / double(n)) / double(targets));
    }
    if (options.progress) options.progress(double(t + 1) / double(targets));
  }

  out.share.resize(out.flow.size());
  for (int t = 0; t < targets; ++t) {
    double sum = 0;
    for (int j = 0; j < T; ++j) sum += out.flow[size_t(t) * size_t(T) + size_t(j)];
    for (int j = 0; j < T; ++j) {
      const size_t k = size_t(t) * size_t(T) + size_t(j);
      out.share[k] = sum > 0 ? float(out.flow[k] / sum) : 0.0f;
    }
  }
  return out;
}

}  // namespace attnscope
