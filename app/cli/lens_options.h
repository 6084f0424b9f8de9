// lens_options.h — the logit lens and direct logit attribution flags of `compute --checkpoint` and of
// `export --what lens|attribution` (pipeline.h steps logit_lens, logit_attribution; core/lens_export.h).
//
//   compute --checkpoint DIR (--ids | --text) --lens [--lens-top-k K] [--attribute-token ID|TEXT]
//           [--attribute-position P] --out OUT
//     OUT/lens_top_probs.npy [L,T,K]  the top-K next-token probabilities after each layer (most probable first)
//     OUT/lens_kl.npy        [L,T]    KL(P_final ‖ P_layer) in nats
//     OUT/lens_rank.npy      [L,T]    the rank of the model's top-1 token in each layer's distribution (1 = its top)
//     OUT/lens.json                   the same top-K as ids, labels and probabilities, and the model's top-1 per position
//     OUT/attribution.npy    [P,T]    each part's contribution to the target token's logit at each position
//     OUT/attribution.json            the parts (label, kind, layer, head), the target per position, the logit they
//                                     sum to, and the chosen position's parts largest first
//   export  --checkpoint DIR (--ids | --text) --what lens|attribution [--lens-top-k K] [--attribute-token ID|TEXT]
//           [--attribute-position P] --format png|svg|csv --out FILE
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "attnscope/pipeline/pipeline.h"
#include "cli/output_files.h"

namespace attnscope::cli {

struct LensOptions {
  bool lens = false;        // compute: write the lens and the attribution
  int top_k = 5;            // --lens-top-k
  std::string token;        // --attribute-token: an id, or a text that is one token of the checkpoint's tokenizer
  int position = -1;        // --attribute-position (−1: the last token)
  CLI::App* app = nullptr;
};

// compute (exporting false) adds --lens; both add the other three.
void add_lens_options(CLI::App& cmd, LensOptions& options, bool exporting);
// compute: true when --lens or one of its flags was given.
bool lens_flags_given(const LensOptions& options);
// Checks the flags (InputError, exit 2) and asks `request` (a checkpoint's, tokens set) for both steps, its top-k
// and its target token (TEXT through the checkpoint's own tokenizer: exactly one token).
void apply_lens_options(const LensOptions& options, pipeline::Request& request);
// After the run: the steps' errors as InputError (a target outside the vocabulary, a position past the input).
void check_lens_result(const LensOptions& options, const pipeline::Result& result);
// compute --lens: the files above.
void write_lens_files(const LensOptions& options, const pipeline::Result& result, OutputFiles& files);
// One line per step for the terminal: what was written, the chosen position's target and its largest heads.
std::string lens_summary(const LensOptions& options, const pipeline::Result& result);

}  // namespace attnscope::cli
