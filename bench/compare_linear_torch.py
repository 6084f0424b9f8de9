#!/usr/bin/python3
"""compare_linear_torch.py — attention without a softmax: attnscope's recurrence and chunked form beside
PyTorch's, same inputs, same run.

For every kind (linear, linear_norm, decayed, mamba2, delta, gated_delta) at T = 1024 and 4096, 8 heads,
d_k = d_v = 128, chunk 64, `build/bench/bench_linear KIND T H DK DV CHUNK REPS DIR` times the engine's two forms
(linear_heads_recurrent, linear_heads_chunked: a layer's heads spread over the cores) and writes its inputs and
outputs; PyTorch (2 threads, float32, every head batched in one tensor) runs its own two forms on the same
inputs, checks them against attnscope's (max |difference| / max |output| ≤ 1e-4), and both are timed:

  recurrence  one token at a time over the state [H, d_k, d_v]. The delta rules follow transformers 5.x
              torch_recurrent_gated_delta_rule (models/qwen3_next/modeling_qwen3_next.py): S ← S·e^{g_t};
              kv_mem = Σ_k S·k_t; δ = (v_t − kv_mem)·β_t; S ← S + k_t δᵀ; o_t = Σ_k S·q_t. Mamba-2 follows
              Mamba2Mixer.torch_forward's cached step (models/mamba2/modeling_mamba2.py): S ← S·e^{Δ_t A} +
              Δ_t B_t x_tᵀ, y_t = Sᵀ C_t + D x_t; linear and decayed attention the same update with their
              weights, the read as a batched matrix product.
  chunked     the delta rules follow torch_chunk_gated_delta_rule (the same file): per chunk of 64 the
              decay mask e^{g_i − g_j}, −(β K Kᵀ ⊙ mask) made into (I + Λ)⁻¹ row by row, U = A·(β V),
              W = A·(β e^{g} K), then over the chunks v_new = U − W·S, o = (e^{g} Q)·S + (QKᵀ ⊙ mask)·v_new,
              S ← e^{g_last} S + (e^{g_last − g} K)ᵀ v_new. Linear, decayed and Mamba-2 (its SSD form): the
              block ((QKᵀ) ⊙ e^{L_i − L_j} w_j)·V of every chunk at once, then the states chunk by chunk.
The inputs (q, k L2-normalised for the delta rules; RetNet's decays; A, Δ and β as Qwen3-Next and Mamba-2
initialise them) are bench_linear's; the flops are bench_linear's count of each form, the same for both
sides, and every time is also a share of the same run's float32 GEMM rate (OpenBLAS sgemm 2048³ through
torch.mm, 2 threads: bench/anchor.py). PyTorch runs at its best (anchor: 2 threads, OMP_WAIT_POLICY=PASSIVE,
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset).

Run with Debian's python3 (python3-torch, python3-numpy; libopenblas0-pthread installed):
    /usr/bin/python3 bench/compare_linear_torch.py [build-dir] [KIND ...]
"""
import anchor  # noqa: F401  (first: OMP_WAIT_POLICY=PASSIVE, OPENBLAS_CORETYPE unset, before torch loads)

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

KINDS = ["linear", "linear_norm", "decayed", "mamba2", "delta", "gated_delta"]
LENGTHS = [1024, 4096]
H, DK, DV, CHUNK = 8, 128, 128, 64
TOLERANCE = 1e-4


def load(folder, T):
    """bench_linear's inputs as [H, T, ·] tensors and per-token [H, T] vectors."""
    def arr(name):
        return torch.from_numpy(np.load(os.path.join(folder, name + ".npy")))
    x = {n: arr(n).reshape(H, T, -1) for n in ("q", "k", "v", "recurrent_out", "chunked_out")}
    for n in ("beta", "log_decay", "dt"):
        x[n] = arr(n)
    x["d_skip"] = arr("d_skip").reshape(H)
    return x


def phi(x):
    return torch.nn.functional.elu(x) + 1


