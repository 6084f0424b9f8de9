// bench_util.h — what several benchmarks measure the same way.
#pragma once
#include <cstdlib>
#include <fstream>
#include <string>

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

}  // namespace attnscope::bench
