// WebGPU quantized kernels (every GGUF format) against the CPU kernels on lavapipe: matvec
// (subgroup and workgroup reductions) and tiled prefill matmul, dequantize, get_rows, NaN
// scales, typed errors. Small shapes; packed weights resident on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <array>
#include <limits>
#include <random>
#include <initializer_list>
#include <string>

#include "quant/blocks.hpp"
#include "settings_env.hpp"
#include "webgpu/plans/qmatmul_plan.hpp"
#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

// Test hook of src/webgpu/kernels/quant.cpp: the plan of this thread's last M <= 4 qmatmul_t,
// to check on the device what ran (the choice itself is tested on plan_qmatmul in
// tests/core/test_plans.cpp).
namespace wgt::webgpu {
QMatmulPlan last_qmatvec_plan_for_testing();
uint32_t known_compute_units(const std::string& adapter_name);  // device.cpp's table
}

using namespace wgt;

namespace {

const char* last_kernel() { return webgpu::last_qmatvec_plan_for_testing().kernel_name(); }
const webgpu::QMatmulShader last_shader() { return webgpu::last_qmatvec_plan_for_testing().shader; }

// The kernel tuning the launches read (webgpu/plans/tuning.hpp), set through the C++ override:
// tests change g_tuning.qmatvec with tune().
webgpu::KernelTuning g_tuning;
template <class F>
void tune(F&& change) {
  change(g_tuning.qmatvec);
  webgpu::set_kernel_tuning_override(g_tuning);
}
webgpu::QMatvecKernel kernel_named(const std::string& k) {
  return k == "i8" ? webgpu::QMatvecKernel::I8 : k == "stream" ? webgpu::QMatvecKernel::Stream : webgpu::QMatvecKernel::I8x2;
}

constexpr QType kAll[] = {QType::Q8_0, QType::Q4_0, QType::Q4_1, QType::Q5_0, QType::Q5_1, QType::Q4_K, QType::Q5_K, QType::Q6_K};
// The formats with a streaming-matvec lane shader (q*_lane.wgsl): all of them.
constexpr QType kStream[] = {QType::Q8_0, QType::Q4_0, QType::Q4_1, QType::Q5_0, QType::Q5_1, QType::Q4_K, QType::Q5_K, QType::Q6_K};
// The formats with an 8-bit-x part (q*_i8.wgsl); the others run the f32-x `stream` kernel.
bool has_i8_part(QType t) { return t == QType::Q8_0 || t == QType::Q4_0 || t == QType::Q4_K || t == QType::Q6_K; }

// Byte offset of the fp16 super-scale `d` inside a block (for the corrupted-scale tests).
size_t d_offset(QType t) {
  switch (t) {
    case QType::Q8_0: return offsetof(quant::BlockQ8_0, d);
    case QType::Q4_0: return offsetof(quant::BlockQ4_0, d);
    case QType::Q4_1: return offsetof(quant::BlockQ4_1, d);
    case QType::Q5_0: return offsetof(quant::BlockQ5_0, d);
    case QType::Q5_1: return offsetof(quant::BlockQ5_1, d);
    case QType::Q4_K: return offsetof(quant::BlockQ4_K, d);
    case QType::Q5_K: return offsetof(quant::BlockQ5_K, d);
    case QType::Q6_K: return offsetof(quant::BlockQ6_K, d);
  }
  return 0;
}

// Two K per format: a few blocks, and several loop trips of the streaming matvec with a tail
// (rows of whole 16-byte words: Q6_K's 210-byte super-blocks align every 8).
std::array<int64_t, 2> fusion_ks(QType t) {
  switch (t) {
    case QType::Q6_K: return {2048, 6144};  // 8 and 24 super-blocks
    default: return {256, 1280};            // 8 / 40 blocks; 1 / 5 super-blocks
  }
}

class QuantWebGPU : public wgt::testing::WebGpuTest {
 protected:
  void SetUp() override {
    WebGpuTest::SetUp();
    Policy p = saved_;
    p.mode = PolicyMode::Auto;
    p.allow_fallback = true;
    // Calls on host operands are the CPU oracle: the quantized ops follow the load threshold
    // like every op, so it is raised past any host call here.
    p.min_gpu_work = std::numeric_limits<double>::infinity();
    Runtime::get().set_policy(p);
    // The f32-x streaming matvec and the f32 tiled prefill unless a test picks other kernels:
    // they match the CPU to f32 rounding. The defaults (i8x2, x rounded to 8 bits; prefill on
    // subgroup matrices, f16 operands) are checked under their own bounds
    // (I8MatvecWithinXRoundingBound, test_quant_prefill.cpp).
    g_tuning = webgpu::KernelTuning{};
    tune([](webgpu::QMatvecTuning& q) {
      q.kernel = webgpu::QMatvecKernel::Stream;
      q.prefill_sgmat = false;
    });
  }
  void TearDown() override {
    webgpu::set_kernel_tuning_override(std::nullopt);
    WebGpuTest::TearDown();
    synchronize();
  }
  static std::vector<float> randn(int64_t n, uint32_t seed, float sd) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.f, sd);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = g(rng);
    return v;
  }
  static QTensor qrand(QType t, int64_t rows, int64_t cols, uint32_t seed) {
    return quantize(Tensor::from_vector(randn(rows * cols, seed, 0.05f), {rows, cols}), t);
  }
  // y = x W^T on the device (W resident) vs the CPU fast path.
  static void check_matmul(QType t, int64_t M, int64_t N, int64_t K, const char* variant) {
    const QTensor w = qrand(t, N, K, static_cast<uint32_t>(11 + N + K));
    const Tensor x = Tensor::from_vector(randn(M * K, static_cast<uint32_t>(23 + M), 1.f), {M, K});
    const auto want = qmatmul_t(x, w).to_vector<float>();
    const QTensor wg = w.to(Device::webgpu());
    ASSERT_TRUE(wg.device().is_webgpu());
    const Tensor yg = qmatmul_t(x.to(Device::webgpu()), wg);
    EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
    ASSERT_TRUE(yg.device().is_webgpu());
    ASSERT_EQ(yg.shape(), (Shape{M, N}));
    const auto got = yg.cpu().to_vector<float>();
    expect_matches_cpu(got, want, K,
                       std::string(qtype_name(t)) + " " + variant + " M=" + std::to_string(M) + " N=" + std::to_string(N));
  }
  // A device result against the CPU's for weights from qrand and x ~ N(0, 1). Scale of the
  // rounding error: the typical output magnitude (w ~ N(0,0.05): |y| ~ 0.05 sqrt(K)), not
  // max|y| alone, which cancellation can make tiny when N is 1 (seen on the H200: |y| = 0.011
  // for K = 10240, error 2.5e-6 from f32 summation order).
  static void expect_matches_cpu(const std::vector<float>& got, const std::vector<float>& want, int64_t K,
                                 const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    double scale = 0.05 * std::sqrt(double(K));
    for (float v : want) scale = std::max(scale, std::fabs(double(v)));
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 2e-5 * scale * std::sqrt(double(K) / 256)) << what << " K=" << K << " i=" << i;
  }
  // The 8-bit-x kernels against the exact product y = x W^T [M, N] (x: what the kernel
  // quantizes): each x value moves by at most per_amax * max|x of its 16-group|, so
  // |got - want| <= sum_k |w[n, k]| * amax(group of k) * per_amax, times `slack`, plus the f32
  // summation tolerance of expect_matches_cpu.
  static void expect_within_i8_bound(const std::vector<float>& got, const std::vector<float>& want, const QTensor& w,
                                     const Tensor& x, double per_amax, double slack, const std::string& what) {
    const int64_t M = x.size(0), K = x.size(1), N = w.rows();
    const auto wf = dequantize(w).to_vector<float>();
    const auto xv = x.contiguous().to_vector<float>();
    ASSERT_EQ(got.size(), want.size()) << what;
    ASSERT_EQ(got.size(), static_cast<size_t>(M * N)) << what;
    double scale = 0.05 * std::sqrt(double(K));
    for (float v : want) scale = std::max(scale, std::fabs(double(v)));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double bound = 0;
        for (int64_t g0 = 0; g0 < K; g0 += 16) {
          double amax = 0, wsum = 0;
          for (int64_t k = g0; k < g0 + 16; ++k) {
            amax = std::max(amax, std::fabs(double(xv[m * K + k])));
            wsum += std::fabs(double(wf[n * K + k]));
          }
          bound += wsum * amax * per_amax;
        }
        const size_t i = static_cast<size_t>(m * N + n);
        ASSERT_NEAR(got[i], want[i], slack * bound + 2e-5 * scale * std::sqrt(double(K) / 256)) << what << " n=" << n;
      }
  }
};

