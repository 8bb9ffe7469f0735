#!/usr/bin/env bash
# On the H200 (device tool), one call (< 3 min) for the WebGPU FFT: its conformance tests on
# both kernels, bench_algebra --fft-only (each case on the Stockham kernel, at 2^20 also with
# the 1024 x 1024 split, and on the local kernel it replaced), the same with the Stockham
# kernel's radix at 16 and 4 (RADICES="16 4"; the default is 8) and with the complex exchange
# (WGT_FFT_EXCHANGE=complex; the default is split), and PyTorch's cuFFT figures for the same
# cases in the same run. Outputs under $OUT.
set -uo pipefail
source scripts/device_unpack.sh
out=${OUT:-/tmp}
echo "== FFT tests (Stockham, the default; then the local kernel)"
timeout 60 wgt_webgpu_tests --gtest_filter='WebGpuFft*:WebGpuAlgebra.Fft*' > "$out/fft_tests.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |Failure" -A2 "$out/fft_tests.txt" | head -20
WGT_FFT_KERNEL=local timeout 40 wgt_webgpu_tests --gtest_filter='WebGpuFft.*' > "$out/fft_tests_local.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |Failure" -A2 "$out/fft_tests_local.txt" | head -10
echo "== bench_algebra --fft-only"
timeout 70 bench_algebra --fft-only --ms ${MS:-150} 2>&1 | tee "$out/fft_bench.txt" | grep -i webgpu
echo "== bench_algebra --fft-only by WGT_FFT_RADIX (the Stockham kernel's points per invocation)"
for r in ${RADICES:-16 4}; do
  WGT_FFT_RADIX=$r timeout 70 bench_algebra --fft-only --ms ${MS:-150} > "$out/fft_bench_radix$r.txt" 2>&1
  echo "radix $r: rc $?"; grep -i "webgpu.*stockham" "$out/fft_bench_radix$r.txt" | head -6
done
echo "== bench_algebra --fft-only with WGT_FFT_EXCHANGE=complex (the vec2 exchange, twice the workgroup memory)"
WGT_FFT_EXCHANGE=complex timeout 70 bench_algebra --fft-only --ms ${MS:-150} > "$out/fft_bench_complex.txt" 2>&1
echo "complex: rc $?"; grep -i "webgpu.*stockham" "$out/fft_bench_complex.txt" | head -6
echo "== PyTorch cuFFT"
(cd bench && timeout 50 python3 torch_algebra.py --fft-only 2>&1 | grep -i fft | tee "$out/fft_torch.txt")
