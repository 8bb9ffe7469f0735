// Execution policy: thresholds, fallback, strict mode, budget, LRU eviction, pinning, stress.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "webgpu_test.hpp"
#include "wgt/model.hpp"
#include "wgt/synthetic.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

class PolicyTest : public wgt::testing::WebGpuTest {
 protected:
  void SetUp() override {
    WebGpuTest::SetUp();
    Policy p = saved_;
    p.mode = PolicyMode::Auto;
    p.allow_fallback = true;
    p.memory_budget = 0;
    p.trace = false;
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
  static std::vector<float> iota(int64_t n, float start) {
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i % 1000);
    return v;
  }
};

TEST_F(PolicyTest, HostInputsBelowThresholdRunOnCpu) {
  set([](Policy& p) { p.min_gpu_work = 1e9; });
  Tensor a = Tensor::from_vector(iota(100, 0), {100});
  Tensor y = add(a, a);
  EXPECT_EQ(Runtime::get().last_decision().backend.rfind("cpu", 0), 0u) << Runtime::get().last_decision().backend;
  EXPECT_NE(Runtime::get().last_decision().reason.find("threshold"), std::string::npos);
  EXPECT_TRUE(y.device().is_cpu());
  EXPECT_FLOAT_EQ(y.to_vector<float>()[7], 14.f);
}

TEST_F(PolicyTest, HostInputsAboveThresholdRunOnWebGPUAndComeBack) {
  set([](Policy& p) { p.min_gpu_work = 10; });
  Tensor a = Tensor::from_vector(iota(100, 0), {100});
  Tensor y = add(a, a);
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  EXPECT_TRUE(y.device().is_cpu());  // results return to where the inputs live
  EXPECT_FLOAT_EQ(y.to_vector<float>()[99], 198.f);
  const OpCounters c = Runtime::get().stats().per_op.at("add").at("webgpu:0");  // stats() is a snapshot
  EXPECT_EQ(c.calls, 1u);
  EXPECT_GE(c.bytes_uploaded, 400u);
  EXPECT_GE(c.bytes_downloaded, 400u);
}

// KeepHostOpsOnCpu: the calling thread's host ops stay on the CPU whatever their work (other
// threads and device inputs decide as before), nested scopes count, and a language model
// loaded on the CPU holds one: its load and forward record no WebGPU decision under policy
// auto with a threshold every op passes.
TEST_F(PolicyTest, KeepHostOpsOnCpuScopesTheThreadsHostOps) {
  set([](Policy& p) { p.min_gpu_work = 10; });
  Tensor a = Tensor::from_vector(iota(100, 0), {100});
  auto backend_of_add = [&] {
    (void)add(a, a);
    return Runtime::get().last_decision().backend;
  };
  EXPECT_EQ(backend_of_add(), "webgpu:0");
  {
    KeepHostOpsOnCpu outer;
    {
      KeepHostOpsOnCpu inner;
      EXPECT_EQ(backend_of_add(), "cpu-fast");
    }
    EXPECT_TRUE(KeepHostOpsOnCpu::active());
    EXPECT_EQ(backend_of_add(), "cpu-fast");
    EXPECT_NE(Runtime::get().last_decision().reason.find("KeepHostOpsOnCpu"), std::string::npos);
    std::string other;  // another thread is not in the scope
    std::thread t([&] { other = backend_of_add(); });
    t.join();
    EXPECT_EQ(other, "webgpu:0");
    Tensor d = a.to(Device::webgpu(0));  // device inputs still run on their device
    (void)add(d, d);
    EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  }
  EXPECT_FALSE(KeepHostOpsOnCpu::active());
  EXPECT_EQ(backend_of_add(), "webgpu:0");
}

TEST_F(PolicyTest, LanguageModelOnTheCpuNeverOffloads) {
  set([](Policy& p) { p.min_gpu_work = 1; });
  const std::string path =
      (std::filesystem::temp_directory_path() / ("wgt-keep-host-" + std::to_string(::getpid()) + ".gguf")).string();
  write_synthetic_model(path, synthetic_shape("tiny"), "q8_0", 3);
  Runtime::get().set_record_log(false);  // clears the log
  Runtime::get().set_record_log(true);
  {
    LanguageModel m = LanguageModel::load(path, {});
    const Tensor logits = m.forward({1, 5, 9});
    EXPECT_EQ(logits.shape(), (Shape{1, m.config().n_vocab}));
  }
  size_t ops = 0;
  for (const auto& d : Runtime::get().trace_log()) {
    ++ops;
    EXPECT_EQ(d.backend.rfind("cpu", 0), 0u) << d.op << " ran on " << d.backend << " (" << d.reason << ")";
  }
  EXPECT_GT(ops, 10u);
  Runtime::get().set_record_log(false);
  std::remove(path.c_str());
  Tensor a = Tensor::from_vector(iota(100, 0), {100});
  (void)add(a, a);  // the model's scope ended with its calls
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
}

