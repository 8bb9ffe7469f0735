// Quantized matvec on WebGPU: y = x W^T with W 14336 x 4096 (an FFN weight of an 8B model)
// packed as Q8_0 and Q4_K. Reports GB/s of packed weight bytes read per call against the
// H200's 4.17 TB/s HBM peak, after checking the result against the CPU kernel.
// Usage: bench_webgpu_qmatvec [rows=14336] [cols=4096] [iters=50]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "wgt/wgt.hpp"

using namespace wgt;

int main(int argc, char** argv) {
  const int64_t N = argc > 1 ? std::atoll(argv[1]) : 14336, K = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int iters = argc > 3 ? std::atoi(argv[3]) : 50;
  std::string why;
  if (!webgpu_available(&why)) {
    std::fprintf(stderr, "WebGPU unavailable: %s\n", why.c_str());
    return 1;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0.f, 0.02f);
  std::vector<float> wv(static_cast<size_t>(N * K)), xv(static_cast<size_t>(K));
  for (auto& v : wv) v = g(rng);
  for (auto& v : xv) v = g(rng) * 50.f;
  const Tensor w = Tensor::from_vector(wv, {N, K});
  const Tensor x = Tensor::from_vector(xv, {1, K});
  const Device gpu = Device::webgpu();
  const Tensor xg = x.to(gpu);
  constexpr double kPeakGBs = 4170.0;  // H200 HBM3e
  std::printf("%-6s %8s %8s %12s %10s %10s %8s\n", "format", "rows", "cols", "packed MB", "us/call", "GB/s", "%peak");
  for (QType t : {QType::Q8_0, QType::Q4_K}) {
    const QTensor q = quantize(w, t);
    const QTensor qg = q.to(gpu);
    pin(qg.bytes());
    // correctness first: max error against the CPU kernel, relative to the output scale
    const auto want = qmatmul_t(x, q).to_vector<float>();
    const auto got = qmatmul_t(xg, qg).cpu().to_vector<float>();
    double err = 0, scale = 1e-6;
    for (size_t i = 0; i < want.size(); ++i)
      err = std::max(err, std::fabs(double(got[i]) - want[i])), scale = std::max(scale, std::fabs(double(want[i])));
    if (!(err <= 1e-4 * scale)) {
      std::fprintf(stderr, "%s: WebGPU result differs from CPU: max err %g (scale %g)\n", qtype_name(t), err, scale);
      return 2;
    }
    for (int i = 0; i < 5; ++i) (void)qmatmul_t(xg, qg);  // warm-up (pipeline, pools)
    synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) (void)qmatmul_t(xg, qg);
    synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
    const double gbs = static_cast<double>(q.nbytes()) / s / 1e9;
    std::printf("%-6s %8lld %8lld %12.1f %10.1f %10.1f %7.2f%%\n", qtype_name(t), static_cast<long long>(N),
                static_cast<long long>(K), q.nbytes() / 1e6, s * 1e6, gbs, 100.0 * gbs / kPeakGBs);
    std::fflush(stdout);  // results survive even if teardown at exit misbehaves
    unpin(qg.bytes());
  }
  return 0;
}
