#!/usr/bin/env python3
"""PyTorch CUDA figures for the cases of bench_algebra (same shapes, same order): matmul vs
torch.einsum on one-GEMM contractions, einsum chains, and torch.fft (cuFFT). One line per case.
usage: torch_algebra.py [--json FILE] [--fft-only]   (records named as bench_algebra --json writes
them; --fft-only: the FFT cases only, as bench_algebra --fft-only)"""
import argparse
import math

import torch
from bench_records import Records, torch_engine
from torch_timing import timed

REC = Records(None, "")


def report(what, ms, flops, base=None, tag=None):
    line = f"torch {what:<52} {ms:9.3f} ms {flops / ms / 1e6:9.1f} GFLOP/s"
    if base:
        line += f"   {100 * base / ms:5.1f}% of matmul"
    print(line)
    if tag:
        REC.emit("algebra", tag, "rate", "GFLOP/s", flops / ms / 1e6, ms=ms)
        if base:
            REC.emit("algebra", tag, "pct_of_matmul", "%", 100 * base / ms)


def main():
    global REC
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="append JSON-lines records (bench/bench_records.py) to this file")
    ap.add_argument("--fft-only", action="store_true", help="the FFT cases only")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch: CUDA unavailable")
        return 1
    REC = Records(args.json, torch_engine(torch))
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    if not args.fft_only:
        contractions(dev)
    ffts(dev)
    return 0


def contractions(dev):
    for b, m, n, k in ((1, 4096, 4096, 4096), (16, 1024, 1024, 1024), (64, 256, 256, 512)):
        flops = 2.0 * b * m * n * k
        a = torch.rand(b, m, k, device=dev) * 2 - 1
        bb = torch.rand(b, k, n, device=dev) * 2 - 1
        a_mbk = torch.rand(m, b, k, device=dev) * 2 - 1
        st = f"[{b},{m},{k}]x[.,{k},{n}]"  # as bench_algebra's records
        base = timed(lambda: a @ bb)
        report(f"matmul [{b},{m},{k}]x[.,{k},{n}]", base, flops, tag=f"matmul f32 {st}")
        report("  einsum bmk,bkn->bmn", timed(lambda: torch.einsum("bmk,bkn->bmn", a, bb)), flops, base,
               tag=f"einsum bmk,bkn->bmn {st}")
        report("  einsum mbk,bkn->bmn", timed(lambda: torch.einsum("mbk,bkn->bmn", a_mbk, bb)), flops, base,
               tag=f"einsum mbk,bkn->bmn {st}")
        report("  einsum bkn,bmk->bmn", timed(lambda: torch.einsum("bkn,bmk->bmn", bb, a)), flops, base,
               tag=f"einsum bkn,bmk->bmn {st}")
        if b == 1:  # complex64 matmul, 8 real flops per complex multiply-add as bench_algebra counts them
            ac = torch.randn(b, m, k, device=dev, dtype=torch.complex64)
            bc = torch.randn(b, k, n, device=dev, dtype=torch.complex64)
            report(f"c64 matmul [{b},{m},{k}]x[.,{k},{n}]", timed(lambda: ac @ bc), 4 * flops, tag=f"c64 matmul {st}")
            del ac, bc
    x = torch.rand(64, 4096, device=dev)
    w1 = torch.rand(4096, 4096, device=dev)
    w2 = torch.rand(4096, 64, device=dev)
    w3 = torch.rand(64, 4096, device=dev)
    cost = 64 * 4096 * 64 + 64 * 64 * 4096 + 64 * 4096 * 4096  # an optimal order's multiply-adds
    report("einsum chain ij,jk,kl,lm->im", timed(lambda: torch.einsum("ij,jk,kl,lm->im", x, w1, w2, w3)), 2.0 * cost,
           tag="einsum chain ij,jk,kl,lm->im")
    A = torch.rand(8, 512, 64, device=dev)
    B = torch.rand(8, 64, 512, device=dev)
    C = torch.rand(8, 512, 64, device=dev)
    cost = 8 * (64 * 512 * 64 + 512 * 64 * 64)
    report("einsum chain bij,bjk,bkl->bil", timed(lambda: torch.einsum("bij,bjk,bkl->bil", A, B, C)), 2.0 * cost,
           tag="einsum chain bij,bjk,bkl->bil")


def ffts(dev):
    # The WebGPU cases of bench_algebra: 256 MiB of c64 each; bandwidth of one read + one write.
    for batch, n in ((8192, 4096), (32, 1 << 20), (32768, 1009)):
        flops = 5.0 * batch * n * math.log2(n)
        xc = torch.randn(batch, n, device=dev, dtype=torch.complex64)
        ms = timed(lambda: torch.fft.fft(xc))
        print(f"torch webgpu-case fft c64 [{batch}, {n}] {ms:9.3f} ms {flops / ms / 1e6:9.1f} GFLOP/s "
              f"{16.0 * batch * n / ms / 1e6:7.1f} GB/s")
        REC.emit("algebra", f"fft c64 [{batch}, {n}]", "gpu_time", "ms", ms, gbs=16.0 * batch * n / ms / 1e6)
        del xc
    for batch, n in ((8192, 4096), (8, 1 << 20), (16384, 1009)):
        flops = 5.0 * batch * n * math.log2(n)
        xc = torch.randn(batch, n, device=dev, dtype=torch.complex64)
        report(f"fft c64 [{batch}, {n}]", timed(lambda: torch.fft.fft(xc)), flops)
        xr = torch.randn(batch, n, device=dev)
        report(f"rfft f32 [{batch}, {n}]", timed(lambda: torch.fft.rfft(xr)), flops / 2)


if __name__ == "__main__":
    raise SystemExit(main())
