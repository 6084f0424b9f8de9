#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run the whole suite.
#   1. AddressSanitizer + UndefinedBehaviorSanitizer build (clang, with libFuzzer's coverage) of the
#      engine, CLI, window, test suite and fuzzer, and the suite through ctest, with a short monkey
#      test of the window (gui_monkey, tests/gui/monkey/; scripts/monkey.sh runs it longer)
#   2. fuzz smoke run: every libFuzzer target for a few seconds (scripts/fuzz.sh), on stage 1's build
#   3. the Release build and the whole suite through ctest, GUI tests under Xvfb, and the install
#      tests: an install into a temporary prefix, and the .deb made from that build (tests/install/)
# Stages 1 and 2 share one build: each source is compiled once per configuration (two in all).
# ATTNSCOPE_QUICK=1 skips stages 1 and 2 (for a fast local loop; CI always runs all three).
# Every ctest run schedules its entries in a random order, side by side: each entry has its own scratch
# folder, working directory, config folder and X server (tests/test_tmp.h, tests/xvfb_run.sh), so the
# suite must pass in any order. Stage 3 runs the Release suite twice over with four entries at once
# (ctest -j4 --schedule-random --repeat until-fail:2): a suite that depends on order or shares a file
# fails here, not by chance in a later submission (about 140 s on the 2-core machine, against 70 s once).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install_deps.sh" "$root/scripts/deps-fuzz.txt" "$root/scripts/deps-package.txt"
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

if [[ "${ATTNSCOPE_QUICK:-0}" != 1 ]]; then
  echo "== 1/3 sanitizers: ASan + UBSan build and suite"
  # The same configuration as scripts/fuzz.sh, which then finds its fuzzer already built.
  asan="$root/build-fuzz"
  "$root/scripts/fuzz.sh" --configure-only
  cmake --build "$asan" -j"$jobs" >"$asan/build.log" 2>&1 || { tail -40 "$asan/build.log"; exit 1; }
  (cd "$asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure --timeout 1800 -j"$jobs" --schedule-random || { status=$?; why_failed; exit $status; })
  stage_done "1/3 sanitizers"

  echo "== 2/3 fuzz smoke run"
  "$root/scripts/fuzz.sh" "${ATTNSCOPE_FUZZ_SECONDS:-10}"
  stage_done "2/3 fuzz"
fi

echo "== 3/3 Release build and the whole suite"
"$root/scripts/build.sh" >"$root/build.log" 2>&1 || { tail -40 "$root/build.log"; exit 1; }
cd "${ATTNSCOPE_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 900 -j4 --schedule-random --repeat until-fail:2 || { status=$?; why_failed; exit $status; }
stage_done "3/3 Release"
