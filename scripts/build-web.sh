#!/usr/bin/env bash
# The browser build: attnscope's window as a web page, in build-web/site/ (index.html, attnscope.js,
# attnscope.wasm, attnscope.data), which works from any static web server (scripts/serve-web.sh).
# Installs what is missing (emscripten, node-acorn, fonts-wqy-microhei, python3-fonttools), unpacks
# Debian's ImGui, PCRE2 and utf8proc sources (scripts/web-sources.sh), then builds with emcmake.
#   usage: scripts/build-web.sh [CMAKE_ARGS…]   (ATTNSCOPE_WEB_BUILD_DIR chooses the build folder)
# Extra arguments go to cmake's configure step, as with scripts/build.sh: scripts/test.sh passes
# -DATTNSCOPE_PCH=OFF (a clone's precompiled headers miss ccache; docs/development.md). A newcomer's first
# build keeps them: with an empty cache they halve the compile time (the desktop builds, docs/development.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install_deps.sh" "$root/scripts/deps-web.txt"
sources=$("$root/scripts/web-sources.sh")
build=${ATTNSCOPE_WEB_BUILD_DIR:-$root/build-web}
# Debian's emcc finds the acorn parser in Debian's node modules.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
emcmake cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_WEB_SOURCES="$sources" "$@" >"$build.configure.log" 2>&1 ||
  { tail -30 "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target attnscope
echo "the site: $build/site (serve it with scripts/serve-web.sh)"
