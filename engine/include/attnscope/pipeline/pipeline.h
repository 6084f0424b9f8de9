// pipeline.h — one request → one engine pipeline → one result that every view reads
// (engine/src/pipeline/README.md; ARCHITECTURE.md's Scene → engine → Analysis → views).
//
//   Request ──source──► seeded scene:      analyse(scene, what)                        ─┐
//                       checkpoint:        tokens (once) → K/V conversion → forward (once) ├─► Result
//                       attentions file:   the file's layer                              ─┘     │
//           ──steps───► each step the request lists, in the order of pipeline_steps(), ◄───────┘
//                       reading the Result and adding its own part (head_patterns, head_statistics, …)
// Cancellation is checked inside the forward (between layers) and between steps: a cancelled run
// throws Cancelled and returns nothing, never a partial Result.
// The callers only schedule and cache: the window's compute worker (app/core/compute_worker.h) runs a
// request's first steps for the heatmaps and the rest later with run_steps() on the same Result; the
// command line (`compute`/`export --checkpoint`) runs one request with every step it writes. Both keep a
// Cache if they want pieces of an earlier request reused (the converted model, the unconverted run, the
// tokens, the head pattern scores of the same stack).
//
// A new analysis is one new step: a value in Step, an entry in pipeline_steps() (its name, what it
// needs, its function) and its part in Result; no caller changes besides asking for it.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/analysis/head_patterns.h"
#include "attnscope/analysis/rollout.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/lens.h"
#include "attnscope/model/model.h"
#include "attnscope/model/qk_attribution.h"
#include "attnscope/pipeline/model_input.h"
#include "attnscope/scene/scene.h"