// M = 1 and 3 run the matvec kernel, M = 17 the tiled prefill kernel (M > 4); odd N
// exercises partial row groups and partial tiles; K = 288 = 9 Q8_0/Q4_x blocks (odd blocks
// start 2 bytes into a word for the 18/34-byte formats), K = 512 two super-blocks (odd
// Q6_K super-blocks are misaligned too).
TEST_F(QuantWebGPU, MatmulMatchesCpuEveryFormat) {
  for (QType t : kAll) {
    const int64_t bk = qtype_info(t).block_elems;
    for (int64_t K : {bk == 32 ? int64_t{288} : int64_t{256}, int64_t{512}})
      for (int64_t M : {1, 3, 17})
        for (int64_t N : {1, 7, 33}) check_matmul(t, M, N, K, "default");
  }
}

// A kernel choice for the fused-prologue/epilogue tests: the matvec kernel, the subgroup
// reduction ("on"/"off"), M, whether the fusion is expected (M <= 4), x's scale, and whether
// every streaming format runs (else Q4_0 and Q6_K, for lavapipe time).
struct FusionCase {
  const char* kernel;
  const char* subgroups;
  int64_t M;
  bool fused;
  float xscale = 1.f;
  bool every_format = true;
  void use() const {
    tune([&](webgpu::QMatvecTuning& q) {
      q.kernel = kernel_named(kernel);
      q.subgroups = std::string(subgroups) == "on";
    });
  }
  std::vector<QType> formats() const {
    if (every_format) return std::vector<QType>(std::begin(kStream), std::end(kStream));
    return {QType::Q4_0, QType::Q6_K};
  }
};

