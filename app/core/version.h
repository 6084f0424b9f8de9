// version.h — which attnscope this is: the project version and the git revision it was built from,
// for `attnscope --version` and the window's About box. The two functions live in a source file the
// build writes (cmake/git_revision.cmake), so the revision is that of the build, not of a configure.
#pragma once
#include <string>

namespace attnscope {

const char* version();       // "0.1.0": project(VERSION) in the top CMakeLists.txt
const char* git_revision();  // "fd5961f0a1b2", "fd5961f0a1b2-dirty", or "unknown (not built from a git checkout)"

// "attnscope 0.1.0 (git fd5961f0a1b2)": the first line of --version.
std::string version_line();

}  // namespace attnscope
