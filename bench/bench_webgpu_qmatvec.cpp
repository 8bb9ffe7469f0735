// Quantized matmul on WebGPU, y = x W^T with W 14336 x 4096 (an FFN weight of an 8B model)
// packed as Q4_0, Q4_K, Q6_K and Q8_0:
//  * decode (M = 1): GB/s of packed weight bytes read per call against the H200's 4.17 TB/s;
//  * prefill (M = 512): TFLOP/s of the tiled quantized kernel next to the dense f16
//    matmul_t of the same shape.
// Decode is timed twice: the default kernel (the 8-bit-x matvec where the format has one)
// and WGT_QMATVEC_KERNEL=stream (f32 x), so the two are compared on the same build; an env
// value set by the caller is restored for the default run.
// Every result is checked against the CPU kernels before its line is printed (prefill on a
// sample of x rows, to keep the CPU side short).
// Timing (bench/bench_timing.hpp): 200 ms warm-up, then wall time over >= 300 ms of calls
// ("wall"), and the GPU kernel time per call from timestamp queries ("gpu", empty without
// timestamp-query). GB/s and TFLOP/s are given for both.
// Sweep mode: WGT_BENCH_SWEEP="A; B; ..." where each of A, B is a space-separated list of
// VAR=VALUE settings (e.g. "WGT_QMATVEC_KERNEL=i8x2; WGT_QMATVEC_KERNEL=i8 WGT_QMATVEC_ROWS=4"):
// per format, each setting is applied in turn, its decode result checked against the CPU and
// timed (one line each); the f32-x comparison, prefill and the dense reference are skipped, and
// every variable a setting named is restored afterwards. WGT_BENCH_FORMATS="q6_k,q8_0" limits
// the sweep to those formats.
// Usage: bench_webgpu_qmatvec [rows=14336] [cols=4096] [iters=50] [prefill_m=512] [--json FILE]
//   (--json: records of bench/bench_json.hpp, case "<format> <rows>x<cols> decode" (wall us,
//   GB/s) and "<format> <M>x<rows>x<cols> prefill" (TFLOP/s))
//   (iters: the least number of timed calls; the run lasts at least WGT_BENCH_MS = 300 ms)
//   (a small smoke run: bench_webgpu_qmatvec 256 512 2 32)
// Streaming-matvec knobs to try on the GPU: WGT_QMATVEC_ROWS=1..8 (rows per warp),
// WGT_QMATVEC_WARPS=1..8 (warps per workgroup), WGT_QMATVEC_UNROLL=1/2/4/8,
// WGT_QMATVEC_KSPLIT=1/2/4/8, WGT_QMATVEC_WAVE=0..4096, WGT_QMATVEC_SUBGROUPS=off (see
// docs/quantization.md).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <utility>
#include <vector>
#include <random>
#include <string>

#include "bench_json.hpp"
#include "bench_timing.hpp"
#include "runtime/settings.hpp"
#include "webgpu/plans/qmatmul_plan.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace wgt::webgpu {
QMatmulPlan last_qprefill_plan_for_testing();  // src/webgpu/kernels/quant.cpp: the prefill kernel that ran
}

namespace {

constexpr double kPeakGBs = 4170.0;  // H200 HBM3e

bench::Timing time_per_call(int iters, const std::function<void()>& f) {
  bench::TimingOptions o;
  o.min_iters = iters;
  return bench::time_calls(f, o);
}

// Max |got - want| relative to the largest |want|; false (and a message) above tol.
bool close(const char* what, const std::vector<float>& got, const std::vector<float>& want, double tol) {
  double err = 0, scale = 1e-6;
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = std::fabs(double(got[i]) - want[i]);
    err = std::isnan(e) ? INFINITY : std::max(err, e);
    scale = std::max(scale, std::fabs(double(want[i])));
  }
  if (err <= tol * scale) return true;
  std::fprintf(stderr, "%s: WebGPU result differs from CPU: max err %g (scale %g)\n", what, err, scale);
  return false;
}

