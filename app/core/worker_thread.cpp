#include "core/worker_thread.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace attnscope::gui {
namespace {

// The live pumped workers, in the order they were made (only the UI thread makes and pumps them).
std::vector<WorkerThread*>& pumped() {
  static std::vector<WorkerThread*> workers;
  return workers;
}

}  // namespace

bool threads_available() {
#ifdef __EMSCRIPTEN__
  return false;  // WebAssembly without SharedArrayBuffer: the site works from any static host
#else
  static const bool available = [] {
    const char* v = std::getenv("ATTNSCOPE_THREADS");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return available;
#endif
}

WorkerThread::WorkerThread(std::function<Work(bool)> work, bool threaded) : work_(std::move(work)) {
  if (threaded) {
    thread_ = std::thread([this] {
      while (work_(true) != Work::stop) {
      }
    });
  } else {
    pumped().push_back(this);
  }
}

WorkerThread::~WorkerThread() {
  join();
  auto& all = pumped();
  all.erase(std::remove(all.begin(), all.end(), this), all.end());
}

Work WorkerThread::pump() { return threaded() ? Work::none : work_(false); }

void WorkerThread::join() {
  if (thread_.joinable()) thread_.join();
}

bool pump_workers(std::chrono::milliseconds budget) {
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + budget;
  bool any = false;
  for (auto pass_start = Clock::now();;) {
    bool some = false;
    // A copy: a worker's work may end another (a finished training run's owner is the UI, not this).
    const std::vector<WorkerThread*> workers = pumped();
    for (WorkerThread* w : workers) some |= w->pump() == Work::did_some;
    any |= some;
    if (!some) return any;
    // Another pass only when one as long as this one still ends within the budget: a frame never
    // starts a piece it cannot finish in its share (the first pass always runs, so work goes on).
    const auto pass_end = Clock::now();
    if (pass_end + (pass_end - pass_start) > until) return any;
    pass_start = pass_end;
  }
}

}  // namespace attnscope::gui
