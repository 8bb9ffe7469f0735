#!/usr/bin/env bash
# Runs WebGPU tests on Debian sid's lavapipe (scripts/setup_lavapipe_sid.sh) under Debian's Dawn
# (WGT_DAWN=debian, scripts/setup_dawn_debian.sh), where the subgroup-matrix (tensor-core)
# kernels run on Vulkan cooperative matrices emulated on the CPU and are checked against the
# CPU reference (docs/webgpu.md, "Subgroup matrices on the CPU").
#
# The executable is started under the private glibc 2.43 runtime's loader with lavapipe's
# libraries on its library path, as the program's own re-exec would (src/webgpu/dawn_engine.cpp),
# so nothing in the environment (no LD_LIBRARY_PATH) reaches other processes. The run stops
# before the tests if the adapter does not offer f16 subgroup matrices, since the tests would
# then pass on the fallback kernels without checking the subgroup-matrix ones.
# Usage: scripts/test_sgmat_cpu.sh [EXECUTABLE [ARGS...]]
#   default: build/wgt_webgpu_tests --gtest_filter='WebGpuMatmulSgMat.*' (BUILD_DIR overrides build/)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
lvp="$here/third_party/lavapipe-sid"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
runtime="$here/third_party/dawn-debian/usr/lib/$multiarch"
if [ ! -f "$lvp/wgt-lavapipe.txt" ] || [ ! -e "$runtime/ld-linux-x86-64.so.2" ]; then
  echo "[sgmat-cpu] needs scripts/setup_dawn_debian.sh and scripts/setup_lavapipe_sid.sh to have run" >&2
  exit 1
fi
[ $# = 0 ] && set -- "$build/wgt_webgpu_tests" --gtest_filter='WebGpuMatmulSgMat.*'
export WGT_DAWN=debian VK_DRIVER_FILES="$lvp/lvp_icd.json" VK_ICD_FILENAMES="$lvp/lvp_icd.json"
export WGT_REQUIRE_ADAPTER="${WGT_REQUIRE_ADAPTER:-llvmpipe}" XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
run() { exec "$runtime/ld-linux-x86-64.so.2" --library-path "$runtime:$lvp/usr/lib/$multiarch" "$@"; }

[ -x "$build/wgt" ] || { echo "[sgmat-cpu] $build/wgt is missing (ninja -C $build wgt)" >&2; exit 1; }
info=$( (run "$build/wgt" info) 2>&1) || { echo "$info" >&2; exit 1; }
if ! grep -q 'subgroup-matrix configs.*f16->f32' <<<"$info"; then
  echo "[sgmat-cpu] the adapter offers no f16 -> f32 subgroup matrices; wgt info says:" >&2
  echo "$info" >&2
  exit 1
fi
grep -E '^webgpu:0|driver:|subgroup-matrix configs' <<<"$info" | sed 's/^ */[sgmat-cpu] /'
run "$@"
