#include "core/rollout_worker.h"

#include <exception>

#include "attnscope/core/error.h"

namespace attnscope::gui {

RolloutWorker::RolloutWorker() : thread_([this](bool wait) { return work(wait); }) {}

RolloutWorker::~RolloutWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    pending_.reset();
    cancel_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void RolloutWorker::submit(RolloutJob job) {
  {
    std::lock_guard lock(mutex_);
    if (running_ && !(*running_ == job)) cancel_ = true;  // another stack or position: the running one is stale
    pending_ = std::move(job);
  }
  wake_.notify_all();
}

void RolloutWorker::cancel() {
  {
    std::lock_guard lock(mutex_);
    pending_.reset();
    if (running_) cancel_ = true;
  }
  wake_.notify_all();
}

std::optional<RolloutOutcome> RolloutWorker::take() {
  if (!thread_.threaded()) thread_.pump();
  std::lock_guard lock(mutex_);
  std::optional<RolloutOutcome> out = std::move(outcome_);
  outcome_.reset();
  return out;
}

bool RolloutWorker::busy() const {
  std::lock_guard lock(mutex_);
  return pending_.has_value() || running_.has_value();
}

bool RolloutWorker::flow_running() const {
  std::lock_guard lock(mutex_);
  return running_ && running_->flow;
}

void RolloutWorker::wait_until_idle() {
  std::unique_lock lock(mutex_);
  if (thread_.threaded()) {
    idle_.wait(lock, [this] { return !running_ && !pending_; });
    return;
  }
  while (running_ || pending_) {
    lock.unlock();
    thread_.pump();
    lock.lock();
  }
}

Work RolloutWorker::work(bool wait) {
  RolloutJob job;
  {
    std::unique_lock lock(mutex_);
    if (wait) wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
    if (stop_) return Work::stop;
    if (!pending_) return Work::none;
    job = std::move(*pending_);
    pending_.reset();
    running_ = job;
    cancel_ = false;
    progress_ = 0;
  }
  RolloutOutcome out;
  out.job = job;
  // A Result that holds the run's stack: the pipeline's steps read nothing else.
  pipeline::Result result;
  auto run = std::make_shared<ModelLayerRun>();
  run->stack = job.stack;
  result.run = run;
  result.request.flow_position = job.position;
  result.request.progress = [this](double f) { progress_ = f; };
  if (last_stack_ == job.stack && last_rollout_) {
    result.rollout = last_rollout_;  // the flow step reads it instead of making it again
    result.counters.steps_run.push_back(pipeline::Step::rollout);
  }
  std::vector<pipeline::Step> steps{pipeline::Step::rollout};
  if (job.flow) steps.push_back(pipeline::Step::flow);
  try {
    try {
      pipeline::run_steps(result, steps, &cancel_);
    } catch (const Cancelled&) {
      out.cancelled = true;
    }
    out.rollout = result.rollout;
    out.flow = result.flow;
    out.error = !result.rollout_error.empty() ? result.rollout_error : job.flow ? result.flow_error : "";
  } catch (const std::bad_alloc&) {
    out.error = "not enough memory for the rollout of this input; try fewer tokens";
  } catch (const std::exception& e) {
    out.error = std::string("internal error: ") + e.what();
  }
  last_stack_ = job.stack;
  last_rollout_ = out.rollout;
  {
    std::lock_guard lock(mutex_);
    // A job replaced while it ran is not delivered: the pending one answers.
    if (!pending_) outcome_ = std::move(out);
    running_.reset();
  }
  idle_.notify_all();
  return Work::did_some;
}

}  // namespace attnscope::gui
