#!/usr/bin/env bash
# run_all.sh — every speed comparison against PyTorch in one command (README "Speed").
#   bench/run_all.sh [build-dir]        default: build/ (Release, the benchmarks built: scripts/build.sh)
# 1. compare_torch.py        the grouped-attention kernel, four shapes, beside PyTorch; then (--mla) multi-head
#                            latent attention in its naive and absorbed forms beside DeepSeek-V2's two forms;
#                            then compare_linear_torch.py: attention without a softmax (linear, decayed, Mamba-2,
#                            the delta rules), the recurrence and the chunked form at T 1024 and 4096
# 2. compare_model_torch.py  checkpoint forwards (GPT-2 small F32 T 128, Qwen2.5-0.5B-shaped BF16 T 64) and
#                            `attnscope compute --checkpoint` end to end, with peak memory; then
#                            compare_llama32_torch.py: a Llama-3.2-1B-shaped BF16 checkpoint (2.5 GB, real config)
#                            opened and run at T 64 by both, open times and peak memory beside each other
# 3. bench_train --repeat 3  training steps per second, the default induction model and an L4 d256 SwiGLU model
#                            (three attnscope/PyTorch pairs, then the medians)
# PyTorch runs at its best in each (bench/anchor.py: 2 threads, OMP_WAIT_POLICY=PASSIVE, OPENBLAS_CORETYPE
# and OPENBLAS_L2_SIZE unset), and each measures the machine's sgemm rate in the same run and prints its
# figures as shares of it. Run it on a quiet machine: the load average is printed at the top of each part.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
py=/usr/bin/python3
[[ -x "$build/bench/bench_engine" && -x "$build/bench/bench_linear" && -x "$build/app/attnscope" ]] ||
  { echo "error: no benchmarks in $build (scripts/build.sh builds them)" >&2; exit 2; }
"$py" -c 'import torch, numpy' 2>/dev/null ||
  { echo "error: $py cannot import torch and numpy (apt-get install python3-torch python3-numpy libopenblas0-pthread)" >&2; exit 2; }
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
echo "== 1/3 grouped attention against PyTorch"
"$py" "$root/bench/compare_torch.py" "$build"
echo
echo "== 1/3 (continued) multi-head latent attention, naive and absorbed, against PyTorch"
"$py" "$root/bench/compare_torch.py" --mla "$build"
echo
echo "== 1/3 (continued) attention without a softmax, recurrence and chunked form, against PyTorch"
"$py" "$root/bench/compare_linear_torch.py" "$build"
echo
echo "== 2/3 checkpoint forward and compute --checkpoint against PyTorch"
"$py" "$root/bench/compare_model_torch.py" "$build"
echo
echo "== 2/3 (continued) a Llama-3.2-1B-shaped checkpoint: open, forward at T = 64 and peak memory against PyTorch"
"$py" "$root/bench/compare_llama32_torch.py" "$build"
echo
echo "== 3/3 training against PyTorch"
"$build/bench/bench_train" --repeat 3
