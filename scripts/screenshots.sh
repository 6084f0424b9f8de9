#!/bin/bash
# Re-takes the pictures of README.md and docs/*.md (docs/*.png) from the built window under Xvfb, each at
# 1280×720 (the size a projector shows) in the light theme, with the settings its caption describes; the
# page about languages (docs/window.md) also gets its picture in Chinese.
# Usage: scripts/screenshots.sh [BUILD_DIR]   (default: build)
# Needs xvfb-run (package xvfb); the window is the one scripts/build.sh makes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bin=$build/app/attnscope
[ -x "$bin" ] || { echo "error: $bin is not built (run scripts/build.sh)" >&2; exit 2; }
command -v xvfb-run >/dev/null || { echo "error: xvfb-run is missing (apt-get install xvfb)" >&2; exit 2; }
model=$root/assets/models/induction
export XDG_CONFIG_HOME=$(mktemp -d)  # no saved state of this machine's user in the pictures
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT

shot() {  # shot NAME ARGS…
  local name=$1
  shift
  xvfb-run -a -s '-screen 0 1920x1080x24' "$bin" --size 1280x720 --theme light "$@" \
    --screenshot "$root/docs/$name.png" >/dev/null
  echo "docs/$name.png"
}
ids='ids: 16 10 28 12 17 19 9 3 16 10 28 12 17 19 9 3'  # 8 token ids of the shipped model, repeated once

shot window-heads --designed previous,next,self,first,punct,local,repeat,broad \
  --text 'The cat sat on the mat. It was tired, so the cat slept.'
shot window-heads-zh --designed previous,next,self,first,punct,local,repeat,broad --text '我喜欢打篮球，因为篮球很好玩。' \
  --language zh
shot about --show-about
shot lesson --lesson 4 --step 2
shot window-relpos2d --view relpos2d --grid 24x24 --pattern glyph
shot window-positions --lesson 9 --step 5
shot window-mla --lesson 8 --step 2
shot window-checkpoint --checkpoint "$model" --layer 1 --text "$ids"
shot window-model-view --checkpoint "$model" --show-model-view --text "$ids" --frames 8
shot presentation --lesson 4 --step 2 --frames 8 --keys 3:f11
# The Training window after Compare MHA / GQA / MQA / MLA at the window's defaults, run to the end.
shot window-training --show-training --train-actions compare
"$bin" export --kind gqa --heads 8 --groups 2 --causal --text 'The cat sat on the mat because it was tired.' \
  --what heads --format png --scale 2 --out "$root/docs/export_heads_gqa.png" >/dev/null
echo "docs/export_heads_gqa.png"
