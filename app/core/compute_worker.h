// compute_worker.h — runs the engine off the UI thread; the newest Scene wins.
//
//   UI thread ──submit(scene)──► pending (a newer scene replaces it; a running analysis of older
//                                settings is cancelled through its atomic flag)
//   worker    ──analyse + colour heatmaps──► result ──take_result()──► UI thread swaps it in
//             ──head statistics──────────► the same result again, with `stats`
// The heatmaps come first: the head statistics (entropy, JS similarity, drift from MHA, as much work
// as the attention itself at T = 512) follow in a second delivery of the same generation, unless a
// newer scene arrives first. They start once the UI says the heatmaps are on screen (presented()),
// or after 100 ms (statistics_wait), so that they do not compete with drawing that frame for the CPU.
// busy() covers only the heatmap part, so the spinner and the frame pacing follow what the heatmaps
// wait for.
// With a checkpoint open (ModelSource), the Analysis is that model's layer for the input text instead of
// the seeded one (core/model_input.h, as `export --checkpoint` makes it); a newer text or layer cancels
// the forward pass between layers. With an attentions file (ModelSource::attentions) the layer is the
// file's (no forward pass, no next tokens); the model view and statistics are made as for a checkpoint.
// Convert to GQA/MQA (ModelSource::kv_heads > 0): the layer is that of convert_kv_heads(model, kv_heads)
// (cached per model and kv_heads; only K/V are new), and the statistics add each head's drift from the
// unconverted model's same layer, whose run is cached per (model, input, layer): moving the K/V slider
// reruns only the converted model. At the checkpoint's own G the "converted" model is the checkpoint
// itself and the drift exactly 0.
// With a checkpoint the first delivery carries the pass's head pattern scores (head_patterns.h: every
// head's attention sink, previous-token and induction score, lesson 6's table), made once per forward
// pass (L·H·T reads, nothing beside the heatmaps) so that the UI thread only reads them.
// With a checkpoint the second delivery also carries the Model view's atlas of every layer
// (core/model_view.h), made after the heatmaps so that the Heads view does not wait for it, and again
// only for a new forward pass or another colormap (otherwise the first delivery has it).
// With ModelSource::qk the first delivery carries the cell's QK attribution (pipeline_result->qk_attribution, or
// its qk_attribution_error); a job that differs from the last only in that cell reuses the last result and runs the
// qk_attribution step alone on a copy of it.
// When only view settings changed (colormap, scale, probabilities/scores, the selected row) the last
// Analysis and its statistics are reused and only the pictures are made again.
// Everything above that is not a picture is the engine's request pipeline (attnscope/pipeline/pipeline.h):
// the worker makes one pipeline::Request per job, runs it with the first delivery's steps (head_patterns),
// and runs the same Result's remaining steps (head_statistics) for the second; the conversion, the
// unconverted run, the tokens and the pattern scores it reuses live in its pipeline::Cache. The worker
// itself only schedules, cancels, caches and colours.
// A long input (ModelSource::pooling): the layer's heads come from a cache of pooled heads (core/long_heads.h: each
// map made once, pooled by max and mean to the Heads view's and the Model view's sizes); once a request is delivered
// and none waits, the worker prefetches the other layers' heads, one head per work() call (a pumped slice), the
// nearest layers first, delivering the same result again with a fuller overview as each layer completes.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "attnscope/analysis/analysis.h"
#include "attnscope/analysis/head_patterns.h"
#include "attnscope/scene/scene.h"
#include "attnscope/model/model.h"
#include "attnscope/pipeline/model_input.h"
#include "attnscope/pipeline/pipeline.h"
#include "core/long_heads.h"
#include "core/model_view.h"
#include "core/pictures.h"
#include "core/worker_thread.h"

