// Placement on the CPU: the quantized ops, in-place RoPE and KV-cache appends go through the
// runtime (decisions, stats and trace recorded; the policy's CPU mode honoured), moved-from
// tensors are undefined, pins are only for device tensors.
#include <random>

#include "core/ref_test_util.hpp"
#include "quant/kernels.hpp"
#include "wgt/nn.hpp"
#include "wgt/quant.hpp"

namespace wgt::test {
namespace {

class CpuPlacement : public RefTest {
 protected:
  void SetUp() override {
    RefTest::SetUp();
    Runtime::get().reset_stats();
    Runtime::get().set_record_log(true);
  }
  void TearDown() override {
    Runtime::get().set_record_log(false);
    RefTest::TearDown();
  }
  static void set_cpu_mode(CpuMode m) {
    Policy p = Runtime::get().policy();
    p.cpu_mode = m;
    Runtime::get().set_policy(p);
  }
  static std::vector<float> randv(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = g(rng);
    return v;
  }
  static void expect_decision(const char* op, const char* backend) {
    const OpDecision& d = Runtime::get().last_decision();
    EXPECT_EQ(d.op, op);
    EXPECT_EQ(d.backend, backend) << op;
    EXPECT_FALSE(d.fallback) << op;
    ASSERT_FALSE(Runtime::get().trace_log().empty());
    EXPECT_EQ(Runtime::get().trace_log().back().op, op);
    EXPECT_GE(Runtime::get().stats().per_op.at(op).at(backend).calls, 1u) << op;
  }
};

TEST_F(CpuPlacement, MovedFromTensorIsUndefined) {
  Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = std::move(a);
  EXPECT_FALSE(a.defined());  // NOLINT(bugprone-use-after-move): the state under test
  EXPECT_EQ(a.numel(), 0);
  EXPECT_EQ(a.nbytes(), 0u);
  EXPECT_TRUE(a.shape().empty());
  EXPECT_TRUE(a.strides().empty());
  EXPECT_EQ(b.numel(), 6);
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  Tensor c = F({7}, {1});
  c = std::move(b);
  EXPECT_FALSE(b.defined());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.numel(), 0);
  EXPECT_TRUE(b.shape().empty());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  c = std::move(c);  // self-move keeps the tensor
  EXPECT_EQ(c.numel(), 6);
}

TEST_F(CpuPlacement, PinRejectsHostTensors) {
  const Tensor t = F({1, 2}, {2});
  for (auto f : {&pin, &unpin}) {
    try {
      f(t);
      ADD_FAILURE() << "pin/unpin of a host tensor";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    }
  }
}

// Each quantized op runs as a runtime call on the CPU backend of the policy's mode: reference
// (the exact kernels: equal to the kernels called directly) and fast.
TEST_F(CpuPlacement, QuantizedOpsFollowTheCpuMode) {
  const int64_t M = 3, N = 5, K = 64;
  const QTensor w = quantize(Tensor::from_vector(randv(N * K, 1), {N, K}), QType::Q4_1);
  // x as a transposed view: the kernels take strided operands.
  const Tensor x = Tensor::from_vector(randv(M * K, 2), {K, M}).t();
  const Tensor c = Tensor::from_vector(randv(M * N, 3), {M, N});
  const Tensor ids = I64({4, 0, 2}, {3});

  std::vector<float> exact(static_cast<size_t>(M * N));
  const Tensor xc = x.contiguous();
  quant::qmatmul_t_reference(QType::Q4_1, xc.data<float>(), M, K, w.data(), w.row_bytes(), N, exact.data());

  for (CpuMode mode : {CpuMode::Reference, CpuMode::Fast}) {
    set_cpu_mode(mode);
    const char* be = mode == CpuMode::Reference ? "cpu-reference" : "cpu-fast";
    const double tol = mode == CpuMode::Reference ? 0.0 : 1e-5;
    const auto y = qmatmul_t(x, w).to_vector<float>();
    expect_decision("qmatmul_t", be);
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], exact[i], tol * std::max(1.f, std::fabs(exact[i]))) << be;
    const auto ya = addqmm_t(c, x, w).to_vector<float>();
    expect_decision("addqmm_t", be);
    const auto cv = c.to_vector<float>();
    for (size_t i = 0; i < ya.size(); ++i) EXPECT_NEAR(ya[i], exact[i] + cv[i], 1e-5 * std::max(1.f, std::fabs(ya[i]))) << be;
    const auto deq = dequantize(w).to_vector<float>();
    expect_decision("dequantize", be);
    const auto rows = get_rows(w, ids).to_vector<float>();
    expect_decision("get_rows", be);
    for (int64_t k = 0; k < K; ++k) {
      EXPECT_EQ(rows[k], deq[4 * K + k]) << be;
      EXPECT_EQ(rows[2 * K + k], deq[2 * K + k]) << be;
    }
  }
}

TEST_F(CpuPlacement, InPlaceRopeAndKvAppendAreRuntimeCalls) {
  for (CpuMode mode : {CpuMode::Reference, CpuMode::Fast}) {
    set_cpu_mode(mode);
    const char* be = mode == CpuMode::Reference ? "cpu-reference" : "cpu-fast";
    Tensor x = Tensor::from_vector(randv(2 * 2 * 8, 4), {2, 2, 8});
    const Tensor want = rope(x, 3);
    rope_(x, 3);
    expect_decision("rope_", be);
    EXPECT_EQ(Runtime::get().last_decision().reason, "in-place on a host tensor");
    EXPECT_EQ(x.to_vector<float>(), want.to_vector<float>());

    KVCache cache(4, 2, 8);
    const Tensor k = Tensor::from_vector(randv(2 * 2 * 8, 5), {2, 2, 8});
    cache.append(k, k);
    expect_decision("kv_append", be);
    EXPECT_EQ(cache.view_k().to_vector<float>(), k.to_vector<float>());
    Tensor q = Tensor::from_vector(randv(2 * 8, 6), {1, 2, 8});
    const Tensor k1 = k.slice(0, 0, 1).contiguous();
    cache.append_rope(q, k1, k1, RopeConfig{});
    expect_decision("kv_append_rope", be);
    EXPECT_EQ(cache.size(), 3);
  }
}

}  // namespace
}  // namespace wgt::test
