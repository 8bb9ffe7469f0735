#!/usr/bin/env bash
# Builds wgtensor and runs every test: the full suite (core + WebGPU conformance on the
# machine's adapter; in CI that must be Mesa's lavapipe) under the default Dawn engine, a
# representative WebGPU subset and the CLI under Debian's Dawn engine (WGT_DAWN=debian), the
# Python module's pytest suite (ctest `python`), the install of the package and a project
# built against it (ctest `install_consumer`), the core tests again under AddressSanitizer +
# UBSan, and the thread tests (core + WebGPU) under ThreadSanitizer.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
# On CI and fresh machines without a GPU the only adapter is lavapipe: demand it, so the
# WebGPU tests can never pass on Dawn's Null backend or by skipping.
if [ "${CI:-}" = "true" ] || ! ls /dev/dri/renderD* /dev/nvidia0 >/dev/null 2>&1; then
  export WGT_REQUIRE_ADAPTER="${WGT_REQUIRE_ADAPTER:-llvmpipe}"
fi
jobs="$(nproc)"

bash scripts/build.sh
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DWGT_SANITIZE=ON -DWGT_BUILD_BENCH=OFF >/dev/null
ninja -C build-asan wgt_core_tests

echo "== core tests under ASan+UBSan =="
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L core -j "$jobs" --output-on-failure
# ThreadSanitizer: the library instrumented, the thread tests only (a small binary). Any
# report fails the run (halt_on_error, exit code 66). tsan.supp lists only reports from the
# uninstrumented Dawn / Vulkan driver, each with its reason; never our own code.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWGT_TSAN=ON -DWGT_BUILD_BENCH=OFF >/dev/null
ninja -C build-tsan wgt_thread_tests
echo "== thread tests under ThreadSanitizer =="
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$here/tsan.supp" \
  ./build-tsan/wgt_thread_tests
echo "== all tests (core, WebGPU conformance on ${WGT_REQUIRE_ADAPTER:-any real adapter}, Python, install) =="
ctest --test-dir build -j "$jobs" --output-on-failure
# The second Dawn engine (Debian's libwebgpu-dawn0: the 2026 webgpu.h ABI, on Debian 12 under
# the private glibc runtime of scripts/setup_dawn_debian.sh, entered by the programs
# themselves). A subset of the WebGPU suite that covers what differs between the engines: the
# ABI (features, instance, limits, timestamp queries, memory heaps), native f16, the packed dot
# product, reads and back-pressure, and a model end to end. A missing engine fails here with
# the loader's message (run scripts/setup_dawn_debian.sh).
debian_subset='WebGpuEngine.*:WebGPU.*:WebGpuProfile.*:WebGpuProfileFormat.*:WebGpuMatmul.F16:WebGpuMatmul.MixedF32TimesF16:WebGpuMatmul.GemvVecF16:WebGpuMatmul.RejectsWhatItCannotRun:WebGpuReduce.HalfPrecision:QuantBlock.*:ModelGoldWebGPU.*:WebGpuAttentionDecode.LargeScoresStayFinite:DecodeSubmission.*:WebGpuBackPressure.*'
echo "== WebGPU subset and CLI under the Debian Dawn engine (WGT_DAWN=debian) =="
WGT_DAWN=debian ./build/wgt_webgpu_tests --gtest_filter="$debian_subset"
info="$(WGT_DAWN=debian ./build/wgt info)"
grep -q '^dawn: engine debian' <<<"$info" || { echo "wgt info does not report the Debian engine:" >&2; echo "$info" >&2; exit 1; }
WGT_DAWN=debian ./build/wgt demo >/dev/null
# The subgroup-matrix kernels (f16 GEMM, quantized prefill, flash-attention prefill) on sid's
# lavapipe under the Debian engine, where Vulkan cooperative matrices run on the CPU (8x8x8
# fragments): the only place besides an NVIDIA GPU where they run. The script stops if the adapter offers none, so these
# tests never pass on the fallback kernels unnoticed; a missing lavapipe fails here with its
# message (run scripts/setup_lavapipe_sid.sh).
echo "== subgroup-matrix kernels on sid's lavapipe (WGT_DAWN=debian) =="
scripts/test_sgmat_cpu.sh ./build/wgt_webgpu_tests --gtest_filter='WebGpuMatmulSgMat.*:QuantPrefillWebGPU.*:QuantBlock.*:WebGpuAttentionPrefillSg.*'