namespace attnscope::gui {

// A real model's layer to analyse instead of the scene's seeded layer: a checkpoint's forward pass on
// `input`, or a layer of attentions computed elsewhere (then `input` is unused: the file has its tokens).
struct ModelSource {
  std::shared_ptr<const model::Model> model;  // a checkpoint (null with an attentions file)
  std::string input;  // text for the model's tokenizer, or "ids: 1 2 3"
  int layer = 0;
  int kv_heads = 0;   // pool each layer's K/V to this many heads first (must divide G); 0: as trained, no drift
  std::shared_ptr<const model::AttentionStack> attentions = nullptr;  // an attentions file instead of a checkpoint
  // The message when the input is text and the folder has no tokenizer, in the window's language ("{}": the
  // loader's reason); empty: the engine's English (pipeline::TokenInput::no_tokenizer).
  std::string no_tokenizer = {};
  // The Logit lens window is open: the request also asks for the logit lens and the direct logit attribution of
  // this token (−1: each position's top-1), so the forward keeps the residual stream (pipeline.h).
  bool lens = false;
  int32_t attribute_token = -1;
  model::HeadAblation ablation;  // heads switched off in the checkpoint's forward (the Model view's; none: empty)
  // The Heads view's "why does this head attend here?" panel is open on this cell (its layer is `layer`): the
  // request also asks for the qk_attribution step. Another cell of the same pass runs that step alone on the last
  // result (the pipeline's Cache keeps the attribution's forward), and a newer cell cancels an older one.
  std::optional<model::QkCell> qk;
  // A long input (the checkpoint's whole stack of this input beyond model::stack_fits): the worker then runs the
  // forward with each head's map on demand (Request::attention = on_demand) and delivers the layer's heads pooled
  // to at most `pixels` blocks a side by `pooling`, and `long_zoom`'s exact cells (ComputeResult::long_heads).
  // Ignored for an input whose stack fits; changing them reruns no forward pass.
  model::Pooling pooling = model::Pooling::max;
  int pixels = 256;
  std::optional<LongZoom> long_zoom;
  // The Model view's thumbnails of a long input: every head pooled to `thumb_pixels` blocks a side by `pooling`
  // (ComputeResult::long_overview); 0: the view is closed, only the Heads view's size is cached.
  int thumb_pixels = 0;
  bool operator==(const ModelSource&) const = default;
};

// Two scenes with equal keys have the same Analysis.
struct AnalysisKey {
  Scene scene;  // view settings reset
  AnalysisRequest request;
  std::optional<ModelSource> model;
  bool operator==(const AnalysisKey&) const = default;
};

struct ComputeResult {
  uint64_t generation = 0;                    // the submit() this answers
  Scene scene;                                // the settings as submitted
  std::shared_ptr<const Analysis> analysis;   // null when the engine refused the settings
  std::shared_ptr<const Pictures> pictures;   // null on error
  // Head statistics of analysis->attention: null in the first delivery (unless reused) and when the
  // analysis has no attention; stats_error says why they could not be made.
  std::shared_ptr<const HeadStats> stats;
  std::string stats_error;
  std::string error;                          // the engine's InputError message, if any
  // The checkpoint or attentions file this result (or its error) is of — ModelSource's model or
  // attentions — or null for the seeded layer. Compared with the open one, never dereferenced.
  const void* of_model = nullptr;
  // With a ModelSource: the layer's run (analysis points into it) with every position's top-5.
  std::shared_ptr<const ModelLayerRun> model_run;
  // With ModelSource::kv_heads > 0: the unconverted model's run of the same layer and input (what the
  // drift is measured against), once it is there (the first delivery may come without it).
  std::shared_ptr<const ModelLayerRun> original_run;
  // With a ModelSource: head_pattern_scores of model_run->stack (with the ids' own repeat), in every
  // delivery of that pass; null on error or when the scores cannot be made (head_patterns_error says why,
  // e.g. a one-token input).
  std::shared_ptr<const HeadPatternScores> head_patterns;
  std::string head_patterns_error;
  // With ModelSource::ablation's heads: the unablated run, the loss on the input and every head's attention change
  // against it (model_run is the ablated pass).
  std::shared_ptr<const pipeline::AblationComparison> ablation;
  // With a ModelSource: every layer's heads as the Model view's atlas and numbers (core/model_view.h),
  // in the view's colormap; null in the first delivery of a new pass or colormap, and on error
  // (model_view_error says why).
  std::shared_ptr<const ModelViewPictures> model_view;
  std::string model_view_error;
  // The pipeline's result everything above (but the pictures) was read from: null on error. Its counters say
  // what the request made (tokens, forwards, steps).
  std::shared_ptr<const pipeline::Result> pipeline_result;
  // A long input (see ModelSource::pooling): its layer's heads pooled, and the zoom's exact cells; then analysis,
  // pictures and the stack are null (the Heads view draws these instead, the views of the whole stack say why
  // they have nothing).
  std::shared_ptr<const LongHeads> long_heads;
  // With long_heads: every layer's heads as far as the worker's cache holds them (the Model view's thumbnails, at
  // ModelSource::thumb_pixels) and how far the prefetch went. The prefetch delivers the same result again, with a
  // fuller overview, each time a layer's heads are all cached.
  std::shared_ptr<const LongOverview> long_overview;
  double seconds = 0;                         // time from submit() to the result being ready
};

class ComputeWorker {
 public:
  // on_result is called on the worker thread after each result (e.g. glfwPostEmptyEvent).
  // statistics_wait: how long the head statistics wait for presented() at most.
  // threaded: a thread of its own, or pumped (worker_thread.h; the tests of both modes).
  explicit ComputeWorker(std::function<void()> on_result,
                         std::chrono::milliseconds statistics_wait = std::chrono::milliseconds(100),
                         bool threaded = threads_available());
  ~ComputeWorker();
  ComputeWorker(const ComputeWorker&) = delete;
  ComputeWorker& operator=(const ComputeWorker&) = delete;