// rms_norm_qmatmul_t on the device against qmatmul_t(rms_norm(x)) on the CPU, every format:
// fused into the streaming matvec (both reductions, a norm weight at an odd offset that must be
// compacted, x values of 1e3), unfused for M > 4 (tiled), and on the CPU for f16 x.
TEST_F(QuantWebGPU, RmsNormQmatmulFusedAndUnfused) {
  const Device d = Device::webgpu();
  for (const FusionCase& c : {FusionCase{"stream", "on", 1, true}, FusionCase{"stream", "off", 3, true, 1e3f},
                              FusionCase{"stream", "on", 4, true}, FusionCase{"stream", "on", 6, false}}) {
    c.use();
    for (QType t : c.formats()) {
      const int64_t K = fusion_ks(t)[1], N = 37;
      const QTensor w = qrand(t, N, K, 5);
      const Tensor x = Tensor::from_vector(randn(c.M * K, 6, c.xscale), {c.M, K});
      const Tensor g = Tensor::from_vector(randn(K + 1, 7, 1.f), {K + 1}).slice(0, 1, K + 1);  // offset 1
      const auto want = qmatmul_t(rms_norm(x, g, 1e-5), w).to_vector<float>();
      const auto got = rms_norm_qmatmul_t(x.to(d), g.to(d), w.to(d), 1e-5).cpu().to_vector<float>();
      if (c.M <= 4) {
        EXPECT_EQ(bool(last_shader().norm), c.fused) << c.kernel << " " << qtype_name(t);
      }
      expect_matches_cpu(got, want, K, std::string(qtype_name(t)) + " " + c.kernel + " M=" + std::to_string(c.M));
    }
  }
  // f16 x: the norm runs as its own op (f16 rounding of the normalized x), the same on the CPU.
  const QTensor w = qrand(QType::Q4_0, 5, 64, 8);
  const Tensor x = cast(Tensor::from_vector(randn(64, 9, 1.f), {1, 64}), DType::F16);
  const Tensor g = cast(Tensor::from_vector(randn(64, 10, 1.f), {64}), DType::F16);
  const auto want = qmatmul_t(rms_norm(x, g), w).to_vector<float>();
  const auto got = rms_norm_qmatmul_t(x.to(d), g.to(d), w.to(d)).cpu().to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i])));
  EXPECT_THROW(rms_norm_qmatmul_t(x, cast(g, DType::F32), w), Error);  // dtype mismatch (rms_norm's check)
}

// addqmm_t(c, x, W) = c + x W^T: the streaming matvecs (stream, i8, i8x2; M <= 4) add c as
// they store y, the tiled kernel (M > 4) runs an add kernel after.
// x and c are row slices of larger tensors (non-zero element offsets). Against the CPU (stream,
// f32 tolerance) and, for the 8-bit-x kernels, against their own qmatmul_t + c on the device
// (the same product, so equal up to the one rounding of the add); the CPU op equals its own
// product plus c; then a vector x, and typed errors for c's shape, dtype and device.
TEST_F(QuantWebGPU, AddqmmFusedAndUnfused) {
  const Device d = Device::webgpu();
  for (const FusionCase& c : {FusionCase{"stream", "on", 1, true}, FusionCase{"stream", "off", 3, true, 1.f, false},
                              FusionCase{"stream", "on", 4, true, 1.f, false}, FusionCase{"i8x2", "on", 1, true},
                              FusionCase{"i8", "off", 2, true, 1.f, false}, FusionCase{"stream", "on", 6, false, 1.f, false}}) {
    c.use();
    const bool i8 = std::string(c.kernel).rfind("i8", 0) == 0;
    for (QType t : c.formats()) {
      const int64_t K = fusion_ks(t)[1], N = 37;
      const std::string what = std::string(qtype_name(t)) + " " + c.kernel + " M=" + std::to_string(c.M);
      const QTensor w = qrand(t, N, K, 11);
      // x and c are row slices of larger tensors: contiguous at element offsets K and N
      // (the streaming matvec reads such an x in place, the other kernels compact it).
      const Tensor xbig = Tensor::from_vector(randn((c.M + 1) * K, 12, 1.f), {c.M + 1, K});
      const Tensor x = xbig.slice(0, 1, c.M + 1);
      const Tensor big = Tensor::from_vector(randn((c.M + 2) * N, 13, 3.f), {c.M + 2, N});
      const Tensor cres = big.slice(0, 1, c.M + 1);
      const QTensor wd = w.to(d);
      const Tensor xd = xbig.to(d).slice(0, 1, c.M + 1), cd = big.to(d).slice(0, 1, c.M + 1);
      const auto got = addqmm_t(cd, xd, wd).cpu().to_vector<float>();
      const bool has_i8 = has_i8_part(t);
      if (c.M <= 4) {
        EXPECT_EQ(bool(last_shader().add), c.fused) << what;
      }
      if (i8 && has_i8) {
        const auto sep = add(qmatmul_t(xd, wd), cd).cpu().to_vector<float>();
        ASSERT_EQ(got.size(), sep.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], sep[i], 1e-6f * (1 + std::fabs(sep[i]))) << what << " i=" << i;
      } else {
        expect_matches_cpu(got, add(qmatmul_t(x, w), cres).to_vector<float>(), K, what);
      }
      // the CPU op is the same sum
      const auto cpu = addqmm_t(cres, x, w).to_vector<float>();
      const auto ref = add(qmatmul_t(x, w), cres).to_vector<float>();
      for (size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(cpu[i], ref[i]) << what << " cpu i=" << i;
    }
  }
  g_tuning = webgpu::KernelTuning{};
  webgpu::set_kernel_tuning_override(g_tuning);
  // x as a vector [K]: c is [N].
  const QTensor w = qrand(QType::Q8_0, 5, 64, 14);
  const Tensor x = Tensor::from_vector(randn(64, 15, 1.f), {64});
  const Tensor cv = Tensor::from_vector(randn(5, 16, 1.f), {5});
  const auto got = addqmm_t(cv.to(d), x.to(d), w.to(d)).cpu().to_vector<float>();
  const auto want = add(qmatmul_t(x, w), cv).to_vector<float>();
  ASSERT_EQ(got.size(), 5u);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-2f * (1 + std::fabs(want[i])));
  // typed errors: c of the wrong shape or dtype, or on another device
  const QTensor wg = w.to(d);
  const Tensor xg = Tensor::from_vector(randn(2 * 64, 17, 1.f), {2, 64}).to(d);
  auto expect_kind = [&](ErrorKind k, const Tensor& c) {
    try {
      (void)addqmm_t(c, xg, wg);
      ADD_FAILURE() << "no throw for c " << c.str();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), k) << e.what();
      EXPECT_EQ(e.op(), "addqmm_t") << e.what();
    }
  };
  expect_kind(ErrorKind::ShapeMismatch, zeros({2, 4}, DType::F32, d));
  expect_kind(ErrorKind::ShapeMismatch, zeros({5}, DType::F32, d));
  expect_kind(ErrorKind::DTypeMismatch, zeros({2, 5}, DType::F16, d));
  expect_kind(ErrorKind::InvalidArgument, zeros({2, 5}, DType::F32));
  expect_kind(ErrorKind::InvalidArgument, Tensor());
}

