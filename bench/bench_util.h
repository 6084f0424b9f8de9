// bench_util.h — what several benchmarks measure the same way.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace attnscope::bench {

// VmHWM of /proc/self/status: the peak resident set of this program's own address space, in MB (mapped file
// pages still resident count too). getrusage's ru_maxrss survives exec, so run from Python it would report the
// Python parent's peak.
inline double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;  // kB
  return 0;
}

// Milliseconds of wall time since `start`.
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The median of `v` (the upper one of an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The machine's load average over the last minute (/proc/loadavg's first figure; 0 where there is none): printed
// beside a timing, since the other processes on a shared machine slow it.
inline double load_average_1min() {
  std::ifstream f("/proc/loadavg");
  double l = 0;
  f >> l;
  return l;
}

}  // namespace attnscope::bench
