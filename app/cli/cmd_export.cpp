// cmd_export.cpp — `attnscope export`: a heatmap figure (PNG/SVG) or its raw numbers (CSV/.npy).
//
//   attnscope export --what heads|head:N|relpos|conv|model --format png|svg|csv|npy [--scale S]
//                    [--colormap NAME] [--scores] [--per-head-scale] [--scale-mode M [--scale-range LO,HI]] [--no-caption] [--language en|zh]
//                    [scene options of compute/relpos/conv] --out FILE
//   attnscope export --compare SCENE_A SCENE_B [--compare-view side-by-side|difference] --format png|svg
//                    [--scale S] [--colormap NAME] [--scale-mode M [--scale-range LO,HI]] [--no-caption]
//                    [--language en|zh] --out FILE
//     compare A/B (figure/compare.h): two scene files' heads, A and B side by side on one locked scale, or
//     B − A on a diverging scale, each head titled with its Jensen–Shannon drift.
// The output path is checked before anything is computed, and the file is written to a temporary
// name and renamed, so bad input leaves no file behind. Prints one line naming the written file.
#include <cstdio>
#include <memory>

#include "attnscope/analysis/analysis.h"
#include "attnscope/analysis/token_set.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/compare.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/figure/export.h"
#include "attnscope/io/file_io.h"
#include "attnscope/figure/qk_figure.h"
#include "attnscope/model/qk_attribution.h"
#include "attnscope/figure/pooled_figure.h"
#include "attnscope/figure/rollout_figure.h"
#include "attnscope/pipeline/pipeline.h"
#include "cli/commands.h"
#include "cli/model_options.h"
#include "core/lens_export.h"
#include "core/scene_options.h"
#include "core/translations.h"

