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
#include <stdexcept>
#include <initializer_list>
#include <string>

#include "quant/blocks.hpp"
#include "settings_env.hpp"
#include "webgpu/webgpu_backend.hpp"
#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

// Test hook of src/webgpu/kernels/quant.cpp: the matvec kernel of this thread's last M <= 4
// qmatmul_t ("staged", "stream", "xstat" or "items"); the staged and xstat kernels' fallbacks
// are otherwise silent.
namespace wgt::webgpu {
const char* last_qmatvec_kernel_for_testing();
bool last_qmatvec_fused_norm_for_testing();
std::pair<uint32_t, uint32_t> last_qmatvec_split_for_testing();  // (ROWS, KSPLIT)
uint32_t known_compute_units(const std::string& adapter_name);  // device.cpp's table
bool last_qmatvec_fused_add_for_testing();
bool last_qmatvec_fused_silu_for_testing();
}

using namespace wgt;

namespace {

constexpr QType kAll[] = {QType::Q8_0, QType::Q4_0, QType::Q4_1, QType::Q4_K, QType::Q5_K, QType::Q6_K};
// The formats with a streaming-matvec lane shader (q*_lane.wgsl): all of them.
constexpr QType kStream[] = {QType::Q8_0, QType::Q4_0, QType::Q4_1, QType::Q4_K, QType::Q5_K, QType::Q6_K};

// Byte offset of the fp16 super-scale `d` inside a block (for the corrupted-scale tests).
size_t d_offset(QType t) {
  switch (t) {
    case QType::Q8_0: return offsetof(quant::BlockQ8_0, d);
    case QType::Q4_0: return offsetof(quant::BlockQ4_0, d);
    case QType::Q4_1: return offsetof(quant::BlockQ4_1, d);
    case QType::Q4_K: return offsetof(quant::BlockQ4_K, d);
    case QType::Q5_K: return offsetof(quant::BlockQ5_K, d);
    case QType::Q6_K: return offsetof(quant::BlockQ6_K, d);
  }
  return 0;
}

// Two K per format whose rows are whole 16-byte words (the staged matvec's condition): one
// trip or less, and several trips with a partial tail trip where the format allows one. A
// trip is 16 blocks of the 32-element formats (UNROLL 1), 2 Q4_K/Q5_K super-blocks, 8 Q6_K
// super-blocks (210 bytes: 8 is the least count whose span is whole 16-byte words, so Q6_K
// rows are aligned only for multiples of 8 super-blocks, and its tail trips are whole).
std::array<int64_t, 2> staged_ks(QType t) {
  switch (t) {
    case QType::Q6_K: return {2048, 6144};  // 8 and 24 super-blocks
    default: return {256, 1280};            // 8 / 40 blocks; 1 / 5 super-blocks
  }
}

webgpu::WebGPUBackend& backend() {
  std::string why;
  auto* b = dynamic_cast<webgpu::WebGPUBackend*>(Runtime::get().webgpu_backend(0, &why));
  if (!b) throw std::runtime_error("WebGPU adapter required: " + why);
  return *b;
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
    // The f32-x streaming matvec unless a test picks another kernel: it matches the CPU to f32
    // rounding. The default (i8, x rounded to 8 bits) is checked under its own bound
    // (I8MatvecWithinXRoundingBound).
    test_setenv("WGT_QMATVEC_KERNEL", "stream");
  }
  void TearDown() override {
    test_unsetenv("WGT_QMATVEC_SUBGROUPS");
    test_unsetenv("WGT_QMATVEC_KERNEL");
    test_unsetenv("WGT_QMATVEC_ROWS");
    test_unsetenv("WGT_QMATVEC_UNROLL");
    test_unsetenv("WGT_QMATVEC_WARPS");
    test_unsetenv("WGT_QMATVEC_KSPLIT");
    test_unsetenv("WGT_QMATVEC_STAGE_BUFFERS");
    test_unsetenv("WGT_QMATVEC_XSTAT_ROWS");
    test_unsetenv("WGT_QMATVEC_XSTAT_BATCH");
    test_unsetenv("WGT_QMATVEC_WAVE");
    test_unsetenv("WGT_WEBGPU_DISABLE_PACKED_DOT");
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

// A kernel choice for the fused-prologue/epilogue tests: WGT_QMATVEC_KERNEL, WGT_QMATVEC_SUBGROUPS,
// M, whether the fusion is expected (M <= 4 and a streaming kernel), x's scale, and whether
// every streaming format runs (else Q4_0 and Q6_K, for lavapipe time).
struct FusionCase {
  const char* kernel;
  const char* subgroups;
  int64_t M;
  bool fused;
  float xscale = 1.f;
  bool every_format = true;
  void use() const {
    test_setenv("WGT_QMATVEC_KERNEL", kernel);
    test_setenv("WGT_QMATVEC_SUBGROUPS", subgroups);
  }
  std::vector<QType> formats() const {
    if (every_format) return std::vector<QType>(std::begin(kStream), std::end(kStream));
    return {QType::Q4_0, QType::Q6_K};
  }
};

// rms_norm_qmatmul_t on the device against qmatmul_t(rms_norm(x)) on the CPU, every format:
// fused into the streaming matvec (direct and staged sources, both reductions, a norm weight
// at an odd offset that must be compacted, x values of 1e3), unfused for M > 4 (tiled), for
// the items and xstat kernels, and on the CPU for f16 x.
TEST_F(QuantWebGPU, RmsNormQmatmulFusedAndUnfused) {
  const Device d = Device::webgpu();
  for (const FusionCase& c : {FusionCase{"stream", "on", 1, true}, FusionCase{"stream", "off", 3, true, 1e3f},
                              FusionCase{"staged", "on", 4, true}, FusionCase{"stream", "on", 6, false},
                              FusionCase{"items", "on", 2, false}, FusionCase{"xstat", "on", 1, false}}) {
    c.use();
    for (QType t : c.formats()) {
      const int64_t K = staged_ks(t)[1], N = 37;
      const QTensor w = qrand(t, N, K, 5);
      const Tensor x = Tensor::from_vector(randn(c.M * K, 6, c.xscale), {c.M, K});
      const Tensor g = Tensor::from_vector(randn(K + 1, 7, 1.f), {K + 1}).slice(0, 1, K + 1);  // offset 1
      const auto want = qmatmul_t(rms_norm(x, g, 1e-5), w).to_vector<float>();
      const auto got = rms_norm_qmatmul_t(x.to(d), g.to(d), w.to(d), 1e-5).cpu().to_vector<float>();
      if (c.M <= 4) {
        EXPECT_EQ(webgpu::last_qmatvec_fused_norm_for_testing(), c.fused) << c.kernel << " " << qtype_name(t);
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

// addqmm_t(c, x, W) = c + x W^T: the streaming matvecs (stream, staged, i8, i8x2; M <= 4) add c
// as they store y, the other kernels (items, xstat, the tiled M > 4) run an add kernel after.
// x and c are row slices of larger tensors (non-zero element offsets). Against the CPU (stream,
// f32 tolerance) and, for the 8-bit-x kernels, against their own qmatmul_t + c on the device
// (the same product, so equal up to the one rounding of the add); the CPU op equals its own
// product plus c; then a vector x, and typed errors for c's shape, dtype and device.
TEST_F(QuantWebGPU, AddqmmFusedAndUnfused) {
  const Device d = Device::webgpu();
  for (const FusionCase& c : {FusionCase{"stream", "on", 1, true}, FusionCase{"stream", "off", 3, true, 1.f, false},
                              FusionCase{"staged", "on", 4, true, 1.f, false}, FusionCase{"i8x2", "on", 1, true},
                              FusionCase{"i8", "off", 2, true, 1.f, false}, FusionCase{"stream", "on", 6, false, 1.f, false},
                              FusionCase{"items", "on", 2, false}, FusionCase{"xstat", "on", 1, false, 1.f, false}}) {
    c.use();
    const bool i8 = std::string(c.kernel).rfind("i8", 0) == 0;
    for (QType t : c.formats()) {
      const int64_t K = staged_ks(t)[1], N = 37;
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
      const bool has_i8 = t != QType::Q4_1 && t != QType::Q5_K;
      if (c.M <= 4) EXPECT_EQ(webgpu::last_qmatvec_fused_add_for_testing(), c.fused) << what;
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
  test_unsetenv("WGT_QMATVEC_KERNEL");
  test_unsetenv("WGT_QMATVEC_SUBGROUPS");
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
                              FusionCase{"stream", "on", 6, false}, FusionCase{"items", "on", 2, false},
                              FusionCase{"xstat", "on", 1, false}}) {
    c.use();
    for (QType t : {QType::Q4_0, QType::Q8_0, QType::Q4_K, QType::Q6_K})
      for (bool with_c : {false, true}) {
        const int64_t K = staged_ks(t)[1], N = 37;
        const std::string what = std::string(qtype_name(t)) + " " + c.kernel + " M=" + std::to_string(c.M) + (with_c ? " +c" : "");
        const QTensor w = qrand(t, N, K, 21);
        const Tensor gu = Tensor::from_vector(randn(c.M * 2 * K, 22, 2.f), {c.M, 2 * K});
        const Tensor gate = gu.slice(1, 0, K), up = gu.slice(1, K, 2 * K);
        const Tensor res = Tensor::from_vector(randn(c.M * N, 23, 1.f), {c.M, N});
        const Tensor gud = gu.to(d);
        const Tensor gd = gud.slice(1, 0, K), ud = gud.slice(1, K, 2 * K);
        const auto got = (with_c ? silu_mul_qmatmul_t(gd, ud, w.to(d), res.to(d)) : silu_mul_qmatmul_t(gd, ud, w.to(d)))
                             .cpu().to_vector<float>();
        if (c.M <= 4) EXPECT_EQ(webgpu::last_qmatvec_fused_silu_for_testing(), c.fused) << what;
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
  test_unsetenv("WGT_QMATVEC_KERNEL");
  test_unsetenv("WGT_QMATVEC_SUBGROUPS");
  // typed errors: gate and up of different shapes (silu_mul's check on the CPU path)
  const QTensor w = qrand(QType::Q8_0, 5, 64, 24);
  EXPECT_THROW((void)silu_mul_qmatmul_t(zeros({1, 64}, DType::F32), zeros({1, 32}, DType::F32), w), Error);
  EXPECT_THROW((void)silu_mul_qmatmul_t(zeros({1, 64}, DType::F32, d), zeros({1, 32}, DType::F32, d), w.to(d)), Error);
  EXPECT_THROW((void)silu_mul_qmatmul_t(zeros({1, 64}, DType::F32), zeros({1, 64}, DType::F32), w, zeros({1, 4}, DType::F32)),
               Error);
}

TEST_F(QuantWebGPU, MatvecWorkgroupReductionFallback) {
  test_setenv("WGT_QMATVEC_SUBGROUPS", "off");
  for (QType t : kAll)
    for (int64_t N : {1, 7, 33}) check_matmul(t, 2, N, 512, "workgroup-reduce");
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
  test_setenv("WGT_QMATVEC_KERNEL", "stream");  // the direct-load kernel (staged: the Staged* tests)
  for (const char* sg : {"on", "off"}) {
    test_setenv("WGT_QMATVEC_SUBGROUPS", sg);
    for (const char* rows : {"", "3", "8"}) {
      test_setenv("WGT_QMATVEC_ROWS", rows);
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
  test_setenv("WGT_QMATVEC_KERNEL", "stream");  // the direct-load kernel (staged: the Staged* tests)
  for (const char* u : {"1", "4", "8"}) {
    test_setenv("WGT_QMATVEC_UNROLL", u);
    for (QType t : kStream)
      for (int64_t blocks : {1, 9, 40}) check_matmul(t, 2, 37, blocks * qtype_info(t).block_elems, u);
  }
}

// The block-per-invocation matvec stays selectable (WGT_QMATVEC_KERNEL=items) for comparison.
TEST_F(QuantWebGPU, ItemsMatvecStillSelectable) {
  test_setenv("WGT_QMATVEC_KERNEL", "items");
  for (QType t : kStream)
    for (int64_t N : {1, 7, 33}) check_matmul(t, 1, N, 9 * qtype_info(t).block_elems, "items");
}

// Row counts that are not multiples of ROWS * WARPS (1, 3, 37, 131: a workgroup with idle
// warps, a warp with masked tail rows, several workgroups with a ragged last one), M = 1..4,
// every format, every ROWS a tuning run would try; both reductions for ROWS = 8 (the largest
// workgroup-memory slice). Odd K-block counts so misaligned blocks reach every row.
TEST_F(QuantWebGPU, StreamMatvecOddRowCountsEveryRowsSetting) {
  test_setenv("WGT_QMATVEC_KERNEL", "stream");  // the direct-load kernel (staged: the Staged* tests)
  for (const char* rows : {"1", "2", "4", "8"}) {
    test_setenv("WGT_QMATVEC_ROWS", rows);
    for (const char* sg : {"on", "off"}) {
      if (std::string(sg) == "off" && std::string(rows) != "8") continue;
      test_setenv("WGT_QMATVEC_SUBGROUPS", sg);
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
  test_setenv("WGT_QMATVEC_KERNEL", "stream");  // the direct-load kernel (staged: the Staged* tests)
  test_setenv("WGT_QMATVEC_ROWS", "3");
  for (const char* warps : {"1", "3", "8"}) {
    test_setenv("WGT_QMATVEC_WARPS", warps);
    for (const char* sg : {"on", "off"}) {
      if (std::string(sg) == "off" && std::string(warps) != "8") continue;
      test_setenv("WGT_QMATVEC_SUBGROUPS", sg);
      for (QType t : kStream)
        for (int64_t N : {1, 10, 50}) check_matmul(t, 2, N, 9 * qtype_info(t).block_elems, warps);
    }
  }
}

// A NaN or inf fp16 scale in one row of a warp (row 2 of 5, 4 rows per warp) poisons that
// row only: the rows sharing its lanes' x registers and accumulators stay as on the CPU.
// Both weight sources: direct loads (K = 2 blocks) and staged (a K with 16-byte aligned rows);
// and the x-stationary kernel (K = 3 blocks: lanes past the last block read it and add 0;
// rows 0..3 share a batch and its reduction).
TEST_F(QuantWebGPU, StreamMatvecCorruptScaleStaysInItsRow) {
  const int64_t N = 5, bad = 2;
  for (const char* kernel : {"stream", "staged", "xstat"}) {
  test_setenv("WGT_QMATVEC_KERNEL", kernel);
  for (QType t : kStream)
    for (uint16_t bits : {uint16_t{0x7E00}, uint16_t{0x7C00}, uint16_t{0xFC00}}) {
      const std::string kn = kernel;
      const int64_t K = kn == "stream" ? 2 * qtype_info(t).block_elems
                        : kn == "xstat" ? 3 * qtype_info(t).block_elems
                                        : staged_ks(t)[0];
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
      EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), kernel) << qtype_name(t);
    }
  }
}

// The staged matvec (the default where rows are 16-byte aligned) against the CPU: every
// format, row counts 1, 3, 37, 131 (idle warps that still join the barriers, a warp with
// masked tail rows, a ragged last workgroup), M = 1..4, one trip or less and several trips
// with a tail; the kernel that ran must be the staged one (its buffers fit every WebGPU
// device at these default shapes except Q6_K/Q8_0 below 32 KiB, checked against the limit).
TEST_F(QuantWebGPU, StagedMatvecOddRowCountsEveryFormat) {
  test_setenv("WGT_QMATVEC_KERNEL", "staged");
  const uint64_t wg_mem = backend().limits().max_compute_workgroup_storage_size;
  for (QType t : kStream)
    for (int64_t K : staged_ks(t))
      for (int64_t M = 1; M <= 4; ++M)
        for (int64_t N : {1, 3, 37, 131}) {
          check_matmul(t, M, N, K, "staged");
          // the smallest staging (1 buffer) of the default 4 warps x 4 rows, + the reduction
          const uint64_t span = qtype_info(t).block_bytes * (t == QType::Q6_K ? 8 : t == QType::Q4_K || t == QType::Q5_K ? 2 : 16);
          if (16 * span + 2048 <= wg_mem) {
            EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "staged") << qtype_name(t) << " K=" << K;
          }
        }
}

// Rows that do not start 16-byte aligned fall back to the direct kernel, still correct:
// Q4_0 with K = 96 (54 bytes per row), K = 256 for Q6_K (210), 9 blocks for the 20/34-byte
// formats (180, 306 bytes). WGT_QMATVEC_KERNEL=stream selects the direct kernel on aligned
// rows too.
TEST_F(QuantWebGPU, StagedMatvecFallsBackOnUnalignedRows) {
  test_setenv("WGT_QMATVEC_KERNEL", "staged");
  const std::pair<QType, int64_t> cases[] = {
      {QType::Q4_0, 96}, {QType::Q6_K, 256}, {QType::Q4_1, 288}, {QType::Q8_0, 288}, {QType::Q6_K, 2304}};
  for (auto [t, K] : cases)
    for (int64_t N : {1, 37}) {
      check_matmul(t, 3, N, K, "staged-fallback");
      EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "stream") << qtype_name(t) << " K=" << K;
    }
  test_setenv("WGT_QMATVEC_KERNEL", "stream");
  check_matmul(QType::Q4_0, 1, 5, 256, "stream");
  EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "stream");
  test_setenv("WGT_QMATVEC_KERNEL", "items");
  check_matmul(QType::Q4_0, 1, 5, 256, "items");
  EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "items");
}

// Every knob of the staged matvec a tuning run would set: ROWS 1, 2, 8 (with the workgroup
// reduction for 8), UNROLL 2, 4, 8 (longer trips: Q4_K 16 super-blocks per trip, so K = 5
// super-blocks is all tail), one and two staging buffers, 1 and 8 warps. Where a
// configuration's staging does not fit the device, the default buffer count falls back to
// the direct kernel (checked to stay correct); an explicit WGT_QMATVEC_STAGE_BUFFERS must
// fit (MatvecBadEnvValuesAreTypedErrors).
TEST_F(QuantWebGPU, StagedMatvecEveryKnob) {
  test_setenv("WGT_QMATVEC_KERNEL", "staged");
  auto run_all = [&](const char* what) {
    for (QType t : kStream)
      for (int64_t K : staged_ks(t)) check_matmul(t, 2, 37, K, what);
  };
  for (const char* rows : {"1", "2", "8"}) {
    test_setenv("WGT_QMATVEC_ROWS", rows);
    run_all(rows);
  }
  test_setenv("WGT_QMATVEC_SUBGROUPS", "off");
  run_all("rows 8, workgroup reduction");
  test_unsetenv("WGT_QMATVEC_SUBGROUPS");
  test_unsetenv("WGT_QMATVEC_ROWS");
  for (const char* u : {"2", "4", "8"}) {
    test_setenv("WGT_QMATVEC_UNROLL", u);
    run_all(u);
  }
  test_unsetenv("WGT_QMATVEC_UNROLL");
  test_setenv("WGT_QMATVEC_ROWS", "2");
  for (const char* nbuf : {"1", "2"}) {
    test_setenv("WGT_QMATVEC_STAGE_BUFFERS", nbuf);
    for (QType t : kStream) {
      check_matmul(t, 4, 131, staged_ks(t)[1], nbuf);
      EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "staged") << qtype_name(t) << " buffers=" << nbuf;
    }
  }
  test_unsetenv("WGT_QMATVEC_STAGE_BUFFERS");
  for (const char* warps : {"1", "8"}) {
    test_setenv("WGT_QMATVEC_WARPS", warps);
    for (QType t : {QType::Q4_0, QType::Q4_K, QType::Q6_K}) check_matmul(t, 1, 50, staged_ks(t)[1], warps);
  }
}

// The x-stationary matvec (x in registers, the workgroup sweeping its rows). A step is 512
// elements in every format (16 blocks of 32, 2 super-blocks of 256). K of 1 block (a partial
// single step; 1 warp by default), 2.5 steps (a partial last step; 3 warps) and 32 steps (the
// limit of the default 8 warps x 4 steps: 4 per lane); N = 1, 5, 37 leave partial batches of
// the default 4 rows and a partial last group of 16 rows; both reductions. Then 8 warps
// forced for 2.5 steps: 5 warps without a step join the reductions with zeros.
TEST_F(QuantWebGPU, XstatMatvecEveryFormat) {
  test_setenv("WGT_QMATVEC_KERNEL", "xstat");
  for (const char* sg : {"on", "off"}) {
    test_setenv("WGT_QMATVEC_SUBGROUPS", sg);
    for (QType t : kStream)
      for (int64_t K : {int64_t{qtype_info(t).block_elems}, int64_t{1280}, int64_t{16384}})
        for (int64_t M : {1, 3})
          for (int64_t N : {1, 5, 37}) {
            check_matmul(t, M, N, K, sg);
            EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "xstat") << qtype_name(t) << " K=" << K;
          }
    test_setenv("WGT_QMATVEC_WARPS", "8");
    for (QType t : kStream) {
      check_matmul(t, 3, 37, 1280, "8 warps");
      EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "xstat") << qtype_name(t);
    }
    test_unsetenv("WGT_QMATVEC_WARPS");
  }
}

// Steps per lane that differ between warps: 3 warps (12 steps at most) with K = 4864 (9.5
// steps: warp 0 has 4, the last of them partial, warps 1 and 2 have 3), K = 5120 (10 whole
// steps: warps 1 and 2 skip their 4th) and K = 6144 (12, the limit); (rows per workgroup, rows
// per batch) = (1, 3) (a batch larger than the group), (7, 3) (a partial batch), (16, 1),
// (64, 8); N = 37 and 131, M = 2 and 4; the workgroup reduction for (7, 3).
TEST_F(QuantWebGPU, XstatMatvecWarpsRowsAndBatches) {
  test_setenv("WGT_QMATVEC_KERNEL", "xstat");
  test_setenv("WGT_QMATVEC_WARPS", "3");
  const std::array<std::array<const char*, 3>, 5> cases = {{
      {"1", "3", "on"}, {"7", "3", "on"}, {"7", "3", "off"}, {"16", "1", "on"}, {"64", "8", "on"}}};
  for (const auto& [rows, batch, sg] : cases) {
    test_setenv("WGT_QMATVEC_XSTAT_ROWS", rows);
    test_setenv("WGT_QMATVEC_XSTAT_BATCH", batch);
    test_setenv("WGT_QMATVEC_SUBGROUPS", sg);
    const std::string what = std::string(sg) + " rows=" + rows + " batch=" + batch;
    for (QType t : {QType::Q4_0, QType::Q8_0, QType::Q4_K, QType::Q6_K})
      for (int64_t K : {4864, 5120, 6144}) {
        check_matmul(t, K == 6144 ? 4 : 2, K == 6144 ? 131 : 37, K, what.c_str());
        EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "xstat") << qtype_name(t) << " " << what;
      }
  }
}

// K with more steps than the warps' registers hold runs the streaming kernel and stays
// correct: 1 warp (4 steps) with K = 2560 (5 steps), the default 8 warps with K = 16896 (33).
TEST_F(QuantWebGPU, XstatMatvecFallsBackToStreamForLargeK) {
  test_setenv("WGT_QMATVEC_KERNEL", "xstat");
  for (QType t : kStream) {
    test_setenv("WGT_QMATVEC_WARPS", "1");
    check_matmul(t, 1, 5, 2048, "xstat 1 warp");
    EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "xstat") << qtype_name(t);
    check_matmul(t, 2, 5, 2560, "xstat 1 warp");
    EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "stream") << qtype_name(t);
    test_unsetenv("WGT_QMATVEC_WARPS");
    check_matmul(t, 1, 7, 16896, "xstat 8 warps");
    EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "stream") << qtype_name(t);
  }
}

