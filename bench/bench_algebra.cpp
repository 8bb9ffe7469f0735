// Benchmark of the tensor-algebra ops (docs/algebra.md) against the plain matmul on the same
// shapes, complex64 matmul beside the f32 one (its rate counting four real products per
// complex one, both algorithms forced and the plan's choice), and of the FFTs. Per case: wall
// ms per call and the rate.
//   bench_algebra [--ms 300] [--no-fft] [--fft-only] [--small] [--json FILE]
// --small: the same kinds of case at sizes a software adapter runs in seconds (the pipeline
// check of scripts/bench_suite.sh --smoke), no chains; not figures to compare.
// --json appends records (bench/bench_json.hpp): "rate" in GFLOP/s per case (and "pct_of_matmul"
// or "pct_of_f32" beside a comparison), "gpu_time" in ms for the WebGPU FFTs; bench/torch_algebra.py
// writes the PyTorch cases under the same names.
// Contractions run on WebGPU device tensors (auto policy: the lowering's MatMul and copies).
// FFTs: on WebGPU device tensors (batched c64 of 256 MiB at n = 4096, 2^20 and the Bluestein
// length 1009; wall and batch GPU time, and the bandwidth of one read and one write of the
// data; each on the Stockham and the local kernel), then on host tensors under the current CPU mode (WGT_CPU_MODE=fast: FFTW).
// bench/torch_algebra.py prints the PyTorch CUDA figures of the same cases.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench_json.hpp"
#include "bench_timing.hpp"
#include "webgpu/kernels/complex.hpp"
#include "webgpu/plans/tuning.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

double g_ms = 300;
bool g_small = false;

double time_ms(const std::function<void()>& fn) {
  bench::TimingOptions o;
  o.target_ms = g_ms;
  o.gpu = false;
  return bench::time_calls(fn, o).wall_s * 1e3;
}

// `tag`: the case's name in the --json records ("" = none); `engine`: cpu for host tensors.
void report(const char* what, double ms, double flops, double base_ms = -1, const std::string& tag = "",
            const std::string& engine = "") {
  std::printf("%-58s %9.3f ms %9.1f GFLOP/s", what, ms, flops / ms / 1e6);
  if (base_ms > 0) std::printf("   %5.1f%% of matmul", 100.0 * base_ms / ms);
  std::printf("\n");
  if (tag.empty()) return;
  bench::emit(bench::Record("algebra", tag, "rate", "GFLOP/s", flops / ms / 1e6).on(engine).with("ms", ms));
  if (base_ms > 0) bench::emit(bench::Record("algebra", tag, "pct_of_matmul", "%", 100.0 * base_ms / ms).on(engine));
}

// "[b,m,k]x[.,k,n]": a contraction's shape in the records (torch_algebra.py writes the same).
std::string shape_tag(int64_t b, int64_t m, int64_t n, int64_t k) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%lld,%lld,%lld]x[.,%lld,%lld]", (long long)b, (long long)m, (long long)k, (long long)k,
                (long long)n);
  return buf;
}

// re + i im on the device, both parts uniform in [-1, 1].
Tensor rand_c64(const Shape& s, uint64_t seed, Device dev) {
  const Tensor i = Tensor::from_vector(std::vector<c64_t>{{0.0f, 1.0f}}, {}).to(dev);
  return add(cast(rand_uniform(s, seed, -1, 1, DType::F32, dev), DType::C64),
             mul(cast(rand_uniform(s, seed + 1000, -1, 1, DType::F32, dev), DType::C64), i));
}

// c64 matmul next to f32 matmul of one shape: the rate counts 8 flops per complex multiply-add
// (four real products and their sums), so "% of f32 rate" is 4 t_f32 / t_c64.
void complex_matmul(Device dev, int64_t b, int64_t m, int64_t n, int64_t k, double f32_ms) {
  const Tensor a = rand_c64({b, m, k}, 21, dev), bb = rand_c64({b, k, n}, 22, dev);
  const double flops = 8.0 * b * m * n * k;
  const std::pair<webgpu::ComplexAlgo, const char*> algos[] = {
      {webgpu::ComplexAlgo::Auto, "plan's choice"}, {webgpu::ComplexAlgo::FourMult, "4 products"},
      {webgpu::ComplexAlgo::ThreeMult, "3 products"}};
  for (const auto& [algo, label] : algos) {
    webgpu::KernelTuning t = webgpu::kernel_tuning_from_settings();
    t.matmul.c64 = algo;
    webgpu::set_kernel_tuning_override(t);
    const double ms = time_ms([&] { (void)matmul(a, bb); });
    char name[128];
    std::snprintf(name, sizeof name, "  c64 matmul, %s (%s)", label, webgpu::complex_last_plan().c_str());
    std::printf("%-58s %9.3f ms %9.1f GFLOP/s   %5.1f%% of f32 rate\n", name, ms, flops / ms / 1e6, 400.0 * f32_ms / ms);
    const std::string tag = "c64 matmul " + shape_tag(b, m, n, k) + " " +
                            (algo == webgpu::ComplexAlgo::Auto ? "plan" : algo == webgpu::ComplexAlgo::FourMult ? "4mult" : "3mult");
    bench::emit(bench::Record("algebra", tag, "rate", "GFLOP/s", flops / ms / 1e6)
                    .with("pct_of_f32", 400.0 * f32_ms / ms).with("plan", webgpu::complex_last_plan()));
  }
  webgpu::set_kernel_tuning_override(std::nullopt);
}

