#!/usr/bin/env python3
"""cuSPARSE through PyTorch (torch.sparse_csr_tensor mv / mm) on the matrices of issue 21,
as written by `bench_webgpu_sparse --dump DIR` (same generators and seeds as the WebGPU run).
Prints the same columns as bench_webgpu_sparse: time per call (CUDA events, median of
repeats), GB/s counted as CSR bytes + dense bytes, GFLOP/s.

  python3 bench/torch_sparse.py DIR [--n 64] [--index int32|int64] [--json FILE]
--json appends records (bench/bench_records.py) named as bench_webgpu_sparse --json writes them.
"""
import argparse
import os
import statistics

import numpy as np
import torch
from bench_records import Records, torch_engine

PEAK = 4.17e12  # H200 HBM3e bytes/s


def load(d, name):
    shape = np.fromfile(os.path.join(d, name + ".shape.i64"), dtype=np.int64)
    ip = np.fromfile(os.path.join(d, name + ".indptr.i32"), dtype=np.int32)
    ix = np.fromfile(os.path.join(d, name + ".indices.i32"), dtype=np.int32)
    v = np.fromfile(os.path.join(d, name + ".values.f32"), dtype=np.float32)
    return int(shape[0]), int(shape[1]), ip, ix, v


def time_cuda(fn, min_ms=300.0, reps=5):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(); fn(); end.record(); torch.cuda.synchronize()
    iters = max(1, int(min_ms / max(start.elapsed_time(end), 1e-3)))
    out = []
    for _ in range(reps):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) / 1e3 / iters)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--index", default="int32", choices=["int32", "int64"])
    ap.add_argument("--json", help="append JSON-lines records (bench/bench_records.py) to this file")
    args = ap.parse_args()
    rec = Records(args.json, torch_engine(torch) + " cusparse")
    itype = torch.int32 if args.index == "int32" else torch.int64
    dev = torch.device("cuda")
    for name in ("laplacian", "uniform", "rmat"):
        if not os.path.exists(os.path.join(args.dir, name + ".shape.i64")):
            continue
        rows, cols, ip, ix, v = load(args.dir, name)
        a = torch.sparse_csr_tensor(torch.from_numpy(ip).to(dev, itype), torch.from_numpy(ix).to(dev, itype),
                                    torch.from_numpy(v).to(dev), size=(rows, cols))
        nnz = len(v)
        g = torch.Generator(device="cpu").manual_seed(1)
        x = (torch.rand(cols, generator=g) * 2 - 1).to(dev)
        b = (torch.rand(cols, args.n, generator=g) * 2 - 1).to(dev)
        isz = 4 if itype == torch.int32 else 8
        csr_bytes = isz * (rows + 1) + (isz + 4) * nnz
        for what, n, fn in (("spmv", 1, lambda: torch.mv(a, x)), ("spmm", args.n, lambda: torch.mm(a, b))):
            s = time_cuda(fn)
            byts = csr_bytes + 4 * n * (rows + cols)
            print(f"torch {what:5s} {name:10s} rows {rows:9d} nnz {nnz:10d} n {n:3d}  {s * 1e6:9.1f} us  "
                  f"{byts / s / 1e9:7.1f} GB/s ({100 * byts / s / PEAK:.0f}% of peak)  {2 * nnz * n / s / 1e9:7.1f} GFLOP/s")
            case = f"{what} {name}" if n == 1 else f"{what} n{n} {name}"
            rec.emit("sparse", case, "time", "us", s * 1e6, rows=rows, nnz=nnz, gbs=byts / s / 1e9, index=args.index)


if __name__ == "__main__":
    main()
