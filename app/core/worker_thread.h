// worker_thread.h — where a worker gets its thread: the platform seam for threads.
//
// A worker (ComputeWorker, CheckpointLoader, TrainingRun) is written as one function,
//   Work work(bool wait)   — do the next piece of work (Work::did_some), or say there is none
//                            (Work::none) or that the worker is stopping (Work::stop).
// wait = true (the worker has a thread): block until there is work (Work::none after a wait that
// ended with nothing to do, e.g. a timed one).
// wait = false (pumped): answer at once.
//
//   threaded (the desktop)          a std::thread calls work(true) until Work::stop
//   pumped (the browser build:      no thread; the frame loop calls pump_workers() once a frame, which
//   WebAssembly without threads;    calls each live worker's work(false) until none has work or the
//   ATTNSCOPE_THREADS=0 on the      frame's budget is spent, so the page keeps drawing while a model
//   desktop, for the tests)         trains; a blocking wait of the UI (wait_until_idle) pumps instead
//
// The workers' locks and condition variables are the same in both modes (uncontended when pumped).
#pragma once
#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <thread>
#include <type_traits>

namespace attnscope::gui {

enum class Work { did_some, none, stop };

// False in the browser build, and on the desktop when the environment sets ATTNSCOPE_THREADS=0.
bool threads_available();

class WorkerThread {
 public:
  explicit WorkerThread(std::function<Work(bool wait)> work) : WorkerThread(std::move(work), threads_available()) {}
  // With its own thread or pumped, whatever threads_available() says (the tests of both modes).
  WorkerThread(std::function<Work(bool wait)> work, bool threaded);
  ~WorkerThread();  // joins: the owner has made work() answer Work::stop first
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  bool threaded() const { return thread_.joinable(); }
  // Pumped: one call of work(false) (Work::none when threaded: the thread does the work).
  Work pump();
  // Threaded: waits for the thread to end (work() answered Work::stop). Pumped: nothing.
  void join();

 private:
  std::function<Work(bool)> work_;
  std::thread thread_;
};

// Pumped workers: calls work(false) of each live one, round robin, until none has work or another
// round as long as the last would end past `budget` (at least one call each: a frame's share is the
// budget or one round, whichever is longer; a training step that alone overruns it is not followed by
// another). Nothing when every worker has its thread. Returns true when some worker did some work.
bool pump_workers(std::chrono::milliseconds budget);

// A one-off job off the frame (an export, a copy of the figure): on its own thread where there are
// threads, else run now, so that its future is ready when this returns (an exception it throws is the
// future's, as with std::async).
template <class F>
std::future<std::invoke_result_t<F>> run_off_frame(F job) {
  using R = std::invoke_result_t<F>;
  if (threads_available()) return std::async(std::launch::async, std::move(job));
  std::promise<R> done;
  try {
    if constexpr (std::is_void_v<R>) {
      job();
      done.set_value();
    } else {
      done.set_value(job());
    }
  } catch (...) {
    done.set_exception(std::current_exception());
  }
  return done.get_future();
}

}  // namespace attnscope::gui
