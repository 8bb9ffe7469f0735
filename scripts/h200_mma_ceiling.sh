#!/usr/bin/env bash
# On the H200 (device tool, < 2 minutes): the ceiling of tensor-core issue through Dawn's
# subgroup matrices, the bound on #20's f16 GEMM target. Ablation 5 of the subgroup-matrix
# matmul keeps only the MMAs and the K loop (fragments loaded once before it, no fetch, no
# staging: wrong results by design), so its rate is what any kernel built on this loop can
# reach on this driver. Swept over tiles that change the subgroups per workgroup (4, 8)
# and the accumulators per subgroup (4, 8, 16), 4096^3 and 8192^3, nn, Debian's Dawn; the
# real kernel's default and cuBLAS in the same run. Outputs under $OUT.
set -uo pipefail
[ -n "${DAWN_DEBIAN_LIB:-}" ] || source scripts/device_unpack.sh
out=${OUT:-/tmp}
export WGT_DAWN="$DAWN_DEBIAN_LIB"
tiles=${TILES:-64x64x32x2x2,128x64x32x4x2,128x128x32x4x2,128x128x32x4x4,128x256x16x4x4,256x128x16x4x4}
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 200 bench_webgpu_matmul --dtype f16 --layout nn --shapes 4096x4096x4096,8192x8192x8192 --ms 100 \
  --sgmat "$tiles" --sg-variants wide --ablate 5 --ablate-tiles > "$out/mma_ceiling.txt" 2>&1
echo "rc $?"; grep -E "ablate=5" "$out/mma_ceiling.txt" | cut -c1-200
echo "== the real kernel, default tile"
timeout 60 bench_webgpu_matmul --dtype f16 --layout both --shapes 4096x4096x4096,8192x8192x8192 --ms 100 \
  --sgmat "" --sg-variants wide 2>&1 | tee "$out/mma_default.txt" | grep -iE "sgmat|tflop" | head -10
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
echo "== cuBLAS"
timeout 60 python3 bench/torch_gemm.py 4096 8192 2>&1 | tail -6
