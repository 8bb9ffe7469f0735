// WebGPU quantized matmul (Q8_0, Q4_K) against the CPU kernels: small shapes for lavapipe,
// packed weights resident on the device, typed errors for formats without a kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "quant/blocks.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

class QuantWebGPU : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(webgpu_available(&why)) << "WebGPU adapter required: " << why;
    saved_ = Runtime::get().policy();
    Policy p = saved_;
    p.mode = PolicyMode::Auto;
    p.allow_fallback = true;
    Runtime::get().set_policy(p);
  }
  void TearDown() override {
    Runtime::get().set_policy(saved_);
    synchronize();
  }
  static std::vector<float> randn(int64_t n, uint32_t seed, float sd) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.f, sd);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = g(rng);
    return v;
  }
  Policy saved_;
};

TEST_F(QuantWebGPU, MatmulMatchesCpuOnResidentWeights) {
  const Device gpu = Device::webgpu();
  for (QType t : {QType::Q8_0, QType::Q4_K})
    for (int64_t K : {256, 512})
      for (int64_t M : {1, 3})
        for (int64_t N : {1, 5, 17}) {
          const QTensor w = quantize(Tensor::from_vector(randn(N * K, 11 + N, 0.05f), {N, K}), t);
          const Tensor x = Tensor::from_vector(randn(M * K, 23 + M, 1.f), {M, K});
          const auto want = qmatmul_t(x, w).to_vector<float>();  // CPU fast path
          const QTensor wg = w.to(gpu);
          ASSERT_TRUE(wg.device().is_webgpu());
          const Tensor yg = qmatmul_t(x.to(gpu), wg);
          EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
          ASSERT_TRUE(yg.device().is_webgpu());
          ASSERT_EQ(yg.shape(), (Shape{M, N}));
          const auto got = yg.cpu().to_vector<float>();
          double scale = 1e-3;
          for (float v : want) scale = std::max(scale, std::fabs(double(v)));
          for (size_t i = 0; i < want.size(); ++i)
            ASSERT_NEAR(got[i], want[i], 2e-5 * scale * std::sqrt(double(K) / 256))
                << qtype_name(t) << " M=" << M << " N=" << N << " K=" << K << " i=" << i;
        }
}

TEST_F(QuantWebGPU, BatchedXAndHostWeightIsUploaded) {
  const int64_t K = 256, N = 7;
  const QTensor w = quantize(Tensor::from_vector(randn(N * K, 5, 0.05f), {N, K}), QType::Q4_K);
  const Tensor x = Tensor::from_vector(randn(2 * 3 * K, 6, 1.f), {2, 3, K});
  const auto want = qmatmul_t(x, w).to_vector<float>();
  const Tensor yg = qmatmul_t(x.to(Device::webgpu()), w);  // weight still on the host
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  ASSERT_EQ(yg.shape(), (Shape{2, 3, N}));
  const auto got = yg.cpu().to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

TEST_F(QuantWebGPU, CorruptScalesGiveNanNotCrash) {
  std::vector<uint8_t> raw(sizeof(quant::BlockQ8_0) * 2, 1);
  reinterpret_cast<quant::BlockQ8_0*>(raw.data())[0].d = 0x7E00;  // NaN scale in row 0
  reinterpret_cast<quant::BlockQ8_0*>(raw.data())[1].d = 0x3C00;  // 1.0 in row 1
  const QTensor w = QTensor::from_bytes(QType::Q8_0, 2, 32, raw.data(), raw.size()).to(Device::webgpu());
  const auto y = qmatmul_t(Tensor::from_vector(std::vector<float>(32, 1.f), {1, 32}).to(Device::webgpu()), w)
                     .cpu()
                     .to_vector<float>();
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_FLOAT_EQ(y[1], 32.f);  // 32 codes of value 1, scale 1
}

TEST_F(QuantWebGPU, DequantizeMatchesCpu) {
  for (QType t : {QType::Q8_0, QType::Q4_K})
    for (int64_t rows : {1, 3, 17}) {
      const int64_t cols = 512;
      const QTensor w = quantize(Tensor::from_vector(randn(rows * cols, 31 + rows, 0.05f), {rows, cols}), t);
      const auto want = dequantize(w).to_vector<float>();
      const Tensor yg = dequantize(w.to(Device::webgpu()));
      EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
      ASSERT_TRUE(yg.device().is_webgpu());
      ASSERT_EQ(yg.shape(), (Shape{rows, cols}));
      const auto got = yg.cpu().to_vector<float>();
      // same f32 operations as the CPU (d*sc, then *q - dmin*mn); only FMA contraction may differ
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-6f * std::max(1.f, std::fabs(want[i]))) << qtype_name(t) << " rows=" << rows << " i=" << i;
    }
}

TEST_F(QuantWebGPU, GetRowsMatchesCpuAndBadDeviceIdsGiveNanRows) {
  for (QType t : {QType::Q8_0, QType::Q4_K}) {
    const QTensor table = quantize(Tensor::from_vector(randn(9 * 256, 41, 0.05f), {9, 256}), t);
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
    // device ids are not read back: an out-of-range one yields a NaN row, the others are exact
    const Tensor dev_ids = Tensor::from_vector(std::vector<int32_t>{2, 99, -1}, {3}).to(Device::webgpu());
    const auto r = get_rows(tg, dev_ids).cpu().to_vector<float>();
    const auto row2 = get_rows(table, Tensor::from_vector(std::vector<int32_t>{2}, {1})).to_vector<float>();
    for (int c = 0; c < 256; ++c) {
      EXPECT_NEAR(r[c], row2[c], 1e-6f * std::max(1.f, std::fabs(row2[c]))) << c;
      EXPECT_TRUE(std::isnan(r[256 + c]) && std::isnan(r[512 + c])) << c;
    }
  }
}

TEST_F(QuantWebGPU, FormatWithoutKernelIsUnsupported) {
  try {
    (void)dequantize(quantize(Tensor::from_vector(randn(256, 3, 0.05f), {1, 256}), QType::Q5_K).to(Device::webgpu()));
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(e.message().find("q5_k"), std::string::npos) << e.message();
  }
  const QTensor w = quantize(Tensor::from_vector(randn(256, 1, 0.05f), {1, 256}), QType::Q6_K).to(Device::webgpu());
  try {
    (void)qmatmul_t(Tensor::from_vector(randn(256, 2, 1.f), {1, 256}).to(Device::webgpu()), w);
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(e.message().find("q6_k"), std::string::npos) << e.message();
  }
}

}  // namespace