// silu_mul_qmatmul_t(gate, up, W[, c]) = [c +] silu_mul(gate, up) W^T: the streaming matvecs
// compute silu(gate) * up as they load x (M <= 4), the other kernels run silu_mul first. gate
// and up are the two halves of one [M, 2K] tensor (row slices: contiguous for M = 1, strided
// otherwise, then compacted). Against the CPU: f32 tolerance for the f32-x kernels, the
// rounding bound of the two 8-bit terms for i8x2 (as in I8MatvecWithinXRoundingBound).
TEST_F(QuantWebGPU, SiluMulQmatmulFusedAndUnfused) {
  const Device d = Device::webgpu();
  for (const FusionCase& c : {FusionCase{"stream", "on", 1, true}, FusionCase{"stream", "off", 3, true},
                              FusionCase{"i8x2", "on", 1, true}, FusionCase{"i8x2", "off", 4, true},
                              FusionCase{"stream", "on", 6, false}}) {
    c.use();
    for (QType t : {QType::Q4_0, QType::Q8_0, QType::Q4_K, QType::Q6_K})
      for (bool with_c : {false, true}) {
        const int64_t K = fusion_ks(t)[1], N = 37;
        const std::string what = std::string(qtype_name(t)) + " " + c.kernel + " M=" + std::to_string(c.M) + (with_c ? " +c" : "");
        const QTensor w = qrand(t, N, K, 21);
        const Tensor gu = Tensor::from_vector(randn(c.M * 2 * K, 22, 2.f), {c.M, 2 * K});
        const Tensor gate = gu.slice(1, 0, K), up = gu.slice(1, K, 2 * K);
        const Tensor res = Tensor::from_vector(randn(c.M * N, 23, 1.f), {c.M, N});
        const Tensor gud = gu.to(d);
        const Tensor gd = gud.slice(1, 0, K), ud = gud.slice(1, K, 2 * K);
        const auto got = (with_c ? silu_mul_qmatmul_t(gd, ud, w.to(d), res.to(d)) : silu_mul_qmatmul_t(gd, ud, w.to(d)))
                             .cpu().to_vector<float>();
        if (c.M <= 4) {
          EXPECT_EQ(bool(last_shader().silu), c.fused) << what;
        }
        const Tensor xin = silu_mul(gate, up);  // what the kernel multiplies (CPU)
        Tensor want_t = qmatmul_t(xin, w);
        if (with_c) want_t = add(want_t, res);
        const auto want = want_t.to_vector<float>();
        ASSERT_EQ(got.size(), want.size()) << what;
        if (std::string(c.kernel) != "i8x2") {
          expect_matches_cpu(got, want, K, what);
          continue;
        }
        // the device's silu may differ from the CPU's by an ulp: 1% slack on the bound
        expect_within_i8_bound(got, want, w, xin, 1.0 / (254.0 * 254.0), 1.01, what);
      }
  }
  g_tuning = webgpu::KernelTuning{};
  webgpu::set_kernel_tuning_override(g_tuning);
  // typed errors: gate and up of different shapes (silu_mul's check on the CPU path)
  const QTensor w = qrand(QType::Q8_0, 5, 64, 24);
  EXPECT_THROW((void)silu_mul_qmatmul_t(zeros({1, 64}, DType::F32), zeros({1, 32}, DType::F32), w), Error);
  EXPECT_THROW((void)silu_mul_qmatmul_t(zeros({1, 64}, DType::F32, d), zeros({1, 32}, DType::F32, d), w.to(d)), Error);
  EXPECT_THROW((void)silu_mul_qmatmul_t(zeros({1, 64}, DType::F32), zeros({1, 64}, DType::F32), w, zeros({1, 4}, DType::F32)),
               Error);
}

TEST_F(QuantWebGPU, MatvecWorkgroupReductionFallback) {
  tune([](webgpu::QMatvecTuning& q) { q.subgroups = false; });
  for (QType t : kAll)
    for (int64_t N : {1, 7, 33}) check_matmul(t, 2, N, 512, "workgroup-reduce");
  // The environment's value is parsed strictly (the override off: the settings are read).
  webgpu::set_kernel_tuning_override(std::nullopt);
  test_setenv("WGT_QMATVEC_SUBGROUPS", "maybe");
  const QTensor w = qrand(QType::Q4_0, 4, 64, 3).to(Device::webgpu());
  try {
    (void)qmatmul_t(Tensor::from_vector(randn(64, 4, 1.f), {1, 64}).to(Device::webgpu()), w);
    synchronize();
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(e.message().find("WGT_QMATVEC_SUBGROUPS"), std::string::npos) << e.message();
  }
  test_unsetenv("WGT_QMATVEC_SUBGROUPS");
}

// Expects qmatmul_t (M = 1) to throw InvalidArgument naming the env variable `var`.
void expect_env_error(const char* var) {
  const QTensor w = quantize(Tensor::from_vector(std::vector<float>(4 * 64, 0.5f), {4, 64}), QType::Q4_0).to(Device::webgpu());
  try {
    (void)qmatmul_t(Tensor::from_vector(std::vector<float>(64, 1.f), {1, 64}).to(Device::webgpu()), w);
    synchronize();
    ADD_FAILURE() << var << ": no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(e.message().find(var), std::string::npos) << e.message();
  }
}

