#!/usr/bin/env bash
# On the H200 (device tool), one call: the flash-attention prefill on subgroup matrices under
# Debian's Dawn: its conformance tests (and the attention / block suites it shares code with),
# then the scalar and subgroup-matrix kernels on seq 4096 causal, 32/8 heads, d 128, f16 q,
# a sweep of its tile (subgroups x keys per tile), and PyTorch SDPA in the same run.
# Outputs under $OUT.
set -uo pipefail
source scripts/device_unpack.sh
out=${OUT:-/tmp}
export WGT_DAWN="$DAWN_DEBIAN_LIB"
echo "== conformance"
timeout 200 wgt_webgpu_tests --gtest_filter='WebGpuAttentionPrefillSg.*:*Attention*:WebGpuNn.*:*Block*' > "$out/fa_tests.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |Failure" -A2 "$out/fa_tests.txt" | head -20
echo "== prefill: scalar, then the subgroup-matrix kernel at each tile"
WGT_ATTN_PREFILL=scalar timeout 90 bench_webgpu_attention --case prefill --prefill-q f16 --ms 200 2>&1 | grep -E "^prefill" | tee "$out/fa_bench.txt"
for t in default ${FA_TILES:-8x32 4x32 2x32 8x16 16x16 2x64}; do
  echo "-- tile $t"
  [ "$t" = default ] && tile="" || tile="$t"
  WGT_ATTN_PREFILL=sg WGT_ATTN_PREFILL_SG="$tile" timeout 60 bench_webgpu_attention --case prefill --prefill-q f16 --ms 200 2>&1 |
    grep -E "^prefill" | tee -a "$out/fa_bench.txt"
done
echo "== PyTorch SDPA"
(cd bench && timeout 90 python3 torch_reference.py 2>&1 | grep -i -E "sdpa|prefill|attention" | head -6)
