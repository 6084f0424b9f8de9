#!/usr/bin/env python3
"""Recall without a softmax: which attention kinds learn associative recall and induction at these sizes.

Trains every kind of `attnscope train --attention` that README's question is about -- softmax MHA, linear
attention, retention, Mamba-2, DeltaNet and Gated DeltaNet, and the hybrid of Gated DeltaNet with a softmax
layer (`train --layer-kinds gated-deltanet,grouped`, kind `hybrid`) -- on `--task recall` (multi-query associative
recall, tasks.h) and on `--task induction`, each with 3 seeds, everything else equal (L 2, d_model 64, H 4,
attention-only, T 64, 32 symbols, batch 16, the same steps and learning rate), one thread per run. Prints,
per kind and task, the accuracy on 256 held-out sequences (the arg-max next token at the scored positions,
Trainer::accuracy) of each seed, their mean, and the memory a token costs at T (KV cache per token with a
softmax, the fixed state / T without one; what `attnscope train` prints).

It lives in bench/ beside the speed measurements because it is a measurement whose numbers README quotes,
not a tool of the build or a test (its numbers are what this machine shows, never a pass/fail bound).

  bench/recall_experiment.py [--attnscope build/app/attnscope] [--seeds 1,2,3] [--jobs 1]
                             [--kinds grouped,linear,...] [--tasks recall,induction]

With the defaults it takes about 15 minutes on one core of the development machine (see the time it prints).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

KINDS = [("grouped", "MHA (softmax)"), ("linear", "linear attention"), ("retention", "retention"),
         ("mamba2", "Mamba-2"), ("deltanet", "DeltaNet"), ("gated-deltanet", "Gated DeltaNet"),
         ("hybrid", "hybrid: Gated DeltaNet, softmax in layer 1")]
# Kinds trained by a layer list rather than one --attention word (train --layer-kinds, repeated over the layers).
LAYER_KINDS = {"hybrid": "gated-deltanet,grouped"}


# Per task: T, batch, steps, learning rate, warm-up. Induction: the Training window's defaults (docs/training.md).
# Recall: MHA leaves its plateau (the in-context values guessed at random, loss ln p) only after ~2000-4000
# steps at batch 32 and lr 1e-3 (measured; at batch 16 and lr 3e-3 to 1e-2 it stayed there for 3000-8000),
# and T 32 (4 pairs, 12 queries) keeps the runs short.
SETTINGS = {"induction": (64, 16, 1500, 5e-3, 300), "recall": (32, 32, 4000, 1e-3, 500)}


def train(binary, kind, task, seed, out_root):
    out = os.path.join(out_root, f"{task}-{kind}-{seed}")
    T, batch, steps, lr, warmup = SETTINGS[task]
    which = ["--layer-kinds", LAYER_KINDS[kind]] if kind in LAYER_KINDS else ["--attention", kind]
    cmd = [binary, "train", "--task", task] + which + ["--seed", str(seed), "--steps", str(steps),
           "--seq-len", str(T), "--batch", str(batch), "--lr", str(lr), "--warmup", str(warmup), "--threads", "1",
           "--print-every", str(steps), "--out", out]
    if kind == "grouped":
        cmd += ["--groups", "4"]  # MHA: G = H
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    m = re.search(r"accuracy ([0-9.]+|nan) on .*?([0-9.]+) bytes per token at T = (\d+)", r.stdout)
    loss = re.findall(r"loss ([0-9.]+)", r.stdout)
    if not m:
        sys.exit(f"no accuracy line in the output of {' '.join(cmd)}:\n{r.stdout}")
    return {"accuracy": float(m.group(1)), "bytes": float(m.group(2)), "T": int(m.group(3)),
            "loss": float(loss[-1]) if loss else float("nan"), "seconds": seconds}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--attnscope", default=os.path.join(here, "..", "build", "app", "attnscope"))
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--kinds", default=",".join(k for k, _ in KINDS))
    p.add_argument("--tasks", default="recall,induction")
    p.add_argument("--jobs", type=int, default=1, help="runs at once (each on one thread)")
    a = p.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    names = dict(KINDS)
    kinds = a.kinds.split(",")
    for k in kinds:
        if k not in names:
            sys.exit(f"unknown kind '{k}': use {', '.join(names)}")
    tasks = a.tasks.split(",")
    jobs = [(k, t, s) for t in tasks for k in kinds for s in seeds]
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="recall-experiment-") as root:
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            futures = {j: pool.submit(train, a.attnscope, j[0], j[1], j[2], root) for j in jobs}
            results = {}
            for j, f in futures.items():
                results[j] = f.result()
                r = results[j]
                print(f"  {j[1]:9s} {names[j[0]]:16s} seed {j[2]}: accuracy {r['accuracy']:.3f}, "
                      f"mean loss over the run {r['loss']:.3f} ({r['seconds']:.0f} s)", file=sys.stderr, flush=True)
    total = time.monotonic() - start
    print("L 2, d_model 64, H 4, attention-only, 32 symbols, one thread per run; accuracy on 256 held-out sequences")
    for t in tasks:
        T, batch, steps, lr, warmup = SETTINGS[t]
        print(f"  {t}: T {T}, batch {batch}, {steps} steps at lr {lr} ({warmup} warm-up), seeds {a.seeds}")
    print()
    header = "| kind |" + "".join(f" bytes/token at T = {SETTINGS[t][0]} ({t}) |" for t in tasks) + "".join(
        f" {t} accuracy (seeds {a.seeds}) | {t} mean |" for t in tasks)
    print(header)
    print("|" + "---|" * (1 + 3 * len(tasks)))
    for k in kinds:
        row = f"| {names[k]} |" + "".join(f" {results[(k, t, seeds[0])]['bytes']:.0f} |" for t in tasks)
        for t in tasks:
            accs = [results[(k, t, s)]["accuracy"] for s in seeds]
            row += " " + " / ".join(f"{x:.2f}" for x in accs) + f" | {sum(accs) / len(accs):.2f} |"
        print(row)
    print(f"\n{len(jobs)} runs in {total / 60:.1f} min ({a.jobs} at once)")


if __name__ == "__main__":
    main()
