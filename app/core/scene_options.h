// scene_options.h — the command-line flags that fill a Scene, shared by every subcommand and by the
// window's scripted mode. Flags only override what they name: the base is the default Scene, or the
// file given with --scene.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "attnscope/scene/scene.h"

namespace attnscope::cli {

enum SceneFlagGroup : unsigned {
  flags_input = 1u << 0,   // --text --input --scene --tokenizer
  flags_model = 1u << 1,   // --kind --d-model --heads --groups --causal --no-scale --seed --weights --weight-source --designed
                           // --kv-rank --q-rank --rope-dim --differential
                           // --window --sinks --sink-logits --positions --rope-base --rope-layout --rope-scaling --rope-context
  flags_relpos = 1u << 2,  // --grid --pattern --image --alpha --alphas --deltas --delta-preset --query --pad-keys --mixed --lambda
  flags_conv = 1u << 3,    // --kernel (and the grid/alpha flags of relpos)
  flags_view = 1u << 4,    // --colormap --scores --per-head-scale --scale-mode --scale-range --view
  flags_all = 0xFFu,
};

// Raw flag values, kept as typed so that build_scene can validate them with clear messages.
struct SceneOptions {
  std::string scene_file, text, input, tokenizer, kind, weight_source, weights_dir, designed;
  int d_model = 0, heads = 0, groups = 0;
  int kv_rank = 0, q_rank = 0, rope_dim = 0;  // --kind mla
  bool differential = false;
  double decay = 0;            // --kind retention: --decay γ
  bool no_normalizer = false;  // --kind linear: --no-normalizer
  std::string seed;  // checked by build_scene: a whole number 0 … 2^64−1 (CLI11 would wrap "-1")
  bool causal = false, no_scale = false;
  // windows, sinks and positions (kept as text or typed, checked by build_scene)
  int window = 0, sinks = 0, rope_context = 0;
  bool sink_logits = false;
  double rope_base = 0;
  std::string positions, rope_layout, rope_scaling;
  std::string grid, pattern, image, alphas, deltas, delta_preset, query, kernel;
  double alpha = 0, lambda = 0;
  bool pad_keys = false, mixed = false;
  std::string colormap, view, scale_mode, scale_range;
  bool scores = false, per_head_scale = false;
  unsigned groups_added = 0;
  CLI::App* app = nullptr;  // where the flags were added, to ask which were given
};

void add_scene_options(CLI::App& app, SceneOptions& options, unsigned groups);

// True when `flag` was given on the command line parsed by `app` (false for a flag it lacks).
bool flag_given(const CLI::App* app, const char* flag);

// What the relpos-like commands (relpos, export --what relpos) infer from the flags: a sentence
// starts from the `line` offsets (the scene's default preset is 2D), and without --heads H follows
// the --deltas, a conv preset (9 or 25), the --alphas, or the model's heads in mixed mode.
// Also sets the view to relpos1d/relpos2d (what the command draws).
void apply_relpos_defaults(Scene& scene, const SceneOptions& options);

// True when the flags name an input (--text --input --grid --pattern --image --scene), or an offset
// preset (--delta-preset --deltas --scene).
bool input_given(const SceneOptions& options);
bool preset_given(const SceneOptions& options);

// The window's starting scene: build_scene, then adapted to its view (scene_rules.h) in what the flags
// left at its default — so `--view relpos2d` alone shows a grid.
Scene build_window_scene(const SceneOptions& options);

// Base scene (default or --scene file) with every given flag applied. Throws InputError for a
// value that cannot be valid (bad kind name, contradicting --groups, malformed lists, NaN α…).
Scene build_scene(const SceneOptions& options);

}  // namespace attnscope::cli
