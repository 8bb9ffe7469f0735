// TransformerBlock with block-quantized projection weights: a mix of formats (and one dense
// projection) resident and pinned on WebGPU must match the same quantized block on the CPU,
// for a prefill (tiled quantized matmul) and the decode steps after it (matvec kernels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "settings_env.hpp"
#include "webgpu/plans/qmatmul_plan.hpp"
#include "webgpu/plans/tuning.hpp"
#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace webgpu {
QMatmulPlan last_qprefill_plan_for_testing();  // src/webgpu/kernels/quant.cpp
}
namespace {

const Device kGpu = Device::webgpu(0);

Tensor randn(const Shape& s, uint64_t seed) { return rand_normal(s, seed); }

class QuantBlock : public wgt::testing::WebGpuTest {
 protected:
  void TearDown() override {
    WebGpuTest::TearDown();
    synchronize();
  }
  void use_mode(PolicyMode m) {
    Policy p = saved_;
    p.mode = m;
    p.allow_fallback = false;  // a missing kernel must fail, not silently use the CPU
    Runtime::get().set_policy(p);
  }
  // max |got - want| / (1 + |want|).
  static double rel_err(const Tensor& got, const Tensor& want) {
    EXPECT_EQ(shape_str(got.shape()), shape_str(want.shape()));
    auto g = cast(got.cpu(), DType::F32).to_vector<float>();
    auto w = cast(want.cpu(), DType::F32).to_vector<float>();
    double e = 0;
    for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
      if (std::isnan(g[i]) || std::isnan(w[i])) return INFINITY;
      e = std::max(e, std::fabs(double(g[i]) - w[i]) / (1.0 + std::fabs(double(w[i]))));
    }
    return e;
  }
  static BlockConfig cfg() {
    BlockConfig c;
    c.dim = 256;  // K-quants need in_features % 256 == 0
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.ffn_dim = 512;
    return c;
  }
  static constexpr double kI8BlockTol = 3e-2;
  // The prefill on subgroup matrices rounds x and the decoded weights to f16 (u = 2^-11
  // relative each) in every quantized projection, and the decode steps after it read the K/V
  // it cached: measured 1.1e-3 after the block's chain of projections on sid's lavapipe.
  static constexpr double kF16PrefillBlockTol = 5e-3;
  void check_device_matches_cpu(double decode_tol);
  // Every format once, plus one dense projection (w_up).
  static BlockWeights mixed_weights(uint64_t seed) {
    BlockWeights w = BlockWeights::random(cfg(), seed);
    auto q = [](Tensor& dense, QTensor& slot, QType t) {
      slot = quantize(dense, t);
      dense = Tensor();
    };
    q(w.wq, w.quant.wq, QType::Q4_K);
    q(w.wk, w.quant.wk, QType::Q8_0);
    q(w.wv, w.quant.wv, QType::Q6_K);
    q(w.wo, w.quant.wo, QType::Q4_0);
    q(w.w_gate, w.quant.w_gate, QType::Q5_K);
    q(w.w_down, w.quant.w_down, QType::Q4_1);
    return w;
  }
};

// The device block against the CPU's with each decode matvec: f32 x (the `stream` kernel)
// and the default i8x2 (x as two 8-bit terms per 16 values in the Q4_K/Q8_0/Q6_K/Q4_0
// projections; measured ~4e-5 on lavapipe) within 2e-4; i8 (one 8-bit term: each projection
// moves by up to ~0.4% of its largest output, 1/254 of a group's largest |x|; measured 0.7-1.2%
// on lavapipe) within kI8BlockTol.
TEST_F(QuantBlock, DeviceMatchesCpuPrefillAndDecode) {
  struct Case {
    const char* kernel;
    double tol;
  };
  for (const Case& c : {Case{"stream", 2e-4}, Case{"", 2e-4}, Case{"i8", kI8BlockTol}}) {
    SCOPED_TRACE(std::string("matvec kernel '") + c.kernel + "'");
    webgpu::KernelTuning tu;  // set in C++ (webgpu/plans/tuning.hpp); "" = the default
    const std::string k = c.kernel;
    if (k == "stream") tu.qmatvec.kernel = webgpu::QMatvecKernel::Stream;
    if (k == "i8") tu.qmatvec.kernel = webgpu::QMatvecKernel::I8;
    webgpu::set_kernel_tuning_override(tu);
    check_device_matches_cpu(c.tol);
  }
  webgpu::set_kernel_tuning_override(std::nullopt);
}

