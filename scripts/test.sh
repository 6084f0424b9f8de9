#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run the whole suite.
#   1. AddressSanitizer + UndefinedBehaviorSanitizer build (clang, with libFuzzer's coverage) of the
#      engine, CLI, window, test suite and fuzzer, and the suite through ctest, with a short monkey
#      test of the window (gui_monkey, tests/gui/monkey/; scripts/monkey.sh runs it longer)
#   2. fuzz smoke run: every libFuzzer target for a few seconds (scripts/fuzz.sh), on stage 1's build
#   3. the Release build and the whole suite through ctest, GUI tests under Xvfb, and the install
#      tests: an install into a temporary prefix, and the .deb made from that build (tests/install/)
#   4. the browser build (scripts/build-web.sh, emscripten) and its tests: the engine's attention tests in
#      WebAssembly under node (tests/web/engine/run.sh), then the page in headless Chromium
#      (tests/web/run.sh), the page's heatmap checked against stage 3's desktop export
# Stages 1 and 2 share one build: each source is compiled once per configuration (three in all, the
# browser's included; ccache makes a fresh clone's rebuild of unchanged sources nearly free).
# ATTNSCOPE_QUICK=1 skips stages 1, 2 and 4 (for a fast local loop on the desktop build; CI always runs
# all four). docs/development.md says where the time goes and how close the run comes to 30 minutes.
# Every ctest run schedules its entries in a random order, side by side: each entry has its own scratch
# folder, working directory, config folder and X server (tests/test_tmp.h, tests/xvfb_run.sh), so the
# suite must pass in any order. Stage 3 runs the Release suite once with four entries at once
# (ctest -j4 --schedule-random): every run draws a new order, so a suite that depends on order or shares
# a file fails in some run; scripts/test.sh no longer repeats the suite within one run (that doubled
# stage 3, about 7 minutes on the 2-core machine).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
web_deps=()
# (node and npm: tests/web/run.sh installs Debian's only when the machine has none, as a nodesource
# nodejs package conflicts with Debian's npm)
[[ "${ATTNSCOPE_QUICK:-0}" == 1 ]] || web_deps=("$root/scripts/deps-web.txt")
"$root/scripts/install_deps.sh" "$root/scripts/deps-fuzz.txt" "$root/scripts/deps-package.txt" "${web_deps[@]}"
jobs=$(nproc)
stage_start=$SECONDS
stage_done() { echo "== $1 took $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }
# After a failed ctest run in the current folder: each failed entry's failing checks (doctest's ERROR
# lines and what follows them, timeouts, error messages), printed last, where a CI summary that keeps
# only the end of the output still shows why.
why_failed() {
  local failed=Testing/Temporary/LastTestsFailed.log log=Testing/Temporary/LastTest.log name
  [[ -f $failed && -f $log ]] || return 0
  while IFS=: read -r _ name; do
    echo "== why $name failed (the end of its output; the whole of it is above):"
    awk -v n="$name" '$0 ~ "Testing: " n "$" {on = 1} on && /^Test (Failed|Passed)/ {on = 0} on' "$log" |
      grep -E -A3 'ERROR|timed out|error:|Timeout|Sanitizer|runtime error' | tail -24
  done <"$failed"
}
# Every entry's scratch folder emptied before a run (the folders stay: ctest runs the entries in them), so
# that a run here starts as CI's clean checkout does, with no settings or records left by an earlier run.
fresh_scratch() { [[ -d $1/tests/tmp ]] && find "$1/tests/tmp" -mindepth 2 -delete; return 0; }

if [[ "${ATTNSCOPE_QUICK:-0}" != 1 ]]; then
  echo "== 1/4 sanitizers: ASan + UBSan build and suite"
  # The same configuration as scripts/fuzz.sh, which then finds its fuzzer already built.
  asan="$root/build-fuzz"
  "$root/scripts/fuzz.sh" --configure-only
  cmake --build "$asan" -j"$jobs" >"$asan/build.log" 2>&1 || { tail -40 "$asan/build.log"; exit 1; }
  fresh_scratch "$asan"
  (cd "$asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure --timeout 1800 -j"$jobs" --schedule-random || { status=$?; why_failed; exit $status; })
  stage_done "1/4 sanitizers"

  echo "== 2/4 fuzz smoke run"
  "$root/scripts/fuzz.sh" "${ATTNSCOPE_FUZZ_SECONDS:-10}"
  stage_done "2/4 fuzz"
fi

echo "== 3/4 Release build and the whole suite"
# No precompiled headers (ccache is installed with scripts/deps.txt): gcc's is made anew in every clone, and every
# source that uses it then misses ccache, so that a fresh clone compiled 235 of its 356 sources again (docs/development.md).
"$root/scripts/build.sh" -DATTNSCOPE_PCH=OFF >"$root/build.log" 2>&1 || { tail -40 "$root/build.log"; exit 1; }
release=${ATTNSCOPE_BUILD_DIR:-$root/build}
fresh_scratch "$release"
(cd "$release" && ctest --output-on-failure --timeout 900 -j4 --schedule-random || { status=$?; why_failed; exit $status; })
stage_done "3/4 Release"

if [[ "${ATTNSCOPE_QUICK:-0}" != 1 ]]; then
  echo "== 4/4 the browser build and its tests in headless Chromium"
  web=${ATTNSCOPE_WEB_BUILD_DIR:-$root/build-web}
  # No precompiled headers here either: emscripten's are made anew in every clone and miss ccache, as gcc's do.
  ATTNSCOPE_WEB_BUILD_DIR="$web" "$root/scripts/build-web.sh" -DATTNSCOPE_PCH=OFF >"$root/build-web.log" 2>&1 ||
    { tail -40 "$root/build-web.log"; exit 1; }
  # the engine's attention tests compiled to WebAssembly and run under node (the SIMD128 kernel against the
  # plain-loop references), then the page in headless Chromium
  "$root/tests/web/engine/run.sh" "$web" >"$root/build-web-engine-tests.log" 2>&1 ||
    { tail -40 "$root/build-web-engine-tests.log"; echo "error: the engine's tests in WebAssembly failed (log: build-web-engine-tests.log)" >&2; exit 1; }
  tail -3 "$root/build-web-engine-tests.log"
  "$root/tests/web/run.sh" "$web/site" "$release/app/attnscope"
  stage_done "4/4 browser"
fi
