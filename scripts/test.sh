#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run the whole suite through
# ctest (GUI tests start their own Xvfb).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
cd "${ATTNSCOPE_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 900
