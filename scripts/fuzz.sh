#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a bounded time.
#   scripts/fuzz.sh [seconds-per-target] [target ...]     default: 60 s, every target
#   scripts/fuzz.sh --configure-only                       configure build-fuzz/ and stop (test.sh
#                                                          builds the sanitized suite there too)
# Each target starts from the committed seed corpus tests/fuzz/corpus/<target>/ (copied, so the
# repo is not modified) plus tests/fuzz/regressions/<target>/. A crash leaves its input in
# build-fuzz/artifacts/<target>/ and makes the script fail: commit that input to
# tests/fuzz/regressions/<target>/ with the fix, so the normal suite replays it forever.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
configure_only=0
[[ "${1:-}" == --configure-only ]] && { configure_only=1; shift; }
seconds=${1:-60}
shift || true
targets=("$@")
"$root/scripts/install_deps.sh" "$root/scripts/deps-fuzz.txt"
build="$root/build-fuzz"
# OpenMP off: libFuzzer runs one input at a time, and clang's OpenMP runtime is another package.
# -O1 with line tables, as the sanitizers' manuals advise: readable stack traces for less compile time
# than -O2 -g (this build also holds the sanitized test suite of scripts/test.sh, and the sanitized
# window that the monkey test drives: scripts/monkey.sh, tests/gui/monkey/).
# A fresh clone reuses ccache's objects of this build (docs/development.md, "Where the time goes"): the line
# tables name the source root as "." (-fdebug-prefix-map), ccache does not hash the build folder
# (CCACHE_NOHASHDIR, set with the launcher in CMakeLists.txt), and no precompiled header, which clang makes anew
# in every clone and which then misses the cache for every source that uses it.
flags="-O1 -gline-tables-only -DNDEBUG -fdebug-prefix-map=$root=."
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
  -DATTNSCOPE_PCH=OFF -DATTNSCOPE_FUZZ=ON \
  -DATTNSCOPE_OPENMP=OFF -DATTNSCOPE_BUILD_APP=ON -DATTNSCOPE_BUILD_BENCH=OFF >/dev/null
[[ $configure_only == 1 ]] && exit 0
if ! cmake --build "$build" -j"$(nproc)" --target fuzz_attnscope >"$build/build.log" 2>&1; then
  tail -40 "$build/build.log" >&2
  echo "error: building the fuzz targets failed (log: $build/build.log)" >&2
  exit 1
fi
fuzzer="$build/tests/fuzz/fuzz_attnscope"
# Every target of tests/fuzz/fuzz_entries.h unless some are named.
[[ ${#targets[@]} -gt 0 ]] || mapfile -t targets < <(ATTNSCOPE_FUZZ_TARGET=list "$fuzzer")
# The targets run side by side, one per core (ATTNSCOPE_FUZZ_JOBS overrides): each is single-threaded, so on the
# 2-core machine this halves the smoke run of scripts/test.sh. Each target's report is printed in the list's order.
parallel=${ATTNSCOPE_FUZZ_JOBS:-$(nproc)}
fuzz_one() {
  local t=$1 work="$build/corpus/$1" log="$build/fuzz_$1.log"
  mkdir -p "$work" "$build/artifacts/$t"
  cp -n "$root/tests/fuzz/corpus/$t/"* "$work/" 2>/dev/null || true
  local seeds=("$work")
  [[ -d "$root/tests/fuzz/regressions/$t" ]] && seeds+=("$root/tests/fuzz/regressions/$t")
  if ATTNSCOPE_FUZZ_TARGET="$t" "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$build/artifacts/$t/" -print_final_stats=1 "${seeds[@]}" >"$log" 2>&1; then
    local execs
    execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "fuzz_$t: ${seconds}s, ${execs:-?} executions, no crash" >"$build/fuzz_$t.result"
  else
    rm -f "$build/fuzz_$t.result"
  fi
}
for t in "${targets[@]}"; do
  rm -f "$build/fuzz_$t.result"
  while (( $(jobs -rp | wc -l) >= parallel )); do wait -n || true; done
  fuzz_one "$t" &
done
wait
status=0
for t in "${targets[@]}"; do
  if [[ -f "$build/fuzz_$t.result" ]]; then
    cat "$build/fuzz_$t.result"
  else
    echo "fuzz_$t: FAILED — see $build/fuzz_$t.log and $build/artifacts/$t/" >&2
    tail -30 "$build/fuzz_$t.log" >&2
    status=1
  fi
done
exit $status
