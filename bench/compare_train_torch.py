#!/usr/bin/python3
"""compare_train_torch.py — PyTorch eager training steps per second on attnscope's training shapes.

The same model as attnscope's trainer (engine/include/attnscope/train/model.h): Llama layout, token
embedding, pre-RMSNorm blocks, rotate-half RoPE, grouped causal attention (probabilities
materialised, as attnscope keeps them), SwiGLU MLP or none, tied output embedding; autograd, AdamW
(betas 0.9/0.95, weight decay on matrices), gradient clipping at 1, the induction task's batches.
Float32, torch.set_num_threads(threads).

    /usr/bin/python3 bench/compare_train_torch.py --layers 2 --d-model 64 --heads 4 --groups 2 \\
        --batch 16 --seq-len 64 --vocab 32 [--mlp] [--threads 2] [--steps 30] [--json]

PyTorch runs at its best (bench/anchor.py: OMP_WAIT_POLICY=PASSIVE, OpenBLAS choosing its own
kernel). Prints steps/s, the flops of one step (step_gflop) and the same run's sgemm rate (one JSON
line with --json). bench_train runs it as a subprocess for the comparison in README "Training"; it can
also be run alone.
"""
import anchor  # noqa: F401  (first: OMP_WAIT_POLICY=PASSIVE, OPENBLAS_CORETYPE unset, before torch loads)

import argparse
import json
import math
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, C, H, G, Fw, mlp):
        super().__init__()
        D = C // H
        self.H, self.G, self.D = H, G, D
        self.input_layernorm = torch.nn.Parameter(torch.ones(C))
        self.q_proj = torch.nn.Linear(C, H * D, bias=False)
        self.k_proj = torch.nn.Linear(C, G * D, bias=False)
        self.v_proj = torch.nn.Linear(C, G * D, bias=False)
        self.o_proj = torch.nn.Linear(H * D, C, bias=False)
        self.mlp = mlp
        if mlp:
            self.post_attention_layernorm = torch.nn.Parameter(torch.ones(C))
            self.gate_proj = torch.nn.Linear(C, Fw, bias=False)
            self.up_proj = torch.nn.Linear(C, Fw, bias=False)
            self.down_proj = torch.nn.Linear(Fw, C, bias=False)


def rmsnorm(x, w, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Model(torch.nn.Module):
    def __init__(self, V, L, C, H, G, mlp, T, theta=10000.0):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.randn(V, C) * 0.02)
        self.blocks = torch.nn.ModuleList([Block(C, H, G, 4 * C, mlp) for _ in range(L)])
        self.norm = torch.nn.Parameter(torch.ones(C))
        for b in self.blocks:
            for lin in [b.q_proj, b.k_proj, b.v_proj, b.o_proj] + ([b.gate_proj, b.up_proj, b.down_proj] if mlp else []):
                torch.nn.init.normal_(lin.weight, std=0.02)
        D = C // H
        inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2).float() / D))
        freqs = torch.outer(torch.arange(T).float(), inv_freq)
        emb = torch.cat((freqs, freqs), -1)
        self.register_buffer("cos", emb.cos()[None, None])  # [1, 1, T, D]
        self.register_buffer("sin", emb.sin()[None, None])
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

    def forward(self, ids):
        B, T = ids.shape
        x = self.embed[ids]
        for b in self.blocks:
            h = rmsnorm(x, b.input_layernorm)
            q = b.q_proj(h).view(B, T, b.H, b.D).transpose(1, 2)
            k = b.k_proj(h).view(B, T, b.G, b.D).transpose(1, 2)
            v = b.v_proj(h).view(B, T, b.G, b.D).transpose(1, 2)
            q = q * self.cos + rotate_half(q) * self.sin
            k = k * self.cos + rotate_half(k) * self.sin
            k = k.repeat_interleave(b.H // b.G, dim=1)
            v = v.repeat_interleave(b.H // b.G, dim=1)
            s = (q @ k.transpose(-1, -2)) / math.sqrt(b.D)
            p = torch.softmax(s.masked_fill(self.mask, float("-inf")), dim=-1)
            a = (p @ v).transpose(1, 2).reshape(B, T, b.H * b.D)
            x = x + b.o_proj(a)
            if b.mlp:
                h = rmsnorm(x, b.post_attention_layernorm)
                x = x + b.down_proj(F.silu(b.gate_proj(h)) * b.up_proj(h))
        return rmsnorm(x, self.norm) @ self.embed.T


def induction_batch(gen, B, T, V):
    n = T // 2
    half = torch.randint(0, V, (B, n), generator=gen)
    ids = torch.cat((half, half), 1)
    targets = torch.full((B, T), -100, dtype=torch.long)
    targets[:, n:T - 1] = ids[:, n + 1:]
    return ids, targets


def step_gflop(a):
    """Flops of one training step, counted as 3x the forward's matrix products (the backward does
    two products per forward product): per layer the Q, K, V and output projections, Q·Kᵀ and P·V
    over all T² pairs, the SwiGLU MLP (gate, up, down: C×4C each) when there is one, and the logits."""
    N, T, C, H, G = a.batch * a.seq_len, a.seq_len, a.d_model, a.heads, a.groups
    D = C // H
    attention = 2 * N * C * (2 * H * D + 2 * G * D) + 2 * 2 * a.batch * H * T * T * D
    mlp = 2 * N * C * 4 * C * 3 if a.mlp else 0
    return 3 * (a.layers * (attention + mlp) + 2 * N * C * a.vocab) / 1e9


def measure(a):
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = Model(a.vocab, a.layers, a.d_model, a.heads, a.groups, a.mlp, a.seq_len)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    plain = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": plain, "weight_decay": 0.0}],
                            lr=3e-3, betas=(0.9, 0.95), eps=1e-8)
    gen = torch.Generator().manual_seed(2)

    def step():
        ids, targets = induction_batch(gen, a.batch, a.seq_len, a.vocab)
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, a.vocab), targets.view(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    for _ in range(a.warmup):
        step()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    seconds = time.perf_counter() - t0
    return a.steps / seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--groups", type=int, default=2)
    ap.add_argument("--mlp", action="store_true")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rate = measure(a)
    sgemm = anchor.sgemm_gflops()
    work = step_gflop(a)
    if a.json:
        print(json.dumps({"steps_per_second": rate, "step_gflop": work, "sgemm_gflops": sgemm,
                          "torch": torch.__version__, "threads": a.threads, "machine": anchor.describe()}))
    else:
        print(anchor.describe())
        print(f"PyTorch eager, {a.threads} threads: {rate:.2f} steps/s, {work:.3f} GFLOP a step "
              f"({anchor.share(work, 1 / rate, sgemm)}; sgemm {sgemm:.0f} GFLOP/s)")


if __name__ == "__main__":
    main()
