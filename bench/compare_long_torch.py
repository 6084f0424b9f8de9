#!/usr/bin/python3
"""compare_long_torch.py — one head's map of a long input by PyTorch, beside attnscope's (run by bench_long).

    /usr/bin/python3 bench/compare_long_torch.py DIR SCALE OURS_HEAD_MS OURS_CHANGE_MS
DIR holds q.npy [T, D] and k.npy [T, D] (the head's query and its K/V group's key, after RoPE, as attnscope's
forward kept them: model/head_maps.h) and map.npy [T, T] (attnscope's map). PyTorch (2 threads, bench/anchor.py)
computes softmax(q·kᵀ·SCALE + causal mask) and its max pooling to at most 1024 a side (max_pool2d,
masked cells −inf so they never win), times both (median of 7), and prints one JSON line: its times, the largest
difference from attnscope's map, and both maps' Q·Kᵀ (2·T²·D flop) as shares of the run's sgemm rate.
"""
import anchor  # noqa: F401  (first: OMP_WAIT_POLICY=PASSIVE, OPENBLAS_* unset, 2 threads)

import json
import math
import sys

import numpy as np
import torch


def main():
    folder, scale, ours_head_ms, ours_change_ms = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    q = torch.from_numpy(np.load(f"{folder}/q.npy"))
    k = torch.from_numpy(np.load(f"{folder}/k.npy"))
    ours = torch.from_numpy(np.load(f"{folder}/map.npy"))
    T, D = q.shape
    block = max(1, math.ceil(T / 1024))
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)

    def head():
        s = (q @ k.T) * scale
        s.masked_fill_(mask, float("-inf"))
        return torch.softmax(s, dim=-1)

    def change():
        p = head()
        pooled = torch.nn.functional.max_pool2d(p.masked_fill(mask, float("-inf"))[None, None], block, ceil_mode=True)
        return p, pooled

    with torch.no_grad():
        head_med, head_best = anchor.median_and_best_ms(head, 7)
        change_med, _ = anchor.median_and_best_ms(change, 7)
        p = head()
    rate = anchor.sgemm_gflops()
    gflop = 2.0 * T * T * D / 1e9
    print(json.dumps({
        "torch": torch.__version__, "machine": anchor.describe(), "tokens": T, "head_dim": D,
        "torch_head_map_median_ms": round(head_med, 1), "torch_head_change_median_ms": round(change_med, 1),
        "attnscope_head_map_median_ms": round(ours_head_ms, 1), "attnscope_head_change_median_ms": round(ours_change_ms, 1),
        "max_abs_difference": float((p - ours).abs().max()),
        "sgemm_gflops": round(rate, 1),
        "attnscope_head_map_share_of_sgemm": anchor.share(gflop, ours_head_ms / 1e3, rate),
        "torch_head_map_share_of_sgemm": anchor.share(gflop, head_med / 1e3, rate),
    }))


if __name__ == "__main__":
    main()
