// Bandwidth of the WebGPU elementwise kernels (device-resident f32): add (vec4 fast path),
// broadcast add (general strided path), transposed copy, and the per-dispatch cost of tiny
// dependent ops. Usage: bench_webgpu_elementwise [MiB per operand, default 256] [iters, 20] [--json FILE]
// (--json: records of bench/bench_json.hpp, GB/s per case and us per tiny add)
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench_json.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using Clock = std::chrono::steady_clock;

template <typename F>
double time_per_iter(int iters, F&& f) {
  f();  // warm-up: pipelines compiled, buffers pooled
  synchronize();
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) f();
  synchronize();
  return std::chrono::duration<double>(Clock::now() - t0).count() / iters;
}

int main(int argc, char** argv) {
  if (!bench::json_from_args(argc, argv)) return 2;
  const int64_t mib = argc > 1 ? std::atoll(argv[1]) : 256;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 20;
  std::string why;
  if (!webgpu_available(&why)) {
    std::fprintf(stderr, "no WebGPU adapter: %s\n", why.c_str());
    return 1;
  }
  const Device g = Device::webgpu(0);
  const int64_t n = mib * (1 << 20) / 4;
  Tensor a = rand_uniform({n}, 1, -1, 1, DType::F32, g);
  Tensor b = rand_uniform({n}, 2, -1, 1, DType::F32, g);
  const double bytes = 3.0 * n * 4;

  double t = time_per_iter(iters, [&] { Tensor c = add(a, b); });
  std::printf("add f32 contiguous  %6lld MiB x3: %8.3f ms  %7.1f GB/s\n", (long long)mib, t * 1e3, bytes / t / 1e9);
  const std::string size = " " + std::to_string(mib) + "MiB";
  bench::emit(bench::Record("elementwise", "add contiguous" + size, "wall_bandwidth", "GB/s", bytes / t / 1e9));

  const int64_t cols = 4096, rows = n / cols;
  Tensor m = a.view({rows, cols});
  Tensor row = b.slice(0, 0, cols);
  t = time_per_iter(iters, [&] { Tensor c = add(m, row); });
  std::printf("add f32 broadcast row          : %8.3f ms  %7.1f GB/s (2 streams)\n", t * 1e3, 2.0 * n * 4 / t / 1e9);
  bench::emit(bench::Record("elementwise", "add broadcast row" + size, "wall_bandwidth", "GB/s", 2.0 * n * 4 / t / 1e9));

  Tensor mt = m.t();
  t = time_per_iter(iters, [&] { Tensor c = mt.contiguous(); });
  std::printf("copy f32 transposed            : %8.3f ms  %7.1f GB/s (read+write)\n", t * 1e3, 2.0 * n * 4 / t / 1e9);
  bench::emit(bench::Record("elementwise", "copy transposed" + size, "wall_bandwidth", "GB/s", 2.0 * n * 4 / t / 1e9));

  Tensor x = full({256}, 0.0, DType::F32, g);
  Tensor one = full({256}, 1.0, DType::F32, g);
  const int deps = 10000;
  auto t0 = Clock::now();
  for (int i = 0; i < deps; ++i) x = add(x, one);
  synchronize();
  const double per = std::chrono::duration<double>(Clock::now() - t0).count() / deps;
  std::printf("dependent tiny adds            : %8.2f us each (value %g, expect %d)\n", per * 1e6,
              x.to_vector<float>()[0], deps);
  bench::emit(bench::Record("elementwise", "dependent tiny adds", "time_per_op", "us", per * 1e6));
  return 0;
}
