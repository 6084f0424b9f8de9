#include "core/compute_worker.h"

#include <algorithm>
#include <exception>
#include <new>

#include "attnscope/core/error.h"

namespace attnscope::gui {
namespace {

// What decides an analysis: the request the view asks for, and the scene without its view settings
// (which only change colours and the highlighted row).
AnalysisKey analysis_key_of(const Scene& scene) {
  AnalysisKey key{scene, request_for(scene), std::nullopt};
  key.scene.view = ViewSettings{};
  return key;
}

}  // namespace

ComputeWorker::ComputeWorker(std::function<void()> on_result, std::chrono::milliseconds statistics_wait, bool threaded)
    : on_result_(std::move(on_result)), statistics_wait_(statistics_wait),
      thread_([this](bool wait) { return work(wait); }, threaded) {}

ComputeWorker::~ComputeWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    pending_.reset();
    cancel_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t ComputeWorker::submit(const Scene& scene, std::optional<ModelSource> model) {
  Job job;
  job.scene = scene;
  job.analysis_key = analysis_key_of(scene);
  if (model) {  // the model's layer depends on the model, the text and the layer alone
    job.analysis_key = AnalysisKey{Scene{}, AnalysisRequest{}, std::move(model)};
  }
  job.submitted = Clock::now();
  {
    std::lock_guard lock(mutex_);
    job.generation = next_generation_++;
    // A running analysis of other settings is wasted work now; one of the same settings is what
    // the new job would redo, so let it finish and reuse it.
    if (running_ && running_key_ != job.analysis_key) cancel_ = true;
    if (!busy_locked()) busy_since_ = job.submitted;
    pending_ = std::move(job);
  }
  wake_.notify_all();
  return next_generation_ - 1;
}

std::optional<ComputeResult> ComputeWorker::take_result() {
  std::lock_guard lock(mutex_);
  std::optional<ComputeResult> out = std::move(result_);
  result_.reset();
  return out;
}

bool ComputeWorker::busy() const {
  std::lock_guard lock(mutex_);
  return busy_locked();
}

double ComputeWorker::seconds_busy() const {
  std::lock_guard lock(mutex_);
  if (!busy_locked()) return 0;
  return std::chrono::duration<double>(Clock::now() - busy_since_).count();
}

bool ComputeWorker::idle() const {
  std::lock_guard lock(mutex_);
  return !running_ && !pending_;
}

void ComputeWorker::wait_until_idle() {
  std::unique_lock lock(mutex_);
  ++idle_waiters_;
  wake_.notify_all();  // the statistics need not wait for a frame that a blocked UI cannot draw
  if (thread_.threaded()) {
    idle_.wait(lock, [this] { return !running_ && !pending_; });
  } else {
    while (running_ || pending_) {
      lock.unlock();
      thread_.pump();
      lock.lock();
    }
  }
  --idle_waiters_;
}

void ComputeWorker::presented(uint64_t generation) {
  {
    std::lock_guard lock(mutex_);
    if (generation <= presented_) return;
    presented_ = generation;
  }
  wake_.notify_all();
}

bool ComputeWorker::wait_for_result(std::chrono::microseconds timeout) {
  if (!thread_.threaded() && !busy()) return false;
  if (!thread_.threaded()) thread_.pump();  // the heatmaps take one call
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, thread_.threaded() ? timeout : std::chrono::microseconds(0),
                        [this] { return result_.has_value(); });
}

