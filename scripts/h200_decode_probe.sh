#!/usr/bin/env bash
# On the H200 (device tool): where a decode token's time goes, for one synthetic model.
# Generation t/s with early submission off and at several sizes, then steady-state host and
# per-kernel profiles (both cover only the timed runs: wgt bench resets them after warm-up).
set -uo pipefail
source scripts/device_unpack.sh
shape=${1:-llama2-7b}; type=${2:-q4_0}
out=${OUT:-/tmp}
for e in 0 8 16 32; do
  echo "== WGT_WEBGPU_EARLY=$e"
  WGT_WEBGPU_EARLY=$e timeout 200 wgt bench --synthetic "$shape" --type "$type" -p 0 -n 64 -d 512 -r 3 -q 2>&1 | grep -E "tg|error"
done
echo "== host profile (early 16)"
WGT_HOST_PROFILE=1 timeout 200 wgt bench --synthetic "$shape" --type "$type" -p 0 -n 64 -d 512 -r 1 -q 2>&1 | tail -14
echo "== kernel profile"
WGT_WEBGPU_PROFILE=1 timeout 200 wgt bench --synthetic "$shape" --type "$type" -p 0 -n 32 -d 512 -r 1 -q 2>"$out/kernels.txt" | grep tg
head -40 "$out/kernels.txt"
