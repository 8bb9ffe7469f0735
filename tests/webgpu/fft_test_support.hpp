// Shared by the WebGPU FFT tests (test_fft.cpp, test_fft_stockham.cpp): random inputs, the
// comparison of a device transform with the CPU reference (no fallback allowed), and the
// error bound.
#pragma once
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "webgpu_test.hpp"

namespace wgt::fft_test {

using cd = std::complex<double>;

inline Tensor randc(const Shape& s, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<c64_t> v(static_cast<size_t>(n));
  for (auto& c : v) c = {u(g), u(g)};
  return Tensor::from_vector(v, s);
}

inline Tensor randr(const Shape& s, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& c : v) c = u(g);
  return Tensor::from_vector(v, s);
}

inline std::vector<cd> values(const Tensor& t) {
  std::vector<cd> out;
  if (t.dtype() == DType::C64) {
    for (c64_t v : t.cpu().to_vector<c64_t>()) out.emplace_back(v.re, v.im);
  } else {
    for (double v : cast(t.cpu(), DType::F64).to_vector<double>()) out.emplace_back(v, 0.0);
  }
  return out;
}

inline double norm2(const std::vector<cd>& v) {
  double s = 0;
  for (cd c : v) s += std::norm(c);
  return std::sqrt(s);
}

// f32 FFT error grows like log n; relative to the norm of the reference result.
inline double tol_for(int64_t n) { return 2e-6 * std::max(1.0, std::log2(static_cast<double>(n))); }

class WebGpuFft : public testing::WebGpuTest {
 protected:
  // f on a device copy of x (no fallback) and on x with the CPU reference; compared as a whole.
  template <class F>
  void compare(const Tensor& x, F f, int64_t n, const std::string& what) {
    use_cpu_reference();
    const std::vector<cd> want = values(f(x));
    Tensor dev = x.to(Device::webgpu());
    use_gpu();
    const uint64_t fallbacks = Runtime::get().stats().fallbacks;
    Tensor r = f(dev);
    EXPECT_TRUE(r.device().is_webgpu()) << what;
    EXPECT_EQ(Runtime::get().stats().fallbacks, fallbacks) << what;
    use_cpu_reference();
    const std::vector<cd> got = values(r);
    ASSERT_EQ(got.size(), want.size()) << what;
    std::vector<cd> diff(got.size());
    for (size_t i = 0; i < got.size(); ++i) diff[i] = got[i] - want[i];
    EXPECT_LE(norm2(diff), tol_for(n) * std::max(norm2(want), 1e-30)) << what;
  }
  // Injects a NaN into line 1 and an inf into line 2 of a [3, n] input and checks that every
  // output is finite exactly where the CPU reference's is (line 0 stays finite).
  void expect_nonfinite_like_cpu(int64_t n, const std::string& what) {
    Tensor x = randc({3, n}, 21);
    std::vector<c64_t> v = x.to_vector<c64_t>();
    v[static_cast<size_t>(n) + 3].re = std::nanf("");
    v[2 * static_cast<size_t>(n) + 5 % n].im = INFINITY;
    x = Tensor::from_vector(v, {3, n});
    use_cpu_reference();
    const std::vector<cd> want = values(fft(x));
    Tensor dev = x.to(Device::webgpu());
    use_gpu();
    Tensor r = fft(dev);
    use_cpu_reference();
    const std::vector<cd> got = values(r);
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
      const bool fw = std::isfinite(want[i].real()) && std::isfinite(want[i].imag());
      const bool fg = std::isfinite(got[i].real()) && std::isfinite(got[i].imag());
      ASSERT_EQ(fg, fw) << what << " [" << i << "]";
      if (i < static_cast<size_t>(n)) {
        ASSERT_TRUE(fg) << what << ": line 0 is finite [" << i << "]";
      }
    }
  }
};

}  // namespace wgt::fft_test