namespace {

// The job's request: its scene (what the view asks analysed) or its model source, with the steps of the
// first delivery.
pipeline::Request request_of(const Scene& scene, const AnalysisKey& key) {
  pipeline::Request r;
  if (const std::optional<ModelSource>& source = key.model) {
    r.model = source->model;
    r.attentions = source->attentions;
    if (r.attentions) r.model = nullptr;  // the file's layer: no model runs
    r.input.text = source->input;  // the input box's rule: "ids: 1 2 3" or text
    if (!source->no_tokenizer.empty()) r.input.no_tokenizer = source->no_tokenizer;
    r.layer = source->layer;
    r.kv_heads = source->kv_heads;
    r.ablation = source->ablation;
    if (source->qk) {  // the Heads view's "why" panel: its cell, from the same pass
      r.head = source->qk->head;
      r.query = source->qk->query;
      r.key = source->qk->key;
    }
    if (source->lens) {  // the Logit lens window: both lens steps with the heatmaps, from the same forward
      r.steps = {pipeline::Step::head_patterns, pipeline::Step::logit_lens, pipeline::Step::logit_attribution};
      r.attribute_token = source->attribute_token;
      if (source->qk) r.steps.push_back(pipeline::Step::qk_attribution);
      return r;
    }
  } else {
    r.scene = scene;
    r.what = key.request;
  }
  r.steps = {pipeline::Step::head_patterns};
  if (key.model && key.model->qk) r.steps.push_back(pipeline::Step::qk_attribution);
  return r;
}

// The key without its QK cell: two jobs equal in this differ only in the cell the "why" panel asks about.
AnalysisKey without_qk(AnalysisKey key) {
  if (key.model) key.model->qk.reset();
  return key;
}

// `last` with the QK attribution of `cell` instead of its own (the step alone; its forward from the Cache).
pipeline::Result with_qk_cell(const pipeline::Result& last, const model::QkCell& cell, const std::atomic<bool>* cancel,
                              pipeline::Cache* cache) {
  pipeline::Result out = last;  // a copy: a cancelled step leaves the delivered result as it was
  out.request.head = cell.head;
  out.request.query = cell.query;
  out.request.key = cell.key;
  if (std::find(out.request.steps.begin(), out.request.steps.end(), pipeline::Step::qk_attribution) ==
      out.request.steps.end())
    out.request.steps.push_back(pipeline::Step::qk_attribution);
  std::erase(out.counters.steps_run, pipeline::Step::qk_attribution);
  out.qk_attribution.reset();
  out.qk_attribution_error.clear();
  pipeline::run_steps(out, {pipeline::Step::qk_attribution}, cancel, cache);
  return out;
}

// The parts of a pipeline result the views read.
void read_result(ComputeResult& out, const std::shared_ptr<const pipeline::Result>& r) {
  out.pipeline_result = r;
  out.analysis = r->analysis;
  out.model_run = r->run;
  out.original_run = r->original_run;
  out.head_patterns = r->head_patterns;
  out.head_patterns_error = r->head_patterns_error;
  out.ablation = r->ablation;
  out.stats = r->head_stats;
  out.stats_error = r->head_stats_error;
}

}  // namespace

bool ComputeWorker::is_long(const Job& job) {
  return job.analysis_key.model && pipeline::needs_on_demand(request_of(job.scene, job.analysis_key), cache_);
}

void ComputeWorker::compute_long(const Job& job, ComputeResult& out) {
  const ModelSource& source = *job.analysis_key.model;
  // What decides the forward pass: the model and its input (not the layer, the pooling or the zoom).
  ModelSource pass = source;
  pass.layer = 0;
  pass.pooling = model::Pooling::max;
  pass.pixels = 0;
  pass.long_zoom.reset();
  pass.qk.reset();
  const AnalysisKey key{Scene{}, AnalysisRequest{}, pass};
  if (!last_ || !last_->head_maps || last_key_ != key) {
    last_.reset();  // its memory goes before the next request takes more
    last_key_.reset();
    last_long_.reset();
    last_overview_.reset();
    long_cache_.clear();
    last_model_view_.reset();
    pipeline::Request r = request_of(job.scene, job.analysis_key);
    r.attention = model::AttentionKeep::on_demand;
    r.layer = -1;
    // The head patterns need the whole stack (the step records why: lesson 6's table says it); the lens reads the
    // residual stream. No "why" panel: its attribution needs the layer's whole detail.
    r.steps = {pipeline::Step::head_patterns};
    if (source.lens) r.steps = {pipeline::Step::head_patterns, pipeline::Step::logit_lens, pipeline::Step::logit_attribution};
    auto made = std::make_shared<const pipeline::Result>(pipeline::run(r, &cancel_, &cache_));
    forward_passes_ += made->counters.forwards;
    last_ = std::move(made);
    last_key_ = key;
  }
  read_result(out, last_);
  const Colormap colormap = parse_colormap(job.scene.view.colormap);
  // Each head's map made is pooled to the Heads view's and the Model view's sizes (both poolings) at once.
  long_cache_.set_sizes({source.pixels, source.thumb_pixels});
  const LongHeads* had = last_long_.get();
  if (had && had->layer == source.layer && had->pooling == source.pooling && had->pixels == source.pixels &&
      had->colormap == colormap) {
    if (had->zoom != source.long_zoom) {  // only the zoom: the pooled heads stay
      auto zoomed = std::make_shared<LongHeads>(*had);
      set_long_zoom(*zoomed, *last_->head_maps, source.long_zoom);
      last_long_ = std::move(zoomed);
    }
  } else {
    last_long_ = std::make_shared<const LongHeads>(make_long_heads(*last_->head_maps, last_->ran_model->name, source.layer,
                                                                   source.pooling, source.pixels, colormap,
                                                                   source.long_zoom, last_->tokens->labels, &cancel_,
                                                                   long_cache_));
  }
  out.long_heads = last_long_;
  last_overview_ = std::make_shared<const LongOverview>(make_long_overview(*last_->head_maps, long_cache_,
                                                                           last_->ran_model->name, source.pooling,
                                                                           source.thumb_pixels, colormap,
                                                                           last_overview_.get()));
  out.long_overview = last_overview_;
}

