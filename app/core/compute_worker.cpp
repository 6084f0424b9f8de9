#include "core/compute_worker.h"

#include <exception>
#include <new>

#include "attnscope/attention/head_stats.h"
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

ComputeWorker::ComputeWorker(std::function<void()> on_result, std::chrono::milliseconds statistics_wait)
    : on_result_(std::move(on_result)), statistics_wait_(statistics_wait), thread_([this](bool wait) { return work(wait); }) {}

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

ComputeResult ComputeWorker::compute(const Job& job) {
  ComputeResult out;
  out.generation = job.generation;
  out.scene = job.scene;
  if (const std::optional<ModelSource>& source = job.analysis_key.model)
    out.of_model = source->model ? static_cast<const void*>(source->model.get()) : source->attentions.get();
  try {
    std::shared_ptr<const Analysis> analysis;
    if (last_analysis_ && last_key_ == job.analysis_key) {
      analysis = last_analysis_;
    } else {
      // What is made from every layer (the model view, the pattern scores) stays while the stack does:
      // another layer of an attentions file is the same stack.
      const std::shared_ptr<const model::AttentionStack> previous_stack =
          last_model_run_ ? last_model_run_->stack : nullptr;
      last_analysis_.reset();
      last_model_run_.reset();
      last_stats_.reset();
      if (const std::optional<ModelSource>& source = job.analysis_key.model) {
        last_model_run_ = model_layer(*source);
        analysis = std::shared_ptr<const Analysis>(last_model_run_, &last_model_run_->analysis);
        if (!previous_stack || last_model_run_->stack != previous_stack) {
          last_model_view_.reset();
          score_head_patterns(*last_model_run_);
        }
      } else {
        last_model_view_.reset();
        last_head_patterns_.reset();
        last_head_patterns_error_.clear();
        analysis = std::make_shared<const Analysis>(analyse(job.scene, job.analysis_key.request, &cancel_));
      }
      last_analysis_ = analysis;
      last_key_ = job.analysis_key;
    }
    out.analysis = analysis;
    out.model_run = last_model_run_;
    out.head_patterns = last_head_patterns_;
    out.head_patterns_error = last_head_patterns_error_;
    if (job.analysis_key.model && job.analysis_key.model->kv_heads > 0)
      out.original_run = cached_original(*job.analysis_key.model);
    out.stats = last_stats_;
    out.pictures = std::make_shared<const Pictures>(make_pictures(*analysis, job.scene.view));
    // The Model view's atlas of this pass and colormap, when made already (else in the second delivery).
    if (last_model_run_ && last_model_view_ && last_model_view_->stack == last_model_run_->stack &&
        last_model_view_->colormap == parse_colormap(job.scene.view.colormap))
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

void ComputeWorker::score_head_patterns(const ModelLayerRun& run) {
  last_head_patterns_.reset();
  last_head_patterns_error_.clear();
  if (!run.stack) return;
  try {
    last_head_patterns_ = std::make_shared<const HeadPatternScores>(head_pattern_scores(*run.stack));
  } catch (const InputError& e) {
    last_head_patterns_error_ = e.what();  // e.g. one token: no query after the first
  }
}

std::shared_ptr<const ModelLayerRun> ComputeWorker::cached_original(const ModelSource& source) const {
  ModelSource key = source;
  key.kv_heads = 0;
  return original_run_ && original_key_ == key ? original_run_ : nullptr;
}

std::shared_ptr<const ModelLayerRun> ComputeWorker::original_layer(const ModelSource& source) {
  if (std::shared_ptr<const ModelLayerRun> cached = cached_original(source)) return cached;
  original_run_.reset();  // its memory goes before the next pass takes more
  original_key_.reset();
  const ModelTokens tokens = model_tokens_from_input(source.model->dir, source.input);
  ++forward_passes_;
  auto run = std::make_shared<const ModelLayerRun>(run_model_layer(*source.model, tokens, source.layer, &cancel_));
  original_key_ = source;
  original_key_->kv_heads = 0;
  original_run_ = run;
  return run;
}

std::shared_ptr<const ModelLayerRun> ComputeWorker::model_layer(const ModelSource& source) {
  if (source.attentions) return std::make_shared<const ModelLayerRun>(attention_file_layer(source.attentions, source.layer));
  const model::Model& m = *source.model;
  if (source.kv_heads == 0 || source.kv_heads == m.original_kv_heads) return original_layer(source);  // nothing pooled
  if (converted_from_ != source.model || converted_kv_heads_ != source.kv_heads) {
    converted_.reset();
    converted_ = model::convert_kv_heads(m, source.kv_heads);  // InputError unless kv_heads divides G
    converted_from_ = source.model;
    converted_kv_heads_ = source.kv_heads;
  }
  const ModelTokens tokens = model_tokens_from_input(m.dir, source.input);
  ++forward_passes_;
  return std::make_shared<const ModelLayerRun>(run_model_layer(*converted_, tokens, source.layer, &cancel_));
}

std::optional<ComputeResult> ComputeWorker::add_statistics(const ComputeResult& first,
                                                           const std::optional<ModelSource>& source) {
  ComputeResult out = first;
  if (model_view_wanted(first)) {
    try {
      auto made = std::make_shared<ModelViewPictures>(
          make_model_view(*first.model_run->stack, parse_colormap(first.scene.view.colormap), &cancel_,
                          color_scale_of(first.scene.view)));
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
  if (first.stats) return out;
  try {
    const AttentionAnalysis& attention = *first.analysis->attention;
    const ModelSettings& model = first.analysis->scene.model;  // the effective one
    HeadStats stats = attention_statistics(attention, model, &cancel_);
    if (source && source->kv_heads > 0) {  // converted: each head against the same head unconverted
      std::shared_ptr<const ModelLayerRun> original = original_layer(*source);
      // A Gated DeltaNet layer (Qwen3-Next) is signed: it drifts by its weight distribution |M| per row, as
      // Compare A/B measures a side without a softmax (JS of signed rows is no drift).
      const Tensor3& before = original->analysis.attention->result.probs;
      stats.drift_from_mha = attention.linear
                                 ? head_drift(weight_distribution(attention.result.probs), weight_distribution(before), &cancel_)
                                 : head_drift(attention.result.probs, before, &cancel_);
      out.original_run = std::move(original);
    }
    last_stats_ = std::make_shared<const HeadStats>(std::move(stats));
    out.stats = last_stats_;
  } catch (const Cancelled&) {
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    out.stats_error = "not enough memory for the head statistics of these settings; try fewer tokens or heads";
  } catch (const std::exception& e) {
    out.stats_error = e.what();
  }
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
      if (std::optional<ComputeResult> second = add_statistics(job.first, job.source)) deliver(std::move(*second), true);
    }
    finish_job();
    return Work::did_some;
  }
  Job job;
  {
    std::unique_lock lock(mutex_);
    if (wait) wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
    if (stop_) return Work::stop;
    if (!pending_) return Work::none;
    job = std::move(*pending_);
    pending_.reset();
    running_ = true;
    running_key_ = job.analysis_key;
    cancel_ = false;
  }
  std::optional<ComputeResult> result;
  try {
    result = compute(job);
    result->seconds = std::chrono::duration<double>(Clock::now() - job.submitted).count();
  } catch (const Cancelled&) {
    // A newer scene is pending; it will produce the next result.
  }
  const bool statistics_wanted = result && result->analysis && result->analysis->attention &&
                                 (!result->stats || model_view_wanted(*result));
  if (result) deliver(*result, statistics_wanted);
  if (statistics_wanted) {
    statistics_ = StatisticsJob{*result, job.analysis_key.model, job.generation, Clock::now() + statistics_wait_};
    return Work::did_some;
  }
  finish_job();
  return Work::did_some;
}

void ComputeWorker::finish_job() {
  {
    std::lock_guard lock(mutex_);
    running_ = false;
    statistics_running_ = false;
    running_key_.reset();
  }
  idle_.notify_all();
}

}  // namespace attnscope::gui