namespace attnscope::pipeline {

// How a request gives a checkpoint its tokens.
struct TokenInput {
  enum class Form {
    window,  // the window's input box: "ids: 1 2 3" gives ids, other text goes through the tokenizer
    text,    // text through the checkpoint's tokenizer (add_special_tokens as asked)
    ids,     // ids as given, labelled by the tokenizer when the folder has one
  };
  Form form = Form::window;
  std::string text;             // window and text
  std::vector<int32_t> ids;     // ids
  bool add_special_tokens = true;
  // The message when text needs a tokenizer the folder lacks: "{}" is replaced by the loader's reason.
  std::string no_tokenizer = "this checkpoint has no tokenizer: type token ids instead, e.g. \"ids: 1 2 3\" ({})";
  bool operator==(const TokenInput&) const = default;
};

// The analyses a request may ask for after its forward pass (or its scene's analysis). Each is one entry
// of pipeline_steps(); they run in that order whatever order a request lists them in.
enum class Step : uint8_t {
  // Every head's attention-sink, previous-token and induction score (head_patterns.h; lesson 6's table),
  // of the checkpoint's or the attentions file's stack. Needs a stack (skipped for a seeded scene).
  head_patterns,
  // The analysed layer's head statistics (entropy, JS similarity, drift from MHA: attention_statistics);
  // with Request::kv_heads > 0 also each head's drift from the unconverted model's same layer, whose run
  // (Result::original_run) this step makes or takes from the Cache.
  head_statistics,
  // Why a head attends (model/qk_attribution.h): the score of head Request::head of Request::layer at
  // (Request::query, Request::key) split into query-part × key-part contributions. Needs a checkpoint: its own
  // forward pass with the trace's parts and the layer's detail (counted in `forwards`; the Cache keeps it, so
  // another cell of the same model, input and layer costs only the attribution). With Request::ablation's heads
  // it splits the ablated pass's score (the one the views draw). A cell the model refuses (bad index, a masked
  // key, a linear layer) is recorded in Result::qk_attribution_error.
  qk_attribution,
  // Attention rollout of every layer of the stack (analysis/rollout.h: Ā_l, Â_l, Ã_l). Needs a stack.
  rollout,
  // Attention flow into Request::flow_position (−1: every position) after every layer, from the rollout's
  // capacities (made here when the rollout step did not run). Needs a stack; refused (Result::flow_error)
  // above flow_max_tokens tokens. Reports Request::progress.
  flow,
  // The logit lens of every layer and position (model/lens.h logit_lens, Request::lens_top_k next tokens).
  // Needs a checkpoint: the forward keeps its residual stream (lens_forward_options) only when a request
  // lists this step or logit_attribution. An attentions file records lens_error instead.
  logit_lens,
  // Every head's (and every other part's) direct logit attribution of Request::attribute_token (−1: each
  // position's own top-1) at every position (model/lens.h direct_logit_attribution). Needs a checkpoint.
  logit_attribution,
};

// The longest input the flow step takes: one position after every layer costs ≈ 0.5 s of CPU at T = 128
// with 12 layers (bench/bench_rollout.cpp), every position ≈ T/4 times that, and it grows as T³.
inline constexpr int flow_max_tokens = 128;

struct Request {
  // The source, one of three: a seeded scene, a checkpoint, an attentions file.
  std::optional<Scene> scene;
  AnalysisRequest what;  // with a scene: the parts analyse() makes
  std::shared_ptr<const model::Model> model;
  std::shared_ptr<const model::AttentionStack> attentions;
  // A checkpoint's input, and the layer analysed in detail (the Heads view's; −1: none, e.g. `compute`
  // without --layer and `export --what model`). An attentions file's layer must be ≥ 0.
  TokenInput input;
  int layer = 0;
  // > 0: pool the checkpoint's K/V to this many heads per layer first (convert_kv_heads; at the
  // checkpoint's own count nothing is pooled and the drift is exactly 0); 0: as trained, no drift.
  int kv_heads = 0;
  // Parts of the forward pass the views do not need but `compute --checkpoint` writes.
  bool keep_logits = false;  // Result::logits [T, V]
  bool keep_detail = false;  // Result::detail (the layer's q, k, v, scores, … for the .npy files)
  std::vector<Step> steps;
  // Step qk_attribution's cell (with `layer`): the head and the query and key positions, from 0.
  int head = 0, query = 0, key = 0;
  // Step flow: the receiving position (−1: every position), and the fraction done (called on the thread
  // that runs the step; may be empty).
  int flow_position = -1;
  std::function<void(double)> progress;
  int lens_top_k = 5;             // logit_lens: next tokens kept per layer and position
  int32_t attribute_token = -1;   // logit_attribution: the token attributed at every position (−1: each one's top-1)
  // Heads switched off (forward.h HeadAblation: zero, or the mean over the input's positions; no heads: none).
  // A checkpoint's forward runs with them (so `run`, the stack and every step are the ablated pass's), and
  // Result::ablation compares it with the same model's unablated run. check_head_ablation's refusals
  // (a head or layer outside the model, a linear/mixer layer, a head listed twice) are InputErrors.
  model::HeadAblation ablation;
  // Long inputs (model/head_maps.h): on_demand runs the checkpoint's forward without the [L, H, T, T] stack, up
  // to model::max_on_demand_tokens; Result::head_maps gives any head's map and its pooled overview. Chosen by
  // the caller (not automatic: a view asks for it when the stack would not fit, see model::stack_fits). Then no
  // layer analysis is made (Result::analysis stays null; `layer` is ignored) and the steps that need every
  // layer's attention at once (head_patterns, rollout, flow) record an error naming the stack's limit;
  // keep_detail, an ablation, an attentions file and a seeded scene are refused (InputError).
  model::AttentionKeep attention = model::AttentionKeep::stack;
};

// What a request made, counted (tests check that tokens and the forward are made once per request).
struct Counters {
  int tokenizer_loads = 0;      // load_tokenizer_cached() calls
  int tokenizations = 0;        // texts encoded to ids (0 for ids given as ids)
  int forwards = 0;             // forward passes of the requested (possibly converted) model
  int original_forwards = 0;    // forward passes of the unconverted model (head_statistics' drift)
  int conversions = 0;          // convert_kv_heads calls
  int unablated_forwards = 0;   // forward passes without the request's ablation (what it is compared with)
  std::vector<Step> steps_run;  // the steps that ran, in order
  int traced_forwards = 0;      // forwards that kept the residual stream and its parts (logit_lens, logit_attribution)
};

// A request with heads switched off: the ablated pass (Result::run) against the unablated one of the same
// (converted) model, input and layer. Legend: L layers, H the most heads of any layer, T tokens.
struct AblationComparison {
  model::HeadAblation ablation;                 // the heads switched off (the request's)
  std::shared_ptr<const ModelLayerRun> before;  // the unablated run (its top-5 next tokens, its stack)
  model::InputLoss loss_before, loss_after;     // −ln P(next token) on the input, before and after
  int layers = 0, heads = 0;
  std::vector<float> head_change;  // [L·H] largest |ΔA| over a head's cells (linear layers: their maps M)
  std::vector<float> layer_change; // [L] the largest of the layer's heads
  int first_changed_layer = -1;    // the lowest layer with a head switched off (the layers before are unchanged)
  float change(int layer, int head) const { return head_change[size_t(layer) * size_t(heads) + size_t(head)]; }
};

struct Result {
  Request request;
  // What the Heads views, the statistics and export read: the scene's analysis, or the checkpoint's or
  // file's detail layer (then it points into `run`).
  std::shared_ptr<const Analysis> analysis;
  // A checkpoint or attentions file: its tokens (null for a file), the model that ran (the converted one
  // with kv_heads), and the run: the layer's analysis, every position's top-5, every layer's stack.
  std::shared_ptr<const ModelTokens> tokens;
  std::shared_ptr<const model::Model> ran_model;
  std::shared_ptr<const ModelLayerRun> run;
  // Request::attention = on_demand: what every head's map is recomputed from (run->stack is then null).
  std::shared_ptr<const model::HeadMaps> head_maps;
  // With keep_logits / keep_detail.
  std::shared_ptr<const Mat> logits;
  std::shared_ptr<const model::LayerDetail> detail;
  std::vector<model::LayerMaps> layer_maps;  // [L] of the forward (checkpoint only)
  // With kv_heads > 0: the unconverted model's run of the same input and layer; run() attaches it when
  // the Cache has it already, head_statistics makes it otherwise.
  std::shared_ptr<const ModelLayerRun> original_run;
  // Step head_patterns (null with head_patterns_error when the stack cannot be scored, e.g. one token).
  std::shared_ptr<const HeadPatternScores> head_patterns;
  std::string head_patterns_error;
  // Step head_statistics (null with head_stats_error when they cannot be made).
  std::shared_ptr<const HeadStats> head_stats;
  std::string head_stats_error;
  // Step qk_attribution (null with qk_attribution_error when the cell is refused or the source has no model).
  std::shared_ptr<const model::QkAttribution> qk_attribution;
  std::string qk_attribution_error;
  // Steps rollout and flow (null with rollout_error / flow_error when they cannot be made: a stack the
  // rollout refuses, a flow position outside the input, an input longer than flow_max_tokens).
  std::shared_ptr<const Rollout> rollout;
  std::string rollout_error;
  std::shared_ptr<const AttentionFlow> flow;
  std::string flow_error;
  // With logit_lens or logit_attribution asked: the forward's logits and trace (ForwardTaps residual and
  // parts; its attentions are in `run`), what those steps read. Null otherwise.
  std::shared_ptr<const model::ForwardResult> traced;
  // Steps logit_lens and logit_attribution (null with their error when they cannot be made).
  std::shared_ptr<const model::LogitLens> lens;
  std::string lens_error;
  std::shared_ptr<const model::LogitAttribution> attribution;
  std::string attribution_error;
  // With Request::ablation's heads: run is the ablated pass and this compares it with the unablated one.
  std::shared_ptr<const AblationComparison> ablation;
  Counters counters;
  bool done(Step step) const;
};

// What a caller keeps between requests to reuse pieces of an earlier one. Worker-thread only.
struct Cache {
  std::shared_ptr<const model::Model> converted_from, converted;  // the last K/V conversion
  int converted_kv_heads = 0;
  // The last unconverted run: its model, input and layer, and the run.
  std::shared_ptr<const model::Model> original_model;
  TokenInput original_input;
  int original_layer = 0;
  std::shared_ptr<const ModelLayerRun> original_run;
  // The last tokens: the checkpoint folder and input they are of.
  std::string tokens_dir;
  TokenInput tokens_input;
  std::shared_ptr<const ModelTokens> tokens;
  // What making `tokens` cost when needs_on_demand() made them and no run has taken them yet: the run that
  // takes them counts it (its tokens were made once, for it).
  int tokens_unclaimed_loads = 0, tokens_unclaimed_tokenizations = 0;
  // The last head pattern scores and the stack they are of (another layer of a file is the same stack).
  std::shared_ptr<const model::AttentionStack> patterns_stack;
  std::shared_ptr<const HeadPatternScores> head_patterns;
  std::string head_patterns_error;
  // Step qk_attribution's forward pass (parts and the layer's detail) and the model, input and layer it is of.
  std::shared_ptr<const model::Model> qk_model;
  TokenInput qk_input;
  int qk_layer = -1;
  model::HeadAblation qk_ablation;
  std::shared_ptr<const model::ForwardResult> qk_forward;
  // The last unablated run an ablation was compared with, and its loss: its (ran) model, input and layer.
  std::shared_ptr<const model::Model> unablated_model;
  TokenInput unablated_input;
  int unablated_layer = 0;
  std::shared_ptr<const ModelLayerRun> unablated_run;
  model::InputLoss unablated_loss;
};

struct StepInfo {
  Step step;
  const char* name;  // "head_patterns", as README and tests name it
  bool needs_stack;  // runs only with a checkpoint or an attentions file (skipped for a seeded scene)
  // Adds the step's part to `result`. Throws Cancelled; a step whose input does not allow it records its
  // own error in `result` instead of throwing.
  void (*run)(Result& result, const std::atomic<bool>* cancel, Cache* cache);
};
// Every step, in the order they run.
const std::vector<StepInfo>& pipeline_steps();

// Runs the request: its source (for a checkpoint: tokens, conversion, forward), then its steps. Throws
// InputError for a request the engine refuses (bad layer, ids, K/V count; the message names it) and
// Cancelled once *cancel is set (checked between layers and between steps).
Result run(const Request& request, const std::atomic<bool>* cancel = nullptr, Cache* cache = nullptr);

// Runs the steps of `steps` that `result` has not run yet (in pipeline_steps() order), adding their parts.
// Throws Cancelled (result then holds no part of the cancelled step; the parts of the steps before it
// may be there, so a caller that must not show a partial result runs this on a copy).
void run_steps(Result& result, const std::vector<Step>& steps, const std::atomic<bool>* cancel = nullptr,
               Cache* cache = nullptr);

// The tokens of a checkpoint's input (one tokenizer load, one encoding at most), counted in `counters`.
ModelTokens request_tokens(const std::filesystem::path& checkpoint, const TokenInput& input, Counters* counters = nullptr);

// Whether a checkpoint request's whole [L, H, T, T] stack is beyond model::stack_fits at its input's token
// count, so that it must run with Request::attention = on_demand (a long input). The tokens are made as run()
// makes them and kept in `cache`: the run of the same input that follows takes them (and counts them) instead
// of making them again. False for a scene or an attentions file. Throws InputError as run() does for the input.
bool needs_on_demand(const Request& request, Cache& cache);

// A seeded scene's analysis, through run(): what the command line's `export` and `relpos` and the window's
// scene files kept as Compare A ask of a scene of their own.
std::shared_ptr<const Analysis> analyse_scene(Scene scene, const AnalysisRequest& what,
                                              const std::atomic<bool>* cancel = nullptr);

// What the window opens from a path: a checkpoint folder (or a file in it), or an attentions file or folder
// (model::find_attention_files). A checkpoint's tokenizer is loaded here too, once (load_tokenizer_cached, the
// one every run() of the folder then takes), so the first forward does not wait for it and the window can name
// it; a folder whose tokenizer cannot be used still opens (tokenizer_error says why: ids only). The window's
// input is checked against the model here too, off the UI thread, before its first request.
struct Opened {
  std::filesystem::path dir;  // the checkpoint folder; for attentions the file when named directly, else its folder
  std::shared_ptr<const model::Model> model;
  std::shared_ptr<const model::AttentionStack> attentions;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string tokenizer_error;
  // With `input` given (the window's sentence on screen) and a checkpoint opened: why that input cannot go
  // into the model ("" when it can: model_input_problem), and what the model opens on instead
  // (default_model_input; "" when it has none, e.g. a vocabulary of one token).
  std::optional<std::string> input;
  std::string input_problem, default_input;
};
// Opened::dir of a path, before anything is read (what a caller names when opening it fails).
std::filesystem::path source_dir(const std::filesystem::path& path);
// Throws InputError (the file and the problem named), Cancelled once *cancel is set, std::bad_alloc.
Opened open_source(std::filesystem::path path, const model::Progress& progress = {},
                   const std::atomic<bool>* cancel = nullptr, std::optional<std::string> input = std::nullopt);

}  // namespace attnscope::pipeline