void contractions(Device dev) {
  struct Case { int64_t b, m, n, k; };
  const std::vector<Case> cases = g_small ? std::vector<Case>{{1, 128, 128, 128}, {4, 64, 64, 64}}
                                          : std::vector<Case>{{1, 4096, 4096, 4096}, {16, 1024, 1024, 1024}, {64, 256, 256, 512}};
  for (Case c : cases) {
    const double flops = 2.0 * c.b * c.m * c.n * c.k;
    Tensor a = rand_uniform({c.b, c.m, c.k}, 1, -1, 1, DType::F32, dev);
    Tensor b = rand_uniform({c.b, c.k, c.n}, 2, -1, 1, DType::F32, dev);
    // The same operands stored with the batch axis in the middle: permuted views, no copy.
    Tensor a_mbk = rand_uniform({c.m, c.b, c.k}, 3, -1, 1, DType::F32, dev);
    char name[128];
    const double base = time_ms([&] { (void)matmul(a, b); });
    std::snprintf(name, sizeof name, "matmul       [%lld,%lld,%lld]x[.,%lld,%lld]", (long long)c.b, (long long)c.m,
                  (long long)c.k, (long long)c.k, (long long)c.n);
    const std::string st = shape_tag(c.b, c.m, c.n, c.k);
    report(name, base, flops, -1, "matmul f32 " + st);
    complex_matmul(dev, c.b, c.m, c.n, c.k, base);
    DotGeneralPlan plan = prepare(TensorSpec::of(a), TensorSpec::of(b), {{0}, {0}, {2}, {1}});
    report("  dot_general (prepared) bmk,bkn->bmn", time_ms([&] { (void)plan(a, b); }), flops, base,
           "dot_general prepared bmk,bkn->bmn " + st);
    report("  dot_general mbk,bkn->bmn (batch axis in the middle)",
           time_ms([&] { (void)dot_general(a_mbk, b, {{1}, {0}, {2}, {1}}); }), flops, base, "dot_general mbk,bkn->bmn " + st);
    EinsumPlan ep = prepare_einsum("bmk,bkn->bmn", {TensorSpec::of(a), TensorSpec::of(b)});
    report("  einsum (prepared) bmk,bkn->bmn", time_ms([&] { (void)ep({a, b}); }), flops, base, "einsum prepared bmk,bkn->bmn " + st);
    report("  einsum bkn,bmk->bmn (operands swapped)", time_ms([&] { (void)einsum("bkn,bmk->bmn", {b, a}); }), flops, base,
           "einsum bkn,bmk->bmn " + st);
  }
  // Chains: the contraction order matters (torch.einsum contracts left to right by default).
  if (!g_small) {
    Tensor x = rand_uniform({64, 4096}, 4, -1, 1, DType::F32, dev), w1 = rand_uniform({4096, 4096}, 5, -1, 1, DType::F32, dev);
    Tensor w2 = rand_uniform({4096, 64}, 6, -1, 1, DType::F32, dev), w3 = rand_uniform({64, 4096}, 7, -1, 1, DType::F32, dev);
    EinsumPlan ep = prepare_einsum("ij,jk,kl,lm->im", {TensorSpec::of(x), TensorSpec::of(w1), TensorSpec::of(w2), TensorSpec::of(w3)});
    report("einsum chain ij,jk,kl,lm->im [64x4096 4096^2 4096x64 64x4096]", time_ms([&] { (void)ep({x, w1, w2, w3}); }),
           2.0 * ep.cost(), -1, "einsum chain ij,jk,kl,lm->im");
    Tensor A = rand_uniform({8, 512, 64}, 8, -1, 1, DType::F32, dev), B = rand_uniform({8, 64, 512}, 9, -1, 1, DType::F32, dev);
    Tensor C = rand_uniform({8, 512, 64}, 10, -1, 1, DType::F32, dev);
    EinsumPlan e3 = prepare_einsum("bij,bjk,bkl->bil", {TensorSpec::of(A), TensorSpec::of(B), TensorSpec::of(C)});
    report("einsum chain bij,bjk,bkl->bil [8x512x64 8x64x512 8x512x64]", time_ms([&] { (void)e3({A, B, C}); }), 2.0 * e3.cost(), -1,
           "einsum chain bij,bjk,bkl->bil");
  }
  Runtime::get().synchronize();
}

