// about.h — what the About box and `attnscope --version` say: the version line, and the libraries
// the program is built with and their licences. packaging/copyright (the Debian copyright file)
// lists the same libraries; a test keeps the two in step.
#pragma once
#include <vector>

namespace attnscope {

struct LibraryNotice {
  const char* name;       // "Dear ImGui"
  const char* licence;    // SPDX-style: "MIT", "Zlib", "MPL-2.0", …
  const char* copyright;  // "2014-2021 Omar Cornut"; several holders separated by "; "
};

// The libraries in the program (not the test-only ones), in the order the About box shows them.
const std::vector<LibraryNotice>& library_notices();

}  // namespace attnscope
