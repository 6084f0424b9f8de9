// rollout.h — attention rollout and attention flow (Abnar & Zuidema, "Quantifying Attention Flow in
// Transformers", ACL 2020): which input tokens feed each position of each layer, through all the layers
// below it. Input: one forward pass's attentions, model::AttentionStack [L, H, T, T] (what the Model view
// draws; an attentions file's stack too). Legend: L layers, H heads, T tokens, l a layer, i a position
// (query), j an input token.
//
//   Ā_l  = mean over heads of layer l's probabilities                                  [T, T]
//   Â_l  = rows of (0.5·Ā_l + 0.5·I) divided by their sum  (= (Ā_l + I)/(s_i + 1), s_i Ā_l's row sum:
//          0.5·Ā_l + 0.5·I itself when the rows sum to 1; gpt-oss's sinks take a share, and the
//          renormalising hands it to the residual)                                     [T, T]
//   rollout  Ã_l = Â_l · Â_{l−1} ··· Â_0           (row i: the share of each input token j in position
//                                                   i after layer l; every row sums to 1)
//   flow     the maximum flow from input token j to position i after layer l in the layered graph of
//            (l + 2)·T nodes — level 0 the input tokens, level k + 1 the positions after layer k — with an
//            edge (k, j') → (k + 1, i') of capacity Â_k[i', j'] (the paper's code: its edges point down,
//            which gives the same value). The paper then divides each position's flows by their sum: `share`.
// A masked key (causal, a sliding window) has Ā = 0 exactly, so every Ã entry with no path of unmasked
// entries from j to i is exactly 0 (products and sums of exact zeros), and so is its flow.
//
// Layers without a softmax (Qwen3-Next's Gated DeltaNet, Granite 4.0-H's Mamba-2: AttentionStack::
// linear_layer) have no probabilities, only each value head's signed matrix M with output = M·v. For them
// Ā_l is the head mean of |M| with each row divided by its sum (a row of zeros stays zero): the share of
// |M_ij|·v_j in position i when no two values cancel — a defensible reading (the magnitude with which
// token j's value enters position i, as the paper reads a probability), not a probability. Such layers are
// flagged in Rollout::absolute_layers so a view can say so; a model made only of softmax layers never is.
#pragma once
#include <atomic>
#include <functional>
#include <vector>

#include "attnscope/core/types.h"
#include "attnscope/model/attention_file.h"

namespace attnscope {

struct RolloutOptions {
  std::function<void(double)> progress;     // fraction of the layers done (increasing, the last call 1)
  const std::atomic<bool>* cancel = nullptr;  // checked between layers: a set flag throws Cancelled
};

struct Rollout {
  int layers = 0, tokens = 0;             // L, T
  std::vector<float> means;               // [L, T, T]  Ā_l: the head mean the rollout starts from
  std::vector<float> capacities;          // [L, T, T]  Â_l: the flow graph's edge capacities
  std::vector<float> joint;               // [L, T, T]  Ã_l
  std::vector<bool> absolute_layers;      // [L] layers read as |M| (no softmax; legend above)
  // Â_l and Ã_l: [T, T], rows are positions (queries), columns input tokens (keys).
  Eigen::Map<const Mat> mean(int layer) const {
    return {means.data() + int64_t(layer) * tokens * tokens, tokens, tokens};
  }
  Eigen::Map<const Mat> capacity(int layer) const {
    return {capacities.data() + int64_t(layer) * tokens * tokens, tokens, tokens};
  }
  Eigen::Map<const Mat> rollout(int layer) const {
    return {joint.data() + int64_t(layer) * tokens * tokens, tokens, tokens};
  }
};

// Â_l and Ã_l for every layer (double-precision products, stored as float). Throws InputError when the
// stack is empty or its attentions do not hold L·H·T·T values (or a linear layer's maps H_l·T·T);
// Cancelled when *cancel is set between layers.
Rollout attention_rollout(const model::AttentionStack& stack, const RolloutOptions& options = {});

struct FlowOptions {
  int layer = -1;     // the layer whose output positions receive the flow; −1: every layer
  int position = -1;  // the receiving position i; −1: every position
  // Fraction done: targets (layer, position) done, and within a target its input tokens' max-flows
  // (increasing, the last call 1).
  std::function<void(double)> progress;
  const std::atomic<bool>* cancel = nullptr;  // checked between batches of ≤ 64 max-flows: throws Cancelled
};

using FlowRow = Eigen::Matrix<float, 1, Eigen::Dynamic>;  // [T]

struct AttentionFlow {
  int tokens = 0;                 // T
  std::vector<int> layers;        // the layers computed, ascending
  std::vector<int> positions;     // the positions computed, ascending
  std::vector<float> flow;        // [layers.size(), positions.size(), T]: max flow from input token j
  std::vector<float> share;       // the same, each [T] row divided by its sum (the paper's normalisation)
  // Input tokens' flows into positions[p] after layers[a]: [T].
  Eigen::Map<const FlowRow> flows(int a, int p) const {
    return {flow.data() + (int64_t(a) * int64_t(positions.size()) + p) * tokens, tokens};
  }
  Eigen::Map<const FlowRow> shares(int a, int p) const {
    return {share.data() + (int64_t(a) * int64_t(positions.size()) + p) * tokens, tokens};
  }
};

// The maximum flows of the legend, one Dinic max-flow per (layer, position, input token) on the part of
// the graph that lies on some path from the input token to the position (with a causal mask: positions
// j … i at every level); input tokens with no path get 0 without one. Cost: for one position after
// layer l, T max-flows on at most (l + 1)·T² edges (bench/bench_rollout.cpp measures it); "every
// position" at most T times that (earlier positions have smaller graphs: ≈ T/4 times at T = 128), "every
// layer" about L/2 times. Runs on every core (OpenMP). Throws
// InputError for a layer outside [0, L) or a position outside [0, T); Cancelled when *cancel is set.
AttentionFlow attention_flow(const Rollout& rollout, const FlowOptions& options = {});

}  // namespace attnscope
