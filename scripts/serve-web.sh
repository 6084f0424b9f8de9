#!/usr/bin/env bash
# Serves the browser build (scripts/build-web.sh) on this computer and prints its link. Any static web
# server works the same (no special headers: the site is single-threaded); this one is Python's.
#   usage: scripts/serve-web.sh [PORT]   (default 8765; ATTNSCOPE_WEB_BUILD_DIR as for build-web.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
site=${ATTNSCOPE_WEB_BUILD_DIR:-$root/build-web}/site
port=${1:-8765}
[[ "$port" =~ ^[0-9]+$ ]] && (( port > 0 && port < 65536 )) || { echo "error: the port must be 1-65535, not '$port'" >&2; exit 2; }
[[ -f "$site/index.html" && -f "$site/attnscope.wasm" ]] ||
  { echo "error: no site in $site: build it first with scripts/build-web.sh" >&2; exit 2; }
echo "attnscope: http://127.0.0.1:$port/   (a lesson step: http://127.0.0.1:$port/?lesson=4&step=2&lang=zh; Ctrl+C stops)"
exec /usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site"
