#!/usr/bin/python3
"""compare_llama32_torch.py — a Llama-3.2-1B-shaped checkpoint opened and run by attnscope and by PyTorch.

Writes a checkpoint with Llama 3.2 1B's real config.json (tests/fixtures/real-configs/meta-llama/
Llama-3.2-1B-Instruct.json: 16 layers, 2048 wide, 32 query heads sharing 8 K/V heads of 64, vocabulary
128256, tied embeddings, rope_scaling llama3 ×32), random BF16 weights under the real tensor names, one
model.safetensors of 2.5 GB, to a temporary folder (never committed), then measures, in this same run:
  attnscope  build/bench/bench_model: model::open (headers read, the file mapped, every value checked)
             and the forward at T = 64 with every layer's attention probabilities kept; peak RSS (VmHWM)
  PyTorch    a child process: the safetensors file read into float32 tensors (as transformers'
             from_pretrained(dtype=torch.float32) holds them) and the Llama formulas of
             tests/fixtures/make_model_fixtures.py (eager, llama3 RoPE, every layer's attentions kept)
             at T = 64; its own peak RSS (VmHWM)
Both open the file twice, and the second (warm page cache) open is reported beside the first. The two
forwards are compared (attentions, logits) so the times are of the same computation. PyTorch runs at its
best (bench/anchor.py: 2 threads, OMP_WAIT_POLICY=PASSIVE, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
unset), and each forward is also given as a share of the run's own float32 GEMM rate.

    /usr/bin/python3 bench/compare_llama32_torch.py [build-dir] [--config CONFIG.json]
The real config takes about 2 minutes and 8 GB of memory; --config runs the same steps on another
Llama-layout config.json (a fixture's, to check the script in seconds).
"""
import anchor  # noqa: F401  (first: OMP_WAIT_POLICY=PASSIVE, OPENBLAS_CORETYPE unset, before torch loads)

import json
import math
import mmap
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures"))
import make_model_fixtures as fx  # noqa: E402  (the Llama formulas)
from compare_model_torch import forward_gflop, ids_for  # noqa: E402

CONFIG = os.path.join(HERE, "..", "tests", "fixtures", "real-configs", "meta-llama", "Llama-3.2-1B-Instruct.json")
TOKENS = 64
REPS = 3


