// CPU backend benchmarks: cpu-fast vs cpu-reference on f32 matmul 1024^3, softmax
// 4096x4096 (last axis) and add of 16M elements. BM_Op* go through the public ops (a fresh
// output allocation per call, so first-touch page faults are included); BM_Kernel* run the
// backend's execute() on a preallocated, already-touched output (the kernel alone). Counters: FLOP/s (matmul: 2*M*N*K; add: 1 per element) and bytes_per_second
// (bytes read + written once). Threads: WGT_NUM_THREADS (default: all cores).
#include <benchmark/benchmark.h>

#include "wgt/wgt.hpp"

namespace {

using namespace wgt;

void use_cpu(CpuMode mode) {
  Policy p = Runtime::get().policy();
  p.mode = PolicyMode::CpuOnly;
  p.cpu_mode = mode;
  Runtime::get().set_policy(p);
}
CpuMode mode_of(const benchmark::State& st) { return st.range(0) ? CpuMode::Fast : CpuMode::Reference; }

void BM_OpMatmulF32(benchmark::State& st) {
  const int64_t n = 1024;
  use_cpu(CpuMode::Reference);
  Tensor a = rand_normal({n, n}, 1), b = rand_normal({n, n}, 2);
  use_cpu(mode_of(st));
  for (auto _ : st) {
    Tensor c = matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  st.counters["FLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
  st.SetBytesProcessed(st.iterations() * 3 * n * n * 4);
  st.SetLabel(st.range(0) ? "cpu-fast" : "cpu-reference");
}

void BM_OpSoftmaxF32(benchmark::State& st) {
  const int64_t rows = 4096, cols = 4096;
  use_cpu(CpuMode::Reference);
  Tensor x = rand_normal({rows, cols}, 3);
  use_cpu(mode_of(st));
  for (auto _ : st) {
    Tensor y = softmax(x, -1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  st.SetBytesProcessed(st.iterations() * 2 * rows * cols * 4);
  st.SetLabel(st.range(0) ? "cpu-fast" : "cpu-reference");
}

void BM_OpAddF32(benchmark::State& st) {
  const int64_t n = 16 << 20;
  use_cpu(CpuMode::Reference);
  Tensor a = rand_uniform({n}, 4), b = rand_uniform({n}, 5);
  use_cpu(mode_of(st));
  for (auto _ : st) {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  st.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  st.SetBytesProcessed(st.iterations() * 3 * n * 4);
  st.SetLabel(st.range(0) ? "cpu-fast" : "cpu-reference");
}

// Runs one OpCall on the chosen CPU backend with outputs allocated (and touched) once.
void run_kernel(benchmark::State& st, OpCall call, const OutSpec& out) {
  use_cpu(CpuMode::Reference);
  call.outputs = {zeros(out.shape, out.dtype)};
  Backend& be = Runtime::get().cpu_backend(mode_of(st));
  for (auto _ : st) {
    be.execute(call);
    benchmark::DoNotOptimize(call.outputs[0].data_ptr());
  }
  st.SetLabel(be.name());
}

void BM_KernelMatmulF32(benchmark::State& st) {
  const int64_t n = 1024;
  use_cpu(CpuMode::Reference);
  OpCall call{OpKind::MatMul, "matmul", {rand_normal({n, n}, 1), rand_normal({n, n}, 2)}, {}, {}};
  run_kernel(st, call, {{n, n}, DType::F32});
  st.counters["FLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
  st.SetBytesProcessed(st.iterations() * 3 * n * n * 4);
}

void BM_KernelSoftmaxF32(benchmark::State& st) {
  const int64_t rows = 4096, cols = 4096;
  use_cpu(CpuMode::Reference);
  OpCall call{OpKind::Softmax, "softmax", {rand_normal({rows, cols}, 3)}, {}, {}};
  call.attrs.axis = 1;
  run_kernel(st, call, {{rows, cols}, DType::F32});
  st.SetBytesProcessed(st.iterations() * 2 * rows * cols * 4);
}

void BM_KernelAddF32(benchmark::State& st) {
  const int64_t n = 16 << 20;
  use_cpu(CpuMode::Reference);
  OpCall call{OpKind::Binary, "add", {rand_uniform({n}, 4), rand_uniform({n}, 5)}, {}, {}};
  call.attrs.binary = BinaryOp::Add;
  run_kernel(st, call, {{n}, DType::F32});
  st.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  st.SetBytesProcessed(st.iterations() * 3 * n * 4);
}

// Arg 1 = cpu-fast, 0 = cpu-reference. The reference matmul is a double-precision triple loop
// (seconds per call): one iteration is enough to measure it.
// The reference matmul kernel is not run separately: its op figure is the kernel (seconds of
// compute against ~1 ms of allocation).
BENCHMARK(BM_OpMatmulF32)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OpMatmulF32)->Arg(0)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KernelMatmulF32)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OpSoftmaxF32)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OpSoftmaxF32)->Arg(0)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KernelSoftmaxF32)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KernelSoftmaxF32)->Arg(0)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OpAddF32)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OpAddF32)->Arg(0)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KernelAddF32)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_KernelAddF32)->Arg(0)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
