#!/usr/bin/python3
"""compare_torch.py — attnscope against PyTorch's CPU attention, same shapes, same weights.

For each shape (T, C, H, G) it draws X and the nn.Linear weights with NumPy, runs
`attnscope compute --input X.npy --weights DIR` and PyTorch (2 threads) on them, checks that the
probabilities and outputs agree (max abs difference <= 1e-4), and prints both times and their ratio:
the medians, and the best of the same runs (on a shared machine the medians swing with the load;
the best times show each side when it had the cores).
The attnscope time comes from bench_engine (the same routine, without process start-up and file I/O).
PyTorch runs at its best (bench/anchor.py: 2 threads, OMP_WAIT_POLICY=PASSIVE, OpenBLAS choosing its
own kernel), and every time is also given as a share of the same run's float32 GEMM rate (OpenBLAS
sgemm 2048³), with the flops as bench_engine counts them (projections, Q·Kᵀ and P·V).

Run with Debian's python3 (python3-torch, python3-numpy; libopenblas0-pthread installed):
    /usr/bin/python3 bench/compare_torch.py [build-dir]
"""
import anchor  # noqa: F401  (first: OMP_WAIT_POLICY=PASSIVE, OPENBLAS_CORETYPE unset, before torch loads)

import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

SHAPES = [(64, 256, 8, 8), (256, 512, 8, 2), (512, 512, 16, 4), (1024, 768, 12, 12)]
TOLERANCE = 1e-4


def torch_attention(x, wq, wk, wv, wo, heads, groups):
    """Grouped attention exactly as SPEC says, with every head's probabilities materialised."""
    T, C = x.shape
    dk = C // heads
    q = (x @ wq.T).view(T, heads, dk).transpose(0, 1)            # [H, T, d_k]
    k = (x @ wk.T).view(T, groups, dk).transpose(0, 1)           # [G, T, d_k]
    v = (x @ wv.T).view(T, groups, dk).transpose(0, 1)
    k = k.repeat_interleave(heads // groups, dim=0)              # head h reads group h // (H/G)
    v = v.repeat_interleave(heads // groups, dim=0)
    probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(dk), dim=-1)  # [H, T, T]
    out = (probs @ v).transpose(0, 1).reshape(T, heads * dk) @ wo.T      # [T, C]
    return probs, out


def median_and_best_ms(fn, reps):
    fn()
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2], times[0]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build")
    attnscope = os.path.join(build, "app", "attnscope")
    bench = os.path.join(build, "bench", "bench_engine")
    rng = np.random.default_rng(0)
    print(anchor.describe())
    rate = anchor.sgemm_gflops()
    print(f"sgemm 2048³ (OpenBLAS through torch.mm, 2 threads, best of 7): {rate:.0f} GFLOP/s")
    print(f"{'T':>5} {'C':>5} {'H':>3} {'G':>3} {'GFLOP':>6} {'max|dP|':>9} {'max|dO|':>9} {'torch ms':>9} "
          f"{'attnscope ms':>12} {'torch/attnscope':>15} {'best: torch':>11} {'attnscope':>9} {'ratio':>7} "
          f"{'torch %sgemm':>12} {'attnscope %sgemm':>16}")
    worst = 0.0
    slower = []
    for T, C, H, G in SHAPES:
        dk = C // H
        bound = lambda fan_in, fan_out: math.sqrt(6 / (fan_in + fan_out))
        x = rng.uniform(-1, 1, (T, C)).astype(np.float32)
        wq = rng.uniform(-1, 1, (H * dk, C)).astype(np.float32) * bound(C, H * dk)
        wk = rng.uniform(-1, 1, (G * dk, C)).astype(np.float32) * bound(C, G * dk)
        wv = rng.uniform(-1, 1, (G * dk, C)).astype(np.float32) * bound(C, G * dk)
        wo = rng.uniform(-1, 1, (C, H * dk)).astype(np.float32) * bound(H * dk, C)
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "w"))
            np.save(os.path.join(tmp, "x.npy"), x)
            for name, w in (("wq", wq), ("wk", wk), ("wv", wv), ("wo", wo)):
                np.save(os.path.join(tmp, "w", name + ".npy"), w)
            subprocess.run([attnscope, "compute", "--input", os.path.join(tmp, "x.npy"), "--weights",
                            os.path.join(tmp, "w"), "--kind", "gqa", "--heads", str(H), "--groups", str(G),
                            "--out", os.path.join(tmp, "out")], check=True, stdout=subprocess.DEVNULL)
            ours_probs = np.load(os.path.join(tmp, "out", "probs.npy"))
            ours_out = np.load(os.path.join(tmp, "out", "output.npy"))
        tx, twq, twk, twv, two = (torch.from_numpy(a) for a in (x, wq, wk, wv, wo))
        with torch.no_grad():
            probs, out = torch_attention(tx, twq, twk, twv, two, H, G)
            reps = 10 if T >= 1024 else 30
            torch_ms, torch_best = median_and_best_ms(lambda: torch_attention(tx, twq, twk, twv, two, H, G), reps)
        d_probs = float(np.abs(probs.numpy() - ours_probs).max())
        d_out = float(np.abs(out.numpy() - ours_out).max())
        worst = max(worst, d_probs, d_out)
        ours = json.loads(subprocess.run([bench, str(T), str(C), str(H), str(G), str(reps)], check=True,
                                         capture_output=True, text=True).stdout)
        ratio = torch_ms / ours["median_ms"]
        if ratio < 1:
            slower.append((T, C, H, G))
        work = ours["gflops"] * ours["median_ms"] / 1e3  # bench_engine's own flop count
        print(f"{T:5d} {C:5d} {H:3d} {G:3d} {work:6.2f} {d_probs:9.2e} {d_out:9.2e} {torch_ms:9.2f} "
              f"{ours['median_ms']:12.2f} {ratio:14.2f}x {torch_best:11.2f} {ours['best_ms']:9.2f} "
              f"{torch_best / ours['best_ms']:6.2f}x {100 * work / (torch_best / 1e3) / rate:11.0f}% "
              f"{100 * work / (ours['best_ms'] / 1e3) / rate:15.0f}%")
    print("(the shares use the best times; 100% would be the whole pass at the sgemm rate)")
    print(f"largest difference {worst:.2e} (tolerance {TOLERANCE:g})")
    if worst > TOLERANCE:
        print("FAIL: attnscope and PyTorch disagree")
        return 1
    if slower:
        print(f"note: PyTorch was faster on {slower}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
