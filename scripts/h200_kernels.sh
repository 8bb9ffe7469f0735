#!/usr/bin/env bash
# On the H200 (device tool), one call for this session's kernels: the subgroup-matrix f16
# matmul (Debian's Dawn), sparse (merge path) and the WebGPU FFT, each with its conformance
# tests and its PyTorch comparison in the same run. Outputs under $OUT.
set -uo pipefail
source scripts/device_unpack.sh
out=${OUT:-/tmp}
deb() { WGT_DAWN="$DAWN_DEBIAN_LIB" "$@"; }
echo "== tests (npm engine, then Debian's)"
timeout 150 wgt_webgpu_tests --gtest_filter='WebGpuSparse*:WebGpuFft*:WebGpuAlgebra*:WebGpuMatmulSgMat.*' > "$out/tests_npm.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |Failure" -A2 "$out/tests_npm.txt" | head -20
deb timeout 150 wgt_webgpu_tests --gtest_filter='WebGpuMatmul*:WebGpuSparse*:WebGpuFft*:WebGpuAlgebra*' > "$out/tests_deb.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |Failure" -A2 "$out/tests_deb.txt" | head -20
echo "== sgmat sweep (Debian)"
deb timeout 200 bench_webgpu_matmul --sweep --dtype f16 --layout both --shapes ${SHAPES:-4096x4096x4096,8192x8192x8192} \
  --tiles 128x128x8x8x8 --ms 200 ${SGMAT:+--sgmat $SGMAT} 2>&1 | tee "$out/sgmat_bench.txt" | grep -vE "packed|scalar-loads|tile="
echo "== sparse"
timeout 90 bench_webgpu_sparse > "$out/sparse.txt" 2>&1; echo "rc $?"; tail -14 "$out/sparse.txt"
timeout 60 bench_webgpu_sparse --schedule binned 2>&1 | grep -i rmat | head -4
mkdir -p /tmp/sp && timeout 60 bench_webgpu_sparse --dump /tmp/sp > /dev/null 2>&1 && timeout 60 python3 bench/torch_sparse.py /tmp/sp 2>&1 | tail -8
echo "== fft"
timeout 90 bench_algebra --fft-only --ms 300 2>&1 | tee "$out/fft.txt" | grep -i webgpu
(cd bench && timeout 90 python3 torch_algebra.py 2>&1 | grep -i fft)
