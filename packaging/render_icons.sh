#!/usr/bin/env bash
# Renders packaging/attnscope.svg into the PNG sizes under packaging/icons/ that `cmake --install`
# puts in share/icons/hicolor/<N>x<N>/apps/. The PNGs are committed so that building needs no SVG
# renderer; run this again after editing the SVG (needs rsvg-convert: apt-get install librsvg2-bin).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v rsvg-convert >/dev/null || { echo "error: rsvg-convert is missing (apt-get install librsvg2-bin)" >&2; exit 1; }
mkdir -p "$here/icons"
for n in 16 24 32 48 64 128 256 512; do
  rsvg-convert --width "$n" --height "$n" "$here/attnscope.svg" --output "$here/icons/attnscope-$n.png"
done
echo "rendered $(ls "$here/icons" | wc -l) PNGs into $here/icons/"
