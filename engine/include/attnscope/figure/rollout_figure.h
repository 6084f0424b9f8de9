// rollout_figure.h — the Rollout view's figure (the window's view, `export --what rollout`): for one query
// position i, one row per layer (from 0, the first, at the top) of the input tokens' shares, in two or
// three panels on one colour bar (one under the other when T ≥ L, else side by side):
//   attention   Ā_l[i, :]  the head mean of layer l (rollout.h; a layer without a softmax: |M| rows
//               normalised, named in the caption)
//   rollout     Ã_l[i, :]  the share of each input token in position i after layer l
//   flow        the maximum flow from each input token into position i after layer l, divided by the row's
//               sum (the paper's normalisation: AttentionFlow::share); only when the flow was computed
// Masked cells are drawn in the masked colour: in the attention panel the keys the layer's mask hides (after
// the query, outside a sliding window); in the rollout and flow panels the keys with no path of unmasked
// entries to the query (their rollout is exactly 0, rollout.h). CSV and .npy hold the same numbers as drawn
// ([panels, L, T]; masked cells as their value, 0), with "layer l" rows and the tokens as columns.
//
// Every query (`every_query`): the whole matrices of one layer l instead, [T, T] (rows the queries i,
// columns the input tokens j): Ā_l and Ã_l, masked as above cell by cell; no flow panel (the flow is into
// one position).
// A token set (analysis/token_set.h), its sum or mean:
//   queries S, one layer per row:  row l of each panel is Σ_{i∈S} X_l[i, :] (the query is then the set's, and
//                                  no flow panel: the flow is into one position); the set is named in each
//                                  panel's title, "rollout · Σ of 3 queries (2, 4, 5)"
//   queries S, every query:        one more row under each matrix, labelled with the set's name
//   keys S:                        one more column right of each panel, labelled with the set's name: the
//                                  share of those keys together (per layer, or per query)
// A reduced cell is masked when every cell it adds up is (its value is then exactly 0); CSV and .npy carry
// the extra row or column as drawn ([panels, L or T (+1), T (+1)]).
#pragma once
#include <filesystem>

#include "attnscope/analysis/rollout.h"
#include "attnscope/analysis/token_set.h"
#include "attnscope/figure/export.h"
#include "attnscope/model/attention_file.h"

namespace attnscope {

struct RolloutFigureInput {
  const model::AttentionStack* stack = nullptr;  // the labels, masks, layer kinds and source of the run
  const Rollout* rollout = nullptr;              // attention_rollout(*stack)
  const AttentionFlow* flow = nullptr;           // null: no flow panel; else it must hold every layer at `position`
  int position = 0;                              // the query i (unused with every_query or a set of queries)
  bool every_query = false;                      // every query of `layer`, [T, T] panels
  int layer = 0;                                 // with every_query: the layer l, from 0
  TokenSet set;                                  // a token set (inactive: none)
};

// Throws InputError naming what is wrong: a position outside [0, T), a layer outside [0, L) (every query), a
// set's token outside [0, T), a flow with every query or a set of queries, a rollout not of the stack's size, a flow
// without the position or a layer, a per-head colour scale (the figure has one bar), a CSV/npy/scale request
// the export cannot give.
void validate_rollout_figure(const RolloutFigureInput& in, const ExportRequest& request);
FigureSpec rollout_figure(const RolloutFigureInput& in, const ExportRequest& request);
std::string rollout_caption(const RolloutFigureInput& in, const FigureWords& words = {});
ExportArray rollout_array(const RolloutFigureInput& in, const FigureWords& words = {});
// PNG/SVG: the figure; CSV/.npy: rollout_array.
ExportedFile render_rollout(const RolloutFigureInput& in, const ExportRequest& request,
                            const TextRasterizer& text = default_text_rasterizer());
// check_export_path, render_rollout, then write_file_atomic.
ExportedFile export_rollout(const RolloutFigureInput& in, const ExportRequest& request, const std::filesystem::path& path,
                            const TextRasterizer& text = default_text_rasterizer());
// The flow's row index of `position` (−1 when the flow does not hold it) and whether it holds every layer.
int flow_position_index(const AttentionFlow& flow, int position);
bool flow_has_every_layer(const AttentionFlow& flow, int layers);
// Layer l's key j is masked for query i in its own attention (causal: j > i; a sliding window W: j ≤ i − W).
bool rollout_key_masked(const model::AttentionStack& stack, int layer, int query, int key);

}  // namespace attnscope
