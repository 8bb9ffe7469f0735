// Placement robustness: host views sent to the device, the memory budget as part of the
// placement decision, reads that never fail for budget reasons, counted pins, gpu-strict
// advice, and the quantized ops falling back to the CPU like every other op.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "webgpu/webgpu_backend.hpp"
#include "webgpu_test.hpp"
#include "wgt/quant.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

const Device kGpu = Device::webgpu();

class Placement : public wgt::testing::WebGpuTest {
 protected:
  void SetUp() override {
    WebGpuTest::SetUp();
    Policy p = saved_;
    p.mode = PolicyMode::Auto;
    p.allow_fallback = true;
    p.min_gpu_work = 1 << 16;
    p.memory_budget = 0;
    p.trace = false;
    p.cpu_mode = CpuMode::Fast;
    Runtime::get().set_policy(p);
    Runtime::get().reset_stats();
  }
  void TearDown() override {
    WebGpuTest::TearDown();
    synchronize();
  }
  void set(const std::function<void(Policy&)>& f) {
    Policy p = Runtime::get().policy();
    f(p);
    Runtime::get().set_policy(p);
  }
  static void expect_equal(const Tensor& got, const Tensor& want, float tol, const std::string& what) {
    ASSERT_EQ(got.shape(), want.shape()) << what;
    const auto g = got.cpu().to_vector<float>(), w = want.cpu().to_vector<float>();
    for (size_t i = 0; i < g.size(); ++i)
      ASSERT_NEAR(g[i], w[i], tol * std::max(1.f, std::fabs(w[i]))) << what << " i=" << i;
  }
  static std::vector<float> randv(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = g(rng);
    return v;
  }
};

// A non-contiguous host view moved to the device (an op's input under the default policy or
// gpu-strict, or an explicit .to()) was compacted with contiguous(), an op the policy sent
// back to the device: unbounded recursion (SIGSEGV).
TEST_F(Placement, HostViewsReachTheDeviceWithoutRecursion) {
  const Tensor a = rand_normal({256, 256}, 1);
  const std::vector<float> av = a.to_vector<float>();
  const Tensor c = a.t().contiguous();  // work 65536: above the default threshold
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  ASSERT_EQ(c.shape(), (Shape{256, 256}));
  const auto cv = c.to_vector<float>();
  for (int64_t i = 0; i < 256; ++i)
    for (int64_t j = 0; j < 256; j += 17) ASSERT_EQ(cv[i * 256 + j], av[j * 256 + i]) << i << "," << j;

  // Explicit transfer of an odd strided view (a slice with a step, transposed).
  const Tensor v = Tensor::from_vector(randv(7 * 9, 3), {7, 9}).slice(1, 1, 9, 2).t();
  const Tensor dv = v.to(kGpu);
  EXPECT_TRUE(dv.is_contiguous());
  expect_equal(dv, v, 0.f, "to(webgpu) of a strided view");

  set([](Policy& p) { p.mode = PolicyMode::GpuStrict; });
  const Tensor x = rand_normal({4, 4}, 1);
  const Tensor y = exp(x.t());
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  set([](Policy& p) { p.mode = PolicyMode::CpuOnly; p.cpu_mode = CpuMode::Reference; });
  expect_equal(y, exp(x.t()), 1e-6f, "gpu-strict exp of a transposed host view");
}

// The program: host-only, 1 MiB in and 1 MiB out under a 2 MiB budget. It failed
// reading its result back (the staging buffer was charged to the budget with no room left).
TEST_F(Placement, HostProgramUnderATightBudgetRuns) {
  set([](Policy& p) { p.memory_budget = 2097152; });
  const Tensor x = rand_normal({512, 512}, 5);
  const Tensor y = exp(x);
  EXPECT_TRUE(y.device().is_cpu());
  set([](Policy& p) { p.mode = PolicyMode::CpuOnly; p.cpu_mode = CpuMode::Reference; });
  expect_equal(y, exp(x), 1e-6f, "exp under the budget");
}

