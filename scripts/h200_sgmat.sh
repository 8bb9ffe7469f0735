#!/usr/bin/env bash
# On the H200 (device tool), one call: the subgroup-matrix f16 matmul under Debian's Dawn:
# its conformance tests, a tile sweep at 4096^3 and 8192^3 (both B layouts), and cuBLAS f16 in
# the same run. Outputs under $OUT.
set -uo pipefail
source scripts/device_unpack.sh
out=${OUT:-/tmp}
export WGT_DAWN="$DAWN_DEBIAN_LIB"
wgt info 2>&1 | grep -iE "engine|subgroup|f16" | head -8
echo "== conformance"
timeout 150 wgt_webgpu_tests --gtest_filter='WebGpuMatmulSgMat.*:WebGpuMatmul.*' > "$out/sgmat_tests.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |Failure|error" -A2 "$out/sgmat_tests.txt" | head -40
echo "== sweep"
timeout 240 bench_webgpu_matmul --sweep --dtype f16 --layout both --shapes ${SHAPES:-4096x4096x4096,8192x8192x8192} \
  --tiles 128x128x8x8x8 --ms 150 ${SGMAT:+--sgmat $SGMAT} 2>&1 | tee "$out/sgmat_bench.txt" | grep -vE "packed|scalar-loads"
echo "== cuBLAS"
timeout 60 python3 bench/torch_gemm.py 4096 8192
