#!/usr/bin/env python3
"""cuBLAS f16 GEMM (through PyTorch) at n^3, A @ B and A @ B^T, for the sgmat scripts'
comparison in the same device run. usage: torch_gemm.py [n ...] (default 4096 8192)"""
import sys

import torch
from torch_timing import timed


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [4096, 8192]
    for n in sizes:
        a = torch.randn(n, n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        for lay, f in (("nn", lambda: a @ b), ("nt", lambda: a @ b.t())):
            ms = timed(f)
            print(f"torch f16 {lay} {n}^3: {ms:.3f} ms {2 * n ** 3 / ms / 1e9:.1f} TFLOP/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
