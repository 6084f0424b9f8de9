#!/usr/bin/python3
"""bench_gpt_oss.py — opening and running a gpt-oss-20b-shaped checkpoint (docs/speed.md, "gpt-oss").

    /usr/bin/python3 bench/bench_gpt_oss.py [build-dir] [--layers N] [--dir DIR] [--keep] [--tokens T]

Writes openai/gpt-oss-20b's published layout with random values to DIR (default: a fresh folder under
/tmp, removed afterwards unless --keep): its config.json (tests/fixtures/real-configs/openai/
gpt-oss-20b.json, unchanged unless --layers keeps the first N layers), BF16 embeddings, attention, sinks,
router and biases, and the experts as MXFP4 U8 tensors mlp.experts.{gate_up_proj, down_proj}_{blocks,
scales} of the real shapes — 13.8 GB for the 24 layers, one shard per layer plus one for the embeddings,
with model.safetensors.index.json. The values: BF16 of magnitude 2^−7 … 2^−4 with random signs and
mantissas, FP4 codes uniform, exponents 118 … 124, so activations stay finite. The files are streamed
(never the whole model in memory). Then build/bench/bench_model DIR T 1 opens it once and runs the
forward twice (a warm-up, then the timed pass) at T = 64 tokens, every layer's attentions kept, and
prints its JSON line: open time, forward time, peak RSS (VmHWM: the process's own memory and the mapped
pages it touched). Only the experts a token is routed to are widened and read.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHUNK = 1 << 26  # bytes generated and written at a time


def random_bf16(rng, count):
    """count BF16 values ±(1 + m/128)·2^(e − 127), e in 120 … 123, as little-endian bytes."""
    sign = rng.integers(0, 2, count, dtype=np.uint16) << 15
    exponent = rng.integers(120, 124, count, dtype=np.uint16) << 7
    mantissa = rng.integers(0, 128, count, dtype=np.uint16)
    return (sign | exponent | mantissa).astype("<u2").tobytes()


def tensor_chunks(rng, dtype, count, kind):
    """Yields the tensor's bytes in chunks: BF16 values, FP4 codes (U8 blocks) or exponents (U8 scales)."""
    per = CHUNK // (2 if dtype == "BF16" else 1)
    for start in range(0, count, per):
        n = min(per, count - start)
        if dtype == "BF16":
            yield random_bf16(rng, n)
        elif kind == "scales":
            yield rng.integers(118, 125, n, dtype=np.uint8).tobytes()
        else:
            yield rng.integers(0, 256, n, dtype=np.uint8).tobytes()


def write_shard(path, tensors, rng):
    """tensors: [(name, dtype, shape, kind)]; the header first, then every tensor streamed."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, _ in tensors:
        count = int(np.prod(shape))
        size = count * (2 if dtype == "BF16" else 1)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, dtype, shape, kind in tensors:
            for chunk in tensor_chunks(rng, dtype, int(np.prod(shape)), kind):
                f.write(chunk)
    return offset


def write_checkpoint(folder, layers):
    with open(os.path.join(ROOT, "tests/fixtures/real-configs/openai/gpt-oss-20b.json")) as f:
        cfg = json.load(f)
    if layers is not None:
        cfg["num_hidden_layers"] = layers
        cfg["layer_types"] = cfg["layer_types"][:layers]
    L, C, F = cfg["num_hidden_layers"], cfg["hidden_size"], cfg["intermediate_size"]
    H, G, D, E, V = (cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"], cfg["num_local_experts"],
                     cfg["vocab_size"])
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    rng = np.random.default_rng(7)
    shards = [("model.embed_tokens.weight", "BF16", (V, C), ""), ("model.norm.weight", "BF16", (C,), ""),
              ("lm_head.weight", "BF16", (V, C), "")]
    files = [("model-embeddings.safetensors", shards)]
    for i in range(L):
        p = f"model.layers.{i}."
        files.append((f"model-layer-{i:02d}.safetensors", [
            (p + "input_layernorm.weight", "BF16", (C,), ""),
            (p + "self_attn.q_proj.weight", "BF16", (H * D, C), ""), (p + "self_attn.q_proj.bias", "BF16", (H * D,), ""),
            (p + "self_attn.k_proj.weight", "BF16", (G * D, C), ""), (p + "self_attn.k_proj.bias", "BF16", (G * D,), ""),
            (p + "self_attn.v_proj.weight", "BF16", (G * D, C), ""), (p + "self_attn.v_proj.bias", "BF16", (G * D,), ""),
            (p + "self_attn.o_proj.weight", "BF16", (C, H * D), ""), (p + "self_attn.o_proj.bias", "BF16", (C,), ""),
            (p + "self_attn.sinks", "BF16", (H,), ""),
            (p + "post_attention_layernorm.weight", "BF16", (C,), ""),
            (p + "mlp.router.weight", "BF16", (E, C), ""), (p + "mlp.router.bias", "BF16", (E,), ""),
            (p + "mlp.experts.gate_up_proj_blocks", "U8", (E, 2 * F, C // 32, 16), "blocks"),
            (p + "mlp.experts.gate_up_proj_scales", "U8", (E, 2 * F, C // 32), "scales"),
            (p + "mlp.experts.gate_up_proj_bias", "BF16", (E, 2 * F), ""),
            (p + "mlp.experts.down_proj_blocks", "U8", (E, C, F // 32, 16), "blocks"),
            (p + "mlp.experts.down_proj_scales", "U8", (E, C, F // 32), "scales"),
            (p + "mlp.experts.down_proj_bias", "BF16", (E, C), "")]))
    weight_map, total = {}, 0
    for file, tensors in files:
        total += write_shard(os.path.join(folder, file), tensors, rng)
        for name, *_ in tensors:
            weight_map[name] = file
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--layers", type=int, default=None, help="keep the first N layers (default: all 24)")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--dir", default=None, help="write the checkpoint here (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="leave the checkpoint on disk")
    args = ap.parse_args()
    bench = os.path.join(args.build, "bench", "bench_model")
    if not os.access(bench, os.X_OK):
        sys.exit(f"error: no {bench} (scripts/build.sh builds the benchmarks)")
    folder = args.dir or tempfile.mkdtemp(prefix="gpt-oss-20b-shaped-")
    os.makedirs(folder, exist_ok=True)
    try:
        t0 = time.time()
        total = write_checkpoint(folder, args.layers)
        print(f"wrote {total / 1e9:.2f} GB to {folder} in {time.time() - t0:.0f} s", flush=True)
        print(f"load average: {os.getloadavg()}", flush=True)
        out = subprocess.run([bench, folder, str(args.tokens), "1"], check=False, capture_output=True, text=True)
        sys.stdout.write(out.stdout)
        sys.stderr.write(out.stderr)
        if out.returncode != 0:
            sys.exit(out.returncode)
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
