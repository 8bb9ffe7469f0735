#!/usr/bin/env python3
"""BENCHMARKS.md's summary table from the JSON-lines records of scripts/bench_suite.sh.

  python3 bench/bench_table.py RESULTS_DIR... [--write BENCHMARKS.md] [--allow-smoke]

Each RESULTS_DIR holds records.jsonl (the --json records of the bench programs, `wgt bench`
and the torch scripts) and meta.json (machine, date, revision, engines). Several folders (one
per part of the suite) are merged; where two carry the same measurement, the later folder's
wins. Every row of ROWS is written: a measurement missing from the records reads "not measured
in this run", never an older figure. Without --write the table goes to stdout; with it, only
the lines between the markers below are replaced. Figures of a --smoke run (tiny shapes) are
refused for --write unless --allow-smoke. Standard library only.
"""
import argparse
import json
import os
import sys
from dataclasses import dataclass, field

BEGIN = "<!-- bench-table:begin -->"
END = "<!-- bench-table:end -->"
MISSING = "not measured in this run"
# A record whose program checked its result against the CPU reference and found it wrong
# ("check": "failed", with "max_rel_err" and "bound") is shown as this, never as a figure.
INVALID = "invalid: wrong results"
HIGHER_IS_BETTER = {"t/s", "GB/s", "TFLOP/s", "GFLOP/s", "%"}
LOWER_IS_BETTER = {"us", "ms", "s"}


@dataclass
class Sel:
    """Which record: bench, case (full run) and its --smoke case (None: not in smoke runs),
    metric (and its --smoke name where it differs), and an engine prefix (npm, debian, torch,
    cpu); `where` adds field == value tests."""
    bench: str
    case: str
    metric: str
    engine: str
    smoke_case: object = None
    where: dict = field(default_factory=dict)
    smoke_metric: object = None


@dataclass
class Row:
    what: str
    shape: str
    ours: Sel
    theirs: object  # Sel or None
    theirs_label: str
    target: str
    command: str
    scale: float = 1.0  # the displayed value = value * scale, in `unit` (default: the record's)
    unit: str = ""


def _model_rows():
    rows = []
    cmd = "wgt bench --synthetic {s} --type {t} -p 512 -n 128 -d 512 -r 3"
    specs = [("llama2-7b", "q4_0", "llama2-7b Q4_0", "npm", ("tiny q4_0", "≥ 2500", "≥ 550 (50% of roofline)")),
             ("llama2-7b", "q4_0", "llama2-7b Q4_0, Debian Dawn", "debian", ("tiny q4_0", "≥ 2500", "≥ 550 (50% of roofline)")),
             ("llama3-8b", "q4_k", "llama3-8b Q4_K", "npm", ("tiny-llama3 q8_0", "", "")),
             ("llama3.2-1b", "q4_0", "llama3.2-1b Q4_0", "npm", (None, "", "")),
             ("llama2-7b", "f16", "llama2-7b F16", "npm", (None, "", "")),
             ("llama2-7b", "q8_0", "llama2-7b Q8_0", "npm", (None, "", "")),
             ("llama2-7b", "q6_k", "llama2-7b Q6_K", "npm", (None, "", ""))]
    for shape, t, label, engine, (smoke, pp_target, tg_target) in specs:
        for metric, smoke_metric, what, target in (("pp512", "pp16", "prompt, pp512 (t/s)", pp_target),
                                                   ("tg128 @ d512", "tg8 @ d8", "decode, tg128 @ d512 (t/s)", tg_target)):
            ours = Sel("model", f"{shape} {t}", metric, engine, smoke, smoke_metric=smoke_metric)
            theirs = Sel("model", f"{shape} fp16", metric, "torch")
            c = cmd.format(s=shape, t=t) if engine == "npm" else "WGT_DAWN=debian " + cmd.format(s=shape, t=t)
            rows.append(Row(what, label, ours, theirs, "PyTorch fp16 (HF eager)", target, c))
    return rows


