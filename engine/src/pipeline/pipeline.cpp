// pipeline.cpp — one request through the engine: its source, then its steps (pipeline.h).
#include "attnscope/pipeline/pipeline.h"

#include <algorithm>
#include <exception>
#include <new>
#include <utility>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/text/tokenizer_interface.h"

namespace attnscope::pipeline {
namespace {

std::shared_ptr<const Tokenizer> load_counted(const std::filesystem::path& checkpoint, Counters* counters) {
  if (counters) ++counters->tokenizer_loads;
  return load_tokenizer_cached(checkpoint);
}

std::string replace_reason(std::string message, const std::string& reason) {
  const size_t at = message.find("{}");
  return at == std::string::npos ? message + reason : message.replace(at, 2, reason);
}

// The unconverted checkpoint's run of the request's input and layer: the Cache's when it is of the same
// model, input and layer, else one forward pass (counted as `forwards` or `original_forwards`).
std::shared_ptr<const ModelLayerRun> unconverted_run(const Request& request, const ModelTokens& tokens,
                                                     const std::atomic<bool>* cancel, Cache* cache, int& forwards) {
  if (cache && cache->original_run && cache->original_model == request.model && cache->original_input == request.input &&
      cache->original_layer == request.layer)
    return cache->original_run;
  if (cache) cache->original_run.reset();  // its memory goes before the next pass takes more
  ++forwards;
  auto run = std::make_shared<const ModelLayerRun>(run_model_layer(*request.model, tokens, request.layer, cancel));
  if (cache) {
    cache->original_model = request.model;
    cache->original_input = request.input;
    cache->original_layer = request.layer;
    cache->original_run = run;
  }
  return run;
}

// The lens steps read the residual stream and its parts: only their requests keep them.
bool wants_trace(const Request& request) {
  for (Step step : request.steps)
    if (step == Step::logit_lens || step == Step::logit_attribution) return true;
  return false;
}

bool converts(const Request& request) {
  return request.model && request.kv_heads > 0 && request.kv_heads != request.model->original_kv_heads;
}

std::shared_ptr<const ModelTokens> tokens_of(const Request& request, Counters& counters, Cache* cache) {
  const std::string dir = request.model->dir.string();
  if (cache && cache->tokens && cache->tokens_dir == dir && cache->tokens_input == request.input) {
    counters.tokenizer_loads += std::exchange(cache->tokens_unclaimed_loads, 0);
    counters.tokenizations += std::exchange(cache->tokens_unclaimed_tokenizations, 0);
    return cache->tokens;
  }
  auto tokens = std::make_shared<const ModelTokens>(request_tokens(request.model->dir, request.input, &counters));
  if (cache) {
    cache->tokens_dir = dir;
    cache->tokens_input = request.input;
    cache->tokens = tokens;
    cache->tokens_unclaimed_loads = cache->tokens_unclaimed_tokenizations = 0;
  }
  return tokens;
}

// The largest |ΔA| of every head between two stacks of the same model and input (linear layers: their maps).
void attention_change(const model::AttentionStack& before, const model::AttentionStack& after, AblationComparison& c) {
  c.layers = after.layers;
  c.heads = after.most_heads();
  c.head_change.assign(size_t(c.layers) * size_t(c.heads), 0.0f);
  c.layer_change.assign(size_t(c.layers), 0.0f);
  for (int l = 0; l < c.layers; ++l)
    for (int h = 0; h < after.layer_heads(l); ++h) {
      const float d = (after.map(l, h) - before.map(l, h)).cwiseAbs().maxCoeff();
      c.head_change[size_t(l) * size_t(c.heads) + size_t(h)] = d;
      c.layer_change[size_t(l)] = std::max(c.layer_change[size_t(l)], d);
    }
}

// Request::ablation's comparison: the ablated run (out.run, its loss `after`) against the unablated run of the
// same model, input and layer — the Cache's when it has it, else one forward pass (unablated_forwards).
std::shared_ptr<const AblationComparison> compare_ablation(Result& out, model::InputLoss after,
                                                           const std::atomic<bool>* cancel, Cache* cache) {
  const Request& request = out.request;
  auto c = std::make_shared<AblationComparison>();
  c->ablation = request.ablation;
  c->loss_after = std::move(after);
  if (cache && cache->unablated_run && cache->unablated_model == out.ran_model && cache->unablated_input == request.input &&
      cache->unablated_layer == request.layer) {
    c->before = cache->unablated_run;
    c->loss_before = cache->unablated_loss;
  } else {
    if (cache) cache->unablated_run.reset();  // its memory goes before the next pass takes more
    model::ForwardOptions options;
    options.detail_layer = request.layer;
    options.cancel = cancel;
    ++out.counters.unablated_forwards;
    model::ForwardResult forward = model::forward(*out.ran_model, out.tokens->ids, options);
    c->loss_before = model::input_loss(forward.logits, out.tokens->ids);
    c->before = std::make_shared<const ModelLayerRun>(model_layer_run(*out.ran_model, *out.tokens, std::move(forward)));
    if (cache) {
      cache->unablated_model = out.ran_model;
      cache->unablated_input = request.input;
      cache->unablated_layer = request.layer;
      cache->unablated_run = c->before;
      cache->unablated_loss = c->loss_before;
    }
  }
  attention_change(*c->before->stack, *out.run->stack, *c);
  c->first_changed_layer = c->layers;
  for (const model::HeadRef& h : request.ablation.heads) c->first_changed_layer = std::min(c->first_changed_layer, h.layer);
  return c;
}

// What a step that needs every layer's attention at once records for a long input (no stack kept).
std::string needs_stack_error(const Result& result, const char* what) {
  return std::string(what) + " needs every layer's attention at once; this input's " + std::to_string(result.head_maps->tokens) +
         " tokens are computed per head on demand (long inputs): the whole stack's limit is " +
         std::to_string(limits::max_tokens) + " tokens (docs/math.md, \"Limits\")";
}

// Request::attention = on_demand: tokens once, the conversion (as below), one forward pass keeping q and k.
// What the lens steps read of a traced forward pass: its shapes, logits, layer kinds and trace (moved out), not
// its attentions (they go to the run).
std::shared_ptr<const model::ForwardResult> traced_part(model::ForwardResult& forward) {
  auto kept = std::make_shared<model::ForwardResult>();
  kept->layers = forward.layers, kept->heads = forward.heads, kept->kv_heads = forward.kv_heads;
  kept->tokens = forward.tokens, kept->vocab = forward.vocab;
  kept->logits = forward.logits;
  kept->layer_maps = forward.layer_maps;
  kept->trace = std::move(forward.trace);
  return kept;
}

void run_on_demand(Result& out, std::shared_ptr<const model::Model> ran, const std::atomic<bool>* cancel) {
  const Request& request = out.request;
  require(!request.keep_detail, "long inputs keep no layer's detail (q, k, v, scores of every head): ask for one head's map");
  require(request.ablation.heads.empty(), "switching heads off compares two whole attention stacks; long inputs keep "
                                          "none: use at most " + std::to_string(limits::max_tokens) + " tokens");
  model::ForwardOptions options;
  options.cancel = cancel;
  options.keep = model::AttentionKeep::on_demand;
  const bool traced = wants_trace(request);
  if (traced) {
    options = model::lens_forward_options(options);
    options.detail_layer = -1;
  }
  ++out.counters.forwards;
  out.counters.traced_forwards += traced;
  model::ForwardResult forward = model::forward(*ran, out.tokens->ids, options);
  out.layer_maps = forward.layer_maps;
  out.head_maps = forward.head_maps;
  if (traced) out.traced = traced_part(forward);
  if (request.keep_logits) out.logits = std::make_shared<const Mat>(std::move(forward.logits));
  out.run = std::make_shared<const ModelLayerRun>(model_layer_run(*ran, *out.tokens, std::move(forward)));
}

// A checkpoint's part of run(): tokens once, the conversion, the forward once.
void run_checkpoint(Result& out, const std::atomic<bool>* cancel, Cache* cache) {
  const Request& request = out.request;
  const model::Model& m = *request.model;
  const bool on_demand = request.attention == model::AttentionKeep::on_demand;
  if (request.layer >= 0 && !on_demand) check_layer(request.layer, m.config.layers);
  std::shared_ptr<const model::Model> ran = request.model;
  if (converts(request)) {
    if (cache && cache->converted && cache->converted_from == request.model && cache->converted_kv_heads == request.kv_heads) {
      ran = cache->converted;
    } else {
      if (cache) cache->converted.reset();
      ++out.counters.conversions;
      ran = model::convert_kv_heads(m, request.kv_heads);  // InputError unless kv_heads divides G
      if (cache) {
        cache->converted_from = request.model;
        cache->converted_kv_heads = request.kv_heads;
        cache->converted = ran;
      }
    }
  }
  out.ran_model = ran;
  if (on_demand) {
    out.tokens = tokens_of(request, out.counters, cache);
    return run_on_demand(out, std::move(ran), cancel);
  }
  const bool ablates = !request.ablation.heads.empty();
  if (ablates) model::check_head_ablation(ran->config, request.ablation);  // before any forward pass
  out.tokens = tokens_of(request, out.counters, cache);
  const bool traced = wants_trace(request);
  const bool plain = !request.keep_logits && !request.keep_detail && request.layer >= 0 && !traced && !ablates;
  if (!converts(request) && plain) {
    // The unconverted run is what a K/V conversion's drift is measured against: cached as that.
    out.run = unconverted_run(request, *out.tokens, cancel, cache, out.counters.forwards);
    if (request.kv_heads > 0) out.original_run = out.run;
  } else {
    model::ForwardOptions options;
    options.detail_layer = request.layer;
    options.cancel = cancel;
    if (traced) options = model::lens_forward_options(options);
    if (ablates) options.ablation = &request.ablation;
    ++out.counters.forwards;
    out.counters.traced_forwards += traced;
    model::ForwardResult forward = model::forward(*ran, out.tokens->ids, options);
    model::InputLoss loss_after;
    if (ablates) loss_after = model::input_loss(forward.logits, out.tokens->ids);
    out.layer_maps = forward.layer_maps;
    if (traced) out.traced = traced_part(forward);  // what the lens steps read; the attentions go to the run below
    if (request.keep_logits) out.logits = std::make_shared<const Mat>(std::move(forward.logits));
    Analysis analysis;
    std::shared_ptr<const model::LayerDetail> detail;
    if (request.keep_detail && forward.detail) detail = std::make_shared<const model::LayerDetail>(*forward.detail);
    out.run = std::make_shared<const ModelLayerRun>(model_layer_run(*ran, *out.tokens, std::move(forward)));
    out.detail = std::move(detail);
    if (request.kv_heads > 0 && cache && cache->original_run && cache->original_model == request.model &&
        cache->original_input == request.input && cache->original_layer == request.layer)
      out.original_run = cache->original_run;  // the drift's reference is there already
    else if (traced && !converts(request) && request.kv_heads > 0 && request.layer >= 0)
      out.original_run = out.run;  // as trained: the run is its own reference
    if (ablates) out.ablation = compare_ablation(out, std::move(loss_after), cancel, cache);
  }
  if (out.layer_maps.empty() && out.run->stack) {  // a cached run: its maps from its stack
    const model::AttentionStack& s = *out.run->stack;
    for (int l = 0; l < s.layers; ++l)
      out.layer_maps.push_back({s.linear_layer(l), s.linear_layer(l) ? s.layer_kind[size_t(l)] : "", s.layer_heads(l)});
  }
  if (request.layer >= 0) out.analysis = std::shared_ptr<const Analysis>(out.run, &out.run->analysis);
}

// Step head_patterns: once per stack (the Cache keeps the last stack's).
void step_head_patterns(Result& result, const std::atomic<bool>*, Cache* cache) {
  if (!result.run->stack) {
    result.head_patterns_error = needs_stack_error(result, "scoring every head's patterns");
    return;
  }
  const std::shared_ptr<const model::AttentionStack>& stack = result.run->stack;
  if (cache && cache->patterns_stack == stack && (cache->head_patterns || !cache->head_patterns_error.empty())) {
    result.head_patterns = cache->head_patterns;
    result.head_patterns_error = cache->head_patterns_error;
    return;
  }
  std::shared_ptr<const HeadPatternScores> scores;
  std::string error;
  try {
    scores = std::make_shared<const HeadPatternScores>(head_pattern_scores(*stack));
  } catch (const InputError& e) {
    error = e.what();  // e.g. one token: no query after the first
  }
  if (cache) {
    cache->patterns_stack = stack;
    cache->head_patterns = scores;
    cache->head_patterns_error = error;
  }
  result.head_patterns = std::move(scores);
  result.head_patterns_error = std::move(error);
}

// Step head_statistics: attention_statistics of the analysed layer, and with a K/V count the drift of each
// head from the unconverted model's same head.
void step_head_statistics(Result& result, const std::atomic<bool>* cancel, Cache* cache) {
  if (result.head_maps) result.head_stats_error = needs_stack_error(result, "the head statistics of a layer");
  if (!result.analysis || !result.analysis->attention) return;
  std::shared_ptr<const HeadStats> made;
  std::shared_ptr<const ModelLayerRun> original = result.original_run;
  std::string error;
  Counters counters = result.counters;
  try {
    const AttentionAnalysis& attention = *result.analysis->attention;
    const ModelSettings& model = result.analysis->scene.model;  // the effective one
    HeadStats stats = attention_statistics(attention, model, cancel);
    if (result.request.model && result.request.kv_heads > 0) {  // converted: each head against the same head unconverted
      if (!original) original = unconverted_run(result.request, *result.tokens, cancel, cache, counters.original_forwards);
      // A Gated DeltaNet layer (Qwen3-Next) is signed: it drifts by its weight distribution |M| per row, as
      // Compare A/B measures a side without a softmax (JS of signed rows is no drift).
      const Tensor3& before = original->analysis.attention->result.probs;
      stats.drift_from_mha = attention.linear
                                 ? head_drift(weight_distribution(attention.result.probs), weight_distribution(before), cancel)
                                 : head_drift(attention.result.probs, before, cancel);
    }
    made = std::make_shared<const HeadStats>(std::move(stats));
  } catch (const Cancelled&) {
    throw;
  } catch (const std::bad_alloc&) {
    error = "not enough memory for the head statistics of these settings; try fewer tokens or heads";
  } catch (const std::exception& e) {
    error = e.what();
  }
  result.counters = std::move(counters);
  if (made && result.request.model && result.request.kv_heads > 0) result.original_run = std::move(original);
  result.head_stats = std::move(made);
  result.head_stats_error = std::move(error);
}

// Step qk_attribution: the cell's split (model/qk_attribution.h) over a forward pass with the trace's parts
// (and the request's heads switched off), the Cache's when it is of the same model, input, layer and ablation.
void step_qk_attribution(Result& result, const std::atomic<bool>* cancel, Cache* cache) {
  const Request& request = result.request;
  try {
    require(result.ran_model && result.tokens,
            "why a head attends needs a checkpoint (its weights): an attentions file has only the maps");
    const model::Model& m = *result.ran_model;
    const model::QkCell cell{request.layer, request.head, request.query, request.key};
    model::check_qk_cell(m.config, result.layer_maps, int(result.tokens->ids.size()), cell);
    std::shared_ptr<const model::ForwardResult> forward;
    if (cache && cache->qk_forward && cache->qk_model == result.ran_model && cache->qk_input == request.input &&
        cache->qk_layer == request.layer && cache->qk_ablation == request.ablation) {
      forward = cache->qk_forward;
    } else {
      if (cache) cache->qk_forward.reset();  // its memory goes before the next pass takes more
      model::ForwardOptions options = model::qk_forward_options(request.layer);
      options.cancel = cancel;
      // With heads switched off, the pass the views draw is the ablated one: its score is split (a head switched
      // off to zeros contributes nothing, one set to its mean contributes that mean through W_O).
      if (!request.ablation.heads.empty()) options.ablation = &request.ablation;
      ++result.counters.forwards;
      forward = std::make_shared<const model::ForwardResult>(model::forward(m, result.tokens->ids, options));
      if (cache) {
        cache->qk_model = result.ran_model;
        cache->qk_input = request.input;
        cache->qk_layer = request.layer;
        cache->qk_ablation = request.ablation;
        cache->qk_forward = forward;
      }
    }
    result.qk_attribution = std::make_shared<const model::QkAttribution>(model::qk_attribution(m, *forward, cell));
    result.qk_attribution_error.clear();
  } catch (const Cancelled&) {
    throw;
  } catch (const std::bad_alloc&) {
    result.qk_attribution.reset();
    result.qk_attribution_error = "not enough memory for the attribution's forward pass; try fewer tokens";
  } catch (const std::exception& e) {
    result.qk_attribution.reset();
    result.qk_attribution_error = e.what();
  }
}

// Step rollout: attention_rollout of the run's stack (every layer; masked keys stay exactly 0).
void step_rollout(Result& result, const std::atomic<bool>* cancel, Cache*) {
  if (result.rollout) return;  // the flow step made it already
  if (!result.run->stack) {
    result.rollout_error = needs_stack_error(result, "the rollout");
    return;
  }
  RolloutOptions options;
  options.cancel = cancel;
  try {
    result.rollout = std::make_shared<const Rollout>(attention_rollout(*result.run->stack, options));
  } catch (const InputError& e) {
    result.rollout_error = e.what();
  } catch (const std::bad_alloc&) {
    result.rollout_error = "not enough memory for the rollout of this input; try fewer tokens";
  }
}

// Step flow: attention_flow into Request::flow_position after every layer, within flow_max_tokens.
void step_flow(Result& result, const std::atomic<bool>* cancel, Cache* cache) {
  if (!result.run->stack) {
    result.flow_error = needs_stack_error(result, "attention flow");
    return;
  }
  const int T = result.run->stack->tokens;
  if (T > flow_max_tokens) {
    result.flow_error = "attention flow is limited to " + std::to_string(flow_max_tokens) + " tokens (its cost grows as T³); "
                        "this input has " + std::to_string(T) + ": shorten it, or use the rollout, which has no limit";
    return;
  }
  if (!result.rollout && result.rollout_error.empty()) step_rollout(result, cancel, cache);
  if (!result.rollout) {
    result.flow_error = result.rollout_error;
    return;
  }
  FlowOptions options;
  options.position = result.request.flow_position;
  options.progress = result.request.progress;
  options.cancel = cancel;
  try {
    result.flow = std::make_shared<const AttentionFlow>(attention_flow(*result.rollout, options));
  } catch (const InputError& e) {
    result.flow_error = e.what();
  } catch (const std::bad_alloc&) {
    result.flow_error = "not enough memory for the attention flow of this input; try fewer tokens";
  }
}

// What a lens step records when it cannot run: an attentions file has no residual stream.
std::string lens_refusal(const Result& result, const char* what) {
  if (result.traced && result.ran_model) return "";
  return std::string(what) + " needs a checkpoint's forward pass (its residual stream and unembedding); "
                             "an attentions file holds only the attention probabilities";
}

template <class Make>
void lens_part(const char* what, Make make, std::string& error) {
  try {
    make();
  } catch (const Cancelled&) {
    throw;
  } catch (const std::bad_alloc&) {
    error = std::string("not enough memory for ") + what + " of this input; try fewer tokens";
  } catch (const std::exception& e) {
    error = e.what();
  }
}

// Step logit_lens.
void step_logit_lens(Result& result, const std::atomic<bool>* cancel, Cache*) {
  result.lens_error = lens_refusal(result, "the logit lens");
  if (!result.lens_error.empty()) return;
  lens_part("the logit lens", [&] {
    result.lens = std::make_shared<const model::LogitLens>(
        model::logit_lens(*result.ran_model, *result.traced, result.request.lens_top_k, cancel));
  }, result.lens_error);
}

// Step logit_attribution.
void step_logit_attribution(Result& result, const std::atomic<bool>*, Cache*) {
  result.attribution_error = lens_refusal(result, "the direct logit attribution");
  if (!result.attribution_error.empty()) return;
  lens_part("the direct logit attribution", [&] {
    std::vector<int32_t> targets;
    if (result.request.attribute_token >= 0) targets.assign(size_t(result.traced->tokens), result.request.attribute_token);
    result.attribution = std::make_shared<const model::LogitAttribution>(
        model::direct_logit_attribution(*result.ran_model, *result.traced, targets));
  }, result.attribution_error);
}

}  // namespace

bool Result::done(Step step) const {
  return std::find(counters.steps_run.begin(), counters.steps_run.end(), step) != counters.steps_run.end();
}

const std::vector<StepInfo>& pipeline_steps() {
  static const std::vector<StepInfo> steps{
      {Step::head_patterns, "head_patterns", true, step_head_patterns},
      {Step::head_statistics, "head_statistics", false, step_head_statistics},
      {Step::qk_attribution, "qk_attribution", true, step_qk_attribution},
      {Step::rollout, "rollout", true, step_rollout},
      {Step::flow, "flow", true, step_flow},
      {Step::logit_lens, "logit_lens", true, step_logit_lens},
      {Step::logit_attribution, "logit_attribution", true, step_logit_attribution},
  };
  return steps;
}

ModelTokens request_tokens(const std::filesystem::path& checkpoint, const TokenInput& input, Counters* counters) {
  TokenInput::Form form = input.form;
  std::vector<int32_t> ids = input.ids;
  if (form == TokenInput::Form::window) {
    const size_t start = input.text.find_first_not_of(" \t\n");
    if (start != std::string::npos && input.text.compare(start, 4, "ids:") == 0) {
      ids = parse_token_ids(input.text.substr(start + 4), "ids:");
      form = TokenInput::Form::ids;
    } else {
      form = TokenInput::Form::text;
    }
  }
  if (form == TokenInput::Form::ids) {
    std::shared_ptr<const Tokenizer> tokenizer;
    try {
      tokenizer = load_counted(checkpoint, counters);
    } catch (const InputError&) {
      tokenizer = nullptr;  // no tokenizer files: the ids label themselves
    }
    return tokens_from_ids(std::move(tokenizer), std::move(ids));
  }
  std::shared_ptr<const Tokenizer> tokenizer;
  try {
    tokenizer = load_counted(checkpoint, counters);
  } catch (const InputError& e) {
    throw InputError(replace_reason(input.no_tokenizer, e.what()));
  }
  if (counters) ++counters->tokenizations;
  return tokens_from_text(std::move(tokenizer), input.text, input.add_special_tokens);
}

bool needs_on_demand(const Request& request, Cache& cache) {
  if (!request.model || request.attentions || request.scene) return false;
  Counters made;
  const std::shared_ptr<const ModelTokens> tokens = tokens_of(request, made, &cache);
  cache.tokens_unclaimed_loads += made.tokenizer_loads;  // the run that takes these tokens counts them
  cache.tokens_unclaimed_tokenizations += made.tokenizations;
  return !model::stack_fits(request.model->config, int(tokens->ids.size()));
}

std::shared_ptr<const Analysis> analyse_scene(Scene scene, const AnalysisRequest& what, const std::atomic<bool>* cancel) {
  Request request;
  request.scene = std::move(scene);
  request.what = what;
  return run(request, cancel).analysis;
}

namespace {

// Opened::dir of `path`, given what model::find_attention_files found there.
std::filesystem::path dir_of(const std::filesystem::path& path, const std::optional<model::AttentionFiles>& files) {
  if (files)
    // The file when it was named, else its folder (one entry, whichever file of the folder was dropped).
    return files->attentions == path ? path : files->attentions.parent_path();
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) ? path.parent_path() : path;  // a file in the folder
}

}  // namespace

