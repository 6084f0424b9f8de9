"""anchor.py — PyTorch at its best on this machine, and the machine's own limit, for bench/compare_*.py.

Import it before numpy and torch (`import anchor` as the first import of a benchmark). It sets up the
process so that PyTorch runs as fast as it can on these 2 cores, and measures the float32 GEMM rate in
the same run, which is the practical limit every figure is read against:

- OMP_WAIT_POLICY=PASSIVE: with the default policy PyTorch's 2 OpenMP threads spin against
  OpenBLAS's own 2 threads and a GPT-2 forward runs 2-3x slower (measured: 344 ms against 130 ms).
- OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, so Debian's OpenBLAS picks the kernels of this CPU
  (AVX-512 here) by itself.
- 2 threads (torch.set_num_threads), the machine's cores.
Both variables are read when the libraries load, which is why the import order matters; anchor refuses
to run after numpy or torch has been imported.

    import anchor                      # first
    machine = anchor.describe()        # torch version, threads, the OpenBLAS library and its kernel
    rate = anchor.sgemm_gflops()       # OpenBLAS sgemm 2048³ through torch.mm, best of the runs
    print(anchor.share(gflop, seconds, rate))  # "61% of sgemm"
"""
import ctypes
import os
import sys
import time

if "numpy" in sys.modules or "torch" in sys.modules:
    raise RuntimeError("import anchor before numpy and torch: their libraries read the environment when they load")
os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ.pop("OPENBLAS_CORETYPE", None)
os.environ.pop("OPENBLAS_L2_SIZE", None)
THREADS = 2

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(THREADS)


def openblas():
    """(path, kernel, build config) of the OpenBLAS this process loaded; path None when none is loaded
    (PyTorch then runs the reference BLAS, 50x slower: install libopenblas0-pthread)."""
    torch.mm(torch.ones(8, 8), torch.ones(8, 8))  # make sure the BLAS is loaded
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "openblas" in line and line.split()[-1].startswith("/")})
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_get_config.restype = ctypes.c_char_p
            return path, lib.openblas_get_corename().decode(), lib.openblas_get_config().decode()
        except (OSError, AttributeError):
            continue
    return None, "none (reference BLAS)", ""


def describe():
    """One line naming what PyTorch runs on, for the top of every benchmark's output."""
    path, core, config = openblas()
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} cores; torch {torch.__version__}, {torch.get_num_threads()} threads, "
            f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}; OpenBLAS kernel {core} ({config or 'n/a'}; {path}); "
            f"load average {os.getloadavg()[0]:.1f}")


def sgemm_gflops(n=2048, reps=7):
    """The float32 GEMM rate of this run: C = A·B with n×n matrices through torch.mm (OpenBLAS sgemm),
    2·n³ flops, the best of `reps` runs after a warm-up, in GFLOP/s."""
    a = torch.rand(n, n)
    b = torch.rand(n, n)
    c = torch.empty(n, n)
    torch.mm(a, b, out=c)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e9


def share(gflop, seconds, rate):
    """`gflop` done in `seconds` as a share of the sgemm rate (GFLOP/s), e.g. '61% of sgemm'."""
    return f"{100.0 * gflop / seconds / rate:.0f}% of sgemm"


def median_and_best_ms(fn, reps):
    """Runs `fn` twice to warm up, then `reps` times: the median and the best time in milliseconds."""
    fn()
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2], times[0]
