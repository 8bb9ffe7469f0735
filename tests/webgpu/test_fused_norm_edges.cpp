// The fused RMSNorm prologues on rows that overflow a plain f32 sum of squares (|x| ~ 1e19 and
// above), against the unfused definition on the CPU reference (docs/semantics.md): the
// vector gemv of rms_norm_matmul_t and the streaming quantized matvecs of rms_norm_qmatmul_t
// (f32 x, 8-bit x, subgroup and workgroup reductions) give finite results, as
// the standalone rms_norm does, instead of zeros.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "webgpu/kernels/matmul.hpp"
#include "webgpu/plans/qmatmul_plan.hpp"
#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

namespace wgt::webgpu {
QMatmulPlan last_qmatvec_plan_for_testing();  // kernels/quant.cpp
}

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);

std::vector<float> randv(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = nd(rng);
  return v;
}

// Rows of x [4, K]: one huge element (the plain sum of squares overflows), huge values of both
// signs throughout, a row of ~1e30 (whose squares overflow everywhere), and an ordinary row.
Tensor edge_rows(int64_t K) {
  std::vector<float> x = randv(4 * K, 3, 1.f);
  x[5] = 3e19f;
  for (int64_t k = 0; k < K; k += 3) x[K + k] = (k % 2 ? -2e20f : 5e19f);
  for (int64_t k = 0; k < K; ++k) x[2 * K + k] *= 1e30f;
  return Tensor::from_vector(x, {4, K});
}

// got against want: NaN where want is NaN, else within rel of the row's largest |want|.
void expect_rows_close(const std::vector<float>& got, const std::vector<float>& want, int64_t N, double rel,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t r = 0; r < want.size() / N; ++r) {
    double scale = 0;
    for (int64_t n = 0; n < N; ++n) scale = std::max(scale, std::fabs(double(want[r * N + n])));
    for (int64_t n = 0; n < N; ++n) {
      const size_t i = r * N + n;
      ASSERT_TRUE(std::isfinite(want[i])) << what;
      EXPECT_LE(std::fabs(double(got[i]) - want[i]), rel * scale) << what << " row " << r << " col " << n
                                                                  << ": got " << got[i] << " want " << want[i];
    }
  }
}

class WebGpuFusedNormEdges : public testing::WebGpuTest {};

TEST_F(WebGpuFusedNormEdges, RmsNormMatmulHugeRows) {
  for (int64_t K : {64, 200}) {  // row strides of a multiple of 8: the vector gemv
    const int64_t N = 37;
    const Tensor x = edge_rows(K), g = Tensor::from_vector(randv(K, 4, 1.f), {K}),
                 w = Tensor::from_vector(randv(N * K, 5, 0.1f), {N, K});
    use_cpu_reference();
    const auto want = matmul_t(rms_norm(x, g, 1e-6), w).to_vector<float>();
    use_gpu();
    for (int64_t M : {1, 4}) {
      const Tensor xm = x.slice(0, 0, M);
      const auto got = rms_norm_matmul_t(xm.to(kGpu), g.to(kGpu), w.to(kGpu), 1e-6).cpu().to_vector<float>();
      const std::string v = webgpu::matmul_last_variant();
      EXPECT_NE(v.find("+norm"), std::string::npos) << "K " << K << " M " << M << ": " << v;  // the fused prologue ran
      expect_rows_close(got, std::vector<float>(want.begin(), want.begin() + M * N), N, 1e-4,
                        "K " + std::to_string(K) + " M " + std::to_string(M) + " " + v);
    }
  }
}

TEST_F(WebGpuFusedNormEdges, RmsNormQmatmulHugeRows) {
  const int64_t K = 256, N = 37;
  const Tensor x = edge_rows(K), g = Tensor::from_vector(randv(K, 4, 1.f), {K});
  struct Kernel { const char *name, *sg; double rel; };
  // The 8-bit-x kernels quantize the normalized x: a looser bound.
  for (const Kernel& kc : {Kernel{"stream", "on", 1e-4}, Kernel{"stream", "off", 1e-4}, Kernel{"i8", "on", 3e-2},
                           Kernel{"i8", "off", 3e-2}, Kernel{"i8x2", "on", 3e-2}}) {
    webgpu::KernelTuning tu;  // set in C++ (webgpu/plans/tuning.hpp)
    const std::string name = kc.name;
    tu.qmatvec.kernel = name == "stream" ? webgpu::QMatvecKernel::Stream
                        : name == "i8"   ? webgpu::QMatvecKernel::I8
                                         : webgpu::QMatvecKernel::I8x2;
    tu.qmatvec.subgroups = std::string(kc.sg) == "on";
    webgpu::set_kernel_tuning_override(tu);
    for (QType t : {QType::Q4_0, QType::Q8_0}) {
      const QTensor w = quantize(Tensor::from_vector(randv(N * K, 6, 0.05f), {N, K}), t);
      use_cpu_reference();
      const auto want = qmatmul_t(rms_norm(x, g, 1e-5), w).to_vector<float>();
      use_gpu();
      const auto got = rms_norm_qmatmul_t(x.to(kGpu), g.to(kGpu), w.to(kGpu), 1e-5).cpu().to_vector<float>();
      EXPECT_TRUE(webgpu::last_qmatvec_plan_for_testing().shader.norm) << kc.name;
      EXPECT_STREQ(webgpu::last_qmatvec_plan_for_testing().kernel_name(), kc.name);
      expect_rows_close(got, want, N, kc.rel, std::string(kc.name) + " sg " + kc.sg + " " + qtype_name(t));
    }
  }
  webgpu::set_kernel_tuning_override(std::nullopt);
}

}  // namespace
}  // namespace wgt