// Each of `values` in `var` is an InvalidArgument naming it; `var` unset afterwards.
void expect_env_errors(const char* var, std::initializer_list<const char*> values) {
  for (const char* v : values) {
    test_setenv(var, v);
    expect_env_error(var);
  }
  test_unsetenv(var);
}

// The streaming matvec (every format; warps of 32 lanes, ROWS weight rows per warp): K = one
// block (most lanes idle), 9 blocks (odd blocks 2 bytes into a word for the 18/34/210-byte
// formats; a tail after the 2-block loop), 40 blocks (several trips); odd N for partial warps
// and workgroups; M up to 4 (several x rows per dispatch); both reductions; 3, 4 and 8 rows
// per warp.
TEST_F(QuantWebGPU, StreamMatvecEveryReductionAndRowCount) {
  for (const char* sg : {"on", "off"}) {
    tune([&](webgpu::QMatvecTuning& q) { q.subgroups = std::string(sg) == "on"; });
    for (const char* rows : {"", "3", "8"}) {
      tune([&](webgpu::QMatvecTuning& q) { q.rows = *rows ? std::optional<uint32_t>(std::stoul(rows)) : std::nullopt; });
      for (QType t : kStream)
        for (int64_t blocks : {1, 9, 40})
          for (int64_t M : {1, 4})
            for (int64_t N : {1, 5, 37}) check_matmul(t, M, N, blocks * qtype_info(t).block_elems, sg);
    }
  }
}

// Blocks per lane per loop trip of the streaming matvec: 1 (no unrolled part), 4 and 8 (with
// 9 blocks most lanes take only the tail; with 40, both the unrolled loop and the tail).
TEST_F(QuantWebGPU, StreamMatvecUnrollFactors) {
  for (const char* u : {"1", "4", "8"}) {
    tune([&](webgpu::QMatvecTuning& q) { q.unroll = std::stoul(u); });
    for (QType t : kStream)
      for (int64_t blocks : {1, 9, 40}) check_matmul(t, 2, 37, blocks * qtype_info(t).block_elems, u);
  }
}

// Row counts that are not multiples of ROWS * WARPS (1, 3, 37, 131: a workgroup with idle
// warps, a warp with masked tail rows, several workgroups with a ragged last one), M = 1..4,
// every format, every ROWS a tuning run would try; both reductions for ROWS = 8 (the largest
// workgroup-memory slice). Odd K-block counts so misaligned blocks reach every row.
TEST_F(QuantWebGPU, StreamMatvecOddRowCountsEveryRowsSetting) {
  for (const char* rows : {"1", "2", "4", "8"}) {
    tune([&](webgpu::QMatvecTuning& q) { q.rows = std::stoul(rows); });
    for (const char* sg : {"on", "off"}) {
      if (std::string(sg) == "off" && std::string(rows) != "8") continue;
      tune([&](webgpu::QMatvecTuning& q) { q.subgroups = std::string(sg) == "on"; });
      for (QType t : kStream) {
        const int64_t bk = qtype_info(t).block_elems;
        const int64_t K = bk == 32 ? 5 * bk : 3 * bk;
        for (int64_t M = 1; M <= 4; ++M)
          for (int64_t N : {1, 3, 37, 131}) check_matmul(t, M, N, K, rows);
      }
    }
  }
}

// Warps per workgroup: 1 (a workgroup = one warp), 3 (not a power of two), 8 (256
// invocations, the WebGPU default limit), with 3 rows per warp so groups cover 3, 9 and 24
// rows; the workgroup-memory reduction too for 8 warps (its largest `red`). Kept to these
// cases: lavapipe compiles each 256-invocation pipeline slowly.
TEST_F(QuantWebGPU, StreamMatvecWarpsPerWorkgroup) {
  tune([](webgpu::QMatvecTuning& q) { q.rows = 3; });
  for (const char* warps : {"1", "3", "8"}) {
    tune([&](webgpu::QMatvecTuning& q) { q.warps = std::stoul(warps); });
    for (const char* sg : {"on", "off"}) {
      if (std::string(sg) == "off" && std::string(warps) != "8") continue;
      tune([&](webgpu::QMatvecTuning& q) { q.subgroups = std::string(sg) == "on"; });
      for (QType t : kStream)
        for (int64_t N : {1, 10, 50}) check_matmul(t, 2, N, 9 * qtype_info(t).block_elems, warps);
    }
  }
}