def _kernel_rows():
    mm = "bench_webgpu_matmul --dtype {d} --layout {l} --shapes 4096x4096x4096"
    rows = []
    for d, lay, engine, label, target in (("f16", "nn", "debian", "f16 nn, Debian Dawn (subgroup matrices)", "≥ 300 (#20)"),
                                          ("f16", "nt", "debian", "f16 nt (B K-contiguous), Debian Dawn", "≥ 300 (#20)"),
                                          ("f16", "nn", "npm", "f16 nn, npm Dawn", "≥ 60"),
                                          ("f32", "nn", "npm", "f32 nn, npm Dawn", "≥ 35")):
        case = f"{d} {lay} 4096x4096x4096"
        rows.append(Row("matmul 4096³ (TFLOP/s)", label,
                        Sel("matmul", case, "rate", engine, f"{d} {lay} 128x128x128", {"variant": "auto"}),
                        Sel("matmul", case, "rate", "torch"), "cuBLAS (torch)", target,
                        ("WGT_DAWN=debian " if engine == "debian" else "") + mm.format(d=d, l=lay)))
    st = "[1,4096,4096]x[.,4096,4096]"
    rows.append(Row("c64 matmul 4096³ (TFLOP/s, 8 flops per complex multiply-add)", "plan's choice",
                    Sel("algebra", f"c64 matmul {st} plan", "rate", "npm", "c64 matmul [1,128,128]x[.,128,128] plan"),
                    Sel("algebra", f"c64 matmul {st}", "rate", "torch"), "cuBLAS c64 (torch)", "",
                    "bench_algebra --ms 200", scale=1e-3, unit="TFLOP/s"))
    rows.append(Row("c64 matmul 4096³ (TFLOP/s, 8 flops per complex multiply-add)", "plan's choice, against our f32",
                    Sel("algebra", f"c64 matmul {st} plan", "rate", "npm", "c64 matmul [1,128,128]x[.,128,128] plan"),
                    Sel("algebra", f"matmul f32 {st}", "rate", "npm", "matmul f32 [1,128,128]x[.,128,128]"),
                    "our f32 matmul", "", "bench_algebra --ms 200", scale=1e-3, unit="TFLOP/s"))
    for what, target in (("copy", ""), ("add", "≥ 3336 (80% of 4.17 TB/s)"), ("softmax", "≥ 3336 (80%)"),
                         ("rms_norm", "≥ 3336 (80%)")):
        rows.append(Row(f"{what}, 256 MiB f32 (GB/s)", "rows of 4096" if what in ("softmax", "rms_norm") else "contiguous",
                        Sel("bandwidth", f"{what} 256MiB", "wall_bandwidth", "npm", f"{what} 4MiB"),
                        Sel("bandwidth", f"{what} 256MiB", "wall_bandwidth", "torch"), "PyTorch", target,
                        f"bench_webgpu_bandwidth --only {what}"))
    rows.append(Row("chain of dependent adds + download (µs per op)", "1000 adds of 1024 f32",
                    Sel("bandwidth", "chain 1000 adds", "time_per_op", "npm", "chain 50 adds"), None, "", "≤ 10",
                    "bench_webgpu_bandwidth --only chain"))
    for n in (4096, 14336):
        for q in ("q4_0", "q8_0", "q4_k"):
            rows.append(Row("quantized matvec, decode (GB/s of packed weights, wall)", f"{q.upper()} {n}x4096",
                            Sel("qmatvec", f"{q} {n}x4096 decode", "wall_bandwidth", "npm", f"{q} 256x512 decode"),
                            Sel("bandwidth", "copy 256MiB", "wall_bandwidth", "torch"), "PyTorch copy bandwidth",
                            "≥ 3128 (75% of 4.17 TB/s)", f"bench_webgpu_qmatvec {n} 4096 50 512"))
    for q in ("q4_0", "q8_0"):
        rows.append(Row("quantized prefill M = 512 (TFLOP/s, wall)", f"{q.upper()} 14336x4096, Debian Dawn (subgroup matrices)",
                        Sel("qmatvec", f"{q} 512x14336x4096 prefill", "rate", "debian", f"{q} 32x256x512 prefill"), None, "",
                        "≥ 150 (#20)", f"WGT_DAWN=debian bench_webgpu_qmatvec 14336 4096 50 512"))
    rows.append(Row("decode attention (µs, wall)", "1 query, 32/8 heads, KV 4096, d 128, f16 cache",
                    Sel("attention", "decode kv4096", "wall_time", "npm", "decode kv256"),
                    Sel("attention", "decode kv4096", "wall_time", "torch"), "PyTorch SDPA", "≤ 6.7 (60% of roofline)",
                    "bench_webgpu_attention --case decode"))
    rows.append(Row("prefill attention (TFLOP/s, wall)", "seq 4096 causal, 32 heads, d 128, f16",
                    Sel("attention", "prefill seq4096", "rate", "npm", "prefill seq64"),
                    Sel("attention", "prefill seq4096", "rate", "torch"), "PyTorch SDPA", "",
                    "bench_webgpu_attention --case prefill"))
    rows.append(Row("prefill attention (TFLOP/s, wall)", "seq 4096 causal, 32/8 heads, d 128, f16 q, Debian Dawn (subgroup matrices)",
                    Sel("attention", "prefill seq4096 q16 attention_prefill_sg", "rate", "debian", None),
                    Sel("attention", "prefill seq4096", "rate", "torch"), "PyTorch SDPA", "≥ 150 (#20)",
                    "WGT_DAWN=debian bench_webgpu_attention --case prefill --prefill-q f16"))
    rows.append(Row("decode step of a llama-7B block (µs, wall)", "dim 4096, ffn 11008, f16 weights",
                    Sel("attention", "block dim4096 ffn11008 f16", "wall_time", "npm", "block dim256 ffn512 f16"), None, "",
                    "≤ 162 (60% of 4.17 TB/s)", "bench_webgpu_attention --case block"))
    return rows


