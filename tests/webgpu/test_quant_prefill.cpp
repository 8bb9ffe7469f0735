// The quantized prefill (qmatmul_t with M > 4 rows) on subgroup matrices: x rounded to f16
// with a power-of-two scale per row (q_x_f16.wgsl), W decoded to f16 as it is staged
// (q_matmul_sgmat.wgsl), f32 accumulation. Every format, partial tiles both ways, K of one and
// of several chunks, rows whose magnitudes lie far outside f16's range (1e30, 1e-30), zero
// rows, NaN and inf. Each output is checked against the CPU within the bound that f16 operands
// allow (derived below), not a loosened f32 tolerance. On an adapter with f16 subgroup
// matrices (the H200 under Debian's Dawn; sid's lavapipe, scripts/test_sgmat_cpu.sh) every case
// must run on them; elsewhere the same cases check that the plan falls back to the tiled
// kernel and still agrees.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "webgpu/plans/qmatmul_plan.hpp"
#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

namespace wgt::webgpu {
QMatmulPlan last_qprefill_plan_for_testing();  // src/webgpu/kernels/quant.cpp
}

using namespace wgt;

namespace {

constexpr QType kAll[] = {QType::Q8_0, QType::Q4_0, QType::Q4_1, QType::Q5_0, QType::Q5_1, QType::Q4_K, QType::Q5_K, QType::Q6_K};

std::vector<float> randn(int64_t n, uint32_t seed, float sd) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.f, sd);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = g(rng);
  return v;
}

class QuantPrefillWebGPU : public wgt::testing::WebGpuTest {
 protected:
  void SetUp() override {
    WebGpuTest::SetUp();
    Policy p = saved_;
    p.mode = PolicyMode::Auto;
    p.allow_fallback = false;
    p.min_gpu_work = std::numeric_limits<double>::infinity();  // host calls: the CPU oracle
    Runtime::get().set_policy(p);
    webgpu::set_kernel_tuning_override(std::nullopt);  // the default: sgmat where available
    tc_ = wgt::testing::adapter_has_f16_matrices();
  }
  void TearDown() override {
    webgpu::set_kernel_tuning_override(std::nullopt);
    WebGpuTest::TearDown();
  }

  // y = x W^T on the device against the CPU. The bound per output y[m, n]: x and the decoded
  // weight are each rounded to f16 (relative error <= u = 2^-11 where normal, so one product
  // is off by <= (2u + u^2) |x_k w_k|); values whose scaled x falls below f16's normal range
  // lose at most 2^-25 of the row's scale 2^e (< max|x_m| 2^-39 in x's units); the two f32
  // sums (device and CPU, in different orders) differ by <= 2 K 2^-24 sum |x_k w_k|; and the
  // decode's f32 arithmetic, in another order than the CPU's, by 2^-22 of the row's largest
  // |w| per term. Non-finite outputs must match the CPU's class (NaN, +inf, -inf).
  void check(QType t, const Tensor& x, int64_t N, uint32_t seed, const std::string& what) {
    const int64_t M = x.size(0), K = x.size(1);
    const QTensor w = quantize(Tensor::from_vector(randn(N * K, seed, 0.05f), {N, K}), t);
    const auto want = qmatmul_t(x, w).to_vector<float>();
    const Tensor yg = qmatmul_t(x.to(Device::webgpu()), w.to(Device::webgpu()));
    ASSERT_EQ(Runtime::get().last_decision().backend, "webgpu:0") << what;
    const webgpu::QMatmulPlan plan = webgpu::last_qprefill_plan_for_testing();
    EXPECT_EQ(plan.shader.kernel == webgpu::QMatmulKernel::SgMat, tc_)
        << what << ": ran " << plan.kernel_name() << (tc_ ? " (the adapter has f16 subgroup matrices)" : "");
    ASSERT_EQ(yg.shape(), (Shape{M, N})) << what;
    const auto got = yg.cpu().to_vector<float>();
    const auto wf = dequantize(w).to_vector<float>();
    const auto xv = x.contiguous().to_vector<float>();
    const double u = std::ldexp(1.0, -11);
    for (int64_t m = 0; m < M; ++m) {
      double xmax = 0;
      for (int64_t k = 0; k < K; ++k)
        if (std::isfinite(xv[m * K + k])) xmax = std::max(xmax, std::fabs(double(xv[m * K + k])));
      for (int64_t n = 0; n < N; ++n) {
        const size_t i = static_cast<size_t>(m * N + n);
        const double g = got[i], e = want[i];
        if (!std::isfinite(e)) {
          ASSERT_EQ(std::isnan(g), std::isnan(e)) << what << " m=" << m << " n=" << n << ": got " << g << ", want " << e;
          if (!std::isnan(e)) {
            ASSERT_EQ(g, e) << what << " m=" << m << " n=" << n;
          }
          continue;
        }
        double sum_abs = 0, wmax = 0;
        for (int64_t k = 0; k < K; ++k) {
          sum_abs += std::fabs(double(xv[m * K + k]) * wf[n * K + k]);
          wmax = std::max(wmax, std::fabs(double(wf[n * K + k])));
        }
        const double bound = (2 * u + u * u + 2.0 * K * std::ldexp(1.0, -24)) * sum_abs +
                             K * xmax * (std::ldexp(wmax, -22) + std::ldexp(wmax, -38));
        ASSERT_LE(std::fabs(g - e), bound) << what << " m=" << m << " n=" << n << ": got " << g << ", want " << e;
      }
    }
  }

