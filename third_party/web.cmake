# The WebAssembly build (scripts/build-web.sh: emcmake, Debian's emscripten 3.1.6). CMake glue only, as
# dependencies.cmake is for the desktop: the same target names, made from what Debian ships.
#   header-only:  Eigen, nlohmann-json, CLI11, stb (Debian's /usr/include; only their own folders are
#                 put on the include path, never /usr/include itself, whose glibc headers are not
#                 emscripten's)
#   from source:  Dear ImGui 1.86 with its GLFW and OpenGL3 backends, PCRE2 and utf8proc — Debian's own
#                 source packages (`apt-get source`, scripts/web-sources.sh), in ATTNSCOPE_WEB_SOURCES
#   emscripten:   GLFW 3 and WebGL 2 (-sUSE_GLFW=3), no download
# fontconfig has no browser: the fonts are embedded in the site (engine/src/figure/font_lookup_web.cpp).
set(ATTNSCOPE_WEB_SOURCES "" CACHE PATH "Debian's source packages of imgui, pcre2 and utf8proc (scripts/web-sources.sh)")
foreach(package imgui pcre2 utf8proc)
  file(GLOB dir LIST_DIRECTORIES true "${ATTNSCOPE_WEB_SOURCES}/${package}-*")
  list(FILTER dir EXCLUDE REGEX "\\.(tar|dsc|diff)")
  if(NOT dir)
    message(FATAL_ERROR "no ${package} source in ATTNSCOPE_WEB_SOURCES='${ATTNSCOPE_WEB_SOURCES}': run scripts/web-sources.sh")
  endif()
  list(GET dir 0 dir)
  set(ATTNSCOPE_WEB_${package} ${dir})
endforeach()

# Header-only libraries: a folder of links to exactly their headers.
set(web_include ${PROJECT_BINARY_DIR}/web-include)
file(MAKE_DIRECTORY ${web_include})
foreach(link Eigen:/usr/include/eigen3/Eigen nlohmann:/usr/include/nlohmann CLI:/usr/include/CLI)
  string(REPLACE ":" ";" parts ${link})
  list(GET parts 0 name)
  list(GET parts 1 target)
  if(NOT EXISTS ${target})
    message(FATAL_ERROR "${target} is missing: apt-get install libeigen3-dev nlohmann-json3-dev libcli11-dev")
  endif()
  file(CREATE_LINK ${target} ${web_include}/${name} SYMBOLIC)
endforeach()
add_library(attnscope_web_headers INTERFACE)
target_include_directories(attnscope_web_headers SYSTEM INTERFACE ${web_include})
add_library(Eigen3::Eigen ALIAS attnscope_web_headers)
add_library(nlohmann_json::nlohmann_json ALIAS attnscope_web_headers)
add_library(CLI11::CLI11 ALIAS attnscope_web_headers)

# stb: Debian's headers, and their implementations compiled here (Debian's libstb holds them on the desktop).
add_library(attnscope_web_stb STATIC ${PROJECT_SOURCE_DIR}/app/web/stb_implementation.c)
target_include_directories(attnscope_web_stb SYSTEM PUBLIC /usr/include/stb)
add_library(attnscope::stb ALIAS attnscope_web_stb)
add_library(attnscope_web_none INTERFACE)
add_library(attnscope::fontconfig ALIAS attnscope_web_none)

# utf8proc: one C file.
add_library(attnscope_web_utf8proc STATIC ${ATTNSCOPE_WEB_utf8proc}/utf8proc.c)
target_compile_definitions(attnscope_web_utf8proc PUBLIC UTF8PROC_STATIC)
target_include_directories(attnscope_web_utf8proc SYSTEM PUBLIC ${ATTNSCOPE_WEB_utf8proc})
add_library(attnscope::utf8proc ALIAS attnscope_web_utf8proc)

