// Bandwidth benchmark of memory-bound WebGPU kernels (copy, elementwise add, softmax and
// RMSNorm over rows of 4096 f32) on large tensors, plus the end-to-end latency of a chain of
// small dependent ops. Every figure is printed only after its result was verified on samples.
//   bench_webgpu_bandwidth [--mib N (default 256)] [--iters N (default 50)] [--chain N (default 1000)]
//                          [--only copy,add,softmax,softmax_wg,rms_norm,rowsum,gemv,tiny,chain (default: all)]
//                          [--json FILE]   (records of bench/bench_json.hpp: case "<name> <MiB>MiB")
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_json.hpp"
#include "bench_timing.hpp"
#include "runtime/settings.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kPeakBytesPerS = 4.17e12;  // H200 HBM3e
constexpr int64_t kRow = 4096;

// Deterministic host data in [-1, 1) without a slow distribution object.
std::vector<float> host_data(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 1u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return v;
}

std::vector<float> download(const Tensor& t, int64_t start, int64_t count) {
  return t.flatten().slice(0, start, start + count).cpu().to_vector<float>();
}

bool close(double got, double want, double tol) { return std::fabs(got - want) <= tol * (1.0 + std::fabs(want)); }

// Times calls of `op` (bench_timing.hpp: >= 200 ms of warm-up so the clocks ramp up, then at
// least `iters` calls and >= 300 ms between two synchronize() calls); verifies the result of
// the last call before printing.
// `tag` names the case in the --json records ("" = no record).
bool measure(const char* name, const std::string& tag, double bytes_per_call, int iters, const std::function<Tensor()>& op,
             const std::function<bool(const Tensor&)>& verify) {
  Tensor out;
  bench::TimingOptions o;
  o.min_iters = iters;
  o.gpu = false;
  const bench::Timing t = bench::time_calls([&] { out = op(); }, o);
  if (!verify(out)) {
    std::printf("%-28s FAILED verification; no figure printed\n", name);
    return false;
  }
  const double bps = bytes_per_call / t.wall_s;
  std::printf("%-28s %9.1f GB/s  %5.1f%% of 4.17 TB/s  (%.2f us/call wall, host enqueue %.2f us/call, %.2f us of "
              "thread CPU, %d calls)\n", name, bps / 1e9, 100.0 * bps / kPeakBytesPerS, 1e6 * t.wall_s, 1e6 * t.host_s,
              1e6 * t.host_cpu_s, t.iters);
  if (t.batch_gpu_s > 0)
    std::printf("%-28s %9.1f GB/s  %5.1f%% of 4.17 TB/s  (batch gpu: %.2f us/call, median of %d runs (min %.2f, max "
                "%.2f) of %d calls back to back)\n", "", bytes_per_call / t.batch_gpu_s / 1e9,
                100.0 * bytes_per_call / t.batch_gpu_s / kPeakBytesPerS, 1e6 * t.batch_gpu_s, t.batch_rounds,
                1e6 * t.batch_gpu_min_s, 1e6 * t.batch_gpu_max_s, t.batch_calls);
  if (!tag.empty()) {
    bench::emit(bench::Record("bandwidth", tag, "wall_bandwidth", "GB/s", bps / 1e9)
                    .with("wall_us", 1e6 * t.wall_s).with("host_us", 1e6 * t.host_s).with("calls", t.iters));
    if (t.batch_gpu_s > 0)
      bench::emit(bench::Record("bandwidth", tag, "batch_gpu_bandwidth", "GB/s", bytes_per_call / t.batch_gpu_s / 1e9)
                      .with("batch_gpu_us", 1e6 * t.batch_gpu_s).with("min_us", 1e6 * t.batch_gpu_min_s)
                      .with("max_us", 1e6 * t.batch_gpu_max_s));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (!bench::json_from_args(argc, argv)) return 2;
  int64_t mib = 256;
  int iters = 50, chain = 1000;
  std::string only = "copy,add,softmax,softmax_wg,rms_norm,rowsum,gemv,tiny,chain";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mib") mib = std::atoll(argv[i + 1]);
    else if (a == "--iters") iters = std::atoi(argv[i + 1]);
    else if (a == "--chain") chain = std::atoi(argv[i + 1]);
    else if (a == "--only") only = argv[i + 1];
    else { std::fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  if (mib < 1 || iters < 1 || chain < 1) { std::fprintf(stderr, "--mib, --iters and --chain must be >= 1\n"); return 2; }
  std::string why;
  if (!webgpu_available(&why)) { std::fprintf(stderr, "WebGPU unavailable: %s\n", why.c_str()); return 1; }
  Policy pol = Runtime::get().policy();
  pol.mode = PolicyMode::Auto;
  pol.allow_fallback = false;  // a CPU fallback would make the figures meaningless
  Runtime::get().set_policy(pol);
  const Device gpu = Device::webgpu(0);
  const int64_t rows = std::max<int64_t>(1, mib * (int64_t{1} << 20) / 4 / kRow);
  const int64_t n = rows * kRow;
  std::printf("tensors of %lld f32 (%.0f MiB); rows of %lld\n", static_cast<long long>(n), n * 4.0 / (1 << 20),
              static_cast<long long>(kRow));
  const std::vector<float> ha = host_data(n, 1), hb = host_data(n, 2), hw = host_data(kRow, 3);
  const Tensor a = Tensor::from_vector(ha, {rows, kRow}, gpu), b = Tensor::from_vector(hb, {rows, kRow}, gpu);
  const Tensor w = Tensor::from_vector(hw, {kRow}, gpu);
  const int64_t sample_rows[] = {0, rows / 2, rows - 1};
  bool ok = true;
  // Whether `what` is one of the comma-separated names of --only.
  auto want = [&](const char* what) {
    const std::string_view list(only), name(what);
    for (size_t pos = 0; pos <= list.size();) {
      const size_t end = std::min(list.find(',', pos), list.size());
      if (list.substr(pos, end - pos) == name) return true;
      pos = end + 1;
    }
    return false;
  };

  // A case's name in the --json records: what, and the size of one operand.
  auto tag = [&](const char* what) { return std::string(what) + " " + std::to_string(mib) + "MiB"; };

  // The copy kernel is driven through the backend with a preallocated output: a plain device
  // copy, without the runtime's per-call output allocation.
  DeviceBackend* backend = Runtime::get().webgpu_backend(0);
  // Calls cycle through WGT_BENCH_COPIES (source, output) pairs, all holding the same data, so
  // a copy smaller than L2 can be measured from memory (bench_timing.hpp).
  std::vector<std::pair<Tensor, Tensor>> copy_pairs;
  if (want("copy"))
    for (int c = 0; c < bench::copies_from_env(2.0 * static_cast<double>(n) * 4); ++c)
      copy_pairs.emplace_back(c ? Tensor::from_vector(ha, {rows, kRow}, gpu) : a, Tensor::empty({rows, kRow}, DType::F32, gpu));
  size_t copy_calls = 0;
  auto copy = [&] {
    const auto& [src, dst] = copy_pairs[copy_calls++ % copy_pairs.size()];
    OpCall c{OpKind::Copy, "copy", {src}, {dst}, {}};
    backend->execute(c);
    return dst;
  };
  if (want("copy")) ok &= measure("copy", tag("copy"), 2.0 * n * 4, iters, copy, [&](const Tensor& y) {
    for (int64_t r : sample_rows) {
      auto g = download(y, r * kRow, kRow);
      for (int64_t j = 0; j < kRow; ++j) if (g[j] != ha[r * kRow + j]) return false;
    }
    return true;
  });
  if (want("add")) ok &= measure("add", tag("add"), 3.0 * n * 4, iters, [&] { return add(a, b); }, [&](const Tensor& y) {
    for (int64_t r : sample_rows) {
      auto g = download(y, r * kRow, kRow);
      for (int64_t j = 0; j < kRow; ++j) if (g[j] != ha[r * kRow + j] + hb[r * kRow + j]) return false;
    }
    return true;
  });
  auto softmax_ok = [&](const Tensor& y) {
    for (int64_t r : sample_rows) {
      auto g = download(y, r * kRow, kRow);
      const float* x = &ha[r * kRow];
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < kRow; ++j) m = std::max(m, double(x[j]));
      for (int64_t j = 0; j < kRow; ++j) s += std::exp(x[j] - m);
      for (int64_t j = 0; j < kRow; ++j) if (!close(g[j], std::exp(x[j] - m) / s, 1e-4)) return false;
    }
    return true;
  };
  if (want("softmax")) ok &= measure("softmax (rows of 4096)", tag("softmax"), 2.0 * n * 4, iters, [&] { return softmax(a); }, softmax_ok);
  // The same kernel with its row reductions through workgroup memory instead of subgroups.
  if (want("softmax_wg")) {
    setenv("WGT_REDUCE_SUBGROUPS", "off", 1);
    settings_reload();  // the library parses WGT_* once (runtime/settings.hpp)
    ok &= measure("softmax (rows of 4096, no subgroups)", tag("softmax_wg"), 2.0 * n * 4, iters, [&] { return softmax(a); }, softmax_ok);
    unsetenv("WGT_REDUCE_SUBGROUPS");
    settings_reload();
  }
  if (want("rms_norm")) ok &= measure("rms_norm (rows of 4096)", tag("rms_norm"), 2.0 * n * 4, iters, [&] { return rms_norm(a, w, 1e-6); }, [&](const Tensor& y) {
    for (int64_t r : sample_rows) {
      auto g = download(y, r * kRow, kRow);
      const float* x = &ha[r * kRow];
      double ss = 0;
      for (int64_t j = 0; j < kRow; ++j) ss += double(x[j]) * x[j];
      const double inv = 1.0 / std::sqrt(ss / kRow + 1e-6);
      for (int64_t j = 0; j < kRow; ++j) if (!close(g[j], x[j] * inv * hw[j], 1e-4)) return false;
    }
    return true;
  });

  // A read-mostly kernel: y = x W^T at M = 1 with W f16 [--mib MiB / 8 KiB rows, 4096] (the
  // gemv behind decode-step projections), bytes = W's. Calls cycle through copies of W so that
  // they read from memory. With batch GPU time this is the device time of one dispatch that
  // streams that many bytes: the floor of any kernel that must read them in one dispatch.
  if (want("gemv")) {
    const int64_t wrows = std::max<int64_t>(1, mib * (int64_t{1} << 20) / 2 / kRow);
    const std::vector<float> hx = host_data(kRow, 5), hwv = host_data(wrows * kRow, 6);
    const Tensor wh = cast(Tensor::from_vector(hwv, {wrows, kRow}), DType::F16);
    const Tensor xh = cast(Tensor::from_vector(hx, {1, kRow}), DType::F16).to(gpu);
    const double wbytes = 2.0 * static_cast<double>(wrows * kRow);
    std::vector<Tensor> ws;
    for (int c = 0; c < bench::copies_from_env(wbytes); ++c) ws.push_back(wh.to(gpu));
    const std::vector<float> wf = cast(wh, DType::F32).to_vector<float>(), xf = cast(xh.cpu(), DType::F32).to_vector<float>();
    size_t calls = 0;
    char name[64];
    std::snprintf(name, sizeof name, "gemv f16 %lldx%lld", static_cast<long long>(wrows), static_cast<long long>(kRow));
    ok &= measure(name, tag("gemv_f16"), wbytes, iters, [&] { return matmul_t(xh, ws[calls++ % ws.size()]); }, [&](const Tensor& y) {
      const auto g = cast(y.cpu(), DType::F32).to_vector<float>();
      for (int64_t r : {int64_t{0}, wrows / 2, wrows - 1}) {
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < kRow; ++k) {
          acc += double(xf[k]) * wf[r * kRow + k];
          mag += std::fabs(double(xf[k]) * wf[r * kRow + k]);
        }
        if (std::fabs(g[r] - acc) > 1e-2 * (1 + mag)) return false;
      }
      return true;
    });
  }
  // A read-only kernel: sum over rows of 4096 f32 (one small output per row). Calls cycle
  // through copies of the input so that they read from memory; bytes = the input's.
  if (want("rowsum")) {
    std::vector<Tensor> xs;
    for (int c = 0; c < bench::copies_from_env(static_cast<double>(n) * 4); ++c)
      xs.push_back(c ? Tensor::from_vector(ha, {rows, kRow}, gpu) : a);
    size_t calls = 0;
    ok &= measure("rowsum (rows of 4096)", tag("rowsum"), static_cast<double>(n) * 4, iters, [&] { return sum(xs[calls++ % xs.size()], {1}); },
                  [&](const Tensor& y) {
      const auto g = y.cpu().to_vector<float>();
      for (int64_t r : sample_rows) {
        double acc = 0, mag = 0;
        for (int64_t j = 0; j < kRow; ++j) { acc += ha[r * kRow + j]; mag += std::fabs(ha[r * kRow + j]); }
        if (std::fabs(g[r] - acc) > 1e-5 * (1 + mag)) return false;
      }
      return true;
    });
  }
  // One tiny dependent op per call (add of 1024 f32 to the previous result): with batch GPU
  // time, the device cost of one dispatch and its barrier with almost no work.
  if (want("tiny")) {
    const Tensor one = Tensor::from_vector(std::vector<float>(1024, 1.0f), {1024}, gpu);
    Tensor x = zeros({1024}, DType::F32, gpu);
    int64_t calls = 0;
    ok &= measure("tiny dependent add (1024 f32)", "", 3.0 * 1024 * 4, iters, [&] { ++calls; return x = add(x, one); },
                  [&](const Tensor& y) {
      const auto g = y.cpu().to_vector<float>();
      return g[0] == static_cast<float>(calls) && g[1023] == static_cast<float>(calls);
    });
  }

  // Chain of small dependent ops, end to end: launch overhead and batching, not bandwidth.
  if (want("chain")) {
    const std::vector<float> h0 = host_data(1024, 4);
    const Tensor one = Tensor::from_vector(std::vector<float>(1024, 1.0f), {1024}, gpu);
    for (int warm = 0; warm < 2; ++warm) {
      Tensor x = Tensor::from_vector(h0, {1024}, gpu);
      synchronize();
      const auto t0 = Clock::now();
      for (int i = 0; i < chain; ++i) x = add(x, one);
      const std::vector<float> got = x.cpu().to_vector<float>();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      bool good = true;
      for (int64_t j = 0; j < 1024; ++j) {
        float want = h0[j];
        for (int i = 0; i < chain; ++i) want += 1.0f;  // same f32 rounding sequence as the GPU
        good &= got[j] == want;
      }
      if (!good) { std::printf("chain of %d adds FAILED verification\n", chain); ok = false; break; }
      if (warm == 1) {
        std::printf("chain of %d dependent adds (1024 f32) + download: %.2f us/op end to end (target <= 10)\n", chain,
                    1e6 * s / chain);
        bench::emit(bench::Record("bandwidth", "chain " + std::to_string(chain) + " adds", "time_per_op", "us", 1e6 * s / chain));
      }
    }
  }
  return ok ? 0 : 1;
}