// An op on host inputs whose device working set exceeds the budget runs on the CPU, and the
// decision, the stats and the trace say why; the same op fits once the budget allows.
TEST_F(Placement, BudgetIsPartOfThePlacementDecision) {
  set([](Policy& p) { p.memory_budget = 2097152; });
  Runtime::get().set_record_log(true);
  const Tensor x = rand_normal({1024, 1024}, 6);  // 4 MiB: does not fit either
  EXPECT_EQ(Runtime::get().last_decision().backend, "cpu-fast");
  const Tensor y = exp(x);
  const OpDecision d = Runtime::get().last_decision();
  EXPECT_EQ(d.op, "exp");
  EXPECT_EQ(d.backend, "cpu-fast");
  EXPECT_FALSE(d.fallback);
  EXPECT_NE(d.reason.find("working set of 8388608 bytes"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("budget of 2097152 bytes"), std::string::npos) << d.reason;
  EXPECT_EQ(Runtime::get().stats().per_op.at("exp").at("cpu-fast").last_reason, d.reason);
  EXPECT_EQ(Runtime::get().trace_log().back().reason, d.reason);
  EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);
  Runtime::get().set_record_log(false);

  set([](Policy& p) { p.memory_budget = 16u << 20; });
  const Tensor y2 = exp(x);
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  expect_equal(y2, y, 1e-5f, "exp on the device vs on the CPU");
}

// Bytes eviction cannot free (what the device holds besides tensors and its free pool).
uint64_t held_now() {
  const MemoryStats m = Runtime::get().memory_stats();
  return m.allocated - m.pooled - (m.resident - m.pinned);
}

// Pinned bytes cannot be evicted, so they shrink the room an op may use.
TEST_F(Placement, PinnedBytesShrinkTheRoomForHostOps) {
  set([](Policy& p) { p.min_gpu_work = 0; });
  const Tensor w = zeros({393216}, DType::F32, kGpu);  // 1.5 MiB
  pin(w);
  synchronize();
  Runtime::get().webgpu_backend()->release_cached();
  const uint64_t held = held_now();
  ASSERT_GE(held, 1572864u);
  set([&](Policy& p) { p.memory_budget = held + 524288; });  // 512 KiB of room
  const Tensor x = rand_normal({128, 256}, 7);  // 128 KiB out
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  (void)exp(x);  // 128 KiB in + 128 KiB out
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  const Tensor x2 = concat({x, x}, 0);  // 256 KiB
  (void)add(x2, x2);  // 3 x 256 KiB > 512 KiB
  EXPECT_EQ(Runtime::get().last_decision().backend, "cpu-fast");
  const std::string why = Runtime::get().last_decision().reason;
  EXPECT_NE(why.find("working set of 786432 bytes"), std::string::npos) << why;
  EXPECT_NE(why.find("next to " + std::to_string(held) + " bytes pinned"), std::string::npos) << why;
  unpin(w);
  (void)add(x2, x2);
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
}

// A resident tensor is always readable, even when the budget leaves no room for the read's
// staging buffer: that buffer is no tensor.
TEST_F(Placement, ReadingBackNeverFailsForBudgetReasons) {
  const std::vector<float> v = randv(196608, 8);  // 768 KiB
  const Tensor t = Tensor::from_vector(v, {196608}, kGpu);
  pin(t);
  synchronize();
  Runtime::get().webgpu_backend()->release_cached();
  set([&](Policy& p) { p.memory_budget = held_now(); });  // no byte of room left
  EXPECT_EQ(t.to_vector<float>(), v);
  EXPECT_EQ(t.slice(0, 5, 1000, 3).cpu().to_vector<float>()[2], v[11]);
  unpin(t);
}

