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
out="$root/exports"
mkdir -p "$out"
echo "No display found (DISPLAY and WAYLAND_DISPLAY are unset): exporting the default scene's heatmaps instead."
"$bin" export --what heads --format png --scale 2 "$@" --out "$out/default_heads.png"
"$bin" export --what heads --format svg "$@" --out "$out/default_heads.svg"
"$bin" export --what heads --format csv "$@" --out "$out/default_heads.csv"
echo "The images of the default scene went to $out/ (default_heads.png, .svg and .csv)."