def _algebra_rows():
    rows = []
    names = {"laplacian": "Laplacian 2048²", "uniform": "uniform 1M×1M, 16/row", "rmat": "R-MAT 2^22, avg 16"}
    for what, label, target in (("spmv", "SpMV (µs)", "ratio ≥ 1.0 (#21)"), ("spmm n64", "SpMM n=64 (µs)", "ratio ≥ 0.8 (#21)")):
        for m, shape in names.items():
            rows.append(Row(label, shape, Sel("sparse", f"{what} {m}", "time", "npm", f"{what} {m}"),
                            Sel("sparse", f"{what} {m}", "time", "torch"), "cuSPARSE (torch)", target,
                            "bench_webgpu_sparse; bench/torch_sparse.py"))
    rows.append(Row("SpMV (µs)", "R-MAT 2^22, avg 16, CSR-adaptive schedule (forced)",
                    Sel("sparse", "spmv rmat @adaptive", "time", "npm", "spmv rmat @adaptive"),
                    Sel("sparse", "spmv rmat", "time", "torch"), "cuSPARSE (torch)", "ratio ≥ 1.0 (#21)",
                    "bench_webgpu_sparse --spmv-only --schedule adaptive; bench/torch_sparse.py"))
    st, small = "[64,256,512]x[.,512,256]", "[4,64,64]x[.,64,64]"
    for ours, theirs, label in (("dot_general prepared bmk,bkn->bmn", "einsum bmk,bkn->bmn", "prepared, bmk,bkn->bmn"),
                                ("dot_general mbk,bkn->bmn", "einsum mbk,bkn->bmn", "batch axis in the middle"),
                                ("einsum bkn,bmk->bmn", "einsum bkn,bmk->bmn", "operands swapped")):
        rows.append(Row("dot_general / einsum, one GEMM (% of the same library's matmul)", f"{label}, {st} f32",
                        Sel("algebra", f"{ours} {st}", "pct_of_matmul", "npm", f"{ours} {small}"),
                        Sel("algebra", f"{theirs} {st}", "pct_of_matmul", "torch"), "torch.einsum vs torch.matmul", "",
                        "bench_algebra --ms 200"))
    for case, smoke, label, target in (
            ("[8192, 4096]", "[16, 256]", "Stockham, radix 16, one workgroup per line", "ratio ≥ 0.6 (#22)"),
            ("[32, 1048576]", "[2, 4096]", "four-step, 1024 x 1024", "ratio ≥ 0.6 (#22)"),
            ("[32768, 1009]", "[16, 1009]", "Bluestein", "ratio ≥ 0.3 (#22)")):
        rows.append(Row(f"FFT c64 {case} (ms, GPU time)", f"WebGPU, {label}",
                        Sel("algebra", f"fft c64 {case}", "gpu_time", "npm", f"fft c64 {smoke}"),
                        Sel("algebra", f"fft c64 {case}", "gpu_time", "torch"), "cuFFT (torch)", target,
                        "bench_algebra --ms 200"))
    for op, shape in (("Add", "16 Mi f32"), ("Exp", "16 Mi f32"), ("MatmulOut", "4096 x 64 @ 64 x 4096 f32")):
        rows.append(Row(f"CPU {op.replace('Out', '').lower()}, fresh output (ms per op)", shape,
                        Sel("cpu", f"BM_Op{op}F32/1", "time", "cpu", f"BM_Op{op}F32/1"),
                        Sel("cpu", f"BM_Kernel{op}F32/1", "time", "cpu", f"BM_Kernel{op}F32/1"),
                        "its kernel, preallocated output", "ratio ≥ 0.5 (within 2x)",
                        f"bench_cpu --benchmark_filter='(Op|Kernel){op}F32/1'"))
    return rows


