// fuzz_main.cpp — the one libFuzzer executable: ATTNSCOPE_FUZZ_TARGET names the target (fuzz_entries.h's
// table); ATTNSCOPE_FUZZ_TARGET=list prints the names. Built by scripts/fuzz.sh, compiled once for
// every target.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fuzz_entries.h"

namespace {
attnscope::fuzz::Entry chosen = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("ATTNSCOPE_FUZZ_TARGET");
  const bool list = name && std::strcmp(name, "list") == 0;
  for (const auto& t : attnscope::fuzz::targets) {
    if (list) std::printf("%s\n", t.name);
    else if (name && std::strcmp(name, t.name) == 0) chosen = t.entry;
  }
  if (list) std::exit(0);
  if (!chosen) {
    std::fprintf(stderr, "error: set ATTNSCOPE_FUZZ_TARGET to one of the targets (ATTNSCOPE_FUZZ_TARGET=list names them)\n");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  chosen(data, size);
  return 0;
}