# PCRE2: the 8-bit library as its own CMakeLists builds it, without JIT (no executable memory in wasm),
# pcre2grep or tests.
set(PCRE2_BUILD_PCRE2GREP OFF CACHE BOOL "" FORCE)
set(PCRE2_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(PCRE2_SUPPORT_JIT OFF CACHE BOOL "" FORCE)
set(PCRE2_SHOW_REPORT OFF CACHE BOOL "" FORCE)
set(PCRE2_SUPPORT_LIBBZ2 OFF CACHE BOOL "" FORCE)
set(PCRE2_SUPPORT_LIBZ OFF CACHE BOOL "" FORCE)
set(PCRE2_SUPPORT_LIBEDIT OFF CACHE BOOL "" FORCE)
set(PCRE2_SUPPORT_LIBREADLINE OFF CACHE BOOL "" FORCE)
set(BUILD_SHARED_LIBS OFF CACHE BOOL "" FORCE)
add_subdirectory(${ATTNSCOPE_WEB_pcre2} ${PROJECT_BINARY_DIR}/pcre2 EXCLUDE_FROM_ALL SYSTEM)
add_library(attnscope_web_pcre2 INTERFACE)
target_link_libraries(attnscope_web_pcre2 INTERFACE pcre2-8-static)
target_include_directories(attnscope_web_pcre2 SYSTEM INTERFACE ${PROJECT_BINARY_DIR}/pcre2)
target_compile_definitions(attnscope_web_pcre2 INTERFACE PCRE2_STATIC)
add_library(attnscope::pcre2 ALIAS attnscope_web_pcre2)

# Dear ImGui 1.86 (with std::string input, misc/cpp) and its GLFW + OpenGL3 backends (the OpenGL3 one picks "#version 300 es" / WebGL 2
# under __EMSCRIPTEN__).
set(imgui ${ATTNSCOPE_WEB_imgui})
# The OpenGL3 backend, changed where it made the page wait for the GPU (docs/web.md, "Frames while training"):
# - it reads the scissor box and the blend state from GL once, then remembers them (app/web/imgui_gl_state.inc
#   says why that is exact): in Chromium's WebGL each of those reads waited for the GPU process;
# - each draw list gets fresh buffer storage (glBufferData), as before 1.86 and again from 1.88 on every GPU but
#   Intel's, instead of 1.86's writing every list in place (glBufferSubData) while the previous list's draws
#   still read the same buffers.
# The copy lies in the build folder; configure fails if Debian's source ever stops matching.
set(opengl3_source ${imgui}/backends/imgui_impl_opengl3.cpp)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${opengl3_source})
file(READ ${opengl3_source} opengl3)
function(attnscope_patch_opengl3 from to)
  string(FIND "${opengl3}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${opengl3_source} has no '${from}' (ImGui 1.86's): see third_party/web.cmake")
  endif()
  string(REPLACE "${from}" "${to}" patched "${opengl3}")
  set(opengl3 "${patched}" PARENT_SCOPE)
endfunction()
attnscope_patch_opengl3("void    ImGui_ImplOpenGL3_RenderDrawData(ImDrawData* draw_data)\n{"
                        "#include \"imgui_gl_state.inc\"\nvoid    ImGui_ImplOpenGL3_RenderDrawData(ImDrawData* draw_data)\n{")
foreach(pname GL_SCISSOR_BOX GL_BLEND_SRC_RGB GL_BLEND_DST_RGB GL_BLEND_SRC_ALPHA GL_BLEND_DST_ALPHA
        GL_BLEND_EQUATION_RGB GL_BLEND_EQUATION_ALPHA)
  attnscope_patch_opengl3("glGetIntegerv(${pname}," "attnscope_saved_gl_state(${pname},")
endforeach()
attnscope_patch_opengl3(
    "glBufferSubData(GL_ARRAY_BUFFER, 0, vtx_buffer_size, (const GLvoid*)cmd_list->VtxBuffer.Data);"
    "glBufferData(GL_ARRAY_BUFFER, vtx_buffer_size, (const GLvoid*)cmd_list->VtxBuffer.Data, GL_STREAM_DRAW);")
attnscope_patch_opengl3(
    "glBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, idx_buffer_size, (const GLvoid*)cmd_list->IdxBuffer.Data);"
    "glBufferData(GL_ELEMENT_ARRAY_BUFFER, idx_buffer_size, (const GLvoid*)cmd_list->IdxBuffer.Data, GL_STREAM_DRAW);")
file(WRITE ${PROJECT_BINARY_DIR}/imgui-backend/imgui_impl_opengl3.cpp.new "${opengl3}")
configure_file(${PROJECT_BINARY_DIR}/imgui-backend/imgui_impl_opengl3.cpp.new
               ${PROJECT_BINARY_DIR}/imgui-backend/imgui_impl_opengl3.cpp COPYONLY)  # rewritten only when it changes
add_library(attnscope_imgui STATIC ${imgui}/imgui.cpp ${imgui}/imgui_draw.cpp ${imgui}/imgui_tables.cpp
            ${imgui}/imgui_widgets.cpp ${imgui}/misc/cpp/imgui_stdlib.cpp ${imgui}/backends/imgui_impl_glfw.cpp
            ${PROJECT_BINARY_DIR}/imgui-backend/imgui_impl_opengl3.cpp)
target_include_directories(attnscope_imgui SYSTEM PUBLIC ${imgui} ${imgui}/backends ${imgui}/misc/cpp /usr/include/stb)
target_include_directories(attnscope_imgui PRIVATE ${PROJECT_SOURCE_DIR}/app/web)  # imgui_gl_state.inc
target_compile_options(attnscope_imgui PUBLIC -sUSE_GLFW=3)
target_link_options(attnscope_imgui PUBLIC -sUSE_GLFW=3 -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2)
add_library(attnscope::imgui ALIAS attnscope_imgui)