ROWS = _model_rows() + _kernel_rows() + _algebra_rows()


def load(dirs):
    """(records, metas): records in file order over the folders, metas one per folder."""
    records, metas = [], []
    for d in dirs:
        meta_path = os.path.join(d, "meta.json")
        meta = {}
        if os.path.exists(meta_path):
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        meta["dir"] = d
        metas.append(meta)
        path = os.path.join(d, "records.jsonl")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    # A line cut by a timeout: reported, the others still count.
                    print(f"bench_table: {path}:{n}: skipped, not JSON ({e})", file=sys.stderr)
                    continue
                if isinstance(r, dict) and {"bench", "case", "metric", "value"} <= r.keys():
                    records.append(r)
    return records, metas


def find(records, sel, smoke):
    """The matching record (the last one; for Google Benchmark runs the median aggregate
    where there is one), or None."""
    case = sel.smoke_case if smoke else sel.case
    metric = (sel.smoke_metric or sel.metric) if smoke else sel.metric
    if case is None:
        return None
    hits = [r for r in records
            if r["bench"] == sel.bench and r["case"] == case and r["metric"] == metric
            and str(r.get("engine", "")).startswith(sel.engine)
            and all(r.get(k) == v for k, v in sel.where.items())
            and r.get("aggregate", "") in ("", "median") and r["value"] is not None]
    if not hits:
        return None
    medians = [r for r in hits if r.get("aggregate") == "median"]
    return (medians or hits)[-1]


def _decimals(v):
    """Decimals that show v with about three significant figures."""
    a = abs(v)
    if a >= 100:
        return 0
    if a >= 10:
        return 1
    if a >= 1:
        return 2
    if a == 0:
        return 3
    d = 2  # 1 <= a < 10 takes two; one more per factor of ten below 1
    while a < 1 and d < 12:
        a *= 10
        d += 1
    return d


def fmt(v, like=None):
    """v with about three significant figures, or with the decimals that suit `like`."""
    return f"{v:.{_decimals(v if like is None else like)}f}"


def figure(r, scale):
    v = r["value"] * scale
    s = fmt(v)
    if r.get("std") is not None:
        s += f" ± {fmt(r['std'] * scale, like=v)}"
    return s


def failed(r):
    return r is not None and r.get("check") == "failed"


def invalid(r):
    err, bound = r.get("max_rel_err"), r.get("bound")
    if err is None or bound is None:
        return INVALID
    return f"{INVALID} (max rel err {err:.2g} > {bound:.2g})"