def weights(kind, x):
    """Per-token log a_t and w_t of the scalar kinds, [H, T]: S_t = a_t S_{t−1} + w_t k_t v_tᵀ."""
    if kind == "decayed":
        return x["log_decay"], torch.ones_like(x["log_decay"])
    if kind == "mamba2":
        return x["dt"] * x["log_decay"], x["dt"]
    zeros = torch.zeros(H, x["q"].shape[1])
    return zeros, torch.ones_like(zeros)


def recurrent(kind, x):
    q, k, v = x["q"], x["k"], x["v"]
    if kind in ("linear", "linear_norm"):
        q, k = phi(q), phi(k)
    T = q.shape[1]
    S = torch.zeros(H, DK, DV)
    out = torch.zeros(H, T, DV)
    if kind in ("delta", "gated_delta"):
        decay = x["log_decay"].exp() if kind == "gated_delta" else torch.ones(H, T)
        beta = x["beta"]
        for t in range(T):
            q_t, k_t, v_t = q[:, t], k[:, t], v[:, t]
            S = S * decay[:, t, None, None]
            kv_mem = (S * k_t[..., None]).sum(dim=-2)
            delta = (v_t - kv_mem) * beta[:, t, None]
            S = S + k_t[..., None] * delta[..., None, :]
            out[:, t] = (S * q_t[..., None]).sum(dim=-2)
        return out
    log_a, w = weights(kind, x)
    a = log_a.exp()
    wk = k * w[..., None]
    z = torch.zeros(H, DK)
    for t in range(T):
        S = S * a[:, t, None, None] + wk[:, t, :, None] * v[:, t, None, :]
        o = torch.bmm(q[:, t, None, :], S)[:, 0]
        if kind == "linear_norm":
            z = z + k[:, t]
            o = o / (z * q[:, t]).sum(-1, keepdim=True)
        out[:, t] = o
    if kind == "mamba2":
        out = out + x["d_skip"][:, None, None] * v
    return out


def chunked(kind, x):
    q, k, v = x["q"], x["k"], x["v"]
    if kind in ("linear", "linear_norm"):
        q, k = phi(q), phi(k)
    T = q.shape[1]
    n = T // CHUNK  # T is a multiple of the chunk here
    q, k, v = (t.reshape(H, n, CHUNK, -1) for t in (q, k, v))
    causal = torch.tril(torch.ones(CHUNK, CHUNK, dtype=torch.bool))
    S = torch.zeros(H, DK, DV)
    out = torch.empty(H, n, CHUNK, DV)
    if kind in ("delta", "gated_delta"):
        beta = x["beta"].reshape(H, n, CHUNK)
        g = (x["log_decay"] if kind == "gated_delta" else torch.zeros(H, T)).reshape(H, n, CHUNK).cumsum(-1)
        mask = ((g[..., :, None] - g[..., None, :]).tril().exp()).tril()
        k_beta, v_beta = k * beta[..., None], v * beta[..., None]
        attn = -((k_beta @ k.transpose(-1, -2)) * mask).masked_fill(~causal.tril(-1), 0)
        for i in range(1, CHUNK):
            row = attn[..., i, :i].clone()
            attn[..., i, :i] = row + (row[..., None] * attn[..., :i, :i].clone()).sum(-2)
        attn = attn + torch.eye(CHUNK)
        u = attn @ v_beta
        w = attn @ (k_beta * g.exp()[..., None])
        for c in range(n):
            q_c, k_c = q[:, c], k[:, c]
            inner = (q_c @ k_c.transpose(-1, -2) * mask[:, c]).masked_fill_(~causal, 0)
            v_new = u[:, c] - w[:, c] @ S
            out[:, c] = (q_c * g[:, c, :, None].exp()) @ S + inner @ v_new
            S = S * g[:, c, -1, None, None].exp() + (k_c * (g[:, c, -1, None] - g[:, c]).exp()[..., None]).transpose(
                -1, -2) @ v_new
        return out.reshape(H, T, DV)
    log_a, w = weights(kind, x)
    L = log_a.reshape(H, n, CHUNK).cumsum(-1)
    w = w.reshape(H, n, CHUNK)
    block = (q @ k.transpose(-1, -2)) * ((L[..., :, None] - L[..., None, :]).tril().exp() * w[..., None, :])
    block = block.masked_fill(~causal, 0)
    intra = block @ v
    k_to_end = k * ((L[..., -1:] - L).exp() * w)[..., None]
    states = k_to_end.transpose(-1, -2) @ v  # each chunk's own contribution to the state [H, n, d_k, d_v]
    z = torch.zeros(H, DK)
    for c in range(n):
        o = intra[:, c] + L[:, c, :, None].exp() * (q[:, c] @ S)
        if kind == "linear_norm":
            o = o / ((q[:, c] @ z[..., None])[..., 0] + block[:, c].sum(-1))[..., None]
            z = z + k[:, c].sum(-2)
        out[:, c] = o
        S = S * L[:, c, -1, None, None].exp() + states[:, c]
    out = out.reshape(H, T, DV)
    if kind == "mamba2":
        out = out + x["d_skip"][:, None, None] * x["v"]
    return out


