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
    /usr/bin/python3 bench/compare_torch.py --mla [build-dir]

--mla: multi-head latent attention instead, in both forms. bench_engine writes X and its seeded MLA weights
(W_DQ, W_UQ, W_QR, W_DKV, W_KR, W_UK, W_UV, W_O and the two RMSNorm weights) and its probabilities and
output; PyTorch runs DeepSeek's naive form (K and V expanded per head) and its absorbed form (W_UK folded
into the queries, W_UV after the weighted sum of the latent, as DeepSeek-V2's model.py) on them, with the
same rotate-half RoPE of the rotary part; both are checked against attnscope's output, and timed.
"""
import anchor  # noqa: F401  (first: OMP_WAIT_POLICY=PASSIVE, OPENBLAS_CORETYPE unset, before torch loads)

import json
import math
import os
import subprocess
import sys
import tempfile

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


MLA_SHAPES = [(256, 512, 8, 64, 0, 16), (1024, 768, 12, 128, 192, 32)]  # T, C, H, r_kv, r_q, d_rope


def rope_half(x, base=10000.0):
    """x [T, n, d]: rotate-half RoPE, row t at position t (the engine's default layout)."""
    T, n, d = x.shape
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = (torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]).to(x.dtype)
    cos = torch.cat([ang.cos(), ang.cos()], -1)[:, None, :]
    sin = torch.cat([ang.sin(), ang.sin()], -1)[:, None, :]
    return x * cos + torch.cat([-x[..., d // 2:], x[..., : d // 2]], -1) * sin


def rms(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def torch_mla(W, H, r_q, d_rope, absorbed):
    """DeepSeek-V2's MLA (model.py), every head's probabilities materialised; W from bench_engine's files."""
    x = W["x"]
    T, C = x.shape
    dn = C // H
    qin = rms(x @ W["wdq"].T, W["q_norm"]) if r_q > 0 else x
    q_nope = (qin @ W["wuq"].T).view(T, H, dn)
    q_pe = rope_half((qin @ W["wqr"].T).view(T, H, d_rope))
    c_kv = rms(x @ W["wdkv"].T, W["kv_norm"])
    k_pe = rope_half((x @ W["wkr"].T).view(T, 1, d_rope))[:, 0]
    scale = 1.0 / math.sqrt(dn + d_rope)
    if absorbed:
        q_abs = torch.einsum("shd,hdc->shc", q_nope, W["wuk"].view(H, dn, -1))
        scores = (torch.einsum("shc,tc->hst", q_abs, c_kv) + torch.einsum("shr,tr->hst", q_pe, k_pe)) * scale
        probs = scores.softmax(-1)
        o = torch.einsum("hst,tc->shc", probs, c_kv)
        o = torch.einsum("shc,hdc->shd", o, W["wuv"].view(H, dn, -1))
    else:
        k = torch.cat([(c_kv @ W["wuk"].T).view(T, H, dn), k_pe[:, None, :].expand(T, H, d_rope)], -1)
        v = (c_kv @ W["wuv"].T).view(T, H, dn)
        probs = (torch.einsum("shd,thd->hst", torch.cat([q_nope, q_pe], -1), k) * scale).softmax(-1)
        o = torch.einsum("hst,thd->shd", probs, v)
    return probs, o.reshape(T, H * dn) @ W["wo"].T


def main_mla(bench, rate):
    print(f"{'T':>5} {'C':>5} {'H':>3} {'r_kv':>5} {'r_q':>4} {'d_R':>4} {'form':>8} {'max|dP|':>9} {'max|dO|':>9} "
          f"{'torch ms':>9} {'attnscope ms':>12} {'ratio':>7} {'best: torch':>11} {'attnscope':>9} {'ratio':>7} "
          f"{'torch %sgemm':>12} {'attnscope %sgemm':>16}")
    worst = 0.0
    for T, C, H, r_kv, r_q, d_rope in MLA_SHAPES:
        reps = 10 if T >= 1024 else 30
        with tempfile.TemporaryDirectory() as tmp:
            ours = json.loads(subprocess.run([bench, "mla", str(T), str(C), str(H), str(r_kv), str(r_q), str(d_rope),
                                              str(reps), tmp], check=True, capture_output=True, text=True).stdout)
            W = {name[:-4]: torch.from_numpy(np.load(os.path.join(tmp, name)).reshape(
                     (-1,) if name in ("q_norm.npy", "kv_norm.npy") else np.load(os.path.join(tmp, name)).shape))
                 for name in os.listdir(tmp)}
        for form in ("naive", "absorbed"):
            absorbed = form == "absorbed"
            with torch.no_grad():
                probs, out = torch_mla(W, H, r_q, d_rope, absorbed)
                torch_ms, torch_best = anchor.median_and_best_ms(lambda: torch_mla(W, H, r_q, d_rope, absorbed), reps)
            d_probs = float((probs - W["probs"]).abs().max())
            d_out = float((out - W["output_absorbed" if absorbed else "output"]).abs().max())
            worst = max(worst, d_probs, d_out)
            ms, best, gflops = ours[form + "_median_ms"], ours[form + "_best_ms"], ours[form + "_gflops"]
            work = gflops * ms / 1e3
            print(f"{T:5d} {C:5d} {H:3d} {r_kv:5d} {r_q:4d} {d_rope:4d} {form:>8} {d_probs:9.2e} {d_out:9.2e} "
                  f"{torch_ms:9.2f} {ms:12.2f} {torch_ms / ms:6.2f}x {torch_best:11.2f} {best:9.2f} "
                  f"{torch_best / best:6.2f}x {100 * work / (torch_best / 1e3) / rate:11.0f}% "
                  f"{100 * work / (best / 1e3) / rate:15.0f}%")
    print("(ratio = torch / attnscope; the shares use the best times and bench_engine's flop count of each form)")
    print(f"largest difference {worst:.2e} (tolerance {TOLERANCE:g})")
    if worst > TOLERANCE:
        print("FAIL: attnscope and PyTorch disagree")
        return 1
    return 0


def main():
    args = [a for a in sys.argv[1:] if a != "--mla"]
    build = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build")
    attnscope = os.path.join(build, "app", "attnscope")
    bench = os.path.join(build, "bench", "bench_engine")
    rng = np.random.default_rng(0)
    print(anchor.describe())
    rate = anchor.sgemm_gflops()
    print(f"sgemm 2048³ (OpenBLAS through torch.mm, 2 threads, best of 7): {rate:.0f} GFLOP/s")
    if "--mla" in sys.argv[1:]:
        return main_mla(bench, rate)
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
            torch_ms, torch_best = anchor.median_and_best_ms(lambda: torch_attention(tx, twq, twk, twv, two, H, G), reps)
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