// A NaN or inf fp16 scale in one row of a warp (row 2 of 5, 4 rows per warp) poisons that
// row only: the rows sharing its lanes' x registers and accumulators stay as on the CPU
// (f32-x kernel, K = 2 blocks; the i8 kernels: I8MatvecWithinXRoundingBound).
TEST_F(QuantWebGPU, StreamMatvecCorruptScaleStaysInItsRow) {
  const int64_t N = 5, bad = 2;
  {
  const char* kernel = "stream";
  for (QType t : kStream)
    for (uint16_t bits : {uint16_t{0x7E00}, uint16_t{0x7C00}, uint16_t{0xFC00}}) {
      const int64_t K = 2 * qtype_info(t).block_elems;
      const QTensor clean = qrand(t, N, K, 78);
      std::vector<uint8_t> raw(clean.data(), clean.data() + clean.nbytes());
      const size_t row_bytes = raw.size() / N;
      std::memcpy(raw.data() + bad * row_bytes + d_offset(t), &bits, 2);
      const QTensor w = QTensor::from_bytes(t, N, K, raw.data(), raw.size());
      const Tensor x = Tensor::from_vector(randn(2 * K, 10, 1.f), {2, K});
      const auto want = qmatmul_t(x, w).to_vector<float>();
      const auto got = qmatmul_t(x.to(Device::webgpu()), w.to(Device::webgpu())).cpu().to_vector<float>();
      for (int64_t m = 0; m < 2; ++m)
        for (int64_t n = 0; n < N; ++n) {
          const size_t i = static_cast<size_t>(m * N + n);
          if (n == bad) {
            EXPECT_FALSE(std::isfinite(got[i])) << qtype_name(t) << " bits=" << bits << " m=" << m;
            EXPECT_FALSE(std::isfinite(want[i])) << qtype_name(t) << " bits=" << bits << " m=" << m;
          } else {
            EXPECT_NEAR(got[i], want[i], 1e-4 * std::max(1.f, std::fabs(want[i]))) << qtype_name(t) << " n=" << n;
          }
        }
      EXPECT_STREQ(last_kernel(), kernel) << qtype_name(t);
    }
  }
}


// The matvec's variables are parsed strictly: a bad value is an InvalidArgument naming the
// variable (the override off, so the launches read the settings).
TEST_F(QuantWebGPU, MatvecBadEnvValuesAreTypedErrors) {
  webgpu::set_kernel_tuning_override(std::nullopt);
  for (const char* v : {"fast", "staged", "xstat", "items"}) {  // removed kernels are bad values too
    test_setenv("WGT_QMATVEC_KERNEL", v);
    expect_env_error("WGT_QMATVEC_KERNEL");
  }
  test_setenv("WGT_QMATVEC_KERNEL", "stream");
  expect_env_errors("WGT_QMATVEC_ROWS", {"0", "9", "2x"});
  expect_env_errors("WGT_QMATVEC_UNROLL", {"0", "3", "16", "x"});
  expect_env_errors("WGT_QMATVEC_WARPS", {"0", "9", "-1", "4 "});
  expect_env_errors("WGT_QMATVEC_WAVE", {"-1", "4097", "x", "132 "});
  test_unsetenv("WGT_QMATVEC_KERNEL");
}

TEST_F(QuantWebGPU, PrefillLargerThanOneTile) {
  // 70 x rows, 130 weight rows: several tiles in both directions with ragged edges.
  for (QType t : {QType::Q4_0, QType::Q6_K}) check_matmul(t, 70, 130, 256, "tiled");
}

TEST_F(QuantWebGPU, BatchedXAndHostWeightIsUploaded) {
  const int64_t K = 256, N = 7;
  const QTensor w = qrand(QType::Q5_K, N, K, 5);
  const Tensor x = Tensor::from_vector(randn(2 * 3 * K, 6, 1.f), {2, 3, K});
  const auto want = qmatmul_t(x, w).to_vector<float>();
  const Tensor yg = qmatmul_t(x.to(Device::webgpu()), w);  // weight still on the host
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  ASSERT_EQ(yg.shape(), (Shape{2, 3, N}));
  const auto got = yg.cpu().to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

// A NaN fp16 scale in row 0 makes row 0 NaN (matvec and tiled kernels, dequantize) and leaves
// row 1 exactly as on the CPU.
TEST_F(QuantWebGPU, CorruptScalesGiveNanRowsOnly) {
  for (QType t : kAll) {
    const int64_t K = 256;
    const QTensor clean = qrand(t, 2, K, 77);
    std::vector<uint8_t> raw(clean.data(), clean.data() + clean.nbytes());
    const uint16_t nan16 = 0x7E00;
    std::memcpy(raw.data() + d_offset(t), &nan16, 2);
    const QTensor w = QTensor::from_bytes(t, 2, K, raw.data(), raw.size());
    const QTensor wg = w.to(Device::webgpu());
    for (int64_t M : {1, 6}) {
      const Tensor x = Tensor::from_vector(randn(M * K, 9, 1.f), {M, K});
      const auto want = qmatmul_t(x, w).to_vector<float>();
      const auto got = qmatmul_t(x.to(Device::webgpu()), wg).cpu().to_vector<float>();
      for (int64_t m = 0; m < M; ++m) {
        EXPECT_TRUE(std::isnan(got[m * 2])) << qtype_name(t) << " M=" << M;
        EXPECT_TRUE(std::isnan(want[m * 2])) << qtype_name(t) << " M=" << M;
        EXPECT_NEAR(got[m * 2 + 1], want[m * 2 + 1], 1e-4 * std::max(1.f, std::fabs(want[m * 2 + 1]))) << qtype_name(t);
      }
    }
    const auto deq = dequantize(wg).cpu().to_vector<float>();
    EXPECT_TRUE(std::isnan(deq[0])) << qtype_name(t);
    const auto deq_cpu = dequantize(w).to_vector<float>();
    for (int64_t c = 0; c < K; ++c) ASSERT_FLOAT_EQ(deq[K + c], deq_cpu[K + c]) << qtype_name(t) << " c=" << c;
  }
}

TEST_F(QuantWebGPU, DequantizeMatchesCpuEveryFormat) {
  for (QType t : kAll)
    for (int64_t rows : {1, 3, 17}) {
      const int64_t cols = 512;
      const QTensor w = qrand(t, rows, cols, static_cast<uint32_t>(31 + rows));
      const auto want = dequantize(w).to_vector<float>();
      const Tensor yg = dequantize(w.to(Device::webgpu()));
      EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
      ASSERT_TRUE(yg.device().is_webgpu());
      ASSERT_EQ(yg.shape(), (Shape{rows, cols}));
      const auto got = yg.cpu().to_vector<float>();
      // same f32 operations as the CPU up to FMA contraction and the order of d*sc*q
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-6f * std::max(1.f, std::fabs(want[i])))
            << qtype_name(t) << " rows=" << rows << " i=" << i;
    }
}

