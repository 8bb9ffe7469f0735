#!/usr/bin/env bash
# Builds wgtensor and runs every test: the full suite (core + WebGPU conformance on the
# machine's adapter, in CI Mesa's lavapipe; the Python module's pytest suite, ctest `python`;
# the install of the package and a project built against it, ctest `install_consumer`),
# the core tests again under
# AddressSanitizer + UBSan, and the thread tests (core + WebGPU) under ThreadSanitizer.
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