  // Queues `scene` (with a checkpoint: `model`'s layer instead of the seeded one) and returns its
  // generation number.
  uint64_t submit(const Scene& scene, std::optional<ModelSource> model = std::nullopt);
  // The newest finished result not taken yet.
  std::optional<ComputeResult> take_result();
  // True while a scene is pending or its heatmaps are being made; seconds_busy() says for how long.
  bool busy() const;
  double seconds_busy() const;
  // True when nothing is pending or running, head statistics included.
  bool idle() const;
  // Blocks until idle() (scripted runs).
  void wait_until_idle();
  // The UI has put the result of `generation` on screen.
  void presented(uint64_t generation);
  // Blocks until a result is ready to take or `timeout` passed; true when one is ready.
  bool wait_for_result(std::chrono::microseconds timeout);
  // Model forward passes run so far (converted and original ones; tests check what is cached).
  int forward_passes() const { return forward_passes_; }
  // A long input's head maps made so far (HeadMaps::head, by a request or the prefetch; tests check what is cached).
  int64_t long_maps_made() const { return long_maps_made_; }
  // True while the prefetch of a long input's other heads has heads left to make.
  bool prefetching() const;
  // Blocks until idle() and the prefetch is done (scripted runs, tests).
  void wait_until_prefetched();

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    uint64_t generation = 0;
    Scene scene;
    AnalysisKey analysis_key;
    Clock::time_point submitted;
  };
  // Heatmaps whose head statistics come next.
  struct StatisticsJob {
    ComputeResult first;
    uint64_t generation = 0;
    Clock::time_point due;  // when they start even if the UI has not presented the heatmaps
  };
  Work work(bool wait);  // worker_thread.h
  void finish_job();
  ComputeResult compute(const Job& job);
  // True when the job's input is too long for the whole stack (pipeline::needs_on_demand: the tokens it makes
  // are the ones the job's run then takes from cache_).
  bool is_long(const Job& job);
  // A long input's first delivery: the on-demand forward (once per model and input), then the layer's pooled
  // heads (again only when the layer, pooling, pixels or colormap changed) and the zoom.
  void compute_long(const Job& job, ComputeResult& out);
  // The second delivery: `first` with its head statistics (and, for a converted model, the original's
  // run and the drift from it; with a checkpoint, its model view), or nullopt when cancelled.
  std::optional<ComputeResult> add_statistics(const ComputeResult& first);
  static bool model_view_wanted(const ComputeResult& result);
  // One head of the prefetch: the nearest layer's next head not cached, made and pooled; the result delivered again
  // with the overview when a layer is complete, the cache full or nothing is left.
  void prefetch_step();
  void deliver_overview();
  bool busy_locked() const { return pending_.has_value() || (running_ && !statistics_running_); }
  void deliver(ComputeResult result, bool statistics_follow);

  std::function<void()> on_result_;
  std::chrono::milliseconds statistics_wait_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;  // a result delivered, or the worker idle
  std::optional<Job> pending_;
  bool running_ = false;
  bool statistics_running_ = false;  // running_, and only the head statistics are left
  uint64_t presented_ = 0;           // the newest generation on screen
  int idle_waiters_ = 0;             // UI threads in wait_until_idle (they present nothing)
  bool stop_ = false;
  std::optional<AnalysisKey> running_key_;
  Clock::time_point busy_since_;
  std::atomic<bool> cancel_{false};
  std::optional<ComputeResult> result_;
  uint64_t next_generation_ = 1;
  // Worker-thread only: the last pipeline result (with its statistics once made), reused when only view
  // settings change, and the Model view's atlas of its stack.
  std::shared_ptr<const pipeline::Result> last_;
  std::optional<AnalysisKey> last_key_;
  std::shared_ptr<const ModelViewPictures> last_model_view_;
  std::shared_ptr<const LongHeads> last_long_;  // the last long input's pooled heads (of last_)
  std::shared_ptr<const LongOverview> last_overview_;  // and its overview
  // Every pooled head of last_'s pass (both poolings at the Heads view's and the thumbnails' sizes).
  LongHeadCache long_cache_;
  // What the prefetch goes on from: the last long delivery (delivered again as the overview grows), its layer (the
  // nearest layers first), pooling, sizes and colormap. Worker-thread only; prefetch_pending_ (under mutex_) says
  // whether there is one.
  struct Prefetch {
    ComputeResult result;
    int layer = 0;
    model::Pooling pooling = model::Pooling::max;
    int pixels = 0, thumb_pixels = 0;
    Colormap colormap = Colormap::viridis;
  };
  std::optional<Prefetch> prefetch_;
  bool prefetch_pending_ = false;
  std::atomic<int64_t> long_maps_made_{0};
  // Worker-thread only: what the pipeline reuses between requests (the last K/V conversion, the last
  // unconverted run, the last tokens and head pattern scores).
  pipeline::Cache cache_;
  std::atomic<int> forward_passes_{0};
  std::optional<StatisticsJob> statistics_;  // only work() reads and writes it
  WorkerThread thread_;  // last: its thread starts once everything above exists
};

}  // namespace attnscope::gui
