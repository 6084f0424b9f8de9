#!/usr/bin/env bash
# The monkey test, longer than scripts/test.sh's: a seeded random user clicks, drags, types and presses
# keys on every window, menu, button and slider of the sanitized window (ASan + UBSan, ImGui assertions
# abort), through Xvfb and xdotool; it fails on a crash, a hang, a sanitizer report or an assertion.
#   scripts/monkey.sh [--seconds N] [--seeds a,b,c] [--start S]   default: 120 s per seed, seeds 1,2,3,4,5,
#                                                        each start state (default, training, training-run,
#                                                        presenting, checkpoint, linear)
#   scripts/monkey.sh --replay build-fuzz/monkey/monkey-seedN.log    play a logged run's actions again
# The window is built in build-fuzz/ (scripts/fuzz.sh's configuration). Each seed's action log is
# build-fuzz/monkey/monkey-seedN.log (one JSON line per action, with its mouse and key steps) and the
# window's output build-fuzz/monkey/seed-N/app.log.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install_deps.sh" "$root/scripts/deps-fuzz.txt"
build="$root/build-fuzz"
"$root/scripts/fuzz.sh" --configure-only
if ! cmake --build "$build" -j"$(nproc)" --target attnscope >"$build/build-monkey.log" 2>&1; then
  tail -40 "$build/build-monkey.log" >&2
  echo "error: building the sanitized window failed (log: $build/build-monkey.log)" >&2
  exit 1
fi
args=(--seconds 120 --seeds 1,2,3,4,5)
# Every start state (the first start, the Training window, the Training window with a run) unless one is
# named (--start S) or a log is replayed.
if [[ " $* " == *" --start "* || " $* " == *" --replay "* ]]; then
  exec /usr/bin/python3 "$root/tests/gui/monkey/monkey.py" --app "$build/app/attnscope" --workdir "$build/monkey" \
    "${args[@]}" "$@"
fi
status=0
for start in default training training-run presenting checkpoint linear; do
  work="$build/monkey"
  [[ $start == default ]] || work="$build/monkey-$start"
  /usr/bin/python3 "$root/tests/gui/monkey/monkey.py" --app "$build/app/attnscope" --workdir "$work" \
    "${args[@]}" --start "$start" "$@" || status=1
done
exit $status
