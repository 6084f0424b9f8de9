// team.h — (private) a few persistent threads that wait passively between steps.
//
// The trainer splits each step into a handful of large pieces (one chunk of the batch per thread,
// then slices of the parameter arena). An OpenMP team would spin between those pieces by default,
// and on two cores shared with other processes a spinning thread takes the core its partner needs:
// measured on the loaded machine, two OpenMP threads ran the default induction model 2.5× slower
// than one. These threads sleep on a condition variable instead, and run OpenMP and Eigen
// single-threaded inside (omp_set_num_threads(1) on each).
#pragma once
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace attnscope::train {

class WorkerTeam {
 public:
  // `size` threads in all: the caller of run() is thread 0, size − 1 are started here.
  explicit WorkerTeam(int size);
  ~WorkerTeam();
  WorkerTeam(const WorkerTeam&) = delete;
  WorkerTeam& operator=(const WorkerTeam&) = delete;

  int size() const { return size_; }
  // Calls job(i) for every i in [0, size) (i = 0 on the calling thread) and returns when all are
  // done. An exception from any job is rethrown here (the first, by thread order).
  void run(const std::function<void(int)>& job);

 private:
  void worker(int index);
  int size_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* job_ = nullptr;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;
};

// [begin, end) of slice i of n over [0, total), at multiples of 16 floats (64 bytes, so no two
// threads write one cache line).
inline std::pair<size_t, size_t> slice_of(size_t total, int i, int n) {
  auto at = [&](int k) { return std::min(total, (total * size_t(k) / size_t(n) + 15) / 16 * 16); };
  return {at(i), i + 1 == n ? total : at(i + 1)};
}

}  // namespace attnscope::train
