#!/usr/bin/env bash
# On the H200 (device tool), one call (< 8 minutes): the subgroup-matrix f16 matmul's K-chunk
# data paths (WGT_MATMUL_SGMAT_VARIANT: staged, wide) and ablations (WGT_MATMUL_SGMAT_ABLATE,
# wrong results by design, on each path) under Debian's Dawn: the conformance tests of both
# paths, then 4096^3 nn and nt for each path on the default and two forced tiles and for each
# ablation, 8192^3 with the clocks and throttle reasons logged before and after, and cuBLAS f16
# in the same run.
# Outputs under $OUT. Usage: bash scripts/h200_sgmat_variants.sh
set -uo pipefail
source scripts/device_unpack.sh
out=${OUT:-/tmp}
export WGT_DAWN="$DAWN_DEBIAN_LIB"
wgt info 2>&1 | grep -iE "engine|subgroup|f16" | head -8
echo "== conformance (both data paths: EveryDataPathAgreesWithReference; quantized prefill shares the loop)"
timeout 200 wgt_webgpu_tests --gtest_filter='WebGpuMatmulSgMat.*:QuantPrefillWebGPU.*' > "$out/sgmat_tests.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure|error" -A2 "$out/sgmat_tests.txt" | head -40
tiles=${SGMAT:-128x128x32x4x2,128x256x16x4x4}
echo "== 4096^3: data paths x tiles, ablations"
timeout 200 bench_webgpu_matmul --dtype f16 --layout both --shapes 4096x4096x4096 --ms 150 --sgmat "$tiles" \
  --sg-variants staged,wide --ablate 1,2,3,4,5 2>&1 | tee "$out/sgmat_variants.txt"
echo "== clocks before 8192^3"
nvidia-smi -q -d CLOCK,PERFORMANCE > "$out/clocks_before.txt" 2>&1; grep -E "Graphics|SM  |Idle|Power Cap|Thermal|Active" "$out/clocks_before.txt" | head -20
timeout 90 bench_webgpu_matmul --dtype f16 --layout both --shapes 8192x8192x8192 --ms 150 --sgmat "" \
  --sg-variants ${SGVARS_8192:-staged,wide} 2>&1 | tee "$out/sgmat_8192.txt"
echo "== clocks after 8192^3"
nvidia-smi -q -d CLOCK,PERFORMANCE > "$out/clocks_after.txt" 2>&1; grep -E "Graphics|SM  |Idle|Power Cap|Thermal|Active" "$out/clocks_after.txt" | head -20
echo "== cuBLAS"
timeout 60 python3 bench/torch_gemm.py 4096 8192