ComputeResult ComputeWorker::compute(const Job& job) {
  ComputeResult out;
  out.generation = job.generation;
  out.scene = job.scene;
  if (const std::optional<ModelSource>& source = job.analysis_key.model)
    out.of_model = source->model ? static_cast<const void*>(source->model.get()) : source->attentions.get();
  try {
    if (is_long(job)) {
      compute_long(job, out);
      return out;
    }
    // The long input's settings mean nothing to a stack's request.
    AnalysisKey key = job.analysis_key;
    if (key.model) {
      key.model->pooling = model::Pooling::max;
      key.model->pixels = 0;
      key.model->long_zoom.reset();
    }
    if (last_ && last_->head_maps) {  // a long input's pass: nothing of it serves a stack's request
      last_.reset();
      last_key_.reset();
      last_long_.reset();
      last_overview_.reset();
      long_cache_.clear();
    }
    const std::optional<model::QkCell> qk = key.model ? key.model->qk : std::nullopt;
    if (last_ && last_key_ && last_key_ != key && without_qk(*last_key_) == without_qk(key)) {
      // Only the "why" panel's cell changed: the last pass stays, the attribution step runs alone (none when the
      // panel closed).
      if (qk) {
        const int forwards = last_->counters.forwards;
        auto made = std::make_shared<const pipeline::Result>(with_qk_cell(*last_, *qk, &cancel_, &cache_));
        forward_passes_ += made->counters.forwards - forwards;
        last_ = std::move(made);
      }
      last_key_ = key;
    }
    if (!last_ || last_key_ != key) {
      // What is made from every layer (the model view) stays while the stack does: another layer of an
      // attentions file is the same stack.
      const std::shared_ptr<const model::AttentionStack> previous_stack = last_ && last_->run ? last_->run->stack : nullptr;
      last_.reset();  // its memory goes before the next request takes more
      last_key_.reset();
      auto made = std::make_shared<const pipeline::Result>(
          pipeline::run(request_of(job.scene, key), &cancel_, &cache_));
      forward_passes_ += made->counters.forwards + made->counters.original_forwards + made->counters.unablated_forwards;
      if (!made->run || !previous_stack || made->run->stack != previous_stack) last_model_view_.reset();
      last_ = std::move(made);
      last_key_ = key;
    }
    read_result(out, last_);
    out.pictures = std::make_shared<const Pictures>(make_pictures(*out.analysis, job.scene.view));
    // The Model view's atlas of this pass and colormap, when made already (else in the second delivery).
    if (out.model_run && last_model_view_ && last_model_view_->stack == out.model_run->stack &&
        last_model_view_->colormap == parse_colormap(job.scene.view.colormap) &&
        last_model_view_->token_set == model_view_token_set(job.scene.view.token_set, out.model_run->stack->tokens))
      out.model_view = last_model_view_;
  } catch (const InputError& e) {
    out.error = e.what();
  } catch (const Cancelled&) {
    throw;
  } catch (const std::bad_alloc&) {
    out.error = "not enough memory for these settings; try fewer tokens or heads";
  } catch (const std::exception& e) {
    out.error = std::string("internal error: ") + e.what();
  }
  return out;
}

