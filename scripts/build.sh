#!/usr/bin/env bash
# Configures and builds attnscope (Release, tuned for this CPU) into build/ or $ATTNSCOPE_BUILD_DIR.
# Extra arguments go to cmake's configure step, e.g. -DATTNSCOPE_NATIVE=OFF.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNSCOPE_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