  bool tc_ = false;
};

// Partial M and N tiles, K of one block (Q8_0/Q4_x: 32 elements) up to several chunks, and odd
// N (scalar stores) beside N % 4 == 0 (vector stores).
TEST_F(QuantPrefillWebGPU, EveryFormatAgreesWithinF16Bound) {
  for (QType t : kAll) {
    const int64_t bk = qtype_info(t).block_elems;
    const int64_t ks[] = {bk, bk == 32 ? int64_t{288} : int64_t{512}};
    for (int64_t K : ks)
      for (const auto& mn : {std::pair<int64_t, int64_t>{5, 7}, {17, 36}, {70, 130}}) {
        const auto [M, N] = mn;
        const Tensor x = Tensor::from_vector(randn(M * K, static_cast<uint32_t>(M + K), 1.f), {M, K});
        check(t, x, N, static_cast<uint32_t>(N + K),
              std::string(qtype_name(t)) + " M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K));
        if (HasFatalFailure()) return;
      }
  }
}

// Rows far outside f16's range keep their relative accuracy (the per-row scale), a zero row
// stays zero, and NaN / inf in x give the CPU's NaN / inf outputs.
TEST_F(QuantPrefillWebGPU, RowScalesNonFiniteAndZeroRows) {
  const int64_t M = 9, K = 256, N = 12;
  auto v = randn(M * K, 5, 1.f);
  for (int64_t k = 0; k < K; ++k) {
    v[0 * K + k] *= 1e30f;   // f16 alone would overflow to inf
    v[1 * K + k] *= 1e-30f;  // and underflow to 0
    v[2 * K + k] = 0.f;      // all zero
    v[3 * K + k] *= 7e4f;    // just beyond f16's largest finite value
  }
  v[4 * K + 17] = std::numeric_limits<float>::quiet_NaN();
  v[5 * K + 3] = std::numeric_limits<float>::infinity();
  v[6 * K + 200] = -std::numeric_limits<float>::infinity();
  v[7 * K + 9] = 3e38f;  // one huge value: the rest of its row falls far below it
  for (QType t : {QType::Q4_0, QType::Q8_0, QType::Q6_K}) {
    check(t, Tensor::from_vector(v, {M, K}), N, 77, std::string("edge rows ") + qtype_name(t));
    if (HasFatalFailure()) return;
  }
}

// WGT_QMATMUL_SGMAT=off (the tuning's prefill_sgmat = false) always runs the f32 tiled
// kernel, which matches the CPU to f32 rounding.
TEST_F(QuantPrefillWebGPU, TilingSwitchForcesTheTiledKernel) {
  webgpu::KernelTuning k;
  k.qmatvec.prefill_sgmat = false;
  webgpu::set_kernel_tuning_override(k);
  const int64_t M = 6, K = 256, N = 8;
  const QTensor w = quantize(Tensor::from_vector(randn(N * K, 3, 0.05f), {N, K}), QType::Q4_K);
  const Tensor x = Tensor::from_vector(randn(M * K, 4, 1.f), {M, K});
  const auto want = qmatmul_t(x, w).to_vector<float>();
  const auto got = qmatmul_t(x.to(Device::webgpu()), w.to(Device::webgpu())).cpu().to_vector<float>();
  EXPECT_EQ(webgpu::last_qprefill_plan_for_testing().shader.kernel, webgpu::QMatmulKernel::Tiled);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * std::max(1.f, std::fabs(want[i]))) << i;
}

}  // namespace
