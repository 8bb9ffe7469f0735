#!/usr/bin/env bash
# The benchmarks behind BENCHMARKS.md's summary table, ours and PyTorch's in the same run, each
# writing JSON-lines records (--json) into one results folder; bench/bench_table.py builds the
# table from one or more such folders.
#
#   scripts/bench_suite.sh [--part kernels|algebra|models|all] [--smoke] [--out DIR] [--budget S]
#
# Parts (each sized for one device call of at most 600 s; run them as separate calls):
#   kernels  bandwidth (copy/add/softmax/rms_norm, chain), f32 matmul 4096^3, f16 matmul 4096^3
#            nn/nt under Debian's Dawn, quantized matvec 4096x4096 and 14336x4096, attention
#            decode/prefill/block, bench/torch_reference.py
#   algebra  sparse SpMV/SpMM on the three matrices with bench/torch_sparse.py, dot_general /
#            einsum / c64 matmul / FFT with bench/torch_algebra.py, bench_cpu (op vs kernel)
#   models   wgt bench --synthetic: llama2-7b Q4_0 (npm and Debian engines), llama3-8b Q4_K,
#            llama3.2-1b Q4_0, bench/torch_llm.py, then llama2-7b F16 / Q8_0 / Q6_K while the
#            budget lasts
# --smoke: tiny shapes, no PyTorch: the whole pipeline in a few minutes on lavapipe.
# --out: the results folder (default: $OUT/bench-<part> on the device tool, else
#        build/bench-results/<part>); records.jsonl, meta.json, steps.tsv and one log per step.
# --budget: seconds for the whole part (default 480, leaving room for device_unpack.sh in a 540 s call): each step's timeout is cut to what is
#        left, and steps that would start with less than 20 s left are skipped (reported).
#
# Binaries: build/ when it has them, else PATH (the device payload: source
# scripts/device_unpack.sh first). Debian's engine: "$DAWN_DEBIAN_LIB" (device_unpack.sh) or
# WGT_DAWN=debian when third_party/dawn-debian is set up; its steps are skipped otherwise.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

part=all smoke=0 out="" budget=480
while [ $# -gt 0 ]; do
  case "$1" in
    --part) part=${2:-}; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --out) out=${2:-}; shift 2 ;;
    --budget) budget=${2:-}; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "bench_suite: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$part" in kernels|algebra|models|all) ;; *) echo "bench_suite: --part kernels|algebra|models|all" >&2; exit 2 ;; esac
case "$budget" in ''|*[!0-9]*) echo "bench_suite: --budget takes whole seconds" >&2; exit 2 ;; esac
if [ -z "$out" ]; then
  if [ -n "${OUT:-}" ]; then out="$OUT/bench-$part"; else out="$root/build/bench-results/$part"; fi
fi
mkdir -p "$out" || exit 2
rec="$out/records.jsonl"
: > "$out/steps.tsv"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"

bin() {  # the program's path: build/ first, then PATH
  if [ -x "$root/build/$1" ]; then echo "$root/build/$1"; else command -v "$1" || echo "$1"; fi
}
WGT=$(bin wgt)

# Debian's engine, when there is one.
deb_engine=""
if [ -n "${DAWN_DEBIAN_LIB:-}" ]; then deb_engine="$DAWN_DEBIAN_LIB"
elif [ -f "$root/third_party/dawn-debian/wgt-engine.txt" ] || [ -e /usr/lib/x86_64-linux-gnu/libwebgpu_dawn.so.0 ]; then deb_engine=debian
fi

# PyTorch with CUDA (not in smoke runs: tiny shapes are not what the table compares).
have_torch=0
if [ "$smoke" = 0 ] && timeout 60 python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  have_torch=1
fi

