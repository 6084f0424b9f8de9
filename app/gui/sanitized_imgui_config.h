// sanitized_imgui_config.h — Dear ImGui's configuration for the sanitized window (ATTNSCOPE_SANITIZED builds,
// app/gui/CMakeLists.txt): an IM_ASSERT in ImGui's inline code or ours stops the process with a message,
// even under -DNDEBUG, so the monkey test (tests/gui/monkey/) sees every broken ImGui rule as a failure.
// Debian's libimgui.a is built with its own assert() on, so ImGui's compiled code aborts as well.
#pragma once
#include <cstdio>
#include <cstdlib>

#define IM_ASSERT(_EXPR)                                                                                     \
  ((_EXPR) ? (void)0                                                                                         \
           : (std::fprintf(stderr, "ImGui assertion failed: %s (%s:%d)\n", #_EXPR, __FILE__, __LINE__),      \
              std::abort()))
