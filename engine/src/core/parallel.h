// parallel.h — (private) keeping small work on the calling thread.
//
// A parallel region (an `omp parallel` loop, or one of Eigen's threaded products) needs every thread
// of its team before it can end. On two cores shared with the window's renderer, the second thread
// may wait a whole scheduler time slice (several ms) for a core, which is far longer than a small
// problem takes on one thread. Work below a few million operations therefore runs single-threaded.
#pragma once
#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnscope::detail {

// Operations (multiply–adds, exponentials) below which splitting across threads does not pay.
inline constexpr long long serial_work_limit = 1ll << 23;

// While alive and `active`, OpenMP regions and Eigen products started on this thread use one thread
// (omp_set_num_threads sets a per-thread value, which Eigen reads when no count was forced).
class SingleThreadScope {
 public:
  explicit SingleThreadScope(bool active) {
#ifdef _OPENMP
    if (active) {
      saved_ = omp_get_max_threads();
      omp_set_num_threads(1);
    }
#else
    (void)active;
#endif
  }
  ~SingleThreadScope() {
#ifdef _OPENMP
    if (saved_ > 0) omp_set_num_threads(saved_);
#endif
  }
  SingleThreadScope(const SingleThreadScope&) = delete;
  SingleThreadScope& operator=(const SingleThreadScope&) = delete;

 private:
  int saved_ = 0;
};

}  // namespace attnscope::detail
