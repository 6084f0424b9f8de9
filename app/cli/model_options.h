// model_options.h — the real-model flags of `compute` and `export` (issue 13), kept apart from the
// scene flags: a checkpoint or an attentions file replaces the seeded layer entirely.
//
//   compute --checkpoint DIR (--ids 1,2,3 | --text "…" [--no-special-tokens]) [--layer N] [--kv-heads G] --out OUT
//     OUT/attentions.npy [L,H,T,T], OUT/logits.npy [T,V], OUT/tokens.json {"ids", "labels", "next"}
//     (+ with --layer N: probs.npy scores.npy [H,T,T], q.npy [H,T,D], k.npy v.npy [G,T,D], output.npy [T,C],
//      and trace.json: the layer's steps with their shapes, its parameters and its cache or state)
//     A model with layers without a softmax (Qwen3-Next): their slots of attentions.npy hold zeros, their
//     signed matrices are in OUT/linear_maps.npy [L_linear,H_linear,T,T], and OUT/model.json's "layer_maps" gives
//     every layer's type, heads, file and linear_index; --layer N of such a layer writes matrix.npy [H,T,T],
//     head_out.npy, beta.npy decay.npy [H,T] instead of probs/scores (docs/real-models.md "Layers of two kinds").
//     With --ablate L.H,… [--ablate-mode zero|mean] every file is of the forward with those heads switched off,
//     and OUT/ablation.json holds the loss on the input before and after and each layer's attention change.
//   export  --checkpoint DIR (--ids | --text) --layer N --what heads|head:N … (--ablate likewise)
//   export  --attentions FILE.npy|.safetensors --tokens tokens.json [--config config.json] --layer N …
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/pooled_figure.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/pipeline/pipeline.h"
#include "cli/lens_options.h"
#include "core/scene_options.h"
#include "core/translations.h"

namespace attnscope::cli {

struct ModelOptions {
  std::string checkpoint, ids, attentions, tokens, config;
  int layer = -1;
  int kv_heads = 0;  // > 0: pool K/V to this many heads per layer first (SPEC's conversion)
  bool no_special_tokens = false;
  // Attention rollout and flow (compute: --rollout [--flow] [--position I]; export --what rollout: --position I
  // [--flow]). position −1: compute's flow into every position, export's query the last token.
  bool rollout = false, flow = false;
  int position = -1;
  // --ablate L.H,L.H [--ablate-mode zero|mean]: heads switched off in the checkpoint's forward (issue 38).
  std::string ablate, ablate_mode = "zero";
  // Long inputs (model/head_maps.h): --text-file F (the input text from a UTF-8 file), --long (attention per head on
  // demand, up to model::max_on_demand_tokens), compute's --head H (with --layer: head.npy [T,T]), export's
  // --pool max|mean and --pixels N (the overview of --what head:N or heads --layer L, or of --what model).
  std::string text_file;
  bool long_input = false;
  int head = -1;
  std::string pool = "max";
  int pixels = 1024;
  CLI::App* app = nullptr;
  LensOptions lens;  // compute --lens, export --what lens|attribution (lens_options.h)
};

// exporting: also --attentions/--tokens/--config (a file computed elsewhere).
void add_model_options(CLI::App& cmd, ModelOptions& options, bool exporting);

// True when --checkpoint or --attentions was given: the command works on a real model.
bool wants_model(const ModelOptions& options);
// Without a real model: refuses --ablate/--ablate-mode (they switch a checkpoint's heads off).
void refuse_ablation_without_checkpoint(const ModelOptions& options);
// Without --checkpoint: refuses --text-file, --long, --pool, --pixels (and compute's --head).
void refuse_long_without_checkpoint(const ModelOptions& options);

// compute --checkpoint and export --checkpoint/--attentions run one request of the engine's pipeline
// (attnscope/pipeline/pipeline.h), as the window's worker does: tokens once, the forward once.
// compute --checkpoint: runs the forward pass and writes the files above (trace.json's step names in
// `words`' language). Throws InputError before writing anything when an input is wrong.
void run_model_compute(const ModelOptions& options, const SceneOptions& scene, const std::string& out,
                       const Translations& words);

// export --checkpoint / --attentions: layer N of the model as an Analysis for the figure/array code.
std::shared_ptr<const Analysis> model_layer_for_export(const ModelOptions& options, const SceneOptions& scene);

// export --what model: every layer's attentions (the forward pass of --checkpoint, or the file of
// --attentions). Refuses --layer.
std::shared_ptr<const model::AttentionStack> model_stack_for_export(const ModelOptions& options, const SceneOptions& scene);

// export --what qk-attribution: the pipeline's step qk_attribution for head `head` of --layer at (query, key) over
// --checkpoint's input. Throws InputError naming the valid range for a bad index, a masked key or a linear layer.
pipeline::Result model_qk_attribution_for_export(const ModelOptions& options, const SceneOptions& scene, int head,
                                                 int query, int key);
// export --what rollout: the run of --checkpoint or --attentions with the rollout (and with --flow the flow into
// --position, every layer) made; its request's flow_position is the query drawn (--position, else the last token). Refuses --layer but with
// `every_query` (then checks it against the model's layers); throws InputError with the step's reason (e.g. the flow's
// token limit).
std::shared_ptr<const pipeline::Result> model_rollout_for_export(const ModelOptions& options, const SceneOptions& scene,
                                                                 bool every_query = false);
// export --what lens|attribution: the checkpoint's forward with both lens steps (--checkpoint only; refuses --layer).
pipeline::Result model_lens_for_export(const ModelOptions& options, const SceneOptions& scene);

// --long: the checkpoint's forward keeping q and k instead of the stack (pipeline Request::attention = on_demand).
// compute writes tokens.json and model.json (with "kept_bytes"), and with --layer L --head H head.npy [T, T] (no
// attentions.npy or logits.npy: their [L,H,T,T] and [T,V] are what long inputs avoid). Throws InputError before
// writing anything for a bad flag (--rollout, --lens, --ablate, --kv-heads are refused with --long).
void run_long_compute(const ModelOptions& options, const SceneOptions& scene, const std::string& out);
// export --long --what head:N --layer L: the run and head N of layer L pooled (--pool, --pixels); checks --layer,
// the head and --pixels against the model and the input.
struct LongExport {
  pipeline::Result result;
  model::PooledMap pooled;
};
LongExport model_long_for_export(const ModelOptions& options, const SceneOptions& scene, int head);
// export --long --what heads --layer L (layer ≥ 0) or --what model (layer −1): the run and every head of that layer
// (or of every layer) pooled, one map at a time (pooled_figure.h pool_heads). --pixels defaults to 1024 for heads and
// to default_model_pixels for the model when not given; the pooled values' total is checked before any map is made.
struct LongHeadsExport {
  pipeline::Result result;
  PooledHeadsInput pooled;
  int pixels = 0;  // the blocks a side asked for
};
LongHeadsExport model_long_heads_for_export(const ModelOptions& options, const SceneOptions& scene, bool model);

}  // namespace attnscope::cli
