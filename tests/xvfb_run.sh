#!/usr/bin/env bash
# xvfb_run.sh — runs a command with a private X server of its own (the GUI ctest entries).
#   tests/xvfb_run.sh [--screen WxHxD] COMMAND [ARG ...]
# `xvfb-run -a` picks its display by looking for a free lock file and then starting the server: two
# entries started at once can pick the same number, and one of them fails with "Xvfb failed to start".
# Here the server chooses its own free display (-displayfd) and reports it, so parallel entries never
# meet. The server ends with the command; the command's exit status is this script's.
set -euo pipefail
screen=3840x2160x24
if [[ "${1:-}" == --screen ]]; then screen=$2; shift 2; fi
[[ $# -gt 0 ]] || { echo "usage: xvfb_run.sh [--screen WxHxD] COMMAND [ARG ...]" >&2; exit 2; }
command -v Xvfb >/dev/null || { echo "error: Xvfb not found (apt-get install xvfb)" >&2; exit 2; }
fifo=$(mktemp -u "${TMPDIR:-/tmp}/attnscope-xvfb.XXXXXX")
mkfifo -m 600 "$fifo"
Xvfb -displayfd 3 -screen 0 "$screen" -nolisten tcp -noreset 3>"$fifo" 2>/dev/null &
server=$!
cleanup() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$fifo"; }
trap cleanup EXIT
# The server writes its display number once it accepts connections (bounded wait: a server that never
# starts must not hang the suite).
display=
if read -r -t 30 display <"$fifo" && [[ "$display" =~ ^[0-9]+$ ]]; then :; else
  echo "error: Xvfb did not start (no display number within 30 s)" >&2
  exit 1
fi
DISPLAY=":$display" "$@"