// The WebGPU FFT (plans/fft_plan.cpp) on device tensors, 256 MiB of c64 per case, on each
// kernel the tuning selects (WGT_FFT_KERNEL): the Stockham kernel (the plan's choice for
// these lengths; at 2^20 also with the square 1024 x 1024 four-step split, WGT_FFT_ROW=1024)
// and the local kernel it replaced.
void webgpu_ffts(Device dev) {
  struct Case { int64_t batch, n; };
  struct Config { webgpu::FftKernel kernel; std::optional<uint32_t> row; const char* label; };
  const Config configs[] = {{webgpu::FftKernel::Stockham, std::nullopt, "stockham"},
                            {webgpu::FftKernel::Stockham, 1024, "stockham row 1024"},
                            {webgpu::FftKernel::Local, std::nullopt, "local"}};
  const std::vector<Case> cases = g_small ? std::vector<Case>{{16, 256}, {2, 1 << 12}, {16, 1009}}
                                          : std::vector<Case>{{8192, 4096}, {32, 1 << 20}, {32768, 1009}};
  for (Case c : cases) {
    std::vector<c64_t> v(static_cast<size_t>(c.batch * c.n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = {static_cast<float>(i % 17) - 8.0f, static_cast<float>(i % 13) - 6.0f};
    Tensor x = Tensor::from_vector(v, {c.batch, c.n}, dev);
    const double flops = 5.0 * c.batch * c.n * std::log2(static_cast<double>(c.n));
    const double bytes = 2.0 * 8.0 * c.batch * c.n;  // one read and one write of the data
    for (const Config& cfg : configs) {
      if (cfg.row && c.n <= 4096) continue;  // the row length matters to four-step lengths only
      webgpu::KernelTuning t = webgpu::kernel_tuning_from_settings();
      t.fft.kernel = cfg.kernel;
      t.fft.row = cfg.row;
      webgpu::set_kernel_tuning_override(t);
      bench::TimingOptions o;
      o.target_ms = g_ms;
      const bench::Timing tm = bench::time_calls([&] { (void)fft(x); }, o);
      const double ms = (tm.batch_gpu_s > 0 ? tm.batch_gpu_s : tm.wall_s) * 1e3;
      std::printf("webgpu fft c64 [%lld, %lld]%*s %-18s wall %8.3f ms  gpu %8.3f ms %9.1f GFLOP/s %7.1f GB/s\n",
                  (long long)c.batch, (long long)c.n, c.n >= 100000 ? 8 : 10, "", cfg.label, tm.wall_s * 1e3, ms,
                  flops / ms / 1e6, bytes / ms / 1e6);
      // The plan's default (the first config) is the summary table's row; the others are named.
      const std::string name = "fft c64 [" + std::to_string(c.batch) + ", " + std::to_string(c.n) + "]" +
                               (&cfg == &configs[0] ? std::string() : std::string(" ") + cfg.label);
      bench::emit(bench::Record("algebra", name, "gpu_time", "ms", ms).with("wall_ms", tm.wall_s * 1e3).with("gbs", bytes / ms / 1e6));
    }
    webgpu::set_kernel_tuning_override(std::nullopt);
  }
  Runtime::get().synchronize();
}

void ffts() {
  struct Case { int64_t batch, n; };
  // 256 MiB of c64 at n = 4096, 2^20 in one line batch of 8, and a Bluestein length.
  const std::vector<Case> cases = g_small ? std::vector<Case>{{16, 256}, {2, 1 << 12}, {16, 1009}}
                                          : std::vector<Case>{{8192, 4096}, {8, 1 << 20}, {16384, 1009}};
  for (Case c : cases) {
    std::vector<c64_t> v(static_cast<size_t>(c.batch * c.n), c64_t{1.0f, -0.5f});
    Tensor x = Tensor::from_vector(v, {c.batch, c.n});
    const double flops = 5.0 * c.batch * c.n * std::log2(static_cast<double>(c.n));
    char name[96];
    std::snprintf(name, sizeof name, "fft c64 [%lld, %lld] (5 n log2 n flops)", (long long)c.batch, (long long)c.n);
    const std::string dims = "[" + std::to_string(c.batch) + ", " + std::to_string(c.n) + "]";
    report(name, time_ms([&] { (void)fft(x); }), flops, -1, "host fft c64 " + dims, "cpu");
    Tensor r = rand_uniform({c.batch, c.n}, 11, -1, 1);
    std::snprintf(name, sizeof name, "rfft f32 [%lld, %lld]", (long long)c.batch, (long long)c.n);
    report(name, time_ms([&] { (void)rfft(r); }), flops / 2, -1, "host rfft f32 " + dims, "cpu");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!bench::json_from_args(argc, argv)) return 2;
  bool do_fft = true, only_fft = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ms") && i + 1 < argc) g_ms = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-fft")) do_fft = false;
    else if (!std::strcmp(argv[i], "--fft-only")) only_fft = true;
    else if (!std::strcmp(argv[i], "--small")) g_small = true;
    else {
      std::fprintf(stderr, "usage: bench_algebra [--ms 300] [--no-fft] [--fft-only] [--small] [--json FILE]\n");
      return 2;
    }
  }
  std::string why;
  const bool gpu = webgpu_available(&why);
  if (!gpu) std::printf("no WebGPU adapter (%s): WebGPU cases skipped\n", why.c_str());
  if (gpu && !only_fft) contractions(Device::webgpu());
  if (gpu && do_fft) webgpu_ffts(Device::webgpu());
  if (do_fft) ffts();
  return 0;
}
