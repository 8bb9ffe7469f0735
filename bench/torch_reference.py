#!/usr/bin/env python3
"""Side-by-side reference figures from PyTorch CUDA, run in the same session as the WebGPU
benchmarks (see BENCHMARKS.md). Prints one line per case: name, ms, and TFLOP/s or GB/s.
usage: torch_reference.py [--json FILE]   (records named like the WebGPU benches' --json records)"""
import argparse
import sys

import torch
from bench_records import Records, torch_engine
from torch_timing import timed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="append JSON-lines records (bench/bench_records.py) to this file")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch: CUDA unavailable")
        return 1
    rec = Records(args.json, torch_engine(torch))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    for dt, name in ((torch.float32, "f32"), (torch.float16, "f16")):
        for (m, n, k) in ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (512, 4096, 4096), (1, 4096, 4096)):
            a = torch.randn(m, k, device=dev, dtype=dt)
            b = torch.randn(k, n, device=dev, dtype=dt)
            ms = timed(lambda: a @ b)
            print(f"torch matmul {name} {m}x{n}x{k}: {ms:.3f} ms {2*m*n*k/ms/1e9:.1f} TFLOP/s")
            rec.emit("matmul", f"{name} nn {m}x{n}x{k}", "rate", "TFLOP/s", 2 * m * n * k / ms / 1e9, ms=ms)
            if m == n == k == 4096:  # B stored [N, K] (K-contiguous), as bench_webgpu_matmul --layout nt
                bt = torch.randn(n, k, device=dev, dtype=dt)
                ms = timed(lambda: a @ bt.t())
                print(f"torch matmul {name} nt {m}x{n}x{k}: {ms:.3f} ms {2*m*n*k/ms/1e9:.1f} TFLOP/s")
                rec.emit("matmul", f"{name} nt {m}x{n}x{k}", "rate", "TFLOP/s", 2 * m * n * k / ms / 1e9, ms=ms)
                del bt
    n = 64 * 1024 * 1024  # 256 MiB of f32
    x = torch.randn(n, device=dev)
    y = torch.randn(n, device=dev)
    out = torch.empty_like(x)
    ms = timed(lambda: out.copy_(x))
    print(f"torch copy 256MiB: {ms:.3f} ms {2*n*4/ms/1e6:.0f} GB/s")
    rec.emit("bandwidth", "copy 256MiB", "wall_bandwidth", "GB/s", 2 * n * 4 / ms / 1e6, ms=ms)
    ms = timed(lambda: torch.add(x, y, out=out))
    print(f"torch add 256MiB: {ms:.3f} ms {3*n*4/ms/1e6:.0f} GB/s")
    rec.emit("bandwidth", "add 256MiB", "wall_bandwidth", "GB/s", 3 * n * 4 / ms / 1e6, ms=ms)
    x2 = x.view(-1, 4096)
    ms = timed(lambda: torch.softmax(x2, -1))
    print(f"torch softmax 256MiB rows4096: {ms:.3f} ms {2*n*4/ms/1e6:.0f} GB/s")
    rec.emit("bandwidth", "softmax 256MiB", "wall_bandwidth", "GB/s", 2 * n * 4 / ms / 1e6, ms=ms)
    w = torch.randn(4096, device=dev)
    ms = timed(lambda: torch.nn.functional.rms_norm(x2, (4096,), w, 1e-6))
    print(f"torch rms_norm 256MiB rows4096: {ms:.3f} ms {2*n*4/ms/1e6:.0f} GB/s")
    rec.emit("bandwidth", "rms_norm 256MiB", "wall_bandwidth", "GB/s", 2 * n * 4 / ms / 1e6, ms=ms)
    # Attention (issue 4 shapes): prefill seq 4096, 32 heads, d 128, causal, f16; decode 1 query
    # over a KV length of 4096 with 8 KV heads (GQA), f16 cache.
    F = torch.nn.functional
    q = torch.randn(1, 32, 4096, 128, device=dev, dtype=torch.float16)
    k = torch.randn(1, 32, 4096, 128, device=dev, dtype=torch.float16)
    v = torch.randn(1, 32, 4096, 128, device=dev, dtype=torch.float16)
    ms = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    flops = 4 * 32 * 4096 * 4096 * 128 / 2  # causal: half the score matrix
    print(f"torch sdpa prefill f16 causal 32x4096x128: {ms:.3f} ms {flops/ms/1e9:.1f} TFLOP/s")
    rec.emit("attention", "prefill seq4096", "rate", "TFLOP/s", flops / ms / 1e9, ms=ms)
    qd = torch.randn(1, 32, 1, 128, device=dev, dtype=torch.float16)
    kd = torch.randn(1, 8, 4096, 128, device=dev, dtype=torch.float16)
    vd = torch.randn(1, 8, 4096, 128, device=dev, dtype=torch.float16)
    ms = timed(lambda: F.scaled_dot_product_attention(qd, kd, vd, enable_gqa=True), iters=200)
    kv_bytes = 2 * 8 * 4096 * 128 * 2
    print(f"torch sdpa decode f16 gqa 32/8 kv4096: {ms*1e3:.1f} us {kv_bytes/ms/1e6:.0f} GB/s of KV")
    rec.emit("attention", "decode kv4096", "wall_time", "us", ms * 1e3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