def speed_ratio(ours, theirs):
    """ours / theirs for rates, theirs / ours for times: > 1 means ours is faster. None when
    the unit has no direction, they differ, or a value is not positive."""
    u = ours.get("unit")
    if u != theirs.get("unit") or ours["value"] <= 0 or theirs["value"] <= 0:
        return None
    if u in HIGHER_IS_BETTER:
        return ours["value"] / theirs["value"]
    if u in LOWER_IS_BETTER:
        return theirs["value"] / ours["value"]
    return None


def table_rows(records, smoke):
    out = []
    for row in ROWS:
        o = find(records, row.ours, smoke)
        t = find(records, row.theirs, smoke) if row.theirs else None
        unit = f" {row.unit}" if row.unit else ""
        ours = invalid(o) if failed(o) else figure(o, row.scale) + unit if o else MISSING
        if row.theirs is None:
            theirs = ""
        elif failed(t):
            theirs = f"{row.theirs_label}: {invalid(t)}"
        elif t:
            theirs = f"{row.theirs_label} {figure(t, row.scale)}{unit}"
        else:
            theirs = f"{row.theirs_label}: {MISSING}"
        ratio = speed_ratio(o, t) if o and t and not failed(o) and not failed(t) else None
        shape = row.shape
        if smoke:
            shape += f" (smoke: {row.ours.smoke_case})" if row.ours.smoke_case else " (not in smoke runs)"
        out.append([row.what, shape, ours, theirs, f"{ratio:.2f}" if ratio is not None else "",
                    row.target, f"`{row.command}`"])
    return out


def stamp(metas):
    lines = []
    for m in metas:
        if not m.get("part"):
            lines.append(f"- {m['dir']}: no meta.json")
            continue
        eng = m.get("engines") or {}
        engines = "; ".join(f"{k}: {v}" for k, v in eng.items() if v)
        lines.append(f"- part `{m['part']}`{' (SMOKE: tiny shapes, not figures)' if m.get('smoke') else ''}: "
                     f"{m.get('date', '?')}, {m.get('gpu') or m.get('adapter') or 'no GPU'} "
                     f"(WebGPU adapter: {m.get('adapter') or 'none'}), host {m.get('host', '?')}, "
                     f"{m.get('cores', '?')} cores; revision {m.get('revision', '?')}; Dawn {engines or 'none'}; "
                     f"PyTorch {m.get('torch') or 'not run'}")
    return lines


def render(records, metas):
    smoke = any(m.get("smoke") for m in metas)
    head = ["benchmark", "shape / model", "ours", "compared with (same run)",
            "speed ratio (ours vs compared; > 1: ours faster)", "target (issue)", "command"]
    lines = ["Generated by `python3 bench/bench_table.py` from these runs of `scripts/bench_suite.sh`:", ""]
    lines += stamp(metas)
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table_rows(records, smoke):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    return "\n".join(lines) + "\n"


def rewrite(text, table):
    """text with the lines between the markers replaced by table; ValueError without them."""
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < 0 or e < b:
        raise ValueError(f"markers {BEGIN} ... {END} not found in order")
    start = text.index("\n", b) + 1 if "\n" in text[b:e] else b + len(BEGIN)
    return text[:start] + table + text[e:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="results folders of scripts/bench_suite.sh")
    ap.add_argument("--write", metavar="FILE", help="replace the table between the markers in FILE")
    ap.add_argument("--allow-smoke", action="store_true", help="let --write use a --smoke run's figures")
    args = ap.parse_args(argv)
    for d in args.dirs:
        if not os.path.isdir(d):
            ap.error(f"{d}: not a folder")
    records, metas = load(args.dirs)
    if args.write and any(m.get("smoke") for m in metas) and not args.allow_smoke:
        ap.error("a --smoke run's figures are not benchmark figures; --allow-smoke to write them anyway")
    table = render(records, metas)
    if not args.write:
        sys.stdout.write(table)
        return 0
    with open(args.write, encoding="utf-8") as f:
        text = f.read()
    try:
        new = rewrite(text, table)
    except ValueError as e:
        print(f"bench_table: {args.write}: {e}", file=sys.stderr)
        return 1
    with open(args.write, "w", encoding="utf-8") as f:
        f.write(new)
    print(f"bench_table: {args.write}: table of {len(ROWS)} rows from {len(records)} records written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
