#!/usr/bin/env bash
# On the H200 (device tool), the first call of a device session (< 8 minutes): the whole WebGPU
# suite under both Dawn engines, the prefill attention on subgroup matrices, then the
# kernels part of the benchmark suite. Every log and the suite's records go into one tarball,
# $OUT/check.tgz (the device tool brings back only a few files per call); the console shows the
# verdicts. Then, here: tar xzf check.tgz, python3 bench/bench_table.py bench-kernels ... --write.
set -uo pipefail
source scripts/device_unpack.sh
export WGT_TEST_FIXTURES=$PWD/.devcarry/fixtures
res=$(mktemp -d)
deb=(env "WGT_DAWN=$DAWN_DEBIAN_LIB")
suite() {  # name, command prefix...: the whole suite, then its verdict lines
  local name=$1; shift
  timeout 170 "$@" wgt_webgpu_tests > "$res/suite_$name.txt" 2>&1
  echo "== suite under $name: rc $?"
  grep -E "^\[  (PASSED|FAILED) |tests ran" "$res/suite_$name.txt" | head -12
}
suite npm env
suite debian "${deb[@]}"
echo "== prefill attention on subgroup matrices, Debian engine"
"${deb[@]}" timeout 60 wgt_webgpu_tests --gtest_filter='WebGpuAttentionPrefillSg.*' \
  > "$res/fa.txt" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |element 0" "$res/fa.txt" | head -10
OUT=$res bash scripts/bench_suite.sh --part kernels 2>&1 | grep -E "done in|failed"
tar czf "${OUT:-/tmp}/check.tgz" -C "$res" .
