// rollout_worker.h — the Rollout view's rollout and flow, off the UI thread (window_rollout.cpp).
//
//   UI thread ──submit(stack, flow, position)──► pending (a newer job replaces it; a running one of another
//                                                 stack or position is cancelled through its atomic flag)
//   worker    ──pipeline::run_steps({rollout[, flow]})──► outcome ──take()──► the view
// It asks the engine's pipeline (attnscope/pipeline/pipeline.h) for the steps `rollout` and `flow` on a Result
// that holds the run's stack, as the window's compute worker asks for head_patterns: no engine call of its own.
// It keeps the last rollout of a stack, so asking for the flow after the rollout runs only the flow. It has a
// worker of its own (beside the compute worker) so that a flow of seconds never holds up the heatmaps of the
// next edit, and a Cancel button stops it without touching them. progress() is the flow's fraction done.
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "attnscope/model/attention_file.h"
#include "attnscope/pipeline/pipeline.h"
#include "core/worker_thread.h"

namespace attnscope::gui {

struct RolloutJob {
  std::shared_ptr<const model::AttentionStack> stack;
  bool flow = false;  // also the flow into `position` after every layer
  int position = 0;
  bool operator==(const RolloutJob&) const = default;
};

struct RolloutOutcome {
  RolloutJob job;
  std::shared_ptr<const Rollout> rollout;     // null with error
  std::shared_ptr<const AttentionFlow> flow;  // with job.flow; null with error (e.g. above the token limit)
  std::string error;                          // the engine's reason ("" when everything asked for is there)
  bool cancelled = false;                     // Cancel stopped the flow: the rollout is there, the flow not
};

class RolloutWorker {
 public:
  RolloutWorker();
  ~RolloutWorker();
  RolloutWorker(const RolloutWorker&) = delete;
  RolloutWorker& operator=(const RolloutWorker&) = delete;

  void submit(RolloutJob job);
  // Stops the running flow (its outcome says cancelled) and drops a pending job.
  void cancel();
  std::optional<RolloutOutcome> take();
  bool busy() const;          // a job pending or running
  bool flow_running() const;  // the running job computes a flow
  double progress() const { return progress_.load(); }
  void wait_until_idle();     // scripted runs

 private:
  Work work(bool wait);

  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::optional<RolloutJob> pending_;
  std::optional<RolloutJob> running_;
  std::optional<RolloutOutcome> outcome_;
  bool stop_ = false;
  std::atomic<bool> cancel_{false};
  std::atomic<double> progress_{0};
  // Worker-thread only: the last rollout and the stack it is of.
  std::shared_ptr<const model::AttentionStack> last_stack_;
  std::shared_ptr<const Rollout> last_rollout_;
  WorkerThread thread_;  // last: its thread starts once everything above exists
};

}  // namespace attnscope::gui