TEST_F(QuantWebGPU, GetRowsMatchesCpuAndBadDeviceIdsGiveNanRowsAndOutOfRange) {
  for (QType t : kAll) {
    const QTensor table = qrand(t, 9, 256, 41);
    const Tensor ids = Tensor::from_vector(std::vector<int64_t>{8, 0, 3, 3, 5, 1}, {2, 3});
    const auto want = get_rows(table, ids).to_vector<float>();
    const QTensor tg = table.to(Device::webgpu());
    const Tensor yg = get_rows(tg, ids);  // host ids: range-checked on the host, then uploaded
    EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
    ASSERT_EQ(yg.shape(), (Shape{2, 3, 256}));
    const auto got = yg.cpu().to_vector<float>();
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-6f * std::max(1.f, std::fabs(want[i]))) << qtype_name(t) << " i=" << i;
    try {
      (void)get_rows(tg, Tensor::from_vector(std::vector<int32_t>{9}, {1}));
      ADD_FAILURE() << "no throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::OutOfRange);
    }
    // device ids are not read back before the op: an out-of-range one yields a NaN row and
    // OutOfRange at the next read (the device status word); the other rows are exact
    const Tensor dev_ids = Tensor::from_vector(std::vector<int32_t>{2, 99, -1}, {3}).to(Device::webgpu());
    const Tensor rg = get_rows(tg, dev_ids);
    std::vector<float> r(3 * 256);
    try {
      rg.copy_to_host(r.data(), r.size() * 4);
      ADD_FAILURE() << qtype_name(t) << ": no OutOfRange at the read";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::OutOfRange) << e.what();
      EXPECT_EQ(e.op(), "get_rows") << e.what();
    }
    rg.copy_to_host(r.data(), r.size() * 4);  // reported once; the data reads back
    const auto row2 = get_rows(table, Tensor::from_vector(std::vector<int32_t>{2}, {1})).to_vector<float>();
    for (int c = 0; c < 256; ++c) {
      EXPECT_NEAR(r[c], row2[c], 1e-6f * std::max(1.f, std::fabs(row2[c]))) << qtype_name(t) << " " << c;
      EXPECT_TRUE(std::isnan(r[256 + c]) && std::isnan(r[512 + c])) << qtype_name(t) << " " << c;
    }
  }
}