TEST_F(PolicyTest, UnsupportedDtypeFallsBackAndIsCounted) {
  Tensor a = Tensor::from_vector(std::vector<double>{1, 2, 3}, {3}).to(Device::webgpu(0));
  Tensor y = add(a, a);
  EXPECT_TRUE(Runtime::get().last_decision().fallback);
  EXPECT_EQ(Runtime::get().last_decision().backend.rfind("cpu", 0), 0u);
  EXPECT_TRUE(y.device().is_webgpu());  // result placed where the inputs were
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{2, 4, 6}));
  EXPECT_GE(Runtime::get().stats().fallbacks, 1u);
}

TEST_F(PolicyTest, GpuStrictRaisesTypedUnsupported) {
  set([](Policy& p) { p.mode = PolicyMode::GpuStrict; });
  Tensor a = Tensor::from_vector(std::vector<double>{1, 2, 3}, {3}).to(Device::webgpu(0));
  try {
    add(a, a);
    FAIL() << "expected Unsupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.op(), "add");
    EXPECT_NE(std::string(e.what()).find("f64"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("webgpu"), std::string::npos) << e.what();
  }
  // Fallback disabled in auto mode behaves the same.
  set([](Policy& p) { p.mode = PolicyMode::Auto; p.allow_fallback = false; });
  EXPECT_THROW(add(a, a), Error);
}

TEST_F(PolicyTest, CpuOnlyRunsDeviceTensorsOnCpu) {
  Tensor a = Tensor::from_vector(iota(64, 1), {64}).to(Device::webgpu(0));
  set([](Policy& p) { p.mode = PolicyMode::CpuOnly; });
  Tensor y = mul(a, a);
  EXPECT_EQ(Runtime::get().last_decision().backend.rfind("cpu", 0), 0u);
  EXPECT_TRUE(y.device().is_webgpu());
  EXPECT_FLOAT_EQ(y.to_vector<float>()[2], 9.f);
}

constexpr int64_t kMiB = 1 << 20;

TEST_F(PolicyTest, OverBudgetEvictsLeastRecentlyUsedAndKeepsData) {
  synchronize();
  Runtime::get().webgpu_backend(0)->release_cached();
  const uint64_t base = Runtime::get().memory_stats(0).allocated;
  set([&](Policy& p) { p.memory_budget = base + 3 * kMiB + kMiB / 2; });
  const int64_t n = kMiB / 4;  // 1 MiB of f32
  Tensor a = Tensor::from_vector(iota(n, 1), {n}).to(Device::webgpu(0));
  Tensor b = Tensor::from_vector(iota(n, 2), {n}).to(Device::webgpu(0));
  Tensor c = Tensor::from_vector(iota(n, 3), {n}).to(Device::webgpu(0));
  EXPECT_TRUE(Runtime::get().is_resident(a));
  // Use `a` so that `b` becomes the least recently used.
  Tensor s = sum(a);
  EXPECT_TRUE(Runtime::get().is_resident(s));
  uint64_t ev0 = Runtime::get().stats().evictions;
  Tensor d = Tensor::from_vector(iota(n, 4), {n}).to(Device::webgpu(0));
  EXPECT_GT(Runtime::get().stats().evictions, ev0);
  EXPECT_FALSE(Runtime::get().is_resident(b)) << "b was least recently used";
  EXPECT_TRUE(Runtime::get().is_resident(a)) << "a was used more recently than b";
  EXPECT_TRUE(Runtime::get().is_resident(d));
  // Evicted data is intact and re-uploaded on next use.
  Tensor b2 = add(b, b);
  EXPECT_TRUE(Runtime::get().is_resident(b));
  auto hb = b2.to_vector<float>();
  auto ref = iota(n, 2);
  for (int64_t i = 0; i < n; i += 997) ASSERT_FLOAT_EQ(hb[i], 2 * ref[i]);
  EXPECT_LE(Runtime::get().memory_stats(0).allocated, Runtime::get().memory_budget(0));
}

TEST_F(PolicyTest, PinnedSurvivesPressureAndPinnedOverBudgetIsTypedOOM) {
  synchronize();
  Runtime::get().webgpu_backend(0)->release_cached();
  const uint64_t base = Runtime::get().memory_stats(0).allocated;
  set([&](Policy& p) { p.memory_budget = base + 3 * kMiB + kMiB / 2; });
  const int64_t n = kMiB / 4;
  Tensor w = Tensor::from_vector(iota(n, 5), {n}).to(Device::webgpu(0));
  pin(w);
  std::vector<Tensor> keep;  // unpinned results that pile up and must be evicted, not w
  for (int i = 0; i < 6; ++i) {
    Tensor t = Tensor::from_vector(iota(n, static_cast<float>(i)), {n}).to(Device::webgpu(0));
    keep.push_back(add(t, 1.0));
    EXPECT_TRUE(Runtime::get().is_resident(w)) << "pinned tensor evicted at step " << i;
  }
  EXPECT_GT(Runtime::get().stats().evictions, 0u);
  // Pinned data alone leaves too little room: typed OOM, and nothing is lost.
  Tensor w2 = Tensor::from_vector(iota(n, 6), {n}).to(Device::webgpu(0));
  pin(w2);
  try {
    Tensor big = Tensor::empty({2 * n}, DType::F32, Device::webgpu(0));
    FAIL() << "expected OutOfMemory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << e.what();
    EXPECT_NE(std::string(e.what()).find("pinned"), std::string::npos) << e.what();
  }
  EXPECT_FLOAT_EQ(w.to_vector<float>()[10], 15.f);
  EXPECT_FLOAT_EQ(w2.to_vector<float>()[10], 16.f);
  for (int i = 0; i < 6; ++i) ASSERT_FLOAT_EQ(keep[i].to_vector<float>()[3], static_cast<float>(i + 3 + 1)) << i;
  unpin(w);
  unpin(w2);
  Tensor ok = Tensor::empty({2 * n}, DType::F32, Device::webgpu(0));  // fits after unpinning
  EXPECT_TRUE(Runtime::get().is_resident(ok));
  EXPECT_FLOAT_EQ(w.to_vector<float>()[10], 15.f);  // evicted or not, the data is intact
}

TEST_F(PolicyTest, StressTenTimesTheBudget) {
  synchronize();
  Runtime::get().webgpu_backend(0)->release_cached();
  const uint64_t base = Runtime::get().memory_stats(0).allocated;
  const uint64_t budget = 4 * kMiB;
  set([&](Policy& p) { p.memory_budget = base + budget; });
  std::mt19937 rng(7);
  std::vector<Tensor> outs;
  std::vector<std::vector<float>> expect;
  uint64_t total = 0;
  while (total < 10 * budget) {
    int64_t n = 1 + static_cast<int64_t>(rng() % (kMiB / 8));  // up to 512 KiB
    std::vector<float> h(n);
    for (auto& v : h) v = static_cast<float>(rng() % 1000) - 500.f;
    Tensor t = Tensor::from_vector(h, {n}).to(Device::webgpu(0));
    outs.push_back(add(mul(t, 2.0), 1.0));
    for (auto& v : h) v = v * 2 + 1;
    expect.push_back(std::move(h));
    total += 2 * n * 4;
  }
  EXPECT_GT(Runtime::get().stats().evictions, 0u);
  for (size_t i = 0; i < outs.size(); ++i) ASSERT_EQ(outs[i].to_vector<float>(), expect[i]) << "tensor " << i;
}

TEST_F(PolicyTest, SameResultsInEveryMode) {
  auto program = [](Device dev) {
    Tensor x = rand_normal({17, 33}, 11).to(dev);
    Tensor w = rand_normal({9, 33}, 12).to(dev);
    Tensor y = softmax(matmul_t(rms_norm(x), w), -1);
    return add(y, sum(y, {0}, true)).cpu().to_vector<float>();
  };
  set([](Policy& p) { p.mode = PolicyMode::CpuOnly; });
  auto r_cpu = program(Device::cpu());
  set([](Policy& p) { p.mode = PolicyMode::Auto; });
  auto r_auto = program(Device::webgpu(0));
  set([](Policy& p) { p.mode = PolicyMode::GpuStrict; });
  auto r_strict = program(Device::webgpu(0));
  ASSERT_EQ(r_cpu.size(), r_auto.size());
  for (size_t i = 0; i < r_cpu.size(); ++i) {
    ASSERT_NEAR(r_cpu[i], r_auto[i], 1e-4) << i;
    ASSERT_NEAR(r_cpu[i], r_strict[i], 1e-4) << i;
  }
}

}  // namespace