t_start=$(date +%s)
failed=0
# step NAME TIMEOUT CMD...: runs CMD with its output in NAME.log, under the smaller of TIMEOUT
# and the part's remaining budget; one line per step here and in steps.tsv (name, rc, seconds).
step() {
  local name=$1 limit=$2; shift 2
  local left=$(( budget - ($(date +%s) - t_start) ))
  if [ "$left" -lt 20 ]; then
    printf '%s\tskipped (budget)\t0\n' "$name" >> "$out/steps.tsv"
    echo "[suite] $name: skipped, $left s of the budget left"
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local t0; t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  local secs; secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  printf '%s\t%s\t%s\n' "$name" "$rc" "$secs" >> "$out/steps.tsv"
  if [ "$rc" = 0 ]; then echo "[suite] $name: ok, $secs s"
  else
    failed=$((failed + 1))
    [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "[suite] $name: TIMED OUT after $secs s (limit $limit)" \
                                       || echo "[suite] $name: rc $rc after $secs s"
    tail -5 "$out/$name.log" | sed 's/^/    /'
  fi
  return 0
}
deb=(env "WGT_DAWN=$deb_engine")  # a command prefix (timeout runs programs, not shell functions)
skip() { printf '%s\tskipped (%s)\t0\n' "$1" "$2" >> "$out/steps.tsv"; echo "[suite] $1: skipped ($2)"; }

# The run's context for bench_table.py: machine, adapter, engines, revision, date.
"$WGT" info > "$out/info_npm.log" 2>&1
[ -n "$deb_engine" ] && WGT_DAWN="$deb_engine" "$WGT" info > "$out/info_debian.log" 2>&1
revision=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || cat "$root/.devcarry/revision" 2>/dev/null || echo unknown)
if git -C "$root" rev-parse HEAD >/dev/null 2>&1 && [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  revision="$revision (uncommitted changes)"
fi
PART=$part SMOKE=$smoke REVISION=$revision OUTDIR=$out HAVE_TORCH=$have_torch DEB_ENGINE=$deb_engine python3 - <<'PY'
import datetime, json, os, platform, re, subprocess
out = os.environ["OUTDIR"]
def first(path, pattern):
    try:
        for line in open(path, encoding="utf-8", errors="replace"):
            m = re.search(pattern, line)
            if m:
                return m.group(1).strip()
    except OSError:
        pass
    return None
def cmd(*args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout.strip() or None
    except Exception:
        return None
gpu = cmd("nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader")
torch_v = None
if os.environ["HAVE_TORCH"] == "1":
    torch_v = cmd("python3", "-c", "import torch; print(torch.__version__, 'cuda', torch.version.cuda)")
cpu = first("/proc/cpuinfo", r"^model name\s*:\s*(.*)")
meta = {
    "part": os.environ["PART"], "smoke": os.environ["SMOKE"] == "1",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "host": platform.node(), "revision": os.environ["REVISION"],
    "gpu": gpu.splitlines()[0] if gpu else None,
    "adapter": first(os.path.join(out, "info_npm.log"), r"^webgpu:0: (.*)"),
    "cpu": cpu, "cores": os.cpu_count(),
    "engines": {"npm": first(os.path.join(out, "info_npm.log"), r"^dawn: (.*)"),
                "debian": first(os.path.join(out, "info_debian.log"), r"^dawn: (.*)") if os.environ["DEB_ENGINE"] else None},
    "torch": torch_v,
}
json.dump(meta, open(os.path.join(out, "meta.json"), "w"), indent=1)
PY
echo "[suite] part $part$( [ "$smoke" = 1 ] && echo ' (smoke)'), results in $out; torch: $([ $have_torch = 1 ] && echo yes || echo no); Debian engine: ${deb_engine:-none}; budget $budget s"

run_kernels() {
  local Q
  if [ "$smoke" = 1 ]; then
    export WGT_BENCH_MS=30 WGT_BENCH_WARMUP_MS=10
    step bandwidth 120 "$(bin bench_webgpu_bandwidth)" --mib 4 --iters 2 --chain 50 --only copy,add,softmax,rms_norm,chain --json "$rec"
    step matmul_f32 120 "$(bin bench_webgpu_matmul)" --dtype f32 --layout nn --shapes 128x128x128 --ms 30 --json "$rec"
    if [ -n "$deb_engine" ]; then
      step matmul_f16_debian 120 "${deb[@]}" "$(bin bench_webgpu_matmul)" --dtype f16 --layout both --shapes 128x128x128 --ms 30 --json "$rec"
    else skip matmul_f16_debian "no Debian engine"; fi
    step qmatvec_small 180 "$(bin bench_webgpu_qmatvec)" 256 512 2 32 --json "$rec"
    step attention 180 "$(bin bench_webgpu_attention)" --case all --kv 256 --seq 64 --block-dim 256 --block-ffn 512 --ms 30 --json "$rec"
    unset WGT_BENCH_MS WGT_BENCH_WARMUP_MS
    return
  fi
  step bandwidth 90 "$(bin bench_webgpu_bandwidth)" --only copy,add,softmax,rms_norm,chain --json "$rec"
  step matmul_f32 90 "$(bin bench_webgpu_matmul)" --dtype f32 --layout both --shapes 4096x4096x4096 --ms 300 --json "$rec"
  if [ -n "$deb_engine" ]; then
    step matmul_f16_debian 120 "${deb[@]}" "$(bin bench_webgpu_matmul)" --dtype f16 --layout both --shapes 4096x4096x4096 --ms 300 --json "$rec"
  else skip matmul_f16_debian "no Debian engine"; fi
  step matmul_f16_npm 90 "$(bin bench_webgpu_matmul)" --dtype f16 --layout nn --shapes 4096x4096x4096 --ms 300 --json "$rec"
  for Q in 4096 14336; do
    step "qmatvec_${Q}x4096" 150 "$(bin bench_webgpu_qmatvec)" "$Q" 4096 50 512 --json "$rec"
  done
  # The prefill on subgroup matrices (quantized weights decoded to f16 on tensor cores).
  if [ -n "$deb_engine" ]; then
    step qmatvec_14336x4096_debian 150 "${deb[@]}" "$(bin bench_webgpu_qmatvec)" 14336 4096 50 512 --json "$rec"
  else skip qmatvec_14336x4096_debian "no Debian engine"; fi
  step attention 120 "$(bin bench_webgpu_attention)" --case all --json "$rec"
  # The flash-attention prefill on subgroup matrices (f16 q, Debian's Dawn; the bench checks its
  # output, and a wrong result is recorded as such).
  if [ -n "$deb_engine" ]; then
    step attention_prefill_debian 120 "${deb[@]}" "$(bin bench_webgpu_attention)" --case prefill --prefill-q f16 --json "$rec"
  else skip attention_prefill_debian "no Debian engine"; fi
  if [ "$have_torch" = 1 ]; then step torch_reference 120 python3 bench/torch_reference.py --json "$rec"
  else skip torch_reference "no PyTorch with CUDA"; fi
}

run_algebra() {
  if [ "$smoke" = 1 ]; then
    export WGT_BENCH_MS=30 WGT_BENCH_WARMUP_MS=10
    step sparse 180 "$(bin bench_webgpu_sparse)" --small --json "$rec"
    step algebra 240 "$(bin bench_algebra)" --small --ms 30 --json "$rec"
    unset WGT_BENCH_MS WGT_BENCH_WARMUP_MS
    step bench_cpu 120 "$(bin bench_cpu)" --benchmark_filter='(Op|Kernel)(Add|Exp)F32/1' --benchmark_min_time=0.05 --json "$rec"
    return
  fi
  step sparse 150 "$(bin bench_webgpu_sparse)" --json "$rec"
  # SpMV on each schedule (the CSR-adaptive one is not chosen by default until measured).
  step sparse_spmv_schedules 120 "$(bin bench_webgpu_sparse)" --spmv-only --schedule binned,merge,adaptive --json "$rec"
  if [ "$have_torch" = 1 ]; then
    local sp="${TMPDIR:-/tmp}/wgt-sparse-matrices"
    mkdir -p "$sp"
    step sparse_dump 90 "$(bin bench_webgpu_sparse)" --dump "$sp"
    step torch_sparse 90 python3 bench/torch_sparse.py "$sp" --json "$rec"
    rm -rf "$sp"
  else skip torch_sparse "no PyTorch with CUDA"; fi
  step algebra 150 env WGT_CPU_MODE=fast "$(bin bench_algebra)" --ms 200 --json "$rec"
  if [ "$have_torch" = 1 ]; then step torch_algebra 90 python3 bench/torch_algebra.py --json "$rec"
  else skip torch_algebra "no PyTorch with CUDA"; fi
  step bench_cpu 150 "$(bin bench_cpu)" --benchmark_filter='(Op|Cold|Kernel)(Add|Exp|MatmulOut)F32/1' --json "$rec"
}

# One `wgt bench` of a synthetic model: model_step NAME TIMEOUT SHAPE TYPE [COMMAND PREFIX...].
# The model file is kept in a cache folder between the engines' runs and removed after.
cache="${TMPDIR:-/tmp}/wgt-synthetic"
model_step() {
  local name=$1 limit=$2 shape=$3 type=$4; shift 4
  local args=(-p 512 -n 128 -d 512 -r 3)
  [ "$smoke" = 1 ] && args=(-p 16 -n 8 -d 8 -r 2)
  step "$name" "$limit" "$@" "$WGT" bench --synthetic "$shape" --type "$type" "${args[@]}" -q \
    --synthetic-cache "$cache" --json "$rec"
}
run_models() {
  if [ "$smoke" = 1 ]; then
    model_step model_tiny_q4_0 120 tiny q4_0
    if [ -n "$deb_engine" ]; then model_step model_tiny_q4_0_debian 120 tiny q4_0 "${deb[@]}"
    else skip model_tiny_q4_0_debian "no Debian engine"; fi
    model_step model_tiny-llama3_q8_0 120 tiny-llama3 q8_0  # q4_k: its 128-wide rows are refused
    rm -rf "$cache"
    return
  fi
  model_step model_llama2-7b_q4_0 150 llama2-7b q4_0
  if [ -n "$deb_engine" ]; then model_step model_llama2-7b_q4_0_debian 120 llama2-7b q4_0 "${deb[@]}"
  else skip model_llama2-7b_q4_0_debian "no Debian engine"; fi
  rm -f "$cache"/wgt-synthetic-llama2-7b-q4_0.gguf
  model_step model_llama3-8b_q4_k 150 llama3-8b q4_k
  rm -f "$cache"/wgt-synthetic-llama3-8b-q4_k.gguf
  model_step model_llama3.2-1b_q4_0 90 llama3.2-1b q4_0
  rm -f "$cache"/wgt-synthetic-llama3.2-1b-q4_0.gguf
  if [ "$have_torch" = 1 ]; then step torch_llm 240 python3 bench/torch_llm.py --json "$rec"
  else skip torch_llm "no PyTorch with CUDA"; fi
  local t
  for t in q8_0 q6_k f16; do  # while the budget lasts
    model_step "model_llama2-7b_$t" 150 llama2-7b "$t"
    rm -f "$cache/wgt-synthetic-llama2-7b-$t.gguf"
  done
  rm -rf "$cache"
}

case "$part" in
  kernels) run_kernels ;;
  algebra) run_algebra ;;
  models) run_models ;;
  all) run_kernels; run_algebra; run_models ;;
esac

n=0; [ -f "$rec" ] && n=$(wc -l < "$rec")
echo "[suite] done in $(( $(date +%s) - t_start )) s: $n records in $rec, $failed step(s) failed"
echo "[suite] steps (name, rc, seconds):"; sed 's/^/    /' "$out/steps.tsv"
[ "$failed" = 0 ]
