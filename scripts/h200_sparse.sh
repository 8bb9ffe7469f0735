#!/usr/bin/env bash
# On the H200 (device tool), one call (< 5 min) for issue 21's SpMV: the WebGPU sparse tests,
# then bench_webgpu_sparse with the automatic choice and the binned, merge-path and adaptive
# (CSR-Adaptive row blocks) SpMV schedules on all three matrices (Laplacian 2048^2, uniform
# 1M x 1M x16, R-MAT 2^22 x16) in one process, and cuSPARSE (bench/torch_sparse.py) on the
# same matrices in the same run. Outputs (text and --json records) under $OUT.
#   SCHEDULES=auto,binned,merge,adaptive (default) or any list bench_webgpu_sparse --schedule takes.
#   LANE_ENTRIES="16 32 128 256" (default): then the adaptive SpMV of R-MAT once per value of
#   WGT_SPARSE_LANE_ENTRIES (the row-block partition's serial share per lane, default 64).
set -uo pipefail
source scripts/device_unpack.sh
out=${OUT:-/tmp}
echo "== sparse tests"
timeout 120 wgt_webgpu_tests --gtest_filter='WebGpuSparse*' > "$out/sparse_tests.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |Failure" -A2 "$out/sparse_tests.txt" | head -20
echo "== SpMV by schedule"
timeout 180 bench_webgpu_sparse --spmv-only --schedule "${SCHEDULES:-auto,binned,merge,adaptive}" \
  --json "$out/sparse_spmv.json" > "$out/sparse_spmv.txt" 2>&1
echo "rc $?"; grep -E "^(spmv|laplacian|uniform|rmat)|MISMATCH" "$out/sparse_spmv.txt" | cut -c1-170
echo "== adaptive R-MAT SpMV by WGT_SPARSE_LANE_ENTRIES"
for e in ${LANE_ENTRIES:-16 32 128 256}; do
  WGT_SPARSE_LANE_ENTRIES=$e timeout 60 bench_webgpu_sparse --spmv-only --matrix rmat --schedule adaptive \
    > "$out/sparse_lane_$e.txt" 2>&1
  echo "lane entries $e: rc $? $(grep -E '^(spmv|rmat)|MISMATCH' "$out/sparse_lane_$e.txt" | cut -c1-150 | tr '\n' ' ')"
done
echo "== cuSPARSE"
mkdir -p /tmp/sp && timeout 60 bench_webgpu_sparse --dump /tmp/sp > /dev/null 2>&1 &&
  timeout 60 python3 bench/torch_sparse.py /tmp/sp --json "$out/torch_sparse.json" 2>&1 | tail -8
