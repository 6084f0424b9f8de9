// lens_export.h — the logit lens and the direct logit attribution of a pipeline Result (pipeline.h steps
// logit_lens, logit_attribution) as figures (PNG, SVG) and CSV: the same bytes for the Logit lens window's
// Save buttons and for `attnscope export --what lens|attribution`.
//
//   lens figure         L × T cells, each coloured by its top next token's probability (0–1) with the token in
//                       it; under it, as L × T grids with their numbers, KL(P_final ‖ P_l) in nats and the rank of
//                       the model's top-1 token in layer l's distribution (1 = its top; coloured by log10)
//   lens CSV            one row per (layer, position): the input token, the rank, the KL, the top-k ids, tokens
//                       and probabilities (every position; the position does not matter)
//   attribution figure  for the chosen position: L × H cells, head h of layer l's contribution to the target
//                       token's logit on a diverging scale symmetric about 0 (a layer without softmax heads:
//                       masked, "no heads"), and the other parts (embedding, positions, attention biases,
//                       mixers, MLPs, the final norm's bias) one per row on the same scale
//   attribution CSV     the chosen position's parts, one per row (position, target, part, kind, layer, head,
//                       value), then the logit they sum to
// Layers and heads from 0.
#pragma once
#include <filesystem>
#include <string>

#include "attnscope/figure/export.h"
#include "attnscope/pipeline/pipeline.h"

namespace attnscope {

struct LensExportRequest {
  bool attribution = false;  // false: the logit lens; true: the direct logit attribution
  int position = -1;         // the chosen position (−1: the last token)
  ExportFormat format = ExportFormat::png;  // png, svg or csv (.npy is refused: `compute --lens` writes the arrays)
  float scale = 1.0f;        // 1–4
  bool caption = true;
  FigureWords words;
};

// The position `position` stands for in `result` (−1: the last); InputError when it is outside 0 … T−1.
int lens_position(const pipeline::Result& result, int position);

// A token's label in the result's tokenizer ("#id" without one).
std::string lens_token_label(const pipeline::Result& result, int32_t id);

FigureSpec lens_figure(const pipeline::Result& result, const LensExportRequest& request);
FigureSpec attribution_figure(const pipeline::Result& result, const LensExportRequest& request);
std::string lens_csv(const pipeline::Result& result);
std::string attribution_csv(const pipeline::Result& result, int position);

// The file's content (InputError when the result has no lens or attribution, naming why; a bad position,
// format or scale).
ExportedFile render_lens_export(const pipeline::Result& result, const LensExportRequest& request);
// check_export_path, render_lens_export, then an atomic write.
ExportedFile export_lens_to_file(const pipeline::Result& result, const LensExportRequest& request,
                                 const std::filesystem::path& path);
// "attnscope-lens-20261129-141500.png", "attnscope-attribution-…".
std::string default_lens_file_name(const LensExportRequest& request, const std::string& stamp);

}  // namespace attnscope
