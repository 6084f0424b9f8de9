// about.cpp — the version line and the library notices (about.h). The copyright lines follow the
// Debian packages' own copyright files (/usr/share/doc/<package>/copyright).
#include "core/about.h"

#include <string>

#include "core/version.h"

namespace attnscope {

std::string version_line() { return std::string("attnscope ") + version() + " (git " + git_revision() + ")"; }

const std::vector<LibraryNotice>& library_notices() {
  static const std::vector<LibraryNotice> notices = {
      {"Dear ImGui", "MIT", "2014-2021 Omar Cornut"},
      {"GLFW", "Zlib", "2002-2006 Marcus Geelnard; 2006-2019 Camilla Löwy"},
      {"Eigen", "MPL-2.0", "2008-2021 the Eigen authors (Benoît Jacob, Gaël Guennebaud and others)"},
      {"nlohmann/json", "MIT", "2013-2022 Niels Lohmann"},
      {"CLI11", "BSD-3-Clause", "2017-2021 University of Cincinnati, developed by Henry Schreiner"},
      {"stb", "public domain or MIT", "2014-2022 Sean Barrett"},
      {"fontconfig", "MIT-style (fontconfig licence)", "2000-2007 Keith Packard and others"},
      {"PCRE2", "BSD-3-Clause with the PCRE2 exception", "1997-2022 University of Cambridge"},
      {"utf8proc", "MIT and Unicode-DFS-2015",
       "2014-2021 Steven G. Johnson, Jiahao Chen, Tony Kelman, Jonas Fonseca and others; "
       "2009 Public Software Group e. V., Berlin, Germany; 1991-2021 Unicode, Inc."},
#ifdef _OPENMP  // ATTNSCOPE_OPENMP=OFF builds do not link it
      {"GNU OpenMP runtime (libgomp)", "GPL-3.0+ with the GCC Runtime Library Exception",
       "Free Software Foundation, Inc."},
#endif
  };
  return notices;
}

}  // namespace attnscope