std::filesystem::path source_dir(const std::filesystem::path& path) {
  return dir_of(path, model::find_attention_files(path));
}

Opened open_source(std::filesystem::path path, const model::Progress& progress, const std::atomic<bool>* cancel,
                   std::optional<std::string> input) {
  Opened out;
  const std::optional<model::AttentionFiles> files = model::find_attention_files(path);  // looked for once
  out.dir = dir_of(path, files);
  if (files) {
    out.attentions = std::make_shared<const model::AttentionStack>(model::open_attentions(*files, progress, cancel));
    return out;
  }
  out.model = model::open(out.dir, progress, cancel);
  try {
    out.tokenizer = load_tokenizer_cached(out.dir);
  } catch (const InputError& e) {
    out.tokenizer_error = e.what();
  }
  if (input) {
    out.input_problem = model_input_problem(*out.model, *input);
    try {
      out.default_input = default_model_input(*out.model);
    } catch (const InputError&) {
      // a vocabulary of one token has no repeated sequence: the window keeps its input and shows the run's error
    }
    out.input = std::move(input);
  }
  return out;
}

Result run(const Request& request, const std::atomic<bool>* cancel, Cache* cache) {
  Result out;
  out.request = request;
  require(int(request.scene.has_value()) + int(request.model != nullptr) + int(request.attentions != nullptr) == 1,
          "a pipeline request has one source: a scene, a checkpoint or an attentions file");
  require(request.attention == model::AttentionKeep::stack || request.model,
          "long inputs (attention per head on demand) need a checkpoint: a scene or an attentions file holds its maps");
  if (request.scene) {
    out.analysis = std::make_shared<const Analysis>(analyse(*request.scene, request.what, cancel));
  } else if (request.attentions) {
    out.run = std::make_shared<const ModelLayerRun>(attention_file_layer(request.attentions, request.layer));
    out.analysis = std::shared_ptr<const Analysis>(out.run, &out.run->analysis);
  } else {
    run_checkpoint(out, cancel, cache);
  }
  run_steps(out, request.steps, cancel, cache);
  return out;
}

void run_steps(Result& result, const std::vector<Step>& steps, const std::atomic<bool>* cancel, Cache* cache) {
  for (const StepInfo& info : pipeline_steps()) {
    if (std::find(steps.begin(), steps.end(), info.step) == steps.end() || result.done(info.step)) continue;
    check_cancel(cancel);  // between steps
    if (!info.needs_stack || (result.run && (result.run->stack || result.head_maps))) info.run(result, cancel, cache);
    result.counters.steps_run.push_back(info.step);
  }
}

}  // namespace attnscope::pipeline
