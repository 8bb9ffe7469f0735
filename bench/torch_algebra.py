#!/usr/bin/env python3
"""PyTorch CUDA figures for the cases of bench_algebra (same shapes, same order): matmul vs
torch.einsum on one-GEMM contractions, einsum chains, and torch.fft (cuFFT). One line per case.
--fft-only: the FFT cases only (as bench_algebra --fft-only)."""
import math
import sys

import torch
from torch_timing import timed


def report(what, ms, flops, base=None):
    line = f"torch {what:<52} {ms:9.3f} ms {flops / ms / 1e6:9.1f} GFLOP/s"
    if base:
        line += f"   {100 * base / ms:5.1f}% of matmul"
    print(line)


def main():
    if not torch.cuda.is_available():
        print("torch: CUDA unavailable")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    if "--fft-only" not in sys.argv[1:]:
        contractions(dev)
    ffts(dev)
    return 0


def contractions(dev):
    for b, m, n, k in ((1, 4096, 4096, 4096), (16, 1024, 1024, 1024), (64, 256, 256, 512)):
        flops = 2.0 * b * m * n * k
        a = torch.rand(b, m, k, device=dev) * 2 - 1
        bb = torch.rand(b, k, n, device=dev) * 2 - 1
        a_mbk = torch.rand(m, b, k, device=dev) * 2 - 1
        base = timed(lambda: a @ bb)
        report(f"matmul [{b},{m},{k}]x[.,{k},{n}]", base, flops)
        report("  einsum bmk,bkn->bmn", timed(lambda: torch.einsum("bmk,bkn->bmn", a, bb)), flops, base)
        report("  einsum mbk,bkn->bmn", timed(lambda: torch.einsum("mbk,bkn->bmn", a_mbk, bb)), flops, base)
        report("  einsum bkn,bmk->bmn", timed(lambda: torch.einsum("bkn,bmk->bmn", bb, a)), flops, base)
    x = torch.rand(64, 4096, device=dev)
    w1 = torch.rand(4096, 4096, device=dev)
    w2 = torch.rand(4096, 64, device=dev)
    w3 = torch.rand(64, 4096, device=dev)
    cost = 64 * 4096 * 64 + 64 * 64 * 4096 + 64 * 4096 * 4096  # an optimal order's multiply-adds
    report("einsum chain ij,jk,kl,lm->im", timed(lambda: torch.einsum("ij,jk,kl,lm->im", x, w1, w2, w3)), 2.0 * cost)
    A = torch.rand(8, 512, 64, device=dev)
    B = torch.rand(8, 64, 512, device=dev)
    C = torch.rand(8, 512, 64, device=dev)
    cost = 8 * (64 * 512 * 64 + 512 * 64 * 64)
    report("einsum chain bij,bjk,bkl->bil", timed(lambda: torch.einsum("bij,bjk,bkl->bil", A, B, C)), 2.0 * cost)


def ffts(dev):
    # The WebGPU cases of bench_algebra: 256 MiB of c64 each; bandwidth of one read + one write.
    for batch, n in ((8192, 4096), (32, 1 << 20), (32768, 1009)):
        flops = 5.0 * batch * n * math.log2(n)
        xc = torch.randn(batch, n, device=dev, dtype=torch.complex64)
        ms = timed(lambda: torch.fft.fft(xc))
        print(f"torch webgpu-case fft c64 [{batch}, {n}] {ms:9.3f} ms {flops / ms / 1e6:9.1f} GFLOP/s "
              f"{16.0 * batch * n / ms / 1e6:7.1f} GB/s")
        del xc
    for batch, n in ((8192, 4096), (8, 1 << 20), (16384, 1009)):
        flops = 5.0 * batch * n * math.log2(n)
        xc = torch.randn(batch, n, device=dev, dtype=torch.complex64)
        report(f"fft c64 [{batch}, {n}]", timed(lambda: torch.fft.fft(xc)), flops)
        xr = torch.randn(batch, n, device=dev)
        report(f"rfft f32 [{batch}, {n}]", timed(lambda: torch.fft.rfft(xr)), flops / 2)


if __name__ == "__main__":
    raise SystemExit(main())
