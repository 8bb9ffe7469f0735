// The WebGPU FFT (plans/fft_plan.cpp, kernels/fft.cpp, shaders/fft_local.wgsl) against the CPU
// reference on the same random inputs, run without fallback so every result is the device's:
// direct mixed-radix, four-step and Bluestein lengths, batches, non-last axes, strided views
// (folded and compacted), rfft / irfft and their round trips, Parseval, the norm modes,
// NaN / inf, empty and size-1 inputs, c64 transfers, and the typed refusal of lengths the
// kernels do not cover.
#include <cmath>
#include <complex>
#include <cstring>
#include <random>

#include "fft_test_support.hpp"

namespace wgt {
namespace {

using namespace fft_test;

TEST_F(WebGpuFft, LengthsOfEveryAlgorithmMatchReference) {
  // Direct (mixed radix; powers of two on the Stockham kernel), four-step (2^14) and Bluestein
  // (17, 97, 1009) lengths.
  for (int64_t n : {1, 2, 3, 5, 7, 8, 12, 17, 97, 100, 1009, 4096, 16384}) {
    const int64_t batch = n >= 4096 ? 2 : 3;
    Tensor x = randc({batch, n}, static_cast<uint32_t>(n));
    compare(x, [](const Tensor& t) { return fft(t); }, n, "fft " + std::to_string(n));
    compare(x, [](const Tensor& t) { return ifft(t); }, n, "ifft " + std::to_string(n));
  }
}

TEST_F(WebGpuFft, AxesAndStridedViews) {
  Tensor x = randc({6, 10, 5}, 7);
  // Non-last axes: lines side by side in memory.
  compare(x, [](const Tensor& t) { return fft(t, -1, 1); }, 10, "axis 1");
  compare(x, [](const Tensor& t) { return fft(t, -1, 0); }, 6, "axis 0");
  // Permuted and stepped views read through their strides.
  compare(x, [](const Tensor& t) { return fft(t.permute({2, 0, 1}), -1, -1); }, 10, "permuted");
  compare(x, [](const Tensor& t) { return fft(t.slice(1, 1, 10, 2), -1, 1); }, 5, "stepped");
  // Batch dims that do not fold into one stride: compacted first.
  compare(x, [](const Tensor& t) { return ifft(t.slice(0, 0, 6, 2).slice(1, 0, 9), -1, 2); }, 5, "compacted");
  // Four-step and Bluestein along a non-last axis.
  Tensor y = randc({16384, 2}, 8);
  compare(y, [](const Tensor& t) { return fft(t, -1, 0); }, 16384, "four-step axis 0");
  compare(randc({97, 3}, 9), [](const Tensor& t) { return ifft(t, -1, 0); }, 97, "bluestein axis 0");
}

TEST_F(WebGpuFft, RealTransformsAndRoundTrips) {
  for (int64_t n : {1, 12, 17, 16384}) {
    const std::string tag = std::to_string(n);
    Tensor x = randr({2, n}, static_cast<uint32_t>(n + 1));
    compare(x, [](const Tensor& t) { return rfft(t); }, n, "rfft " + tag);
    // irfft of a spectrum whose zero (and Nyquist) entries have imaginary parts to ignore.
    Tensor h = randc({2, n / 2 + 1}, static_cast<uint32_t>(n + 2));
    compare(h, [n](const Tensor& t) { return irfft(t, n); }, n, "irfft " + tag);
    // Round trip on the device.
    use_gpu();
    Tensor xd = x.to(Device::webgpu());
    Tensor back = irfft(rfft(xd), n);
    use_cpu_reference();
    const std::vector<cd> a = values(x), b = values(back);
    ASSERT_EQ(a.size(), b.size());
    std::vector<cd> d(a.size());
    for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
    EXPECT_LE(norm2(d), 2 * tol_for(n) * norm2(a)) << "round trip " << tag;
  }
  // The real transforms along a non-last axis of a transposed view.
  compare(randr({5, 12}, 3), [](const Tensor& t) { return rfft(t.t(), -1, 0); }, 12, "rfft axis 0");
  compare(randc({7, 4}, 4), [](const Tensor& t) { return irfft(t, 12, 0); }, 12, "irfft axis 0");
}

TEST_F(WebGpuFft, ParsevalAndNormModes) {
  for (int64_t n : {97, 4096}) {
    Tensor x = randc({n}, 11).to(Device::webgpu());
    use_gpu();
    Tensor X = fft(x, -1, -1, FftNorm::Ortho);
    use_cpu_reference();
    EXPECT_NEAR(norm2(values(X)), norm2(values(x)), tol_for(n) * norm2(values(x))) << n;
  }
  for (int64_t n : {12, 1009, 16384})
    for (FftNorm m : {FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward}) {
      const std::string tag = std::to_string(n) + " norm " + std::to_string(static_cast<int>(m));
      Tensor x = randc({n}, static_cast<uint32_t>(n + 5));
      compare(x, [m](const Tensor& t) { return fft(t, -1, -1, m); }, n, "fft " + tag);
      compare(x, [m](const Tensor& t) { return ifft(t, -1, -1, m); }, n, "ifft " + tag);
    }
}

TEST_F(WebGpuFft, NanAndInfStayInTheirLineAsOnTheCpu) {
  for (int64_t n : {16, 17}) expect_nonfinite_like_cpu(n, "n " + std::to_string(n));
}

TEST_F(WebGpuFft, EmptyAndSizeOne) {
  compare(randc({4, 1}, 31), [](const Tensor& t) { return fft(t, -1, -1, FftNorm::Forward); }, 1, "n 1");
  compare(randc({1, 1}, 32), [](const Tensor& t) { return ifft(t); }, 1, "1x1");
  use_gpu();
  Tensor e = Tensor::from_vector(std::vector<c64_t>{}, {0, 8}, Device::webgpu());
  Tensor r = fft(e);
  EXPECT_EQ(r.shape(), (Shape{0, 8}));
  EXPECT_TRUE(r.device().is_webgpu());
}

TEST_F(WebGpuFft, Complex64TransfersKeepTheirBits) {
  Tensor x = randc({7, 5}, 41);
  std::vector<c64_t> v = x.to_vector<c64_t>();
  v[3].im = std::nanf("");
  v[4].re = -INFINITY;
  x = Tensor::from_vector(v, {7, 5});
  Tensor d = x.to(Device::webgpu());
  const std::vector<c64_t> back = d.cpu().to_vector<c64_t>();
  ASSERT_EQ(back.size(), v.size());
  EXPECT_EQ(std::memcmp(back.data(), v.data(), v.size() * sizeof(c64_t)), 0);
  // A strided device view comes back element for element.
  const std::vector<c64_t> tv = d.t().cpu().contiguous().to_vector<c64_t>();
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 5; ++j) {
      EXPECT_EQ(std::memcmp(&tv[static_cast<size_t>(j * 7 + i)], &v[static_cast<size_t>(i * 5 + j)], sizeof(c64_t)), 0);
    }
}

TEST_F(WebGpuFft, UncoveredLengthsFollowThePolicy) {
  // A prime above the one-workgroup Bluestein bound: refused with the length named, or run
  // on the CPU (a counted fallback) under auto.
  const int64_t n = 4099;
  Tensor x = randc({n}, 51);
  Tensor d = x.to(Device::webgpu());
  use_gpu();
  try {
    (void)fft(d);
    ADD_FAILURE() << "fft of length 4099 should be Unsupported on WebGPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("4099"), std::string::npos) << e.what();
  }
  Policy p = saved_;
  p.mode = PolicyMode::Auto;
  p.allow_fallback = true;
  Runtime::get().set_policy(p);
  const uint64_t before = Runtime::get().stats().fallbacks;
  Tensor r = fft(d);
  EXPECT_GT(Runtime::get().stats().fallbacks, before);
  use_cpu_reference();
  const std::vector<cd> want = values(fft(x)), got = values(r);
  std::vector<cd> diff(got.size());
  for (size_t i = 0; i < got.size(); ++i) diff[i] = got[i] - want[i];
  EXPECT_LE(norm2(diff), tol_for(n) * norm2(want));
}

}  // namespace
}  // namespace wgt