namespace attnscope::cli {
namespace {

struct ExportOptions {
  SceneOptions scene;
  ModelOptions model;  // --checkpoint / --attentions: a real model's layer
  std::string what, format, out;
  std::string language = "en";  // the figure's titles and captions
  double scale = 1.0;
  bool no_caption = false;
  std::string token_range;  // "I-J": heads/head keep those queries and keys
  std::vector<std::string> compare;  // SCENE_A SCENE_B
  std::string compare_view = "side-by-side";
  int head = -1, key = -1;  // --what qk-attribution (with --layer and --query)
  std::string query_set, key_set, set_reduce;  // a token set (token_set.h): "3,5,7", and sum | mean
  bool every_query = false;  // --what rollout: every query of --layer
};

// --query-set / --key-set / --set-reduce as a token set (inactive when none is given); the range of its tokens
// is checked once the input's tokens are known.
TokenSet token_set_of(const ExportOptions& o) {
  TokenSet set;
  require(o.query_set.empty() || o.key_set.empty(), "--query-set and --key-set make one token set: give one of them");
  if (!o.query_set.empty() || !o.key_set.empty()) {
    const bool queries = !o.query_set.empty();
    set.axis = queries ? TokenSetAxis::queries : TokenSetAxis::keys;
    set.tokens = parse_token_list(queries ? o.query_set : o.key_set, queries ? "--query-set" : "--key-set");
  }
  if (!o.set_reduce.empty()) {
    require(set.active(), "--set-reduce applies to a token set: give --query-set or --key-set");
    require(o.set_reduce == "sum" || o.set_reduce == "mean", "--set-reduce takes sum or mean, got '" + o.set_reduce + "'");
    set.reduce = parse_set_reduce(o.set_reduce);
  }
  return set;
}

// A scene file of --compare, analysed for its heads. Throws InputError naming the file.
Analysis compare_side(const std::string& path, const char* side) {
  Scene scene;
  try {
    scene = load_scene(path);
  } catch (const std::exception& e) {
    throw InputError(std::string("--compare: scene ") + side + " '" + path + "': " + e.what());
  }
  require(scene.input.source != InputSource::grid, std::string("--compare: scene ") + side + " '" + path +
                                                       "' has a grid input; compare A/B needs the heads of a sentence or a tensor");
  return *pipeline::analyse_scene(std::move(scene), AnalysisRequest{.attention = true});
}

// export --compare A B: one figure of A and B.
void run_compare(const ExportOptions& o) {
  require(o.compare.size() == 2, "--compare takes two scene files: --compare SCENE_A SCENE_B");
  require(o.what.empty(), "--compare draws the heads of A and B; leave out --what");
  require(!wants_model(o.model), "--compare takes two scene files; --checkpoint and --attentions are not compared from "
                                 "the command line (use Keep as A in the window)");
  refuse_long_without_checkpoint(o.model);
  CompareRequest request;
  request.words = figure_words(parse_language_option(o.language));
  request.format = parse_export_format(o.format);
  require(request.format == ExportFormat::png || request.format == ExportFormat::svg,
          "--compare exports a figure: --format png or svg, not " + o.format);
  request.view = parse_compare_view(o.compare_view);
  require(o.scale >= 1 && o.scale <= 4, "--scale must be between 1 and 4, got " + std::to_string(o.scale));
  request.scale = float(o.scale);
  request.caption = !o.no_caption;
  request.token_set = token_set_of(o);  // its tokens are checked against A's and B's by compare_analyses
  if (!o.token_range.empty()) {  // the same range in A and B, checked against their tokens by the export
    ExportRequest range;
    parse_token_range(o.token_range, range);
    request.token_first = range.token_first;
    request.token_last = range.token_last;
  }
  // The view options given here (colormap, scale mode and range) apply to both; the rest is in the files.
  const Scene view_scene = build_scene(o.scene);
  request.colormap = parse_colormap(view_scene.view.colormap);
  request.color_scale = color_scale_of(view_scene.view);
  require(!view_scene.view.show_scores, "--compare shows probabilities; leave out --scores");
  check_export_path(o.out, request.format);
  const Analysis a = compare_side(o.compare[0], "A");
  const Analysis b = compare_side(o.compare[1], "B");
  const ExportedFile file = export_compare_to_file(a, b, request, o.out);
  std::printf("wrote %s (compare A/B, %s, %s, %dx%d px)\n", o.out.c_str(), to_string(request.view),
              to_string(request.format), file.layout->width, file.layout->height);
}

// What an export needs computed: only the part it draws (an export of the heads computes no relative
// position, one of relpos no grouped attention unless mixed mode needs the content scores).
std::shared_ptr<const Analysis> analyse_for(const ExportRequest& request, Scene scene, const SceneOptions& options) {
  const bool grid = scene.input.source == InputSource::grid;
  AnalysisRequest what{.attention = false};
  switch (request.what) {
    case ExportWhat::heads:
    case ExportWhat::head:
      require(!grid, "--what " + to_string(request) +
                         " needs a sentence (--text) or a tensor (--input); a grid has relative-position heads: use "
                         "--what relpos or --what conv");
      what.attention = true;
      break;
    case ExportWhat::relpos:
      apply_relpos_defaults(scene, options);
      what.relpos = true;
      break;
    case ExportWhat::conv:
      scene.input.source = InputSource::grid;  // conv always works on a grid (default: rings 16×16)
      if (flag_given(options.app, "--heads")) require_heads_match_kernel(scene.relpos.heads, kernel_from_settings(scene.conv));
      what.conv = true;
      break;
    case ExportWhat::model:
      throw InputError("--what model shows every layer of a real model: give --checkpoint DIR (with --text or --ids) "
                       "or --attentions FILE --tokens tokens.json");
  }
  return pipeline::analyse_scene(std::move(scene), what);  // the engine's pipeline, as the window's worker runs it
}

// export --what qk-attribution: why head --head of --layer attends from --query to --key (model/qk_attribution.h),
// the whole query-part × key-part table as CSV.
void run_qk_attribution(const ExportOptions& o) {
  require(!o.model.checkpoint.empty(), "--what qk-attribution needs --checkpoint DIR (with --text or --ids): the "
                                       "attribution goes through the model's weights");
  const ExportFormat format = parse_export_format(o.format);
  require(format != ExportFormat::npy, "--what qk-attribution writes its table as CSV (--format csv) or its bar chart as "
                                       "--format png or svg, not " + o.format);
  require(o.scale >= 1 && o.scale <= 4, "--scale must be between 1 and 4, got " + std::to_string(o.scale));
  require(o.token_range.empty(), "--token-range applies to --what heads or head:N");
  for (const char* flag : {"--layer", "--head", "--query", "--key"})
    require(flag_given(o.model.app, flag), std::string("--what qk-attribution needs --layer, --head, --query and --key "
                                                       "(positions and numbers from 0); ") + flag + " is missing");
  int query = -1;
  try {
    size_t used = 0;
    query = std::stoi(o.scene.query, &used);
    require(used == o.scene.query.size(), "");
  } catch (const std::exception&) {
    throw InputError("--query is the query's token position (a whole number from 0), got '" + o.scene.query + "'");
  }
  check_export_path(o.out, format);
  ExportRequest request;  // the bar chart's: as the Heads view's "why" panel saves it
  request.format = format;
  request.scale = float(o.scale);
  request.words = figure_words(parse_language_option(o.language));
  const pipeline::Result result = model_qk_attribution_for_export(o.model, o.scene, o.head, query, o.key);
  const model::QkAttribution& a = *result.qk_attribution;
  const std::vector<std::string>& labels = result.tokens->labels;
  if (format == ExportFormat::csv) write_file_atomic(o.out, model::qk_attribution_csv(a));
  else write_file_atomic(o.out, render_qk_figure(QkFigureInput{&a, labels}, request).bytes);
  const auto token = [&](int t) { return size_t(t) < labels.size() ? " '" + labels[size_t(t)] + "'" : std::string(); };
  std::printf("wrote %s (QK attribution of layer %d head %d, query %d%s, key %d%s: %zu x %zu parts summing to %.6g; "
              "the forward's score %.6g%s)\n",
              o.out.c_str(), a.cell.layer, a.cell.head, a.cell.query, token(a.cell.query).c_str(), a.cell.key,
              token(a.cell.key).c_str(), a.query_parts.size(), a.key_parts.size(), a.sum(), double(a.score),
              a.before_softcap ? (", before the soft-cap; drawn " + std::to_string(a.drawn)).c_str() : "");
  std::string largest;  // the five entries of largest size, as the table's "query part x key part"
  for (const model::QkEntry& e : model::largest_entries(a, 5)) {
    char value[32];
    std::snprintf(value, sizeof value, "%.4g", e.value);
    largest += (largest.empty() ? "" : "; ") + model::qk_part_label(a.query_parts[size_t(e.query_part)], true) + " x " +
               model::qk_part_label(a.key_parts[size_t(e.key_part)], false) + " " + value;
  }
  std::printf("largest (query part x key part): %s\n", largest.c_str());
}

// export --what rollout: the Rollout view's figure of --checkpoint or --attentions (rollout_figure.h).
void run_rollout(const ExportOptions& o) {
  require(wants_model(o.model), "--what rollout needs a model's layers: give --checkpoint DIR (with --text or --ids) or "
                                "--attentions FILE --tokens tokens.json (a seeded layer has no layers below it to roll out)");
  ExportRequest request;
  request.words = figure_words(parse_language_option(o.language));
  request.format = parse_export_format(o.format);
  require(o.scale >= 1 && o.scale <= 4, "--scale must be between 1 and 4, got " + std::to_string(o.scale));
  request.scale = float(o.scale);
  request.caption = !o.no_caption;
  require(o.token_range.empty(), "--token-range applies to --what heads or head:N");
  const Scene scene = build_scene(o.scene);
  request.colormap = parse_colormap(scene.view.colormap);
  request.color_scale = color_scale_of(scene.view);
  require(!scene.view.show_scores, "--what rollout shows shares of the input tokens: leave out --scores");
  require(request.color_scale.mode != ScaleMode::per_head,
          "--what rollout has one colour bar for its panels (valid scale modes here: shared, fixed, locked)");
  const TokenSet set = token_set_of(o);
  require(!o.model.flow || (!o.every_query && set.axis != TokenSetAxis::queries),
          "--flow is the flow into one position: leave it out with --every-query or --query-set");
  require(!o.every_query || !flag_given(o.model.app, "--position"),
          "--every-query draws every query position: leave out --position");
  check_export_path(o.out, request.format);
  const std::shared_ptr<const pipeline::Result> result = model_rollout_for_export(o.model, o.scene, o.every_query);
  RolloutFigureInput in{result->run->stack.get(), result->rollout.get(), result->flow.get(), result->request.flow_position};
  in.every_query = o.every_query;
  in.layer = flag_given(o.model.app, "--layer") ? o.model.layer : result->run->stack->layers - 1;  // default: the last
  in.set = set;
  if (set.active()) check_token_set(set, result->run->stack->tokens, set.axis == TokenSetAxis::queries ? "--query-set" : "--key-set");
  const ExportedFile file = export_rollout(in, request, o.out);
  std::string size;
  if (file.layout) size = std::to_string(file.layout->width) + "x" + std::to_string(file.layout->height) + " px";
  else {
    for (int64_t d : file.shape) size += (size.empty() ? "[" : ", ") + std::to_string(d);
    size += "]";
  }
  const std::string of = in.every_query ? "every query of layer " + std::to_string(in.layer)
                         : set.axis == TokenSetAxis::queries ? "queries " + token_set_list(set)
                                                              : "query " + std::to_string(in.position);
  const std::string keys = set.axis == TokenSetAxis::keys ? ", keys " + token_set_list(set) : "";
  std::printf("wrote %s (rollout%s of %s%s, %s, %s)\n", o.out.c_str(), result->flow ? " and flow" : "", of.c_str(),
              keys.c_str(), to_string(request.format), size.c_str());
}

// export --what lens|attribution (core/lens_export.h): the same figures and CSV as the Logit lens window's.
void run_lens(const ExportOptions& o) {
  LensExportRequest request;
  request.attribution = o.what == "attribution";
  request.format = parse_export_format(o.format);
  request.scale = float(o.scale);
  require(o.scale >= 1 && o.scale <= 4, "--scale must be between 1 and 4, got " + std::to_string(o.scale));
  require(request.format != ExportFormat::npy, "--what " + o.what + " exports as png, svg or csv; `attnscope compute "
                                               "--checkpoint DIR --lens` writes its arrays as .npy");
  require(o.token_range.empty(), "--token-range applies to --what heads or head:N");
  request.caption = !o.no_caption;
  request.words = figure_words(parse_language_option(o.language));
  request.position = o.model.lens.position;
  check_export_path(o.out, request.format);
  const pipeline::Result result = model_lens_for_export(o.model, o.scene);
  const ExportedFile file = export_lens_to_file(result, request, o.out);
  const int p = lens_position(result, request.position);
  const std::string size = file.layout ? ", " + std::to_string(file.layout->width) + "x" + std::to_string(file.layout->height) + " px"
                                       : std::string();
  const std::string at = request.attribution ? " at position " + std::to_string(p) : "";
  std::printf("wrote %s (%s of %s%s, %s%s)\n", o.out.c_str(), request.attribution ? "direct logit attribution" : "logit lens",
              result.ran_model->name.c_str(), at.c_str(), to_string(request.format), size.c_str());
}

// export --checkpoint … --long --what head:N --layer L: the overview of one head of a long input, pooled to at most
// --pixels blocks a side by --pool (pooled_figure.h).
void run_long(const ExportOptions& o) {
  ExportRequest request;
  request.words = figure_words(parse_language_option(o.language));
  require(o.what.rfind("head:", 0) == 0 || o.what == "heads" || o.what == "model",
          "with --long, --what is head:N or heads (with --layer L: one head or every head of a layer) or model "
          "(every layer's heads), each computed on demand and pooled; got '" + o.what + "'");
  parse_export_what(o.what, request);
  request.format = parse_export_format(o.format);
  require(o.scale >= 1 && o.scale <= 4, "--scale must be between 1 and 4, got " + std::to_string(o.scale));
  request.scale = float(o.scale);
  request.caption = !o.no_caption;
  require(o.token_range.empty() && o.query_set.empty() && o.key_set.empty() && o.set_reduce.empty(),
          "--token-range, --query-set, --key-set and --set-reduce apply to a whole stack; with --long the overview "
          "zooms by --pixels");
  require(!flag_given(o.model.app, "--head") && !flag_given(o.model.app, "--key"),
          "--head and --key apply to --what qk-attribution; with --long the head is --what head:N");
  const Scene scene = build_scene(o.scene);
  request.colormap = parse_colormap(scene.view.colormap);
  request.color_scale = color_scale_of(scene.view);
  require(!scene.view.show_scores, "with --long the overview shows probabilities: leave out --scores");
  require(request.color_scale.mode != ScaleMode::per_head || request.what == ExportWhat::heads,
          "with --long, --what " + o.what + " has one colour bar (valid scale modes here: shared, fixed, locked)");
  require(request.what != ExportWhat::model || request.format != ExportFormat::csv,
          "--what model has no CSV (L·H blocks in one table): use --format npy for the pooled maps [L, H, rows, cols], "
          "or --what heads --layer N --format csv");
  check_export_path(o.out, request.format);
  if (request.what != ExportWhat::head) {
    const LongHeadsExport made = model_long_heads_for_export(o.model, o.scene, request.what == ExportWhat::model);
    const ExportedFile file = export_pooled_heads(made.pooled, request, o.out);
    const model::PooledMap& first = made.pooled.layers.front().heads.front();
    int heads = 0;
    for (const PooledLayer& l : made.pooled.layers) heads += int(l.heads.size());
    std::string size;
    if (file.layout) size = std::to_string(file.layout->width) + "x" + std::to_string(file.layout->height) + " px";
    else size = "[" + std::to_string(first.rows) + ", " + std::to_string(first.cols) + "] each";
    const std::string which = request.what == ExportWhat::model
                                  ? std::to_string(made.pooled.layers.size()) + " layers, " + std::to_string(heads) + " heads"
                                  : "layer " + std::to_string(o.model.layer) + ", " + std::to_string(heads) + " heads";
    std::printf("wrote %s (%s of %d tokens, each %s, %s, %s; q and k kept: %s)\n", o.out.c_str(), which.c_str(),
                first.tokens, first.label().c_str(), to_string(request.format), size.c_str(),
                model::byte_size_text(made.result.head_maps->kept_bytes()).c_str());
    return;
  }
  const LongExport made = model_long_for_export(o.model, o.scene, request.head);
  const PooledFigureInput in{&made.pooled, o.model.layer, request.head, made.result.ran_model->name};
  const ExportedFile file = export_pooled(in, request, o.out);
  std::string size;
  if (file.layout) size = std::to_string(file.layout->width) + "x" + std::to_string(file.layout->height) + " px";
  else size = "[" + std::to_string(made.pooled.rows) + ", " + std::to_string(made.pooled.cols) + "]";
  std::printf("wrote %s (layer %d head %d of %d tokens, %s, %s, %s; q and k kept: %s)\n", o.out.c_str(), o.model.layer,
              request.head, made.pooled.tokens, made.pooled.label().c_str(), to_string(request.format), size.c_str(),
              model::byte_size_text(made.result.head_maps->kept_bytes()).c_str());
}

void run(const ExportOptions& o) {
  if (!o.compare.empty()) return run_compare(o);
  if (o.model.long_input) return run_long(o);
  // The figures of their own (rollout, lens, attribution, qk-attribution): each one's flags are refused elsewhere.
  const bool lens = o.what == "lens" || o.what == "attribution";
  if (o.what == "qk-attribution" || lens)
    require(o.query_set.empty() && o.key_set.empty() && o.set_reduce.empty(),
            "--query-set, --key-set and --set-reduce apply to --what heads, head:N or rollout");
  require(!o.every_query || o.what == "rollout", "--every-query goes with --what rollout");
  if (o.what != "qk-attribution")
    for (const char* flag : {"--head", "--key"})
      require(!flag_given(o.model.app, flag), std::string(flag) + " applies to --what qk-attribution");
  if (o.what != "rollout")
    require(!o.model.flow && !flag_given(o.model.app, "--position"), "--flow and --position go with --what rollout");
  if (!lens)
    require(!flag_given(o.model.lens.app, "--lens-top-k") && !flag_given(o.model.lens.app, "--attribute-token") &&
                !flag_given(o.model.lens.app, "--attribute-position"),
            "--lens-top-k, --attribute-token and --attribute-position go with --what lens or --what attribution");
  if (o.what == "qk-attribution") return run_qk_attribution(o);
  if (o.what == "rollout") return run_rollout(o);
  if (lens) return run_lens(o);
  require(!o.what.empty(), "--what is required: heads | head:N | relpos | conv | model | rollout | lens | attribution | "
                           "qk-attribution (or --compare SCENE_A SCENE_B)");
  // 1. The request, and the output path, checked before any computation.
  ExportRequest request;
  request.words = figure_words(parse_language_option(o.language));
  parse_export_what(o.what, request);
  request.format = parse_export_format(o.format);
  request.scale = float(o.scale);
  require(o.scale >= 1 && o.scale <= 4, "--scale must be between 1 and 4, got " + std::to_string(o.scale));
  request.caption = !o.no_caption;
  if (!o.token_range.empty()) {
    parse_token_range(o.token_range, request);
    require(request.what == ExportWhat::heads || request.what == ExportWhat::head,
            "--token-range applies to --what heads or head:N");
  }
  // A token set: its tokens' range is checked against the input once the tokens are known (validate_export).
  request.token_set = token_set_of(o);
  if (request.token_set.active())
    require(request.what == ExportWhat::heads || request.what == ExportWhat::head || request.what == ExportWhat::model,
            std::string(request.token_set.axis == TokenSetAxis::queries ? "--query-set" : "--key-set") +
                " applies to --what heads, head:N, model or rollout");
  const Scene scene = build_scene(o.scene);
  request.colormap = parse_colormap(scene.view.colormap);
  request.scores = scene.view.show_scores;
  request.color_scale = color_scale_of(scene.view);
  require(!request.scores || request.what == ExportWhat::heads || request.what == ExportWhat::head,
          "--scores applies to --what heads or head:N (relpos and conv show probabilities and values)");
  check_export_path(o.out, request.format);

  // 2. The analysis, then the file (written atomically).
  const bool real = wants_model(o.model);
  if (!real) {
    refuse_ablation_without_checkpoint(o.model);
    refuse_long_without_checkpoint(o.model);
  }
  if (request.what == ExportWhat::model) {
    require(real, "--what model shows every layer of a real model: give --checkpoint DIR (with --text or --ids) or "
                  "--attentions FILE --tokens tokens.json");
    const std::shared_ptr<const model::AttentionStack> made = model_stack_for_export(o.model, o.scene);
    const model::AttentionStack& stack = *made;
    const ExportedFile file = export_model_view(stack, request, o.out);
    const std::string size = file.layout ? std::to_string(file.layout->width) + "x" + std::to_string(file.layout->height) + " px"
                                         : "[" + std::to_string(stack.layers) + ", " + std::to_string(stack.heads) + ", " +
                                               std::to_string(stack.tokens) + ", " + std::to_string(stack.tokens) + "]";
    std::printf("wrote %s (model view of %s: %d layers x %d heads, %s, %s)\n", o.out.c_str(), stack.source.c_str(),
                stack.layers, stack.heads, to_string(request.format), size.c_str());
    return;
  }
  require(!real || request.what == ExportWhat::heads || request.what == ExportWhat::head,
          "with --checkpoint or --attentions, --what is heads or head:N (a model layer's heads)");
  const std::shared_ptr<const Analysis> analysis =
      real ? model_layer_for_export(o.model, o.scene) : analyse_for(request, scene, o.scene);
  const ExportedFile file = export_to_file(*analysis, request, o.out);

  std::string size;
  if (file.layout) size = std::to_string(file.layout->width) + "x" + std::to_string(file.layout->height) + " px";
  else {
    for (int64_t d : file.shape) size += (size.empty() ? "[" : ", ") + std::to_string(d);
    size += "]";
  }
  std::printf("wrote %s (%s, %s, %s)\n", o.out.c_str(), to_string(request).c_str(), to_string(request.format),
              size.c_str());
}

void add_export_command(CLI::App& root) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = root.add_subcommand(
      "export", "Export a heatmap figure (PNG, SVG) or its numbers (CSV, .npy) for slides and papers");
  cmd->add_option("--what", options->what,
                  "heads | head:N | relpos | conv | model | rollout | lens | attribution | qk-attribution (required but "
                  "with --compare)");
  cmd->add_option("--compare", options->compare,
                  "Two scene files A and B: their heads side by side on one locked scale (or B - A), one figure")
      ->expected(2);
  cmd->add_option("--compare-view", options->compare_view, "With --compare: side-by-side (default) | difference");
  cmd->add_option("--format", options->format, "png | svg | csv | npy")->required();
  cmd->add_option("--scale", options->scale, "Size factor 1 to 4 for PNG/SVG (2 for slides; default 1)");
  cmd->add_flag("--no-caption", options->no_caption, "Leave out the one-line settings caption");
  cmd->add_option("--token-range", options->token_range,
                  "heads, head:N and --compare: only queries and keys I to J (tokens from 0, e.g. 2-9); colours keep the whole "
                  "input's range");
  cmd->add_option("--query-set", options->query_set,
                  "heads, head:N, model, --compare: a token set of queries, e.g. 3,5,7 (tokens from 0): their attention summed (or "
                  "averaged) as one more row under each head; CSV/.npy get that row. rollout: each layer's row is "
                  "their rows' sum (with --every-query one more row)");
  cmd->add_option("--key-set", options->key_set,
                  "heads, head:N, model, --compare: a token set of keys, e.g. 2,4: the attention each query gives them, summed (or "
                  "averaged), as one more column after each head; CSV/.npy get that column. rollout: one more "
                  "column, the share of those keys");
  cmd->add_option("--set-reduce", options->set_reduce, "With --query-set or --key-set: sum (default) | mean");
  cmd->add_flag("--every-query", options->every_query,
                "rollout: every query of one layer (--layer, default the last) as [T,T] matrices, attention (head "
                "mean) and rollout, in place of one query's row per layer");
  cmd->add_option("--language", options->language,
                  "Language of the figure's titles, captions and colour-bar titles: en | zh (default en)");
  cmd->add_option("--out", options->out, "Output file (its folder must exist)")->required();
  cmd->add_option("--head", options->head, "qk-attribution: the head of --layer whose score to split (0 = first)");
  cmd->add_option("--key", options->key, "qk-attribution: the key's token position (from 0; --query is the query's)");
  add_scene_options(*cmd, options->scene, flags_all);
  add_model_options(*cmd, options->model, true);
  cmd->footer(
      "heads: every head, titled 'head h · kv group g' and framed in its kv group's colour; causal-masked\n"
      "cells in the masked colour. head:N: one head. relpos: each relative-position head's map for the query\n"
      "(marked) and the combined map, on a grid or a sentence. conv: input | MHSA | true convolution |\n"
      "difference, with the error figures in the caption (gray images, diverging difference).\n"
      "model: with --checkpoint or --attentions, every layer's heads as an L x H grid of thumbnails 'l.h',\n"
      "framed by K/V group (PNG, SVG; .npy is the attentions [L,H,T,T]).\n"
      "qk-attribution: with --checkpoint, why head --head of --layer attends from --query to --key: its score\n"
      "q.k*scale split into query part x key part (the token embedding, learned positions, each earlier layer's\n"
      "heads 'L2.H3 attn', attention bias and MLP, the norm's and the projections' biases), norms frozen at their\n"
      "actual scale, so the table sums to the score (Gemma 2: before the soft-cap). CSV: one row per query\n"
      "part, one column per key part, totals in the last row and column; PNG, SVG: the Heads view's bar chart of\n"
      "the largest entries, the rest as 'other (N parts)', with the score and the sum (--language, --scale).\n"
      "rollout: with --checkpoint or --attentions, the Rollout view for the query --position (default the last\n"
      "token): one row per layer (from 0) of each input token's share, panels attention (head mean of the layer),\n"
      "rollout and, with --flow, flow (share); CSV/.npy [panels, L, T]. --every-query: every query of --layer\n"
      "(default the last), the [T,T] attention and rollout. --query-set: each layer's row is the set's sum (mean)\n"
      "of those queries' rows; --key-set: one more column, the share of those keys.\n"
      "lens: with --checkpoint, the logit lens: layers x positions, each cell its top next token, coloured by its\n"
      "probability, and under it each cell's KL to the final distribution and the rank of the model's top-1 (PNG,\n"
      "SVG; CSV: one row per layer and position with the top --lens-top-k tokens). attribution: with\n"
      "--checkpoint, each head's direct logit attribution at --attribute-position (default the last) as layers x heads\n"
      "on a diverging scale, the other parts (embedding, MLPs, biases, mixers) beside it (PNG, SVG; CSV: one row per\n"
      "part, then the logit they sum to); --attribute-token ID|TEXT (default the model's top-1).\n"
      "CSV/.npy hold the raw numbers: heads [H,T,T], head [T,T], relpos [H,R,C] (sentence [H,T,T]),\n"
      "conv [4,R,C]; CSV has the tokens as headers.\n"
      "Colour scale (--scale-mode): shared (one range for every head, the default), per-head (each head its own\n"
      "range and bar), fixed (0 to 1: a probability p sits at p on the colormap; not with --scores), locked (the\n"
      "range of --scale-range LO,HI; values beyond it take the end colours). conv keeps its own three scales;\n"
      "model takes shared, fixed or locked.\n"
      "Token sets: --query-set 3,5,7 adds to each head one more row, 'Σ of 3 queries' (--set-reduce mean: 'mean\n"
      "of 3 queries'), their rows summed; --key-set 2,4 one more column, each query's attention to those keys\n"
      "summed. The colour ranges include it; CSV/.npy hold it as the last row [H,T+1,T] or column [H,T,T+1];\n"
      "with --what model every layer's heads get it ([L,H,T+1,T] or [L,H,T,T+1] in .npy); with --compare A's and B's\n"
      "heads get theirs and the difference B's minus A's.\n"
      "Example: attnscope export --what heads --format png --scale 2 --text \"The cat sat on the mat.\" "
      "--kind gqa --heads 8 --groups 2 --out heads.png\n"
      "A real model: attnscope export --checkpoint gpt2/ --text \"The cat sat on the mat.\" --layer 5 --what heads "
      "--format png --out layer5.png\n"
      "Its model view: attnscope export --checkpoint gpt2/ --text \"The cat sat on the mat.\" --what model "
      "--format png --out gpt2-model.png\n"
      "Why a head attends: attnscope export --checkpoint gpt2/ --text \"The cat sat on the mat.\" --what qk-attribution "
      "--layer 5 --head 1 --query 6 --key 2 --format csv --out why.csv\n"
      "Rollout and flow: attnscope export --checkpoint gpt2/ --text \"The cat sat on the mat.\" --what rollout --flow "
      "--format png --out rollout.png\n"
      "A long input (up to 8192 tokens, each head computed on demand): attnscope export --checkpoint Llama-3.2-1B/ "
      "--text-file page.txt --long --what head:3 --layer 5 --pool max --pixels 1024 --format png --out long.png\n"
      "Its layer's heads, or every layer's: ... --long --what heads --layer 5 --format png --out layer5.png; "
      "... --long --what model --pixels 128 --format png --out model.png\n"
      "Compare A/B: attnscope export --compare mha.json mqa.json --format png --out mha-vs-mqa.png "
      "(--compare-view difference: B - A on a diverging scale)");
  cmd->callback([options] { run(*options); });
}

CommandRegistrar registrar(add_export_command);

}  // namespace
}  // namespace attnscope::cli
