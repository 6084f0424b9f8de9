#!/usr/bin/env bash
# The engine's attention and training-gemm tests in WebAssembly (tests/web/engine/CMakeLists.txt), built in the browser
# build's folder and run by node: the fused kernel on SIMD128 packets against the plain-loop references.
#   tests/web/engine/run.sh [web-build-dir]      default: build-web/ (scripts/build-web.sh configures it)
# Extra doctest options after the folder, e.g. -tc='*packets*'. The exit code is doctest's.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
web=${1:-$root/build-web}
shift || true
[[ -f "$web/CMakeCache.txt" ]] || { echo "error: $web is not a configured browser build (run scripts/build-web.sh)" >&2; exit 2; }
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}  # Debian's emcc finds acorn there
cmake --build "$web" --target engine_tests_wasm >/dev/null
# emscripten 3.1.6's loader takes node's own fetch (node 18+) for a browser's and fails on a file path.
exec node --no-experimental-fetch "$web/tests/web/engine/engine_tests_wasm.js" "$@"