def peak_rss_mb():
    """VmHWM of this process (reset by exec, so a child's own peak, not its parent's)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def tensor_shapes(cfg):
    """(name, shape, std) of every tensor of the Hugging Face Llama layout, in file order."""
    family, L, C, H, G, D, F, V, P = fx.dims(cfg)
    out = [("model.embed_tokens.weight", (V, C), 1.0)]
    for i in range(L):
        h = f"model.layers.{i}."
        out += [(h + "input_layernorm.weight", (C,), None),
                (h + "self_attn.q_proj.weight", (H * D, C), 1.5 / math.sqrt(C)),
                (h + "self_attn.k_proj.weight", (G * D, C), 1.5 / math.sqrt(C)),
                (h + "self_attn.v_proj.weight", (G * D, C), 1 / math.sqrt(C)),
                (h + "self_attn.o_proj.weight", (C, H * D), 1 / math.sqrt(H * D)),
                (h + "post_attention_layernorm.weight", (C,), None),
                (h + "mlp.gate_proj.weight", (F, C), 1 / math.sqrt(C)),
                (h + "mlp.up_proj.weight", (F, C), 1 / math.sqrt(C)),
                (h + "mlp.down_proj.weight", (C, F), 1 / math.sqrt(F))]
    out.append(("model.norm.weight", (C,), None))
    if not cfg.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", (V, C), 1 / math.sqrt(C)))
    return out


def write_checkpoint(folder, cfg, seed=1):
    """config.json and model.safetensors, BF16, one tensor generated at a time (the float32 model would
    take 5 GB here): norms near 1, matrices N(0, std²) as make_model_fixtures.random_weights draws them."""
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    g = torch.Generator().manual_seed(seed)
    shapes = tensor_shapes(cfg)
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, _ in shapes:
        size = 2 * math.prod(shape)
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, shape, std in shapes:
            t = 1.0 + 0.2 * torch.randn(shape, generator=g) if std is None else torch.randn(shape, generator=g) * (0.5 * std)
            f.write(t.to(torch.bfloat16).view(torch.int16).numpy().tobytes())
    return offset


def torch_open(folder):
    """name → float32 tensor: the file mapped, each BF16 tensor widened into its own float32 copy."""
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    n = struct.unpack("<Q", mm[:8])[0]
    header = json.loads(mm[8:8 + n])
    header.pop("__metadata__", None)
    weights = {}
    for name, h in header.items():
        a, b = h["data_offsets"]
        raw = torch.frombuffer(mm, dtype=torch.bfloat16, count=(b - a) // 2, offset=8 + n + a)
        weights[name] = raw.float().reshape(h["shape"])
    mm.close()
    return weights


def torch_child(folder, out):
    """The PyTorch side, in its own process so that its peak memory is its own."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    opens = []
    for _ in range(2):  # cold(er), then warm page cache
        t0 = time.perf_counter()
        weights = torch_open(folder)
        opens.append(time.perf_counter() - t0)
        if len(opens) == 1:
            del weights
    V = cfg["vocab_size"]
    ids = ids_for(TOKENS, V)
    times = []
    with torch.no_grad():
        fx.hf_forward(cfg, weights, ids, dtype=None)  # warm-up
        for _ in range(REPS):
            t0 = time.perf_counter()
            logits, attentions, _ = fx.hf_forward(cfg, weights, ids, dtype=None)
            times.append(time.perf_counter() - t0)
    times.sort()
    np.save(os.path.join(out, "attentions.npy"), attentions.numpy().astype(np.float32))
    np.save(os.path.join(out, "logits.npy"), logits.numpy().astype(np.float32))
    print(json.dumps({"open_s": opens, "forward_median_ms": times[len(times) // 2] * 1e3,
                      "forward_best_ms": times[0] * 1e3, "peak_rss_mb": peak_rss_mb()}))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--torch-child":
        torch_child(sys.argv[2], sys.argv[3])
        return 0
    args = sys.argv[1:]
    config = CONFIG
    if "--config" in args:
        at = args.index("--config")
        config = args[at + 1]
        del args[at:at + 2]
    build = args[0] if args else os.path.join(HERE, "..", "build")
    print(anchor.describe())
    rate = anchor.sgemm_gflops()
    print(f"sgemm 2048³ (OpenBLAS through torch.mm, 2 threads, best of 7): {rate:.0f} GFLOP/s")
    with open(config) as f:
        cfg = json.load(f)
    family, L, C, H, G, D, F, V, P = fx.dims(cfg)
    with tempfile.TemporaryDirectory(prefix="attnscope_llama32_") as tmp:
        folder = os.path.join(tmp, "Llama-3.2-1B-shape")
        t0 = time.perf_counter()
        size = write_checkpoint(folder, cfg)
        print(f"\n== {os.path.basename(os.path.dirname(config)) if config != CONFIG else 'Llama-3.2-1B'} shape: L={L} C={C} H={H} G={G} D={D} F={F} V={V}, rope {cfg['rope_scaling']['rope_type']}, "
              f"BF16 file of {size / 1e9:.2f} GB written in {time.perf_counter() - t0:.0f} s; T={TOKENS}")

        bench = os.path.join(build, "bench", "bench_model")
        ours_out, torch_out = os.path.join(tmp, "ours"), os.path.join(tmp, "torch")
        os.makedirs(ours_out)
        os.makedirs(torch_out)
        first = json.loads(subprocess.run([bench, folder, str(TOKENS), "--open-only"], check=True,
                                          capture_output=True, text=True).stdout)
        ours = json.loads(subprocess.run([bench, folder, str(TOKENS), str(REPS), "--out", ours_out], check=True,
                                         capture_output=True, text=True).stdout)
        theirs = json.loads(subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-child", folder, torch_out],
                                           check=True, capture_output=True, text=True).stdout)

        d_att = float(np.abs(np.load(os.path.join(ours_out, "attentions.npy")).reshape(L, H, TOKENS, TOKENS) -
                             np.load(os.path.join(torch_out, "attentions.npy"))).max())
        ref = np.load(os.path.join(torch_out, "logits.npy"))
        d_logits = float(np.abs(np.load(os.path.join(ours_out, "logits.npy")) - ref).max() / max(1.0, np.abs(ref).max()))
    work = forward_gflop(cfg, TOKENS)
    print(f"max |attentions − PyTorch| {d_att:.1e}, max |logits − PyTorch| / max |logits| {d_logits:.1e}")
    print(f"open:    attnscope {first['open_s']:.2f} s first, {ours['open_s']:.2f} s warm; "
          f"PyTorch (read + widen to float32) {theirs['open_s'][0]:.2f} s first, {theirs['open_s'][1]:.2f} s warm")
    print(f"forward at T = {TOKENS} with every layer's attentions ({work:.1f} GFLOP): "
          f"attnscope {ours['forward_median_ms']:.0f} ms median, {ours['forward_best_ms']:.0f} ms best "
          f"({anchor.share(work, ours['forward_best_ms'] / 1e3, rate)}); "
          f"PyTorch {theirs['forward_median_ms']:.0f} ms median, {theirs['forward_best_ms']:.0f} ms best "
          f"({anchor.share(work, theirs['forward_best_ms'] / 1e3, rate)}): "
          f"{theirs['forward_best_ms'] / ours['forward_best_ms']:.2f}× PyTorch (best)")
    print(f"peak RSS: attnscope {ours['peak_rss_mb']:.0f} MB (open only: {first['peak_rss_mb']:.0f} MB), "
          f"PyTorch {theirs['peak_rss_mb']:.0f} MB")
    exact = d_att <= 1e-4 and d_logits <= 1e-3
    print("exact" if exact else "NOT EXACT")
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
