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
  const auto until = std::chrono::steady_clock::now() + budget;
  bool any = false;
  for (bool first = true;; first = false) {
    bool some = false;
    // A copy: a worker's work may end another (a finished training run's owner is the UI, not this).
    const std::vector<WorkerThread*> workers = pumped();
    for (WorkerThread* w : workers) some |= w->pump() == Work::did_some;
    any |= some;
    if (!some || (!first && std::chrono::steady_clock::now() >= until)) return any;
    if (std::chrono::steady_clock::now() >= until) return any;
  }
}

}  // namespace attnscope::gui