std::optional<ComputeResult> ComputeWorker::add_statistics(const ComputeResult& first) {
  ComputeResult out = first;
  if (model_view_wanted(first)) {
    try {
      auto made = std::make_shared<ModelViewPictures>(
          make_model_view(*first.model_run->stack, parse_colormap(first.scene.view.colormap), &cancel_,
                          color_scale_of(first.scene.view), first.scene.view.token_set));
      made->stack = first.model_run->stack;
      last_model_view_ = made;
      out.model_view = last_model_view_;
    } catch (const Cancelled&) {
      return std::nullopt;
    } catch (const std::bad_alloc&) {
      out.model_view_error = "not enough memory for the model view of this input; try fewer tokens";
    } catch (const std::exception& e) {
      out.model_view_error = e.what();
    }
  }
  if (first.stats || !first.pipeline_result) return out;
  pipeline::Result more = *first.pipeline_result;  // a copy: a cancelled step leaves the delivered result as it was
  try {
    pipeline::run_steps(more, {pipeline::Step::head_statistics}, &cancel_, &cache_);
  } catch (const Cancelled&) {
    return std::nullopt;
  }
  forward_passes_ += more.counters.original_forwards - first.pipeline_result->counters.original_forwards;
  auto shared = std::make_shared<const pipeline::Result>(std::move(more));
  if (last_ == first.pipeline_result) last_ = shared;  // reused when only view settings change
  const std::shared_ptr<const ModelViewPictures> model_view = out.model_view;
  const std::string model_view_error = out.model_view_error;
  read_result(out, shared);
  out.model_view = model_view;
  out.model_view_error = model_view_error;
  return out;
}

bool ComputeWorker::model_view_wanted(const ComputeResult& result) {
  return result.model_run && result.model_run->stack && !result.model_view;
}

void ComputeWorker::deliver(ComputeResult result, bool statistics_follow) {
  {
    std::lock_guard lock(mutex_);
    result_ = std::move(result);  // newer than anything shown, even if more is pending
    statistics_running_ = statistics_follow;  // not busy() from the moment the heatmaps can be taken
  }
  idle_.notify_all();  // wakes wait_for_result()
  on_result_();
}

// One piece of the worker's work: the pending scene's heatmaps (the first delivery), or the head
// statistics of the heatmaps delivered last (the second), once the UI has them on screen or after
// statistics_wait, unless a newer scene is pending (worker_thread.h: wait = false answers at once).
Work ComputeWorker::work(bool wait) {
  if (statistics_) {
    bool go = false;
    {
      std::unique_lock lock(mutex_);
      const auto ready = [&] {
        return stop_ || pending_.has_value() || presented_ >= statistics_->generation || idle_waiters_ > 0;
      };
      if (wait) wake_.wait_until(lock, statistics_->due, ready);
      else if (!ready() && Clock::now() < statistics_->due) return Work::none;
      if (stop_) return Work::stop;
      go = !pending_.has_value();  // a newer scene goes first
    }
    const StatisticsJob job = std::move(*statistics_);
    statistics_.reset();
    if (go) {
      if (std::optional<ComputeResult> second = add_statistics(job.first)) deliver(std::move(*second), true);
    }
    finish_job();
    return Work::did_some;
  }
  Job job;
  {
    std::unique_lock lock(mutex_);
    if (wait) wake_.wait(lock, [this] { return stop_ || pending_.has_value() || prefetch_pending_; });
    if (stop_) return Work::stop;
    if (!pending_) {
      if (!prefetch_pending_) return Work::none;
      // Nothing asked: one head of the prefetch (a request submitted meanwhile waits for this head alone).
      lock.unlock();
      prefetch_step();
      return Work::did_some;
    }
    prefetch_pending_ = false;  // a request goes first; its result starts the prefetch again
    job = std::move(*pending_);
    pending_.reset();
    running_ = true;
    running_key_ = job.analysis_key;
    cancel_ = false;
  }
  prefetch_.reset();
  std::optional<ComputeResult> result;
  try {
    result = compute(job);
    result->seconds = std::chrono::duration<double>(Clock::now() - job.submitted).count();
  } catch (const Cancelled&) {
    // A newer scene is pending; it will produce the next result.
  }
  long_maps_made_ = long_cache_.maps_made();
  if (result && result->long_heads) {  // then the other heads, the nearest layers first, until a request comes
    const ModelSource& s = *job.analysis_key.model;
    prefetch_ = Prefetch{*result, s.layer, s.pooling, s.pixels, s.thumb_pixels, parse_colormap(job.scene.view.colormap)};
  }
  const bool statistics_wanted = result && result->analysis && result->analysis->attention &&
                                 (!result->stats || model_view_wanted(*result));
  if (result) deliver(*result, statistics_wanted);
  if (statistics_wanted) {
    statistics_ = StatisticsJob{*result, job.generation, Clock::now() + statistics_wait_};
    return Work::did_some;
  }
  finish_job();
  return Work::did_some;
}