// Rows `rows` of a [M, N] tensor, on the host.
std::vector<float> sample_rows(const Tensor& y, const std::vector<int64_t>& rows) {
  std::vector<float> out;
  for (int64_t r : rows) {
    const auto v = cast(y.slice(0, r, r + 1).cpu(), DType::F32).to_vector<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Relative tolerance of a decode result against the CPU kernel under the WGT_QMATVEC_KERNEL
// now set: the i8 kernel rounds x to 8 bits per 16 values (tests/webgpu/test_quant.cpp checks
// it against the bound of that rounding; here about 0.5% of the largest output).
double decode_tolerance() {
  const char* k = std::getenv("WGT_QMATVEC_KERNEL");
  return k && std::string(k) == "i8" ? 2e-2 : 1e-4;
}

// The settings of WGT_BENCH_SWEEP: one vector of (VAR, VALUE) per ';'-separated setting.
std::vector<std::vector<std::pair<std::string, std::string>>> parse_sweep(const char* spec) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  std::string all = spec;
  size_t pos = 0;
  while (pos <= all.size()) {
    const size_t end = std::min(all.find(';', pos), all.size());
    std::vector<std::pair<std::string, std::string>> one;
    size_t i = pos;
    while (i < end) {
      while (i < end && all[i] == ' ') ++i;
      size_t j = i;
      while (j < end && all[j] != ' ') ++j;
      if (j > i) {
        const std::string kv = all.substr(i, j - i);
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
          std::fprintf(stderr, "WGT_BENCH_SWEEP: '%s' is not VAR=VALUE\n", kv.c_str());
          std::exit(1);
        }
        one.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
      }
      i = j;
    }
    if (!one.empty()) out.push_back(one);
    pos = end + 1;
  }
  return out;
}

// Sets a setting's variables; returns the previous values (nullopt: unset) to restore.
std::vector<std::pair<std::string, std::optional<std::string>>> apply_env(
    const std::vector<std::pair<std::string, std::string>>& kvs) {
  std::vector<std::pair<std::string, std::optional<std::string>>> old;
  for (const auto& [k, v] : kvs) {
    const char* prev = std::getenv(k.c_str());
    old.emplace_back(k, prev ? std::optional<std::string>(prev) : std::nullopt);
    setenv(k.c_str(), v.c_str(), 1);
  }
  wgt::settings_reload();  // the library parses WGT_* once (runtime/settings.hpp)
  return old;
}
void restore_env(const std::vector<std::pair<std::string, std::optional<std::string>>>& old) {
  for (auto it = old.rbegin(); it != old.rend(); ++it) {
    if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1); else unsetenv(it->first.c_str());
  }
  wgt::settings_reload();
}

}  // namespace