TEST_F(Placement, OutOfMemoryGivesExactBytes) {
  set([](Policy& p) { p.memory_budget = 1000003; });
  try {
    (void)Tensor::empty({500001}, DType::F32, kGpu);
    ADD_FAILURE() << "no OutOfMemory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    const std::string m = e.what();
    EXPECT_NE(m.find("need 2000004 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("budget is 1000003 bytes"), std::string::npos) << m;
  }
}

TEST_F(Placement, PinsAreCounted) {
  const Tensor t = zeros({1000}, DType::F32, kGpu);
  const Tensor view = t.slice(0, 10, 20);  // shares the storage
  pin(t);
  pin(view);
  pin(t);
  unpin(t);
  EXPECT_EQ(Runtime::get().memory_stats().pinned, 4000u) << "two pins left";
  unpin(view);
  EXPECT_EQ(Runtime::get().memory_stats().pinned, 4000u) << "one pin left";
  unpin(t);
  EXPECT_EQ(Runtime::get().memory_stats().pinned, 0u);
  try {
    unpin(t);
    ADD_FAILURE() << "unpin of an unpinned tensor";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
  }
}

// gpu-strict runs every op on WebGPU, host ones included; one WebGPU cannot run (an i64
// creation) is a typed error whose advice fits: not "move the inputs to cpu" (they are there).
TEST_F(Placement, GpuStrictAdviceForHostOps) {
  set([](Policy& p) { p.mode = PolicyMode::GpuStrict; });
  try {
    (void)zeros({3}, DType::I64);
    ADD_FAILURE() << "gpu-strict ran an i64 creation";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    const std::string m = e.what();
    EXPECT_NE(m.find("gpu-strict"), std::string::npos) << m;
    EXPECT_NE(m.find("policy auto"), std::string::npos) << m;
    EXPECT_EQ(m.find("move the inputs to cpu"), std::string::npos) << m;
  }
  set([](Policy& p) { p.mode = PolicyMode::Auto; });
  EXPECT_EQ(zeros({3}, DType::I64).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
}

// The quantized ops go through the runtime: an op the WebGPU backend refuses (here a weight
// over a shrunk maxStorageBufferBindingSize, i64 device ids) falls back to the CPU under
// auto, counted and traced, in the policy's CPU mode; without fallback it is Unsupported.
class QuantPlacement : public Placement {
 protected:
  void SetUp() override {
    Placement::SetUp();
    std::string why;
    backend_ = dynamic_cast<webgpu::WebGPUBackend*>(Runtime::get().webgpu_backend(0, &why));
    ASSERT_NE(backend_, nullptr) << why;
    saved_limit_ = backend_->limits().max_storage_buffer_binding_size;
  }
  void TearDown() override {
    if (backend_) backend_->limits_for_testing().max_storage_buffer_binding_size = saved_limit_;
    Placement::TearDown();
  }
  void shrink_limit(uint64_t bytes) { backend_->limits_for_testing().max_storage_buffer_binding_size = bytes; }
  void expect_fallback(const char* op, uint64_t fb0) {
    const OpDecision& d = Runtime::get().last_decision();
    EXPECT_EQ(d.op, op);
    EXPECT_EQ(d.backend, "cpu-reference") << op;
    EXPECT_TRUE(d.fallback) << op;
    EXPECT_EQ(d.reason.rfind("fallback: ", 0), 0u) << d.reason;
    EXPECT_EQ(Runtime::get().stats().fallbacks, fb0 + 1) << op;
    EXPECT_EQ(Runtime::get().stats().per_op.at(op).at("cpu-reference").fallbacks, 1u) << op;
  }
  webgpu::WebGPUBackend* backend_ = nullptr;
  uint64_t saved_limit_ = 0;
};

TEST_F(QuantPlacement, OversizedWeightFallsBackForEveryQuantizedOp) {
  const int64_t N = 17, K = 256;  // q8_0: 17 rows of 272 bytes = 4624 bytes
  const QTensor w = quantize(Tensor::from_vector(randv(N * K, 11), {N, K}), QType::Q8_0);
  const Tensor x = Tensor::from_vector(randv(2 * K, 12), {2, K});
  const Tensor g = Tensor::from_vector(randv(K, 13), {K});
  const Tensor up = Tensor::from_vector(randv(2 * K, 14), {2, K});
  const Tensor c = Tensor::from_vector(randv(2 * N, 15), {2, N});
  const Tensor ids = Tensor::from_vector(std::vector<int32_t>{16, 0, 5}, {3});
  // Oracle: the CPU reference kernels.
  set([](Policy& p) { p.mode = PolicyMode::CpuOnly; p.cpu_mode = CpuMode::Reference; });
  const Tensor want_mm = qmatmul_t(x, w), want_norm = rms_norm_qmatmul_t(x, g, w, 1e-5),
               want_add = addqmm_t(c, x, w), want_silu = silu_mul_qmatmul_t(x, up, w, c),
               want_deq = dequantize(w), want_rows = get_rows(w, ids);

  const QTensor wg = w.to(kGpu);
  const Tensor xg = x.to(kGpu), gg = g.to(kGpu), upg = up.to(kGpu), cg = c.to(kGpu), idsg = ids.to(kGpu);
  set([](Policy& p) { p.mode = PolicyMode::Auto; p.allow_fallback = true; p.cpu_mode = CpuMode::Reference; });
  shrink_limit(4096);  // the weight's 4624 bytes no longer fit one binding; x, g, c, ids do
  Runtime::get().reset_stats();

  struct Case {
    const char* op;
    std::function<Tensor()> run;
    const Tensor* want;
  };
  const Case cases[] = {
      {"qmatmul_t", [&] { return qmatmul_t(xg, wg); }, &want_mm},
      {"rms_norm_qmatmul_t", [&] { return rms_norm_qmatmul_t(xg, gg, wg, 1e-5); }, &want_norm},
      {"addqmm_t", [&] { return addqmm_t(cg, xg, wg); }, &want_add},
      {"silu_mul_addqmm_t", [&] { return silu_mul_qmatmul_t(xg, upg, wg, cg); }, &want_silu},
      {"dequantize", [&] { return dequantize(wg); }, &want_deq},
      {"get_rows", [&] { return get_rows(wg, idsg); }, &want_rows},
  };
  for (const Case& cs : cases) {
    const uint64_t fb0 = Runtime::get().stats().fallbacks;
    const Tensor y = cs.run();
    expect_fallback(cs.op, fb0);
    EXPECT_TRUE(y.device().is_webgpu()) << cs.op << ": results stay with the device operands";
    expect_equal(y, *cs.want, 1e-6f, cs.op);
  }

  // Without fallback: the typed error, naming the op.
  set([](Policy& p) { p.allow_fallback = false; });
  for (const Case& cs : cases) {
    try {
      (void)cs.run();
      ADD_FAILURE() << cs.op << " ran without fallback";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
      EXPECT_EQ(e.op(), cs.op) << e.what();
    }
  }
}

// i64 device ids are beyond the WebGPU kernel (WGSL has no 64-bit integers): a fallback.
TEST_F(QuantPlacement, GetRowsWithI64DeviceIdsFallsBack) {
  const QTensor w = quantize(Tensor::from_vector(randv(5 * 64, 21), {5, 64}), QType::Q4_0);
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{4, 1, 1}, {3});
  set([](Policy& p) { p.mode = PolicyMode::CpuOnly; p.cpu_mode = CpuMode::Reference; });
  const Tensor want = get_rows(w, ids);
  set([](Policy& p) { p.mode = PolicyMode::Auto; p.cpu_mode = CpuMode::Reference; });
  const uint64_t fb0 = Runtime::get().stats().fallbacks;
  const Tensor y = get_rows(w.to(kGpu), ids.to(kGpu));
  expect_fallback("get_rows", fb0);
  expect_equal(y, want, 0.f, "get_rows i64 device ids");
  // Out-of-range device ids on the CPU path: the CPU kernel checks them.
  try {
    (void)get_rows(w.to(kGpu), Tensor::from_vector(std::vector<int64_t>{5}, {1}).to(kGpu));
    ADD_FAILURE() << "no OutOfRange";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfRange) << e.what();
  }
}

}  // namespace