void QuantBlock::check_device_matches_cpu(double decode_tol) {
  const BlockWeights wc = mixed_weights(3);
  const int64_t seq = 6, steps = 3;
  const Tensor x = randn({seq + steps, cfg().dim}, 17);

  use_mode(PolicyMode::CpuOnly);
  TransformerBlock cpu_blk(cfg(), wc);
  KVCache cc = cpu_blk.make_cache(seq + steps);
  std::vector<Tensor> want = {cpu_blk.forward(x.slice(0, 0, seq).contiguous(), cc, 0)};
  for (int64_t t = 0; t < steps; ++t) want.push_back(cpu_blk.forward(x.slice(0, seq + t, seq + t + 1).contiguous(), cc, seq + t));

  use_mode(PolicyMode::Auto);
  const uint64_t pinned0 = Runtime::get().memory_stats().pinned;
  TransformerBlock blk(cfg(), wc.to(kGpu));
  blk.pin_weights();
  ASSERT_TRUE(blk.device() == kGpu);
  uint64_t packed = 0;
  for (const QTensor* q : {&blk.weights().quant.wq, &blk.weights().quant.wo, &blk.weights().quant.w_down}) {
    ASSERT_TRUE(q->device() == kGpu);
    EXPECT_TRUE(Runtime::get().is_resident(q->bytes()));
    packed += q->nbytes();
  }
  EXPECT_GE(Runtime::get().memory_stats().pinned, pinned0 + packed);

  Runtime::get().reset_stats();
  KVCache gc = blk.make_cache(seq + steps);
  const Tensor xg = x.to(kGpu);
  const Tensor pre = blk.forward(xg.slice(0, 0, seq).contiguous(), gc, 0);
  ASSERT_TRUE(pre.device() == kGpu);
  const bool f16_prefill = webgpu::last_qprefill_plan_for_testing().shader.kernel == webgpu::QMatmulKernel::SgMat;
  EXPECT_LE(rel_err(pre, want[0]), f16_prefill ? kF16PrefillBlockTol : 2e-4) << "prefill";
  for (int64_t t = 0; t < steps; ++t) {
    const Tensor y = blk.forward(xg.slice(0, seq + t, seq + t + 1).contiguous(), gc, seq + t);
    EXPECT_LE(rel_err(y, want[t + 1]), f16_prefill ? std::max(decode_tol, kF16PrefillBlockTol) : decode_tol)
        << "decode step " << t;
  }
  // 6 quantized projections per forward, all on the device, none on the CPU: q, k, v and gate
  // as qmatmul_t, wo and down with their residual as addqmm_t.
  const auto& per_op = Runtime::get().stats().per_op;
  for (const auto& [op, n] : {std::pair{"qmatmul_t", 4}, std::pair{"addqmm_t", 2}}) {
    ASSERT_TRUE(per_op.count(op)) << op;
    const auto& q = per_op.at(op);
    ASSERT_TRUE(q.count("webgpu:0")) << op;
    EXPECT_EQ(q.at("webgpu:0").calls, uint64_t(n * (1 + steps))) << op;
    EXPECT_EQ(q.count("cpu"), 0u) << op;
  }
}

TEST_F(QuantBlock, QuantizedBlockTracksDenseBlock) {
  // Q8_0 everywhere: the block output stays within quantization error of the f32 block.
  use_mode(PolicyMode::Auto);
  const BlockWeights wd = BlockWeights::random(cfg(), 8).to(kGpu);
  const BlockWeights wq = wd.quantized(QType::Q8_0);
  EXPECT_FALSE(wq.wq.defined());
  ASSERT_TRUE(wq.quant.w_down.defined());
  EXPECT_EQ(wq.quant.w_down.qtype(), QType::Q8_0);
  EXPECT_TRUE(wq.quant.w_down.device() == kGpu);
  const Tensor x = randn({4, cfg().dim}, 9).to(kGpu);
  TransformerBlock dense(cfg(), wd), quant(cfg(), wq);
  KVCache c1 = dense.make_cache(4), c2 = quant.make_cache(4);
  const Tensor yd = dense.forward(x, c1, 0), yq = quant.forward(x, c2, 0);
  const double e = rel_err(yq, yd);
  EXPECT_LE(e, 0.05);
  EXPECT_GT(e, 0.0);  // it did run the quantized weights
}

TEST_F(QuantBlock, F16ActivationsKeepTheirDtype) {
  use_mode(PolicyMode::Auto);
  TransformerBlock blk(cfg(), mixed_weights(4).to(kGpu));
  KVCache c = blk.make_cache(2, DType::F16);
  const Tensor y = blk.forward(cast(randn({2, cfg().dim}, 5), DType::F16).to(kGpu), c, 0);
  EXPECT_EQ(y.dtype(), DType::F16);
  EXPECT_TRUE(y.device() == kGpu);
}

TEST_F(QuantBlock, ConstructionErrors) {
  use_mode(PolicyMode::Auto);
  const BlockWeights good = mixed_weights(5);
  auto expect_kind = [](ErrorKind k, const BlockWeights& w) {
    try {
      TransformerBlock b(cfg(), w);
      ADD_FAILURE() << "no throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), k) << e.what();
      EXPECT_EQ(e.op(), "TransformerBlock");
    }
  };
  BlockWeights both = good;
  both.wq = randn({256, 256}, 1);  // dense and quantized wq at once
  expect_kind(ErrorKind::InvalidArgument, both);
  BlockWeights shape = good;
  shape.quant.wk = quantize(randn({64, 256}, 2), QType::Q8_0);  // wk must be [128, 256]
  expect_kind(ErrorKind::ShapeMismatch, shape);
  BlockWeights dev = good;
  dev.quant.wv = dev.quant.wv.to(kGpu);  // one weight on the device, the rest on the host
  expect_kind(ErrorKind::InvalidArgument, dev);
  BlockWeights missing = good;
  missing.quant.w_gate = QTensor();  // neither dense nor quantized
  expect_kind(ErrorKind::InvalidArgument, missing);
  // linear() with a quantized weight checks in_features
  try {
    (void)linear(randn({2, 128}, 3), good.quant.wq);
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_EQ(e.op(), "linear");
  }
}

}  // namespace
}  // namespace wgt