int main(int argc, char** argv) {
  if (!bench::json_from_args(argc, argv)) return 2;
  const int64_t N = argc > 1 ? std::atoll(argv[1]) : 14336, K = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int iters = argc > 3 ? std::atoi(argv[3]) : 50;
  const int64_t PM = argc > 4 ? std::atoll(argv[4]) : 512;
  if (N <= 0 || K <= 0 || K % 256 != 0 || iters <= 0 || PM <= 4) {
    std::fprintf(stderr, "usage: %s [rows>0] [cols, a multiple of 256] [iters>0] [prefill_m>4]\n", argv[0]);
    return 1;
  }
  std::string why;
  if (!webgpu_available(&why)) {
    std::fprintf(stderr, "WebGPU unavailable: %s\n", why.c_str());
    return 1;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0.f, 0.02f);
  std::vector<float> wv(static_cast<size_t>(N * K)), xv(static_cast<size_t>(PM * K));
  for (auto& v : wv) v = g(rng);
  for (auto& v : xv) v = g(rng) * 50.f;
  const Tensor w = Tensor::from_vector(wv, {N, K});
  const Tensor xp = Tensor::from_vector(xv, {PM, K});  // prefill activations
  const Tensor x1 = xp.slice(0, 0, 1).contiguous();     // decode activation
  const std::vector<int64_t> rows = {0, PM / 2, PM - 1};  // prefill rows checked on the CPU
  const Tensor x_rows = concat({xp.slice(0, rows[0], rows[0] + 1), xp.slice(0, rows[1], rows[1] + 1),
                                xp.slice(0, rows[2], rows[2] + 1)}, 0);
  const Device gpu = Device::webgpu();
  const Tensor x1g = x1.to(gpu), xpg = xp.to(gpu);
  const int piters = std::max(1, iters / 5);
  const double flop = 2.0 * double(PM) * double(N) * double(K);

  if (const char* spec = std::getenv("WGT_BENCH_SWEEP"); spec && *spec) {
    const auto settings = parse_sweep(spec);
    std::printf("sweep: decode M=1, %lld x %lld; batch us = device time per call (pass begin/end)\n",
                static_cast<long long>(N), static_cast<long long>(K));
    // spread: max - min of the batch runs whose median is "batch us" (bench_timing.hpp)
    std::printf("%-6s %9s %9s %7s %7s %9s  %s\n", "format", "wall us", "batch us", "batch%", "spread", "host us", "setting");
    const char* only = std::getenv("WGT_BENCH_FORMATS");  // e.g. "q6_k,q8_0"; unset: all four
    for (QType t : {QType::Q4_0, QType::Q4_K, QType::Q6_K, QType::Q8_0}) {
      if (only && *only && ("," + std::string(only) + ",").find("," + std::string(qtype_name(t)) + ",") == std::string::npos)
        continue;
      const QTensor q = quantize(w, t);
      const std::vector<float> want = qmatmul_t(x1, q).to_vector<float>();
      const int copies = bench::copies_from_env(static_cast<double>(q.nbytes()));
      std::vector<QTensor> rot(static_cast<size_t>(copies));
      for (auto& r : rot) r = q.to(gpu);
      for (auto& r : rot) pin(r.bytes());
      size_t call = 0;
      const double bytes = static_cast<double>(q.nbytes());
      for (const auto& one : settings) {
        std::string label;
        for (const auto& [k, v] : one) label += k + "=" + v + " ";
        const auto old = apply_env(one);
        const bool ok = close(qtype_name(t), qmatmul_t(x1g, rot[0]).cpu().to_vector<float>(), want, decode_tolerance());
        if (!ok) {
          std::printf("%-6s FAILED verification  %s\n", qtype_name(t), label.c_str());
          restore_env(old);
          continue;
        }
        const bench::Timing tm = time_per_call(iters, [&] { (void)qmatmul_t(x1g, rot[call++ % rot.size()]); });
        std::printf("%-6s %9.1f %s %s %s %9.2f  %s\n", qtype_name(t), tm.wall_s * 1e6, bench::fmt(tm.batch_gpu_s, 1e6, 9, 1).c_str(),
                    bench::fmt(bench::rate(bytes, tm.batch_gpu_s), 100 / (kPeakGBs * 1e9), 7, 1).c_str(),
                    bench::fmt(tm.batch_gpu_s >= 0 ? tm.batch_gpu_max_s - tm.batch_gpu_min_s : -1, 1e6, 7, 1).c_str(),
                    tm.host_s * 1e6, label.c_str());
        std::fflush(stdout);
        restore_env(old);
      }
      for (auto& r : rot) unpin(r.bytes());
    }
    return 0;
  }

  // Dense f16 reference point for the prefill shape.
  double dense_tflops = 0, dense_gpu_tflops = -1;
  {
    const Tensor wh = cast(w, DType::F16).to(gpu), xh = cast(xp, DType::F16).to(gpu);
    pin(wh);
    const auto want = matmul_t(x_rows, w).to_vector<float>();
    if (!close("f16 matmul_t", sample_rows(matmul_t(xh, wh), rows), want, 2e-2)) return 2;
    const bench::Timing t = time_per_call(piters, [&] { (void)matmul_t(xh, wh); });
    dense_tflops = flop / t.wall_s / 1e12;
    dense_gpu_tflops = bench::rate(flop, t.gpu_s) / 1e12;
    unpin(wh);
  }

  std::printf("decode M=1 (GB/s of packed bytes) and prefill M=%lld (TFLOP/s; dense f16 matmul_t: %.2f wall, %s gpu)\n",
              static_cast<long long>(PM), dense_tflops, bench::fmt(dense_gpu_tflops, 1, 0, 2).c_str());
  std::printf("%%peak: of the gpu GB/s where measured, else of the wall GB/s; f32x: WGT_QMATVEC_KERNEL=stream\n");
  std::printf("%-6s %6s %6s %9s %9s %9s %7s %9s %9s %9s %7s %9s %9s %10s %10s %8s %8s %7s\n", "format", "rows", "cols",
              "packed MB", "wall us", "batch us", "batch%", "gpu us", "wall GB/s", "gpu GB/s", "%peak", "f32x wus",
              "f32x gus", "prefill ms", "pf gpu ms", "wall TF", "gpu TF", "vs f16");
  bench::Timing last;  // for the note on how the columns were measured
  std::string copies_note;
  for (QType t : {QType::Q4_0, QType::Q4_K, QType::Q6_K, QType::Q8_0}) {
    const QTensor q = quantize(w, t);
    const QTensor qg = q.to(gpu);
    pin(qg.bytes());
    const int copies = bench::copies_from_env(static_cast<double>(q.nbytes()));
    copies_note += std::string(" ") + qtype_name(t) + " " + std::to_string(copies);
    std::vector<QTensor> rot(static_cast<size_t>(copies - 1));  // extra copies cycled by decode
    for (auto& r : rot) r = q.to(gpu);
    size_t call = 0;
    auto next_w = [&]() -> const QTensor& { const size_t i = call++ % (rot.size() + 1); return i ? rot[i - 1] : qg; };
    // correctness first, against the CPU kernel
    if (!close(qtype_name(t), qmatmul_t(x1g, qg).cpu().to_vector<float>(), qmatmul_t(x1, q).to_vector<float>(),
               decode_tolerance()))
      return 2;
    // The prefill on subgroup matrices rounds x and W to f16 (u = 2^-11 each): 4u of the
    // largest output, against f32 rounding for the tiled kernel.
    const std::vector<float> prefill_rows = sample_rows(qmatmul_t(xpg, qg), rows);
    const webgpu::QMatmulPlan pplan = webgpu::last_qprefill_plan_for_testing();
    const bool f16_prefill = pplan.shader.kernel == webgpu::QMatmulKernel::SgMat;
    if (!close(qtype_name(t), prefill_rows, qmatmul_t(x_rows, q).to_vector<float>(), f16_prefill ? 2e-3 : 1e-4))
      return 2;
    const bench::Timing t1 = time_per_call(iters, [&] { (void)qmatmul_t(x1g, next_w()); });
    // the f32-x kernel, checked too, then the caller's choice again
    const auto caller = apply_env({{"WGT_QMATVEC_KERNEL", "stream"}});
    if (!close(qtype_name(t), qmatmul_t(x1g, qg).cpu().to_vector<float>(), qmatmul_t(x1, q).to_vector<float>(), 1e-4))
      return 2;
    const bench::Timing t_f32x = time_per_call(iters, [&] { (void)qmatmul_t(x1g, next_w()); });
    restore_env(caller);
    const bench::Timing tp = time_per_call(piters, [&] { (void)qmatmul_t(xpg, qg); });
    const double bytes = static_cast<double>(q.nbytes());
    const double gbs = bytes / t1.wall_s / 1e9, gpu_gbs = bench::rate(bytes, t1.gpu_s) / 1e9;
    const double tf = flop / tp.wall_s / 1e12, gpu_tf = bench::rate(flop, tp.gpu_s) / 1e12;
    std::printf("%-6s %6lld %6lld %9.1f %9.1f %s %s %s %9.1f %s %6.2f%% %9.1f %s %10.2f %s %8.2f %s %6.2fx\n", qtype_name(t),
                static_cast<long long>(N), static_cast<long long>(K), bytes / 1e6, t1.wall_s * 1e6,
                bench::fmt(t1.batch_gpu_s, 1e6, 9, 1).c_str(),
                bench::fmt(bench::rate(bytes, t1.batch_gpu_s), 100 / (kPeakGBs * 1e9), 6, 1).c_str(),
                bench::fmt(t1.gpu_s, 1e6, 9, 1).c_str(), gbs, bench::fmt(gpu_gbs, 1, 9, 1).c_str(),
                100.0 * (gpu_gbs > 0 ? gpu_gbs : gbs) / kPeakGBs, t_f32x.wall_s * 1e6,
                bench::fmt(t_f32x.gpu_s, 1e6, 9, 1).c_str(), tp.wall_s * 1e3, bench::fmt(tp.gpu_s, 1e3, 10, 2).c_str(), tf,
                bench::fmt(gpu_tf, 1, 8, 2).c_str(), dense_tflops > 0 ? tf / dense_tflops : 0.0);
    const std::string shape = std::to_string(N) + "x" + std::to_string(K);
    const std::string dcase = std::string(qtype_name(t)) + " " + shape + " decode";
    bench::emit(bench::Record("qmatvec", dcase, "wall_time", "us", t1.wall_s * 1e6)
                    .with("packed_mb", bytes / 1e6).with("host_us", t1.host_s * 1e6).with("f32x_wall_us", t_f32x.wall_s * 1e6));
    bench::emit(bench::Record("qmatvec", dcase, "wall_bandwidth", "GB/s", gbs));
    if (t1.batch_gpu_s > 0)
      bench::emit(bench::Record("qmatvec", dcase, "batch_gpu_bandwidth", "GB/s", bytes / t1.batch_gpu_s / 1e9)
                      .with("batch_gpu_us", t1.batch_gpu_s * 1e6));
    bench::emit(bench::Record("qmatvec", std::string(qtype_name(t)) + " " + std::to_string(PM) + "x" + shape + " prefill",
                              "rate", "TFLOP/s", tf).with("dense_f16_tflops", dense_tflops).with("wall_ms", tp.wall_s * 1e3)
                              .with("kernel", pplan.kernel_name()));
    std::printf("       prefill kernel: %s\n", pplan.kernel_name());
    last = t1;
    std::fflush(stdout);  // results survive even if teardown at exit misbehaves
    unpin(qg.bytes());
  }
  bench::print_gpu_note(last);
  std::printf("  (decode calls cycle through copies of each weight so that the loop reads from memory, not L2:%s; "
              "WGT_BENCH_COPIES sets the count)\n", copies_note.c_str());
  return 0;
}
