// test_tmp.h — the one scratch folder of this test process. Every file a test writes goes below it.
//
// ctest runs its entries side by side (-j), each entry its own process, so a folder shared by the build
// lets two entries read or delete each other's files. Each ctest entry therefore gets a folder of its own
// (ATTNSCOPE_TEST_TMP_DIR=<build>/tests/tmp/<entry>, set in tests/CMakeLists.txt and tests/gui/); a run
// by hand, without it, gets <build>/tests/tmp/manual-<pid>. Names below it need to be unique only within
// one entry, whose tests doctest runs one after another.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include "test_paths.h"

namespace attnscope::test {

inline const std::filesystem::path& test_tmp() {
  static const std::filesystem::path dir = [] {
    const char* given = std::getenv("ATTNSCOPE_TEST_TMP_DIR");
    std::filesystem::path d = (given && *given) ? std::filesystem::path(given)
                                                : std::filesystem::path(ATTNSCOPE_TEST_TMP_ROOT) /
                                                      ("manual-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

}  // namespace attnscope::test