TEST_F(QuantWebGPU, MatvecBadEnvValuesAreTypedErrors) {
  test_setenv("WGT_QMATVEC_KERNEL", "fast");
  expect_env_error("WGT_QMATVEC_KERNEL");
  test_setenv("WGT_QMATVEC_KERNEL", "stream");  // UNROLL belongs to the f32-x streaming kernel
  expect_env_errors("WGT_QMATVEC_ROWS", {"0", "9", "2x"});
  expect_env_errors("WGT_QMATVEC_UNROLL", {"0", "3", "16", "x"});
  expect_env_errors("WGT_QMATVEC_WARPS", {"0", "9", "-1", "4 "});
  expect_env_errors("WGT_QMATVEC_WAVE", {"-1", "4097", "x", "132 "});  // checked whatever the kernel
  test_setenv("WGT_QMATVEC_KERNEL", "xstat");  // the xstat knobs belong to the xstat kernel
  expect_env_errors("WGT_QMATVEC_XSTAT_ROWS", {"0", "65", "x", "16 "});
  expect_env_errors("WGT_QMATVEC_XSTAT_BATCH", {"0", "9", "1.5"});
  test_setenv("WGT_QMATVEC_WARPS", "9");
  expect_env_error("WGT_QMATVEC_WARPS");
  test_unsetenv("WGT_QMATVEC_WARPS");
  test_setenv("WGT_QMATVEC_KERNEL", "staged");  // the staging knobs below belong to the staged kernel
  expect_env_errors("WGT_QMATVEC_STAGE_BUFFERS", {"0", "3", "x"});
  // Two buffers of 8 warps x 8 rows x 128 Q8_0 blocks (557 KB) fit no device: Unsupported,
  // naming the knob, instead of a silent fallback the user did not ask for.
  test_setenv("WGT_QMATVEC_STAGE_BUFFERS", "2");
  test_setenv("WGT_QMATVEC_ROWS", "8");
  test_setenv("WGT_QMATVEC_WARPS", "8");
  test_setenv("WGT_QMATVEC_UNROLL", "8");
  const int64_t K = 4096;
  const QTensor w = qrand(QType::Q8_0, 2, K, 5).to(Device::webgpu());
  try {
    (void)qmatmul_t(Tensor::from_vector(randn(K, 4, 1.f), {1, K}).to(Device::webgpu()), w);
    synchronize();
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(e.message().find("WGT_QMATVEC_STAGE_BUFFERS"), std::string::npos) << e.message();
  }
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
// i8x2 (the default, also run with WGT_QMATVEC_KERNEL unset) holds x as two 8-bit terms, the
// second quantizing the first's residual (at most amax / 254): its bound is that of i8 / 254.
// Each i8 kernel also runs with its rows' trips split over several warps (WGT_QMATVEC_KSPLIT;
// 8 = every warp of the workgroup on the same rows).
TEST_F(QuantWebGPU, I8MatvecWithinXRoundingBound) {
  const Device d = Device::webgpu();
  struct Run { const char* kernel; const char* ksplit; };
  for (const Run run : {Run{"i8", ""}, Run{"i8", "4"}, Run{"i8x2", ""}, Run{"i8x2", "8"}, Run{"", ""}}) {
  const char* kernel = run.kernel;
  if (*run.ksplit) test_setenv("WGT_QMATVEC_KSPLIT", run.ksplit); else test_unsetenv("WGT_QMATVEC_KSPLIT");
  const std::string kname = *kernel ? kernel : "i8x2";
  const double per_amax = kname == "i8" ? 1.0 / 254 : 1.0 / (254.0 * 254.0);
  if (*kernel) test_setenv("WGT_QMATVEC_KERNEL", kernel); else test_unsetenv("WGT_QMATVEC_KERNEL");
  struct Case {
    int64_t M, N, K;
    float xscale;
    bool norm;
    const char* subgroups;
  };
  for (QType t : kStream)
    for (Case c : {Case{1, 37, 288, 1.f, false, "on"}, Case{3, 5, 4096 + 288, 1e3f, false, "off"},
                   Case{1, 131, 4096 + 288, 1.f, true, "on"}, Case{2, 6, 288, 1.f, true, "off"}}) {
      if (qtype_info(t).block_elems == 256) c.K = c.K - 288 + 512;  // whole super-blocks
      test_setenv("WGT_QMATVEC_SUBGROUPS", c.subgroups);
      const std::string what = std::string(qtype_name(t)) + " M=" + std::to_string(c.M) + " K=" + std::to_string(c.K) +
                               (c.norm ? " norm" : "") + " kernel='" + kernel + "' ksplit='" + run.ksplit + "'";
      const QTensor w = qrand(t, c.N, c.K, static_cast<uint32_t>(c.K + c.N));
      const Tensor x = Tensor::from_vector(randn(c.M * c.K, 31, c.xscale), {c.M, c.K});
      const Tensor g = Tensor::from_vector(randn(c.K, 32, 1.f), {c.K});
      const Tensor xin = c.norm ? rms_norm(x, g, 1e-5) : x;  // what the kernel quantizes
      const auto want = qmatmul_t(xin, w).to_vector<float>();
      const Tensor y = c.norm ? rms_norm_qmatmul_t(x.to(d), g.to(d), w.to(d), 1e-5) : qmatmul_t(x.to(d), w.to(d));
      const auto got = y.cpu().to_vector<float>();
      const bool has_i8 = t != QType::Q4_1 && t != QType::Q5_K;
      EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), has_i8 ? kname.c_str() : "stream") << what;
      EXPECT_EQ(webgpu::last_qmatvec_fused_norm_for_testing(), c.norm) << what;
      if (!has_i8) {
        expect_matches_cpu(got, want, c.K, what);
        continue;
      }
      expect_within_i8_bound(got, want, w, xin, per_amax, 1.001, what);
    }
  }
  test_unsetenv("WGT_QMATVEC_KSPLIT");
  // The automatic shape (i8x2, 8 warps, ROWS 8 by default): ROWS halves down to 4, then KSPLIT
  // doubles up to 4, then ROWS halves down to 1, until the grid has 192 workgroups; set knobs
  // are kept.
  {
    test_setenv("WGT_QMATVEC_WAVE", "0");  // the wave rule (below) off: the same on every adapter
    struct Want { int64_t M, N; const char* rows_env; uint32_t rows, ksplit; };
    for (const Want c : {Want{1, 16384, "", 8, 1}, Want{1, 8192, "", 4, 1}, Want{1, 4096, "", 4, 2}, Want{1, 1024, "", 2, 4},
                         Want{1, 37, "", 1, 4}, Want{4, 256, "", 2, 4}, Want{1, 37, "8", 8, 4}}) {
      if (*c.rows_env) test_setenv("WGT_QMATVEC_ROWS", c.rows_env); else test_unsetenv("WGT_QMATVEC_ROWS");
      const QTensor w = qrand(QType::Q4_0, c.N, 256, 9).to(d);
      (void)qmatmul_t(Tensor::from_vector(randn(c.M * 256, 8, 1.f), {c.M, 256}).to(d), w);
      EXPECT_EQ(webgpu::last_qmatvec_split_for_testing(), std::make_pair(c.rows, c.ksplit)) << "N=" << c.N << " M=" << c.M;
    }
    test_unsetenv("WGT_QMATVEC_ROWS");
    test_unsetenv("WGT_QMATVEC_WAVE");
  }
  // With a multiprocessor count (WGT_QMATVEC_WAVE; the adapter's when known), i8x2 at KSPLIT 1
  // picks ROWS in [4, 8] minimizing ceil(workgroups / C) * ROWS: N = 14336 with C = 132 takes
  // ROWS 7 (256 workgroups: 2 waves of 56 rows, against 2 of 64 at ROWS 8), N = 16896 keeps 8
  // (264 = 2 waves), N = 12672 takes 6 (264); C = 0 turns the rule off; a set ROWS is kept. The
  // ROWS 7 and 6 results are checked against the CPU bound.
  {
    struct Want { int64_t N; const char* wave; const char* rows_env; uint32_t rows; };
    for (const Want c : {Want{14336, "132", "", 7}, Want{14336, "0", "", 8}, Want{16896, "132", "", 8},
                         Want{14336, "132", "8", 8}, Want{12672, "132", "", 6}}) {
      test_setenv("WGT_QMATVEC_WAVE", c.wave);
      if (*c.rows_env) test_setenv("WGT_QMATVEC_ROWS", c.rows_env); else test_unsetenv("WGT_QMATVEC_ROWS");
      const int64_t K = 256;
      const QTensor w = qrand(QType::Q4_0, c.N, K, 12);
      const Tensor x = Tensor::from_vector(randn(K, 13, 1.f), {1, K});
      const auto got = qmatmul_t(x.to(d), w.to(d)).cpu().to_vector<float>();
      const std::string what = "N=" + std::to_string(c.N) + " WAVE=" + c.wave + " ROWS='" + c.rows_env + "'";
      EXPECT_EQ(webgpu::last_qmatvec_split_for_testing(), std::make_pair(c.rows, 1u)) << what;
      if (c.rows != 8) expect_within_i8_bound(got, qmatmul_t(x, w).to_vector<float>(), w, x, 1.0 / (254.0 * 254.0), 1.001, what);
    }
    test_unsetenv("WGT_QMATVEC_ROWS");
    // The default count: the table by adapter name (132 for the H200 the rule was measured on).
    EXPECT_EQ(webgpu::known_compute_units("NVIDIA H200"), 132u);
    EXPECT_EQ(webgpu::known_compute_units("NVIDIA H100 80GB HBM3"), 132u);
    EXPECT_EQ(webgpu::known_compute_units("llvmpipe (LLVM 15.0.6, 256 bits)"), 0u);
    test_setenv("WGT_QMATVEC_WAVE", "-1");
    EXPECT_THROW((void)qmatmul_t(Tensor::from_vector(randn(256, 3, 1.f), {1, 256}).to(d), qrand(QType::Q4_0, 5, 256, 4).to(d)),
                 Error);
    test_unsetenv("WGT_QMATVEC_WAVE");
  }
  // A split that is not a power of two or does not divide the warps is a typed error.
  for (const auto& [ksplit, warps] : {std::pair{"3", "8"}, std::pair{"4", "2"}}) {
    test_setenv("WGT_QMATVEC_KSPLIT", ksplit);
    test_setenv("WGT_QMATVEC_WARPS", warps);
    try {
      (void)qmatmul_t(Tensor::from_vector(randn(512, 3, 1.f), {1, 512}).to(d), qrand(QType::Q4_0, 5, 512, 4).to(d));
      ADD_FAILURE() << "no error for WGT_QMATVEC_KSPLIT=" << ksplit << " with " << warps << " warps";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("WGT_QMATVEC_KSPLIT"), std::string::npos) << e.what();
    }
  }
  test_unsetenv("WGT_QMATVEC_KSPLIT");
  test_unsetenv("WGT_QMATVEC_WARPS");
  // Without dot4I8Packed (emulated) the default runs the f32-x kernel, with its tolerance.
  test_unsetenv("WGT_QMATVEC_KERNEL");
  test_setenv("WGT_WEBGPU_DISABLE_PACKED_DOT", "1");
  for (QType t : {QType::Q4_0, QType::Q6_K}) check_matmul(t, 1, 5, 512, "no packed dot");
  EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "stream");
  test_unsetenv("WGT_WEBGPU_DISABLE_PACKED_DOT");
  (void)qmatmul_t(Tensor::from_vector(randn(512, 3, 1.f), {1, 512}).to(d), qrand(QType::Q6_K, 5, 512, 4).to(d));
  EXPECT_STREQ(webgpu::last_qmatvec_kernel_for_testing(), "i8x2");  // checked numerically above
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
