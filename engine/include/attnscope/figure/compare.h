// compare.h — A/B comparison of two attention analyses (issue 23 item 4): the numbers and the figure.
//
//   Analysis A, Analysis B ──compare_analyses──► AbComparison (per-head JS drift, B − A, one locked range)
//        └──────────────── + AbComparison ──compare_figure──► FigureSpec (render_png / render_svg)
//
// Legend: H heads, T tokens, P_h [T, T] a head's probabilities.
//   drift[h]      mean over query rows of JS(P_A,h[i,·], P_B,h[i,·]) (head_stats.h mean_js_divergence), nats;
//                 a differential side's signed map enters as its weight distribution |A| / Σ|A| per row
//   difference[h] P_B,h − P_A,h, cell by cell; a cell masked in both (causal, key after the query) is −inf
//   locked        the one colour range of the side-by-side view: the union of A's and B's own ranges
//                 (auto_range of each head's probabilities, masked cells left out) made lockable, or the
//                 range a fixed 0–1 / locked scale names
//   difference_range  symmetric {−m, m}, m = max |B − A| over all heads ({−1, 1} when A = B)
// A and B compare head by head, so they need the same H and T; compare_analyses refuses others
// (compare_mismatch says what differs). Probabilities only: masked scores are −inf, so B − A of scores
// has no value where either is masked.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "attnscope/figure/export.h"

namespace attnscope {

// How A and B differ in shape: heads and tokens of each.
struct CompareShapes {
  int heads_a = 0, heads_b = 0, tokens_a = 0, tokens_b = 0;
  bool comparable() const { return heads_a == heads_b && tokens_a == tokens_b && heads_a > 0 && tokens_a > 0; }
};
CompareShapes compare_shapes(const AttentionAnalysis& a, const AttentionAnalysis& b);
// "A has 8 heads and 11 tokens, B has 4 heads and 11 tokens: compare A/B needs the same heads and tokens";
// empty when comparable.
std::string compare_mismatch(const CompareShapes& shapes);

struct AbComparison {
  int heads = 0, tokens = 0;
  std::vector<double> drift;     // [H] nats, in [0, ln 2]
  Tensor3 difference;            // [H, T, T] P_B − P_A (−inf where both are masked)
  ValueRange locked;             // the side-by-side view's one range
  ValueRange difference_range;   // symmetric
  bool same_tokens = true;       // A and B have the same token labels (else the axes show B's)
  // A token set (token_set.h; inactive: none): per head the set's reduced row (queries, over the keys) or column
  // (keys, over the queries) of B minus A's, [H] of [T]. The locked range includes A's and B's reduced rows (as
  // each side's heads export draws them), difference_range these differences.
  TokenSet token_set;
  std::vector<std::vector<float>> set_difference;
};

// Throws InputError (compare_mismatch) when H or T differ, or when either has no attention heads.
// `scale`: shared or per head → the union of A's and B's ranges; fixed → 0–1; locked → its range.
AbComparison compare_analyses(const Analysis& a, const Analysis& b, const ColorScale& scale = {},
                              const TokenSet& token_set = {});

enum class CompareView { side_by_side, difference };
const char* to_string(CompareView view);           // "side-by-side", "difference"
CompareView parse_compare_view(const std::string& text);  // those two; throws InputError naming them

struct CompareRequest {
  CompareView view = CompareView::side_by_side;
  ExportFormat format = ExportFormat::png;  // png or svg
  float scale = 1.0f;                       // 1–4
  Colormap colormap = Colormap::viridis;    // side by side (the difference is always diverging)
  ColorScale color_scale;                   // as compare_analyses takes it
  bool caption = true;
  std::string caption_note;                 // added to the caption (the window: top-1 next tokens)
  // Settings of A's and B's runs that their analyses do not carry (the window: the heads switched off), each a
  // caption piece added to that side's caption before they are compared: "A → B: + heads switched off: 0.0 (set to 0)".
  std::string a_setting, b_setting;
  FigureWords words;
  // Only queries and keys token_first..token_last (tokens from 0; −1: every token), as ExportRequest's:
  // the locked range, the drift and the difference's range stay those of the whole input.
  int token_first = -1, token_last = -1;
  // A token set (token_set.h): every panel gets its row under it (queries) or column after it (keys), as the
  // heads export draws it: A's and B's reduced rows on the locked range, and B's minus A's in the difference.
  // compare_analyses must have been given the same set.
  TokenSet token_set;
};

// Side by side: panels A·head 0, B·head 0, A·head 1, … in pairs (two pairs a row from H = 3 on), every
// one on the locked range; B's title carries the head's drift. Each panel is exactly the panel of A's or
// B's own export (export_figure, ExportWhat::heads) with the scale locked at `cmp.locked`.
// Difference: one panel per head, B − A on the diverging map over difference_range, titled with the drift.
// Caption: what differs between A's and B's export captions ("A → B: MHA → MQA · G=8 → G=1"), the scale.
FigureSpec compare_figure(const Analysis& a, const Analysis& b, const AbComparison& cmp, const CompareRequest& request);

// compare_analyses, compare_figure, then the format; export_compare_to_file checks the path first and
// writes atomically.
ExportedFile render_compare(const Analysis& a, const Analysis& b, const CompareRequest& request,
                            const TextRasterizer& text = default_text_rasterizer());
ExportedFile export_compare_to_file(const Analysis& a, const Analysis& b, const CompareRequest& request,
                                    const std::filesystem::path& path, const TextRasterizer& text = default_text_rasterizer());

}  // namespace attnscope