// The 8-bit-x matvec (WGT_QMATVEC_KERNEL=i8) rounds x to 8 bits per group of 16 values, so
// it is checked against the exact product under the bound of that rounding: each x value moves
// by at most max|x of its group| / 254, so |y_i8 - y| <= sum_k |w[n, k]| * amax(group of k) / 254,
// plus the f32 summation tolerance of the other kernels. M = 1..3, odd N, K of 9 blocks (2
// super-blocks) and K past one 4096-element chunk with a tail, x values up to 1e3, and the fused RMSNorm.
// Formats with an i8 part: Q4_0, Q8_0, Q4_K, Q6_K; the others run the float kernel (checked
// with the usual tolerance).
// i8x2 (the default) holds x as two 8-bit terms, the
// second quantizing the first's residual (at most amax / 254): its bound is that of i8 / 254.
// Each i8 kernel also runs with its rows' trips split over several warps (KSPLIT;
// 8 = every warp of the workgroup on the same rows).
TEST_F(QuantWebGPU, I8MatvecWithinXRoundingBound) {
  const Device d = Device::webgpu();
  struct Run { webgpu::QMatvecKernel kernel; uint32_t ksplit; };  // ksplit 0: the plan's
  using K = webgpu::QMatvecKernel;
  for (const Run run : {Run{K::I8, 0}, Run{K::I8, 4}, Run{K::I8x2, 0}, Run{K::I8x2, 8}}) {
  tune([&](webgpu::QMatvecTuning& q) {
    q.kernel = run.kernel;
    q.ksplit = run.ksplit ? std::optional<uint32_t>(run.ksplit) : std::nullopt;
  });
  const std::string kname = run.kernel == K::I8 ? "i8" : "i8x2";
  const double per_amax = run.kernel == K::I8 ? 1.0 / 254 : 1.0 / (254.0 * 254.0);
  struct Case {
    int64_t M, N, K;
    float xscale;
    bool norm;
    bool subgroups;
  };
  for (QType t : kStream)
    for (Case c : {Case{1, 37, 288, 1.f, false, true}, Case{3, 5, 4096 + 288, 1e3f, false, false},
                   Case{1, 131, 4096 + 288, 1.f, true, true}, Case{2, 6, 288, 1.f, true, false}}) {
      if (qtype_info(t).block_elems == 256) c.K = c.K - 288 + 512;  // whole super-blocks
      tune([&](webgpu::QMatvecTuning& q) { q.subgroups = c.subgroups; });
      const std::string what = std::string(qtype_name(t)) + " M=" + std::to_string(c.M) + " K=" + std::to_string(c.K) +
                               (c.norm ? " norm" : "") + " kernel=" + kname + " ksplit=" + std::to_string(run.ksplit);
      const QTensor w = qrand(t, c.N, c.K, static_cast<uint32_t>(c.K + c.N));
      const Tensor x = Tensor::from_vector(randn(c.M * c.K, 31, c.xscale), {c.M, c.K});
      const Tensor g = Tensor::from_vector(randn(c.K, 32, 1.f), {c.K});
      const Tensor xin = c.norm ? rms_norm(x, g, 1e-5) : x;  // what the kernel quantizes
      const auto want = qmatmul_t(xin, w).to_vector<float>();
      const Tensor y = c.norm ? rms_norm_qmatmul_t(x.to(d), g.to(d), w.to(d), 1e-5) : qmatmul_t(x.to(d), w.to(d));
      const auto got = y.cpu().to_vector<float>();
      const bool has_i8 = has_i8_part(t);
      EXPECT_STREQ(last_kernel(), has_i8 ? kname.c_str() : "stream") << what;
      EXPECT_EQ(bool(last_shader().norm), c.norm) << what;
      if (has_i8 && run.ksplit) {
        EXPECT_EQ(last_shader().ksplit, run.ksplit) << what;
      }
      if (!has_i8) {
        expect_matches_cpu(got, want, c.K, what);
        continue;
      }
      expect_within_i8_bound(got, want, w, xin, per_amax, 1.001, what);
    }
  }
  // The shapes the multiprocessor-count rule picks on the H200 (C = 132): ROWS 7 at
  // N = 14336 and 6 at N = 12672 (tests/core/test_plans.cpp checks the choice), which no other
  // case runs, against the CPU bound.
  tune([](webgpu::QMatvecTuning& q) {
    q = webgpu::QMatvecTuning{};
    q.wave = 132;
  });
  for (const auto& [N, rows] : {std::pair<int64_t, uint32_t>{14336, 7}, std::pair<int64_t, uint32_t>{12672, 6}}) {
    const int64_t K = 256;
    const QTensor w = qrand(QType::Q4_0, N, K, 12);
    const Tensor x = Tensor::from_vector(randn(K, 13, 1.f), {1, K});
    const auto got = qmatmul_t(x.to(d), w.to(d)).cpu().to_vector<float>();
    const std::string what = "N=" + std::to_string(N);
    EXPECT_EQ(last_shader().rows, rows) << what;
    expect_within_i8_bound(got, qmatmul_t(x, w).to_vector<float>(), w, x, 1.0 / (254.0 * 254.0), 1.001, what);
  }
  // The default count: the table by adapter name (132 for the H200 the rule was measured on).
  EXPECT_EQ(webgpu::known_compute_units("NVIDIA H200"), 132u);
  EXPECT_EQ(webgpu::known_compute_units("NVIDIA H100 80GB HBM3"), 132u);
  EXPECT_EQ(webgpu::known_compute_units("llvmpipe (LLVM 15.0.6, 256 bits)"), 0u);
  // Without dot4I8Packed (emulated) the default runs the f32-x kernel, with its tolerance.
  tune([](webgpu::QMatvecTuning& q) {
    q = webgpu::QMatvecTuning{};
    q.packed_dot = false;
  });
  for (QType t : {QType::Q4_0, QType::Q6_K}) check_matmul(t, 1, 5, 512, "no packed dot");
  EXPECT_STREQ(last_kernel(), "stream");
  tune([](webgpu::QMatvecTuning& q) { q = webgpu::QMatvecTuning{}; });
  (void)qmatmul_t(Tensor::from_vector(randn(512, 3, 1.f), {1, 512}).to(d), qrand(QType::Q6_K, 5, 512, 4).to(d));
  EXPECT_STREQ(last_kernel(), "i8x2");  // checked numerically above
  // A corrupt (NaN / inf) scale stays in its row.
  for (QType t : {QType::Q4_0, QType::Q8_0, QType::Q4_K, QType::Q6_K}) {
    const int64_t N = 5, K = qtype_info(t).block_elems * 2, bad = 2;
    const QTensor clean = qrand(t, N, K, 78);
    std::vector<uint8_t> raw(clean.data(), clean.data() + clean.nbytes());
    const uint16_t nan_bits = 0x7E00;
    std::memcpy(raw.data() + bad * (raw.size() / N) + d_offset(t), &nan_bits, 2);
    const QTensor w = QTensor::from_bytes(t, N, K, raw.data(), raw.size());
    const auto got = qmatmul_t(Tensor::from_vector(randn(K, 10, 1.f), {1, K}).to(d), w.to(d)).cpu().to_vector<float>();
    for (int64_t n = 0; n < N; ++n) EXPECT_EQ(std::isfinite(got[n]), n != bad) << qtype_name(t) << " n=" << n;
  }
}

TEST_F(QuantWebGPU, TypedErrors) {
  const QTensor w = qrand(QType::Q6_K, 3, 256, 1).to(Device::webgpu());
  auto expect_kind = [](ErrorKind k, const char* op, auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no throw for " << op;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), k) << e.what();
      EXPECT_EQ(e.op(), op) << e.what();
    }
  };
  expect_kind(ErrorKind::ShapeMismatch, "qmatmul_t",
              [&] { (void)qmatmul_t(Tensor::from_vector(randn(128, 2, 1.f), {1, 128}).to(Device::webgpu()), w); });
  expect_kind(ErrorKind::DTypeMismatch, "qmatmul_t",
              [&] { (void)qmatmul_t(zeros({1, 256}, DType::I32, Device::webgpu()), w); });
  // i64 device ids are beyond the kernel: Unsupported without fallback (with it, the CPU runs
  // the call: test_placement.cpp).
  Policy strict = Runtime::get().policy();
  strict.allow_fallback = false;
  Runtime::get().set_policy(strict);
  expect_kind(ErrorKind::Unsupported, "get_rows",
              [&] { (void)get_rows(w, Tensor::from_vector(std::vector<int64_t>{0}, {1}).to(Device::webgpu())); });
  expect_kind(ErrorKind::DTypeMismatch, "get_rows",
              [&] { (void)get_rows(w, Tensor::from_vector(std::vector<float>{0.f}, {1})); });
}

}  // namespace
