#!/usr/bin/env bash
# On the H200 (device tool, after `source scripts/device_unpack.sh`): A/B runs of the decode
# settings that change the schedule but not the results (#19's decode target), under Debian's
# engine where it is unpacked (else npm's). One synthetic model, tg64 r3 per line:
#   - the attention's direct store with one key split (WGT_ATTN_DECODE_DIRECT 0 / 1), from an
#     empty context (one split up to 128 keys on llama2-7b);
#   - at depth 512: the plan's key splits against one split (WGT_ATTN_DECODE_CHUNK=1024: the
#     direct store, no reduction pass, 32 workgroups) and 256-key chunks;
#   - early submission of an idle device every 2 / 4 / 8 (default) dispatches.
# Logs in $OUT/decode_ab/, the t/s lines on the console.
#   scripts/h200_decode_ab.sh [SHAPE] [TYPE]        (default llama2-7b q4_0)
set -uo pipefail
shape=${1:-llama2-7b}
type=${2:-q4_0}
out=${OUT:-/tmp}/decode_ab
mkdir -p "$out"
dawn=auto
[ -n "${DAWN_DEBIAN_LIB:-}" ] && dawn=$DAWN_DEBIAN_LIB
base=(--synthetic "$shape" --type "$type" --synthetic-cache "${TMPDIR:-/tmp}/wgt-synthetic" -p 0 -n 64 -r 3)
run() {  # label, extra bench args, then VAR=value settings
  local label=$1 extra=$2
  shift 2
  env WGT_DAWN="$dawn" "$@" timeout 150 wgt bench "${base[@]}" $extra > "$out/$label.txt" 2>&1
  echo "$label: rc $? $(grep -E '\| *tg64' "$out/$label.txt" | awk -F'|' '{print $(NF-1)}')"
}
run direct0_d0 "" WGT_ATTN_DECODE_DIRECT=0
run direct1_d0 "" WGT_ATTN_DECODE_DIRECT=1
run plan_d512 "-d 512"
run chunk1024_d512 "-d 512" WGT_ATTN_DECODE_CHUNK=1024
run chunk256_d512 "-d 512" WGT_ATTN_DECODE_CHUNK=256
for e in 2 4 8; do run "early${e}_d512" "-d 512" WGT_WEBGPU_EARLY=$e; done
