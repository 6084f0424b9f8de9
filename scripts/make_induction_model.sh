#!/bin/sh
# Remakes assets/models/induction, the small induction model attnscope ships (assets/models/README.md),
# with the attnscope binary built in ./build (or the one named by $ATTNSCOPE).
set -eu
cd "$(dirname "$0")/.."
bin=${ATTNSCOPE:-build/app/attnscope}
exec "$bin" train --task induction --layers 2 --heads 4 --groups 2 --d-model 64 --steps 1000 --seed 1 --threads 1 \
  --out assets/models/induction
