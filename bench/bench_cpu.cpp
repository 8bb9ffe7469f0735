// CPU backend benchmarks: what an op costs through the public API against its kernel alone.
// BM_Op* call the public op (wgt::add, wgt::exp, wgt::matmul, wgt::softmax) under policy
// cpu-only, so every call allocates a fresh output; one call before the timed loop puts the
// process in its steady state (freed outputs back in the host cache). BM_Cold* empty the host
// cache before every call (outside the timed region), so each output is new memory and its
// first-touch page faults are timed: the cost of a process without the cache.
// BM_Kernel* run the backend's execute() on one preallocated, already-touched output.
// Arg 1 = cpu-fast, 0 = cpu-reference. Counters: FLOP/s (matmul: 2*M*N*K; elementwise: one
// per element) and bytes_per_second (bytes read + written once). Threads: WGT_NUM_THREADS
// (default: all cores).
// --json FILE appends one record per run (bench/bench_json.hpp): bench "cpu", case the
// benchmark's name without "/real_time" (e.g. BM_OpAddF32/1), metric "time" in ms; with
// --benchmark_repetitions the aggregates come too, each with its "aggregate" name.
#include <benchmark/benchmark.h>

#include <thread>

#include "bench_json.hpp"

#include "wgt/wgt.hpp"

