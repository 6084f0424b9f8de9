#!/usr/bin/env bash
# The README's first command: install what is missing, build, and open attnscope on its default
# scene. Without a display, say so and run the headless export of the default scene instead.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
bin="${ATTNSCOPE_BUILD_DIR:-$root/build}/app/attnscope"
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]]; then
  exec "$bin" "$@"
fi
out="$root/exports/default"
echo "No display found (DISPLAY and WAYLAND_DISPLAY are unset): running the headless computation of the default scene instead."
"$bin" compute --text "The cat sat on the mat because it was tired." --table --out "$out"
echo "The tensors of the default scene went to $out/"
