#!/usr/bin/env bash
# On the H200 (device tool, after scripts/device_unpack.sh): where a decode token's time goes
# (#19's decode target). tg64 of a synthetic model three times per engine: plain, with the host
# profile (WGT_HOST_PROFILE: the host stages of every op) and with the per-kernel GPU profile
# (WGT_WEBGPU_PROFILE: timestamp queries, which serialize batches). Logs in $OUT/decode_profile.
#   scripts/h200_decode_profile.sh [SHAPE] [TYPE]        (default llama2-7b q4_0)
set -uo pipefail
shape=${1:-llama2-7b}
type=${2:-q4_0}
out=${OUT:-/tmp}/decode_profile
mkdir -p "$out"
args=(--synthetic "$shape" --type "$type" --synthetic-cache "${TMPDIR:-/tmp}/wgt-synthetic" -p 0 -n 64 -r 1)
engines=(npm)
[ -n "${DAWN_DEBIAN_LIB:-}" ] && engines+=(debian)
for e in "${engines[@]}"; do
  dawn=auto
  [ "$e" = debian ] && dawn=$DAWN_DEBIAN_LIB
  for mode in plain host gpu; do
    env WGT_DAWN="$dawn" WGT_HOST_PROFILE=$([ $mode = host ] && echo 1 || echo 0) \
      WGT_WEBGPU_PROFILE=$([ $mode = gpu ] && echo 1 || echo 0) \
      timeout 120 wgt bench "${args[@]}" > "$out/${e}_$mode.txt" 2>&1
    echo "== $e $mode: rc $? $(grep -E '\| *tg64' "$out/${e}_$mode.txt" | awk -F'|' '{print $(NF-1)}')"
  done
done
