// team.cpp — persistent worker threads with passive waiting (see team.h for why).
#include "train/team.h"

#include "core/parallel.h"

namespace attnscope::train {

WorkerTeam::WorkerTeam(int size) : size_(std::max(1, size)), errors_(size_t(std::max(1, size))) {
  for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

WorkerTeam::~WorkerTeam() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerTeam::worker(int index) {
#ifdef _OPENMP
  omp_set_num_threads(1);  // this thread's OpenMP regions and Eigen products stay on it
#endif
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    try {
      (*job)(index);
    } catch (...) {
      errors_[index] = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (--pending_ == 0) done_.notify_one();
  }
}

void WorkerTeam::run(const std::function<void(int)>& job) {
  for (auto& e : errors_) e = nullptr;
  if (size_ > 1) {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &job;
    pending_ = size_ - 1;
    ++generation_;
  }
  start_.notify_all();
  {
    const detail::SingleThreadScope serial(true);
    try {
      job(0);
    } catch (...) {
      errors_[0] = std::current_exception();
    }
  }
  if (size_ > 1) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }
  for (auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

}  // namespace attnscope::train