void ComputeWorker::prefetch_step() {
  if (!prefetch_ || !last_ || !last_->head_maps) {
    prefetch_.reset();
  } else {
    Prefetch& p = *prefetch_;
    const model::HeadMaps& maps = *last_->head_maps;
    const int L = maps.layer_count();
    // The nearest layer with a head not cached: the layer on screen, then layer − 1, layer + 1, layer − 2, …
    int layer = -1, head = -1;
    for (int d = 0; d < 2 * L + 1 && layer < 0; ++d) {
      const int l = d % 2 == 0 ? p.layer + d / 2 : p.layer - (d + 1) / 2;
      if (l < 0 || l >= L) continue;
      for (int h = 0; h < maps.heads(l); ++h)
        if (!long_cache_.has(l, h)) {
          layer = l, head = h;
          break;
        }
    }
    // The prefetch never evicts: it stops where one more head would pass the cache's ceiling.
    const bool full = layer >= 0 && long_cache_.bytes() + long_cache_.head_bytes(maps.tokens) > long_cache_.ceiling();
    if (layer < 0 || full) {
      if (!last_overview_ || last_overview_->heads_cached != [&] {
            int n = 0;
            for (int l = 0; l < L; ++l)
              for (int h = 0; h < maps.heads(l); ++h) n += long_cache_.has(l, h);
            return n;
          }() || last_overview_->cache_full != full)
        deliver_overview();
      prefetch_.reset();
    } else {
      long_cache_.make(maps, layer, head, p.pooling, p.pixels);
      long_maps_made_ = long_cache_.maps_made();
      bool complete = true;
      for (int h = 0; h < maps.heads(layer); ++h) complete = complete && long_cache_.has(layer, h);
      if (complete) deliver_overview();  // the thumbnails fill a layer at a time: no flicker of single heads
    }
  }
  if (!prefetch_) {
    {
      std::lock_guard lock(mutex_);
      prefetch_pending_ = false;
    }
    idle_.notify_all();
  }
}

void ComputeWorker::deliver_overview() {
  Prefetch& p = *prefetch_;
  last_overview_ = std::make_shared<const LongOverview>(make_long_overview(
      *last_->head_maps, long_cache_, last_->ran_model->name, p.pooling, p.thumb_pixels, p.colormap, last_overview_.get()));
  p.result.long_overview = last_overview_;
  {
    std::lock_guard lock(mutex_);
    if (pending_) return;  // a newer request's result comes next
    result_ = p.result;
  }
  idle_.notify_all();
  on_result_();
}

bool ComputeWorker::prefetching() const {
  std::lock_guard lock(mutex_);
  return prefetch_pending_;
}

void ComputeWorker::wait_until_prefetched() {
  wait_until_idle();
  std::unique_lock lock(mutex_);
  if (thread_.threaded()) {
    idle_.wait(lock, [this] { return !running_ && !pending_ && !prefetch_pending_; });
  } else {
    while (running_ || pending_ || prefetch_pending_) {
      lock.unlock();
      thread_.pump();
      lock.lock();
    }
  }
}

void ComputeWorker::finish_job() {
  {
    std::lock_guard lock(mutex_);
    prefetch_pending_ = prefetch_.has_value();
    running_ = false;
    statistics_running_ = false;
    running_key_.reset();
  }
  idle_.notify_all();
}

}  // namespace attnscope::gui
