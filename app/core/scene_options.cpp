#include "core/scene_options.h"

#include <cmath>

#include "attnscope/attention/designed_heads.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/core/parse_lists.h"
#include "attnscope/figure/color_scale.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/scene/scene_rules.h"

namespace attnscope::cli {

void add_scene_options(CLI::App& app, SceneOptions& o, unsigned groups) {
  o.app = &app;
  o.groups_added = groups;
  if (groups & flags_input) {
    app.add_option("--scene", o.scene_file, "Start from a scene JSON file; other flags override it");
    app.add_option("--text", o.text, "Input sentence (UTF-8)");
    app.add_option("--input", o.input, "Input tensor X.npy, float32 [T, C]");
    app.add_option("--tokenizer", o.tokenizer,
                   "A model's tokenizer for --text: tokenizer.json, vocab.json (merges.txt beside it) or a model "
                   "folder (default: words, ideographs and punctuation)");
  }
  if (groups & flags_model) {
    app.add_option("--kind", o.kind,
                   "single | mha | mqa | gqa | mla (multi-head latent attention, DeepSeek); without a softmax: linear | "
                   "retention | mamba2 | deltanet | gated-deltanet (every head its own state, causal, drawn as its "
                   "signed T x T matrix)");
    app.add_option("--decay", o.decay,
                   "With --kind retention: one decay gamma in (0, 1] for every head (default: per head, 0.5 for head 0 "
                   "to 0.97 for the last)");
    app.add_flag("--no-normalizer", o.no_normalizer,
                 "With --kind linear: leave out the normaliser (rows then do not sum to 1)");
    app.add_option("--d-model", o.d_model, "Token width C (default 64)");
    app.add_option("--heads", o.heads, "Query heads H (must divide C)");
    app.add_option("--groups", o.groups, "Key/value groups G (must divide H)");
    app.add_flag("--causal", o.causal, "Mask keys after the query");
    app.add_flag("--no-scale", o.no_scale, "Do not divide scores by sqrt(d_k)");
    app.add_option("--seed", o.seed, "Seed for embeddings and weights (default 42)");
    app.add_option("--weights", o.weights_dir, "Folder with wq.npy wk.npy wv.npy wo.npy [+ bq bk bv bo]");
    app.add_option("--weight-source", o.weight_source, "converted (default) | independent");
    app.add_option("--designed", o.designed,
                   "Designed heads, one pattern per head: previous,next,self,first,punct,local,repeat,broad "
                   "(sets H and C = 64*H; MHA unless --kind gqa/mqa)");
    app.add_option("--kv-rank", o.kv_rank, "With --kind mla: width r_kv of the cached K/V latent c_KV, 1..C (default 16)");
    app.add_option("--q-rank", o.q_rank, "With --kind mla: width r_q of the query latent c_Q, 1..C; 0 = no query compression (default)");
    app.add_option("--rope-dim", o.rope_dim,
                   "With --kind mla: width of the decoupled rotary part of q and k, even, 0..C/H (default 8; 0 = none)");
    app.add_flag("--differential", o.differential,
                 "Differential attention (Ye et al. 2025): softmax(Q1K1) - lambda*softmax(Q2K2) per head, "
                 "halves of C/(2H); with single, mha, mqa, gqa");
    app.add_option("--window", o.window, "Sliding window W >= 1: query i sees keys i-W < j <= i (implies --causal)");
    app.add_option("--sinks", o.sinks, "With --window: the first N keys stay visible to every later query (StreamingLLM)");
    app.add_flag("--sink-logits", o.sink_logits,
                 "One seeded sink logit per head joins each row's softmax (gpt-oss); its share is the first column");
    app.add_option("--positions", o.positions, "How positions enter: absolute (sinusoidal, default) | nope | rope | alibi | relpos");
    app.add_option("--rope-base", o.rope_base, "With --positions rope: the base theta > 1 (default 10000)");
    app.add_option("--rope-layout", o.rope_layout, "With --positions rope: half (Llama, default) | interleaved (GPT-J)");
    app.add_option("--rope-scaling", o.rope_scaling,
                   "With --positions rope: none | linear:F | ntk:F | yarn:F (factor F > 1)");
    app.add_option("--rope-context", o.rope_context,
                   "With --rope-scaling yarn:F: the original context L that YaRN's correction range is computed from "
                   "(default 32); linear:F and ntk:F (base x F^(d/(d-2))) do not depend on it");
  }
  if (groups & (flags_relpos | flags_conv)) {
    app.add_option("--grid", o.grid, "Grid size RxC, at most 64x64");
    app.add_option("--pattern", o.pattern, "checkerboard | gradient | rings | glyph | noise");
    app.add_option("--image", o.image, "A PNG or JPEG image, resized to at most 64x64");
    app.add_option("--alpha", o.alpha, "Window sharpness alpha >= 0 for every head");
    app.add_flag("--pad-keys", o.pad_keys, "Add zero-valued padding cells as keys");
    if (!(groups & flags_model)) app.add_option("--heads", o.heads, "Relative-position heads H");
  }
  if (groups & flags_relpos) {
    app.add_option("--alphas", o.alphas, "Per-head alpha list a1,a2,...");
    app.add_option("--deltas", o.deltas, "Per-head offsets: \"dr,dc;dr,dc;...\" (grid) or \"-1;0;1\" (text)");
    app.add_option("--delta-preset", o.delta_preset, "conv3x3 | conv5x5 | line | random");
    app.add_option("--query", o.query, "Query cell r,c (grid) or token index i (text); default centre");
    app.add_flag("--mixed", o.mixed, "Sentences: content scores + lambda * positional scores");
    app.add_option("--lambda", o.lambda, "Weight of the positional scores in mixed mode");
  }
  if (groups & flags_conv) {
    app.add_option("--kernel", o.kernel,
                   "identity | box | gaussian | sobel_x | sobel_y | laplacian | sharpen | k1,k2,... (K*K numbers, K = 3 or 5)");
  }
  if (groups & flags_view) {
    app.add_option("--colormap", o.colormap, "viridis | magma | grayscale | diverging");
    app.add_flag("--scores", o.scores, "Show raw scores instead of probabilities");
    app.add_flag("--per-head-scale", o.per_head_scale, "One colour scale per head instead of a shared one (as --scale-mode per-head)");
    app.add_option("--scale-mode", o.scale_mode,
                   "shared | per-head | fixed | locked: one colour range for all heads (default), one per head, 0 to 1 "
                   "(probabilities), or the range given by --scale-range");
    app.add_option("--scale-range", o.scale_range, "LO,HI: the colour range of --scale-mode locked (LO < HI)");
    app.add_option("--view", o.view, "heads | shapes | positions | relpos1d | relpos2d | conv");
  }
}

bool flag_given(const CLI::App* app, const char* flag) {
  try {
    return app->count(flag) > 0;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

void apply_relpos_defaults(Scene& s, const SceneOptions& o) {
  const bool grid = s.input.source == InputSource::grid;
  s.view.view = grid ? View::relpos2d : View::relpos1d;
  adapt_scene_to_view(s, false, !preset_given(o));
  if (!flag_given(o.app, "--heads")) default_relpos_heads(s);
}

bool input_given(const SceneOptions& o) {
  for (const char* flag : {"--text", "--input", "--grid", "--pattern", "--image", "--scene"})
    if (flag_given(o.app, flag)) return true;
  return false;
}

bool preset_given(const SceneOptions& o) {
  return flag_given(o.app, "--delta-preset") || flag_given(o.app, "--deltas") || flag_given(o.app, "--scene");
}

Scene build_window_scene(const SceneOptions& o) {
  Scene s = build_scene(o);
  adapt_scene_to_view(s, !input_given(o), !preset_given(o));
  return s;
}

namespace {

bool given(const SceneOptions& o, const char* flag) { return flag_given(o.app, flag); }

// A seed: a whole number from 0 to 2^64 − 1, written in decimal digits only.
uint64_t parse_seed(const std::string& text, const char* flag) {
  const bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
  uint64_t value = 0;
  bool fits = digits;
  for (size_t i = 0; fits && i < text.size(); ++i) {
    const uint64_t d = uint64_t(text[i] - '0');
    fits = value <= (UINT64_MAX - d) / 10;
    value = value * 10 + d;
  }
  require(fits, std::string(flag) + " must be a whole number from 0 to 18446744073709551615, got '" + text + "'");
  return value;
}

void require_finite(double v, const char* flag) {
  require(std::isfinite(v), std::string(flag) + " must be a finite number, got " + std::to_string(v));
}

// --rope-scaling: "none" or NAME:F with NAME linear | ntk | yarn and a factor F > 1.
void parse_rope_scaling_flag(const std::string& text, ModelSettings& m) {
  const char* valid = " (valid: none, linear:F, ntk:F, yarn:F with a factor F > 1, e.g. yarn:4)";
  if (text == "none") {
    m.rope_scaling = RopeScaling::none;
    m.rope_factor = 1;
    return;
  }
  const size_t colon = text.find(':');
  require(colon != std::string::npos, "--rope-scaling '" + text + "' needs a factor" + valid);
  const std::string name = text.substr(0, colon), number = text.substr(colon + 1);
  RopeScaling scaling = RopeScaling::none;
  try {
    scaling = parse_rope_scaling(name);
  } catch (const InputError&) {
    throw InputError("--rope-scaling: unknown scaling '" + name + "'" + valid);
  }
  require(scaling != RopeScaling::none, "--rope-scaling none takes no factor" + std::string(valid));
  const std::vector<double> factor = parse_number_list(number, "--rope-scaling factor");
  require(factor.size() == 1 && factor[0] > 1, "--rope-scaling factor must be one number > 1, got '" + number + "'" + valid);
  m.rope_scaling = scaling;
  m.rope_factor = factor[0];
}

}  // namespace

Scene build_scene(const SceneOptions& o) {
  Scene s;
  if (given(o, "--scene")) s = load_scene(o.scene_file);
  if (given(o, "--text")) {
    s.input.source = InputSource::text;
    s.input.text = o.text;
  }
  if (given(o, "--input")) {
    require(!given(o, "--text"), "--text and --input are exclusive: give one input");
    s.input.source = InputSource::tensor;
    s.input.tensor_path = o.input;
  }
  if (given(o, "--tokenizer")) {
    require(!given(o, "--input"), "--tokenizer splits a --text into tokens; an --input tensor has no text");
    require(!o.tokenizer.empty(), "--tokenizer needs a path: a tokenizer.json, a vocab.json or a model folder");
    s.input.tokenizer_path = o.tokenizer;
  }

  ModelSettings& m = s.model;
  if (given(o, "--kind")) m.kind = parse_attention_kind(o.kind);
  if (given(o, "--designed")) {
    // One head per pattern, an MHA unless --kind asks for GQA/MQA (which then pool its K/V heads).
    require(!given(o, "--weights") && !given(o, "--weight-source"),
            "--designed sets the weights itself: drop --weights / --weight-source");
    std::vector<std::string> patterns = split_designed_list(o.designed);
    const int n = int(patterns.size());
    if (!given(o, "--kind")) m.kind = AttentionKind::mha;
    require(m.kind != AttentionKind::single || n == 1,
            "--kind single has one head, but --designed lists " + std::to_string(n) + " patterns");
    require(!given(o, "--heads") || o.heads == n, "--designed lists " + std::to_string(n) +
                                                      " patterns, one per head, but --heads " +
                                                      std::to_string(o.heads) + " was given");
    require(!given(o, "--d-model") || o.d_model == designed_d_model(n),
            "designed heads have d_k = 64, so d_model is 64 x " + std::to_string(n) + " = " +
                std::to_string(designed_d_model(n)) + ", but --d-model " + std::to_string(o.d_model) + " was given");
    use_designed_heads(m, std::move(patterns));
  }
  if (given(o, "--d-model")) m.d_model = o.d_model;
  if (given(o, "--heads")) {
    m.heads = o.heads;
    s.relpos.heads = o.heads;
  }
  if (given(o, "--groups")) {
    m.groups = o.groups;
    // A --groups that contradicts --kind is a mistake, not something to silently override.
    const int h = given(o, "--heads") ? o.heads : m.heads;
    if (m.kind == AttentionKind::mqa)
      require(o.groups == 1, "--kind mqa means one kv group, but --groups " + std::to_string(o.groups) +
                                 " was given (use --kind gqa for several groups)");
    if (m.kind == AttentionKind::mha)
      require(o.groups == h, "--kind mha means groups = heads = " + std::to_string(h) + ", but --groups " +
                                 std::to_string(o.groups) + " was given (use --kind gqa)");
    if (m.kind == AttentionKind::single)
      require(o.groups == 1, "--kind single means one head and one group, but --groups " +
                                 std::to_string(o.groups) + " was given");
  } else if (given(o, "--kind") && m.kind == AttentionKind::gqa && !given(o, "--scene")) {
    m.groups = default_groups(AttentionKind::gqa, m.heads);  // GQA without --groups
  }
  if (given(o, "--heads") && m.kind == AttentionKind::single)
    require(o.heads == 1, "--kind single means one head, but --heads " + std::to_string(o.heads) + " was given");
  // MLA's ranks and rotary width belong to --kind mla; a flag the kind ignores is a mistake, not a default.
  for (const char* flag : {"--kv-rank", "--q-rank", "--rope-dim"})
    require(!given(o, flag) || m.kind == AttentionKind::mla,
            std::string(flag) + " applies to multi-head latent attention: add --kind mla");
  if (given(o, "--kv-rank")) m.kv_rank = o.kv_rank;
  if (given(o, "--q-rank")) m.q_rank = o.q_rank;
  if (given(o, "--rope-dim")) m.rope_dim = o.rope_dim;
  // The parameters of the kinds without a softmax belong to their kind.
  require(!given(o, "--decay") || m.kind == AttentionKind::retention,
          "--decay sets retention's decay gamma: add --kind retention");
  require(!given(o, "--no-normalizer") || m.kind == AttentionKind::linear,
          "--no-normalizer applies to linear attention: add --kind linear");
  if (given(o, "--decay")) {
    require(std::isfinite(o.decay) && o.decay > 0 && o.decay <= 1,
            "--decay must be a number in (0, 1] (gamma: how much of the state each step keeps), got " +
                std::to_string(o.decay));
    m.decay = o.decay;
  }
  if (given(o, "--no-normalizer")) m.linear_normalize = !o.no_normalizer;
  if (is_linear_kind(m.kind))
    for (const char* flag : {"--differential", "--window", "--sinks", "--sink-logits", "--designed"})
      require(!given(o, flag), std::string(flag) + " is for softmax attention; --kind " + to_string(m.kind) +
                                   " has no softmax (its state forgets through its decay instead of a window)");
  if (given(o, "--differential")) m.differential = o.differential;
  require(!(m.differential && m.kind == AttentionKind::mla),
          "--differential works with --kind single, mha, mqa or gqa, not mla (differential attention splits each "
          "head's query and key in two halves; MLA's heads are built from the latent instead)");
  if (given(o, "--causal")) m.causal = o.causal;
  if (given(o, "--no-scale")) m.scale_scores = !o.no_scale;
  if (given(o, "--seed")) m.seed = parse_seed(o.seed, "--seed");
  if (given(o, "--window")) {
    require(o.window >= 1, "--window must be at least 1 token (keys i-W < j <= i), got " + std::to_string(o.window));
    m.window = o.window;
  }
  if (given(o, "--sinks")) {
    require(o.sinks >= 0, "--sinks must be 0 or more tokens, got " + std::to_string(o.sinks));
    require(o.sinks == 0 || m.window > 0, "--sinks keeps the first tokens visible beside a sliding window: add --window W");
    m.sinks = o.sinks;
  }
  if (given(o, "--sink-logits")) m.sink_logits = o.sink_logits;
  if (given(o, "--positions")) m.positions = parse_position_scheme(o.positions);
  for (const char* flag : {"--rope-base", "--rope-layout", "--rope-scaling", "--rope-context"})
    require(!given(o, flag) || m.positions == PositionScheme::rope || m.kind == AttentionKind::mla,
            std::string(flag) + " sets rotary positions: add --positions rope (or --kind mla, whose rotary part it sets)");
  if (given(o, "--rope-base")) {
    require(std::isfinite(o.rope_base) && o.rope_base > 1, "--rope-base must be a number > 1 (e.g. 10000), got " +
                                                               std::to_string(o.rope_base));
    m.rope_base = o.rope_base;
  }
  if (given(o, "--rope-layout")) m.rope_layout = parse_rope_layout(o.rope_layout);
  if (given(o, "--rope-scaling")) parse_rope_scaling_flag(o.rope_scaling, m);
  if (given(o, "--rope-context")) {
    require(o.rope_context >= 1, "--rope-context must be at least 1 token, got " + std::to_string(o.rope_context));
    // NTK-aware scaling is a static change of base, base·F^(d/(d−2)) (SPEC "RoPE", positions.h): only
    // YaRN's correction range depends on the original context.
    require(m.rope_scaling == RopeScaling::yarn,
            "--rope-context is the original context YaRN's correction range is computed from: add --rope-scaling "
            "yarn:F (linear:F and ntk:F do not use it; ntk:F only raises the base to base x F^(d/(d-2)))");
    m.rope_original_context = o.rope_context;
  }
  if (given(o, "--weight-source")) {
    m.weights = parse_weight_source(o.weight_source);
    require(m.weights != WeightSource::loaded, "--weight-source loaded is set by --weights DIR");
  }
  if (given(o, "--weights")) {
    m.weights = WeightSource::loaded;
    m.weights_dir = o.weights_dir;
  }

  RelposSettings& r = s.relpos;
  if (given(o, "--grid")) {
    const auto rc = parse_grid_size(o.grid);
    s.input.grid.rows = rc[0];
    s.input.grid.cols = rc[1];
    s.input.source = InputSource::grid;
  }
  if (given(o, "--pattern")) {
    s.input.grid.pattern = o.pattern;
    s.input.grid.image_path.clear();
    s.input.source = InputSource::grid;
  }
  if (given(o, "--image")) {
    require(!given(o, "--pattern"), "--image and --pattern are exclusive: give one grid source");
    s.input.grid.image_path = o.image;
    s.input.source = InputSource::grid;
    // An image is fitted inside --grid; without one it may use the whole 64×64.
    if (!given(o, "--grid")) s.input.grid.rows = s.input.grid.cols = limits::max_grid_side;
  }
  if (given(o, "--text") && s.input.source == InputSource::grid)
    throw InputError("--text and a grid (--grid/--pattern/--image) are exclusive: give one input");
  if (given(o, "--alpha")) {
    require_finite(o.alpha, "--alpha");
    require(o.alpha >= 0, "--alpha must be >= 0, got " + std::to_string(o.alpha));
    r.alpha = o.alpha;
    r.alphas.clear();
    s.conv.alpha = o.alpha;
  }
  if (given(o, "--alphas")) {
    require(!given(o, "--alpha"), "--alpha and --alphas are exclusive: give one");
    r.alphas = parse_number_list(o.alphas, "--alphas");
    for (size_t i = 0; i < r.alphas.size(); ++i)
      require(r.alphas[i] >= 0, "--alphas item " + std::to_string(i + 1) + " must be >= 0, got " +
                                    std::to_string(r.alphas[i]));
  }
  const int delta_dims = s.input.source == InputSource::grid ? 2 : 1;
  if (given(o, "--deltas")) {
    require(!given(o, "--delta-preset"), "--deltas and --delta-preset are exclusive: give one");
    r.deltas = parse_delta_list(o.deltas, delta_dims);
  }
  if (given(o, "--delta-preset")) {
    r.delta_preset = o.delta_preset;
    r.deltas.clear();
  }
  if (given(o, "--query")) {
    if (delta_dims == 2) {
      const auto q = parse_delta_list(o.query, 2);
      require(q.size() == 1, "--query on a grid takes one cell r,c, got '" + o.query + "'");
      r.query_row = int(q[0][0]);
      r.query_col = int(q[0][1]);
      require(q[0][0] == r.query_row && q[0][1] == r.query_col && r.query_row >= 0 && r.query_col >= 0,
              "--query r,c takes two non-negative whole numbers, got '" + o.query + "'");
    } else {
      const auto q = parse_number_list(o.query, "--query");
      require(q.size() == 1 && q[0] >= 0 && q[0] == double(int(q[0])),
              "--query on text takes one non-negative token index, got '" + o.query + "'");
      r.query_index = int(q[0]);
    }
  }
  if (given(o, "--pad-keys")) r.pad_keys = o.pad_keys;
  if (given(o, "--mixed")) r.mixed = o.mixed;
  if (given(o, "--lambda")) {
    require_finite(o.lambda, "--lambda");
    r.lambda = o.lambda;
  }

  if (given(o, "--kernel")) {
    const bool is_list = o.kernel.find_first_of("0123456789") != std::string::npos &&
                         o.kernel.find(',') != std::string::npos;
    if (is_list) {
      s.conv.kernel = "custom";
      s.conv.custom = parse_number_list(o.kernel, "--kernel");
    } else {
      s.conv.kernel = o.kernel;
      s.conv.custom.clear();
    }
  }

  ViewSettings& v = s.view;
  if (given(o, "--colormap")) v.colormap = o.colormap;
  if (given(o, "--scores")) v.show_scores = o.scores;
  if (given(o, "--per-head-scale") && o.per_head_scale) v.scale = ScaleMode::per_head;
  if (given(o, "--scale-mode")) {
    v.scale = parse_scale_mode(o.scale_mode);
    require(!given(o, "--per-head-scale") || v.scale == ScaleMode::per_head,
            "--per-head-scale and --scale-mode " + o.scale_mode + " disagree: give one of them");
  }
  if (given(o, "--scale-range")) {
    require(v.scale == ScaleMode::locked, "--scale-range is the range of --scale-mode locked: add --scale-mode locked");
    const ValueRange r = parse_scale_range(o.scale_range);
    v.locked_lo = r.lo;
    v.locked_hi = r.hi;
  } else {
    require(v.scale != ScaleMode::locked || !given(o, "--scale-mode"),
            "--scale-mode locked needs its range: add --scale-range LO,HI (e.g. 0,0.5)");
  }
  if (given(o, "--view")) v.view = parse_view(o.view);
  return s;
}

}  // namespace attnscope::cli