namespace {

using namespace wgt;

constexpr int64_t kElems = 16 << 20;  // 16 Mi f32 elements (64 MiB) per output
// Matmul whose output has kElems elements and a small inner dimension, so that writing the
// output is a large part of the work and the allocation cost shows.
constexpr int64_t kOutM = 4096, kOutN = 4096, kOutK = 64;

void use_cpu(CpuMode mode) {
  Policy p = Runtime::get().policy();
  p.mode = PolicyMode::CpuOnly;
  p.cpu_mode = mode;
  Runtime::get().set_policy(p);
}
CpuMode mode_of(const benchmark::State& st) { return st.range(0) ? CpuMode::Fast : CpuMode::Reference; }
const char* mode_label(const benchmark::State& st) { return st.range(0) ? "cpu-fast" : "cpu-reference"; }

// Times `op` (which returns a fresh tensor) at steady state, or cold when `cold`.
template <class F>
void time_op(benchmark::State& st, F&& op, bool cold) {
  { Tensor warm = op(); }
  for (auto _ : st) {
    if (cold) {
      st.PauseTiming();
      host_cache_trim(0);
      st.ResumeTiming();
    }
    Tensor y = op();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  st.SetLabel(mode_label(st));
}

void elementwise_counters(benchmark::State& st, int tensors) {
  st.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(kElems), benchmark::Counter::kIsIterationInvariantRate);
  st.SetBytesProcessed(st.iterations() * tensors * kElems * 4);
}
void matmul_counters(benchmark::State& st, int64_t m, int64_t n, int64_t k) {
  st.counters["FLOP/s"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate);
  st.SetBytesProcessed(st.iterations() * (m * k + k * n + m * n) * 4);
}

void add_op(benchmark::State& st, bool cold) {
  use_cpu(CpuMode::Reference);
  Tensor a = rand_uniform({kElems}, 4), b = rand_uniform({kElems}, 5);
  use_cpu(mode_of(st));
  time_op(st, [&] { return add(a, b); }, cold);
  elementwise_counters(st, 3);
}
void exp_op(benchmark::State& st, bool cold) {
  use_cpu(CpuMode::Reference);
  Tensor x = rand_normal({kElems}, 6);
  use_cpu(mode_of(st));
  time_op(st, [&] { return exp(x); }, cold);
  elementwise_counters(st, 2);
}
void matmul_out_op(benchmark::State& st, bool cold) {
  use_cpu(CpuMode::Reference);
  Tensor a = rand_normal({kOutM, kOutK}, 7), b = rand_normal({kOutK, kOutN}, 8);
  use_cpu(mode_of(st));
  time_op(st, [&] { return matmul(a, b); }, cold);
  matmul_counters(st, kOutM, kOutN, kOutK);
}

void BM_OpAddF32(benchmark::State& st) { add_op(st, false); }
void BM_ColdAddF32(benchmark::State& st) { add_op(st, true); }
void BM_OpExpF32(benchmark::State& st) { exp_op(st, false); }
void BM_ColdExpF32(benchmark::State& st) { exp_op(st, true); }
void BM_OpMatmulOutF32(benchmark::State& st) { matmul_out_op(st, false); }
void BM_ColdMatmulOutF32(benchmark::State& st) { matmul_out_op(st, true); }

void BM_OpMatmulF32(benchmark::State& st) {
  const int64_t n = 1024;
  use_cpu(CpuMode::Reference);
  Tensor a = rand_normal({n, n}, 1), b = rand_normal({n, n}, 2);
  use_cpu(mode_of(st));
  for (auto _ : st) {
    Tensor c = matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  matmul_counters(st, n, n, n);
  st.SetLabel(mode_label(st));
}

void BM_OpSoftmaxF32(benchmark::State& st) {
  const int64_t rows = 4096, cols = 4096;
  use_cpu(CpuMode::Reference);
  Tensor x = rand_normal({rows, cols}, 3);
  use_cpu(mode_of(st));
  time_op(st, [&] { return softmax(x, -1); }, false);
  st.SetBytesProcessed(st.iterations() * 2 * rows * cols * 4);
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

void BM_KernelAddF32(benchmark::State& st) {
  use_cpu(CpuMode::Reference);
  OpCall call{OpKind::Binary, "add", {rand_uniform({kElems}, 4), rand_uniform({kElems}, 5)}, {}, {}};
  call.attrs.binary = BinaryOp::Add;
  run_kernel(st, call, {{kElems}, DType::F32});
  elementwise_counters(st, 3);
}

void BM_KernelExpF32(benchmark::State& st) {
  use_cpu(CpuMode::Reference);
  OpCall call{OpKind::Unary, "exp", {rand_normal({kElems}, 6)}, {}, {}};
  call.attrs.unary = UnaryOp::Exp;
  run_kernel(st, call, {{kElems}, DType::F32});
  elementwise_counters(st, 2);
}

void BM_KernelMatmulOutF32(benchmark::State& st) {
  use_cpu(CpuMode::Reference);
  OpCall call{OpKind::MatMul, "matmul", {rand_normal({kOutM, kOutK}, 7), rand_normal({kOutK, kOutN}, 8)}, {}, {}};
  run_kernel(st, call, {{kOutM, kOutN}, DType::F32});
  matmul_counters(st, kOutM, kOutN, kOutK);
}

void BM_KernelMatmulF32(benchmark::State& st) {
  const int64_t n = 1024;
  use_cpu(CpuMode::Reference);
  OpCall call{OpKind::MatMul, "matmul", {rand_normal({n, n}, 1), rand_normal({n, n}, 2)}, {}, {}};
  run_kernel(st, call, {{n, n}, DType::F32});
  matmul_counters(st, n, n, n);
}

void BM_KernelSoftmaxF32(benchmark::State& st) {
  const int64_t rows = 4096, cols = 4096;
  use_cpu(CpuMode::Reference);
  OpCall call{OpKind::Softmax, "softmax", {rand_normal({rows, cols}, 3)}, {}, {}};
  call.attrs.axis = 1;
  run_kernel(st, call, {{rows, cols}, DType::F32});
  st.SetBytesProcessed(st.iterations() * 2 * rows * cols * 4);
}

// Op, cold op and kernel side by side for the three 16 Mi-element outputs (cpu-fast), then
// the cpu-fast vs cpu-reference comparisons. The reference matmul is a double-precision
// triple loop (seconds per call): one iteration measures it, and its op figure stands for its
// kernel.
#define WGT_MS(b) BENCHMARK(b)->Unit(benchmark::kMillisecond)->UseRealTime()
WGT_MS(BM_OpAddF32)->Arg(1);
WGT_MS(BM_ColdAddF32)->Arg(1);
WGT_MS(BM_KernelAddF32)->Arg(1);
WGT_MS(BM_OpExpF32)->Arg(1);
WGT_MS(BM_ColdExpF32)->Arg(1);
WGT_MS(BM_KernelExpF32)->Arg(1);
WGT_MS(BM_OpMatmulOutF32)->Arg(1);
WGT_MS(BM_ColdMatmulOutF32)->Arg(1);
WGT_MS(BM_KernelMatmulOutF32)->Arg(1);
WGT_MS(BM_OpAddF32)->Arg(0)->Iterations(2);
WGT_MS(BM_KernelAddF32)->Arg(0)->Iterations(2);
WGT_MS(BM_OpSoftmaxF32)->Arg(1);
WGT_MS(BM_KernelSoftmaxF32)->Arg(1);
WGT_MS(BM_OpSoftmaxF32)->Arg(0)->Iterations(2);
WGT_MS(BM_KernelSoftmaxF32)->Arg(0)->Iterations(2);
WGT_MS(BM_OpMatmulF32)->Arg(1);
WGT_MS(BM_KernelMatmulF32)->Arg(1);
WGT_MS(BM_OpMatmulF32)->Arg(0)->Iterations(1);

// The console output as usual, plus the --json records.
class JsonTee : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      std::string name = r.benchmark_name();
      if (const size_t p = name.find("/real_time"); p != std::string::npos) name.erase(p, 10);
      if (!r.aggregate_name.empty()) {
        if (const size_t p = name.rfind("_" + r.aggregate_name); p != std::string::npos) name.erase(p);
      }
      wgt::bench::emit(wgt::bench::Record("cpu", name, "time", benchmark::GetTimeUnitString(r.time_unit),
                                          r.GetAdjustedRealTime())
                           .on("cpu")
                           .with("aggregate", r.aggregate_name)
                           .with("iterations", static_cast<double>(r.iterations))
                           .with("threads", static_cast<double>(std::thread::hardware_concurrency())));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (!wgt::bench::json_from_args(argc, argv)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  JsonTee reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
