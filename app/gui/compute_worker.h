// compute_worker.h — runs the engine off the UI thread; the newest Scene wins.
//
//   UI thread ──submit(scene)──► pending (a newer scene replaces it; a running analysis of older
//                                settings is cancelled through its atomic flag)
//   worker    ──analyse + colour heatmaps──► result ──take_result()──► UI thread swaps it in
// When only view settings changed (colormap, scale, probabilities/scores, the selected row) the last
// Analysis is reused and only the pictures are made again.
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
#include <thread>

#include "attnscope/analysis.h"
#include "attnscope/scene.h"
#include "gui/pictures.h"

namespace attnscope::gui {

struct ComputeResult {
  uint64_t generation = 0;                    // the submit() this answers
  Scene scene;                                // the settings as submitted
  std::shared_ptr<const Analysis> analysis;   // null when the engine refused the settings
  std::shared_ptr<const Pictures> pictures;   // null on error
  std::string error;                          // the engine's InputError message, if any
  double seconds = 0;                         // time from submit() to the result being ready
};

class ComputeWorker {
 public:
  // on_result is called on the worker thread after each result (e.g. glfwPostEmptyEvent).
  explicit ComputeWorker(std::function<void()> on_result);
  ~ComputeWorker();
  ComputeWorker(const ComputeWorker&) = delete;
  ComputeWorker& operator=(const ComputeWorker&) = delete;

  // Queues `scene` and returns its generation number.
  uint64_t submit(const Scene& scene);
  // The newest finished result not taken yet.
  std::optional<ComputeResult> take_result();
  // True while a scene is pending or being analysed; seconds_busy() says for how long.
  bool busy() const;
  double seconds_busy() const;
  // Blocks until nothing is pending or running (scripted runs).
  void wait_until_idle();
  // Blocks until a result is ready to take or `timeout` passed; true when one is ready.
  bool wait_for_result(std::chrono::microseconds timeout);

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    uint64_t generation = 0;
    Scene scene;
    std::string analysis_key;  // the scene without the view settings analyse() ignores
    Clock::time_point submitted;
  };
  void run();
  ComputeResult compute(const Job& job);

  std::function<void()> on_result_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::optional<Job> pending_;
  bool running_ = false;
  bool stop_ = false;
  std::string running_key_;
  Clock::time_point busy_since_;
  std::atomic<bool> cancel_{false};
  std::optional<ComputeResult> result_;
  uint64_t next_generation_ = 1;
  // Worker-thread only: the last analysis, reused when only view settings change.
  std::shared_ptr<const Analysis> last_analysis_;
  std::string last_key_;
  std::thread thread_;
};

}  // namespace attnscope::gui
