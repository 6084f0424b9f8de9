# Included (not add_subdirectory) so the imported targets are visible everywhere. CMake glue only: imported targets for the Debian packages listed in scripts/deps.txt.
# Nothing is vendored and nothing is downloaded. The browser build has its own glue (web.cmake).
if(EMSCRIPTEN)
  include(${CMAKE_CURRENT_LIST_DIR}/web.cmake)
  return()
endif()
find_package(PkgConfig REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)           # libeigen3-dev    -> Eigen3::Eigen
find_package(nlohmann_json 3 REQUIRED)                 # nlohmann-json3-dev -> nlohmann_json::nlohmann_json
find_package(CLI11 REQUIRED)                           # libcli11-dev     -> CLI11::CLI11
pkg_check_modules(STB REQUIRED IMPORTED_TARGET GLOBAL stb)    # libstb-dev       -> PkgConfig::STB
pkg_check_modules(FONTCONFIG REQUIRED IMPORTED_TARGET GLOBAL fontconfig)  # libfontconfig-dev
# Tokenizers (engine/src/text): PCRE2 runs the pre-tokenizer patterns exactly as tokenizer.json states
# them (\p{L}, (?i:…), (?!\S)); utf8proc does NFC/NFKC. Both are linked PRIVATE into the engine.
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET GLOBAL libpcre2-8)  # libpcre2-dev
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET GLOBAL libutf8proc)  # libutf8proc-dev
add_library(attnscope::stb ALIAS PkgConfig::STB)
add_library(attnscope::fontconfig ALIAS PkgConfig::FONTCONFIG)
add_library(attnscope::pcre2 ALIAS PkgConfig::PCRE2)
add_library(attnscope::utf8proc ALIAS PkgConfig::UTF8PROC)

if(ATTNSCOPE_OPENMP)
  find_package(OpenMP REQUIRED COMPONENTS CXX)
endif()

if(ATTNSCOPE_BUILD_TESTS)
  find_package(doctest REQUIRED)                       # doctest-dev      -> doctest::doctest
endif()

if(ATTNSCOPE_BUILD_APP)
  set(OpenGL_GL_PREFERENCE GLVND)
  find_package(OpenGL REQUIRED)                        # libgl-dev
  find_package(glfw3 3.3 REQUIRED)                     # libglfw3-dev     -> glfw
  pkg_check_modules(IMGUI REQUIRED IMPORTED_TARGET GLOBAL imgui)  # libimgui-dev (static, with GLFW + OpenGL3 backends)
  add_library(attnscope_imgui INTERFACE)
  target_link_libraries(attnscope_imgui INTERFACE PkgConfig::IMGUI PkgConfig::STB glfw OpenGL::GL ${CMAKE_DL_LIBS})
  # IMGUI_INCLUDE_DIRS is a list (imgui and stb); the backends' headers sit under the imgui one.
  target_include_directories(attnscope_imgui INTERFACE ${IMGUI_INCLUDEDIR}/backends)
  add_library(attnscope::imgui ALIAS attnscope_imgui)
endif()
