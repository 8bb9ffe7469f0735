#!/usr/bin/env bash
# On the H200 machine (device tool): the summary of BENCHMARKS.md (model benchmarks against
# PyTorch, and the CPU op-vs-kernel rows of bench_cpu on that host). Expects the payload
# of scripts/device_pack.sh and the .gl loader debs (see BENCHMARKS.md for the whole recipe).
set -uo pipefail
source scripts/device_unpack.sh
nvidia-smi -L
wgt info | head -4
out=${OUT:-/tmp}
echo "== gold fixture on the device"
WGT_TEST_FIXTURES=$PWD/.devcarry/fixtures wgt_webgpu_tests --gtest_filter='ModelGold*' 2>&1 | tail -3
for spec in ${WGT_BENCH_MODELS:-llama2-7b:q4_0 llama3-8b:q4_k llama2-7b:f16 llama2-7b:q8_0 llama2-7b:q6_k llama3.2-1b:q4_0}; do
  shape=${spec%%:*}; type=${spec##*:}
  echo "== wgt bench --synthetic $shape --type $type"
  timeout 300 wgt bench --synthetic "$shape" --type "$type" -p 512 -n 128 -d 512 -r 3 -q 2>&1 | tee -a "$out/wgt_bench.txt"
done
echo "== PyTorch (HF transformers fp16) in the same run"
timeout 240 python3 bench/torch_llm.py 2>&1 | tee "$out/torch_llm.txt"
echo "== CPU ops on fresh outputs vs their kernels (bench_cpu, cpu-fast, $(nproc) cores)"
timeout 300 bench_cpu --benchmark_filter='(Op|Cold|Kernel)(Add|Exp|MatmulOut)F32/1' 2>&1 | tee "$out/bench_cpu.txt"
