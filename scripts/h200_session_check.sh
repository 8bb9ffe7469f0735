#!/usr/bin/env bash
# On the H200 (device tool), one call: both Dawn engines, the WebGPU suite, decode, f16 matmul,
# sparse and algebra benchmarks against PyTorch. Outputs under $OUT.
set -uo pipefail
source scripts/device_unpack.sh
out=${OUT:-/tmp}
export WGT_TEST_FIXTURES=$PWD/.devcarry/fixtures
echo "== engines"; wgt info 2>&1 | head -6
WGT_DAWN="$DAWN_DEBIAN_LIB" wgt info > "$out/info_debian.txt" 2>&1; grep -iE "engine|abi|runtime|f16|subgroup" "$out/info_debian.txt" | head -16
echo "== WebGPU subset, Debian engine"
WGT_DAWN="$DAWN_DEBIAN_LIB" timeout 70 wgt_webgpu_tests --gtest_filter='WebGpuEngine.*:WebGPU.*:WebGpuMatmul.*:QuantBlock.*:DecodeSubmission.*:WebGpuAttentionDecode.*:ModelGold*:WebGpuSparse*' > "$out/suite_debian.txt" 2>&1; echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$out/suite_debian.txt" | head -12
echo "== decode llama2-7b q4_0 tg64 @ d512"
timeout 60 wgt bench --synthetic llama2-7b --type q4_0 -p 512 -n 64 -d 512 -r 2 -q 2>&1 | grep -E "pp|tg"
timeout 50 wgt bench --synthetic llama2-7b --type q4_0 -p 0 -n 64 -d 512 -r 2 -q --cache-type f16 2>&1 | grep -E "tg"
WGT_DAWN="$DAWN_DEBIAN_LIB" timeout 60 wgt bench --synthetic llama2-7b --type q4_0 -p 512 -n 64 -d 512 -r 2 -q 2>&1 | grep -E "pp|tg"
echo "== f16 matmul 4096^3, npm then Debian"
timeout 40 bench_webgpu_matmul --dtype f16 --layout nn --shapes 4096x4096x4096 --ms 300 2>&1 | tail -3
WGT_DAWN="$DAWN_DEBIAN_LIB" timeout 40 bench_webgpu_matmul --dtype f16 --layout nn --shapes 4096x4096x4096 --ms 300 2>&1 | tail -3
echo "== sparse"
timeout 80 bench_webgpu_sparse > "$out/sparse.txt" 2>&1; echo "rc $?"; tail -15 "$out/sparse.txt"
mkdir -p /tmp/sp && timeout 60 bench_webgpu_sparse --dump /tmp/sp > /dev/null 2>&1 && timeout 60 python3 bench/torch_sparse.py /tmp/sp 2>&1 | tail -10
echo "== WebGPU suite, npm engine"
timeout 150 wgt_webgpu_tests > "$out/suite_npm.txt" 2>&1; echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$out/suite_npm.txt" | head -12
echo "== algebra"
WGT_CPU_MODE=fast timeout 40 bench_algebra --ms 200 2>&1 | tail -14
timeout 40 python3 bench/torch_algebra.py 2>&1 | tail -10