def gap(a, b):
    return float((a - b).abs().max() / b.abs().max())


def main():
    args = sys.argv[1:]
    kinds = [a for a in args if a in KINDS] or KINDS
    rest = [a for a in args if a not in KINDS]
    build = rest[0] if rest else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build")
    bench = os.path.join(build, "bench", "bench_linear")
    if not os.access(bench, os.X_OK):
        print(f"error: no {bench} (scripts/build.sh builds the benchmarks)", file=sys.stderr)
        return 2
    print(anchor.describe())
    rate = anchor.sgemm_gflops()
    print(f"sgemm 2048³ (OpenBLAS through torch.mm, 2 threads, best of 7): {rate:.0f} GFLOP/s")
    print(f"{H} heads, d_k = d_v = {DK}, chunk {CHUNK}; times are the best of the repetitions (median beside), "
          f"shares of sgemm from the best times")
    print(f"{'kind':<12} {'T':>5} {'form':>9} {'GFLOP':>7} {'max gap':>8} {'torch ms':>17} {'attnscope ms':>17} "
          f"{'speed-up':>8} {'torch %sgemm':>12} {'attnscope %sgemm':>16}")
    worst = 0.0
    for kind in kinds:
        for T in LENGTHS:
            reps = 3 if T >= 4096 else 5
            with tempfile.TemporaryDirectory() as tmp:
                ours = json.loads(subprocess.run([bench, kind, str(T), str(H), str(DK), str(DV), str(CHUNK), str(reps),
                                                  tmp], check=True, capture_output=True, text=True).stdout)
                x = load(tmp, T)
            for form, fn in (("recurrent", recurrent), ("chunked", chunked)):
                with torch.no_grad():
                    out = fn(kind, x)
                    d = max(gap(out, x["recurrent_out"]), gap(x[form + "_out"], x["recurrent_out"]))
                    worst = max(worst, d)
                    torch_ms, torch_best = anchor.median_and_best_ms(lambda: fn(kind, x), 1 if form == "recurrent" and
                                                              T >= 4096 else reps)
                gflop = ours[form + "_gflop"]
                best, ms = ours[form + "_best_ms"], ours[form + "_median_ms"]
                print(f"{kind:<12} {T:5d} {form:>9} {gflop:7.2f} {d:8.1e} {torch_best:8.1f} / {torch_ms:6.1f} "
                      f"{best:8.1f} / {ms:6.1f} {torch_best / best:7.2f}x "
                      f"{100 * gflop / (torch_best / 1e3) / rate:11.1f}% {100 * gflop / (best / 1e3) / rate:15.1f}%")
            sys.stdout.flush()
    print("(GFLOP: bench_linear's count of each form, the same for both sides; max gap: the largest of "
          "max|PyTorch − attnscope recurrence| and max|attnscope's form − its recurrence|, over max|output|)")
    print(f"largest gap {worst:.1e} (tolerance {TOLERANCE:g}); load average now {os.getloadavg()[0]:.1f}")
    if worst > TOLERANCE:
        print("FAIL: attnscope and PyTorch disagree")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
