// dot_general and einsum on WebGPU against the CPU reference on the same inputs: permuted,
// sliced and broadcast device views (no fallback allowed), f16, diagonals and sums through
// the existing kernels, complex64 (run by the c64 kernels; an op they cannot run falls
// back or is refused under the policy like any op), and the FFT of device tensors on the
// device (tests/webgpu/test_fft.cpp).
#include <cmath>

#include "webgpu_test.hpp"

namespace wgt {
namespace {

class WebGpuAlgebra : public testing::WebGpuTest {
 protected:
  // Runs f on device copies with the GPU policy (no fallback) and on host copies with the CPU
  // reference; compares as f64.
  template <typename F>
  void compare(const std::vector<Tensor>& host, F f, double tol) {
    use_cpu_reference();
    std::vector<double> want = cast(f(host), DType::F64).template to_vector<double>();
    std::vector<Tensor> dev;
    for (const Tensor& t : host) dev.push_back(t.to(Device::webgpu()));
    use_gpu();
    Tensor r = f(dev);
    EXPECT_TRUE(r.device().is_webgpu());
    use_cpu_reference();
    std::vector<double> got = cast(r.cpu(), DType::F64).to_vector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << i;
  }
};

TEST_F(WebGpuAlgebra, DotGeneralViewsMatchReference) {
  Tensor a = rand_uniform({3, 5, 7, 4}, 1, -1, 1), b = rand_uniform({7, 3, 4, 6}, 2, -1, 1);
  compare({a, b}, [](const std::vector<Tensor>& t) { return dot_general(t[0], t[1], {{0}, {1}, {2, 3}, {0, 2}}); }, 1e-5);
  // Transposed and sliced operands, contraction axes in memory order opposite to the listing.
  compare({a, b}, [](const std::vector<Tensor>& t) {
    return dot_general(t[0].permute({3, 1, 0, 2}).slice(1, 0, 5, 2), t[1], {{2}, {1}, {0, 3}, {2, 0}});
  }, 1e-5);
  // Unmergeable contracting axes: one compaction on the device, same values.
  compare({rand_uniform({4, 9, 5}, 3, -1, 1), rand_uniform({4, 5, 3}, 4, -1, 1)},
          [](const std::vector<Tensor>& t) { return dot_general(t[0], t[1], {{}, {}, {0, 2}, {0, 1}}); }, 1e-5);
  // f16 storage.
  compare({cast(a, DType::F16), cast(b, DType::F16)},
          [](const std::vector<Tensor>& t) { return dot_general(t[0], t[1], {{0}, {1}, {2, 3}, {0, 2}}); }, 3e-3);
}

TEST_F(WebGpuAlgebra, EinsumMatchesReference) {
  Tensor x = rand_uniform({2, 3, 4}, 5, -1, 1), y = rand_uniform({4, 5}, 6, -1, 1), z = rand_uniform({5, 3}, 7, -1, 1);
  compare({x, y, z}, [](const std::vector<Tensor>& t) { return einsum("bij,jk,ki->b", t); }, 1e-5);
  compare({x, y}, [](const std::vector<Tensor>& t) { return einsum("...j,jk->...k", t); }, 1e-5);
  compare({rand_uniform({2, 5, 5}, 8, -1, 1)}, [](const std::vector<Tensor>& t) { return einsum("bii->b", t); }, 1e-5);
  compare({rand_uniform({3, 4}, 9, -1, 1), rand_uniform({5, 4, 6}, 10, -1, 1), rand_uniform({3, 6}, 11, -1, 1)},
          [](const std::vector<Tensor>& t) { return einsum("ik,jkl,il->ij", t); }, 1e-5);
}

TEST_F(WebGpuAlgebra, Complex64RunsOnTheDeviceAndFollowsThePolicy) {
  std::vector<c64_t> v = {{1, 2}, {3, -1}, {0, 1}, {2, 0}};
  Tensor c = Tensor::from_vector(v, {2, 2}, Device::webgpu());
  use_gpu();  // no fallback: the c64 matmul kernel runs it (tests/webgpu/test_complex.cpp)
  Tensor r = dot_general(c, c, {{}, {}, {1}, {0}});
  EXPECT_TRUE(r.device().is_webgpu());
  std::vector<c64_t> got = r.cpu().to_vector<c64_t>();
  // [[1+2i, 3-i], [i, 2]]^2 computed by hand.
  const c64_t want[4] = {{-2, 7}, {11, 3}, {-2, 3}, {5, 3}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(got[i].re, want[i].re) << i;
    EXPECT_FLOAT_EQ(got[i].im, want[i].im) << i;
  }
  // A c64 op WebGPU cannot run (an i64 result has no WGSL type): refused without fallback,
  // run on the CPU (counted) with it.
  try {
    (void)cast(c, DType::I64);
    ADD_FAILURE() << "cast to i64 on WebGPU without fallback should be Unsupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
  }
  Policy p = saved_;
  p.mode = PolicyMode::Auto;
  p.allow_fallback = true;
  Runtime::get().set_policy(p);
  const uint64_t before = Runtime::get().stats().fallbacks;
  Tensor i = cast(c, DType::I64);
  EXPECT_GT(Runtime::get().stats().fallbacks, before);
  EXPECT_EQ(i.cpu().to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 0, 2}));
}

TEST_F(WebGpuAlgebra, FftOfDeviceTensorsRunsOnTheDevice) {
  // The WebGPU FFT kernel takes the call: no fallback allowed, none counted.
  std::vector<c64_t> v = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
  Tensor x = Tensor::from_vector(v, {4}, Device::webgpu());
  use_gpu();
  const uint64_t before = Runtime::get().stats().fallbacks;
  Tensor r = fft(x);
  EXPECT_TRUE(r.device().is_webgpu());
  EXPECT_EQ(Runtime::get().stats().fallbacks, before);
  // x = exp(i pi k / 2): all energy in frequency 1.
  std::vector<c64_t> got = r.cpu().to_vector<c64_t>();
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(got[k].re, k == 1 ? 4.0 : 0.0, 1e-6) << k;
    EXPECT_NEAR(got[k].im, 0.0, 1e-6) << k;
  }
}

}  // namespace
}  // namespace wgt
