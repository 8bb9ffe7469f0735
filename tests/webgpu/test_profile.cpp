// Profiling mode of the WebGPU backend (GPU kernel times from timestamp queries): counts per
// kernel key, sane times, unchanged results, reset, the one-pass-per-batch path when off, and
// the typed Unsupported error on adapters without timestamp-query. Each test checks which
// case the adapter is in and asserts that case's behaviour (never a silent pass).
// The timestamp ABI (PassTimestampWrites, query set, resolve) is exercised for real here:
// run these also with WGT_WEBGPU_VALIDATE=1 after touching wgpu_api.hpp.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "webgpu/webgpu_backend.hpp"
#include "webgpu_test.hpp"
#include "wgt/profile.hpp"

namespace wgt {
namespace {

class WebGpuProfile : public testing::WebGpuTest {
 protected:
  void SetUp() override {
    WebGpuTest::SetUp();
    if (HasFatalFailure()) return;
    b_ = dynamic_cast<webgpu::WebGPUBackend*>(Runtime::get().webgpu_backend(0));
    ASSERT_NE(b_, nullptr);
    b_->synchronize();
    was_on_ = b_->profiling();
    saved_batch_ = b_->max_batch();
    use_gpu();
  }
  void TearDown() override {
    if (b_) {
      b_->set_max_batch(saved_batch_);
      if (b_->features().timestamp_query) b_->set_profiling(was_on_);
    }
    WebGpuTest::TearDown();
  }

  // True when the adapter can profile. Otherwise asserts the documented refusal (a typed
  // Unsupported naming the feature) and returns false: the caller's real path cannot run.
  bool can_profile() {
    std::string why;
    const bool supported = webgpu_profile_supported(&why);
    EXPECT_EQ(supported, b_->features().timestamp_query);
    if (supported) return true;
    EXPECT_NE(why.find("timestamp-query"), std::string::npos) << why;
    try {
      webgpu_profile(true);
      ADD_FAILURE() << "webgpu_profile(true) succeeded without timestamp-query";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
      EXPECT_NE(std::string(e.what()).find("timestamp-query"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(webgpu_profiling());
    return false;
  }

  const KernelTime* find(const std::vector<KernelTime>& ts, const std::string& prefix) {
    const KernelTime* hit = nullptr;
    for (const auto& t : ts)
      if (t.kernel.rfind(prefix, 0) == 0) {
        EXPECT_EQ(hit, nullptr) << "two kernels start with '" << prefix << "'";
        hit = &t;
      }
    return hit;
  }

  webgpu::WebGPUBackend* b_ = nullptr;
  bool was_on_ = false;
  uint32_t saved_batch_ = 256;
};

// quantized: Dawn's timestamp_quantization is on (WGT_WEBGPU_VALIDATE=1 keeps the default
// toggles), which rounds short intervals down to 0; otherwise every interval is > 0 ns.
void expect_sane(const KernelTime& t, bool quantized) {
  EXPECT_TRUE(std::isfinite(t.total_us) && std::isfinite(t.min_us) && std::isfinite(t.max_us)) << t.kernel;
  if (quantized) {
    EXPECT_GE(t.min_us, 0.0) << t.kernel;
  } else {
    EXPECT_GT(t.total_us, 0.0) << t.kernel;
    EXPECT_GT(t.min_us, 0.0) << t.kernel;
  }
  EXPECT_LE(t.min_us, t.mean_us() * (1 + 1e-9)) << t.kernel;
  EXPECT_LE(t.mean_us(), t.max_us * (1 + 1e-9)) << t.kernel;
  EXPECT_LT(t.max_us, 10e6) << t.kernel << ": a tiny kernel cannot take 10 s (garbage timestamps?)";
}

TEST_F(WebGpuProfile, MissingDeviceIsUnsupported) {
  try {
    webgpu_profile(true, 97);
    FAIL() << "profiling a device that does not exist succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
  std::string why;
  EXPECT_FALSE(webgpu_profile_supported(&why, 97));
  EXPECT_NE(why.find("not available"), std::string::npos) << why;
}

TEST_F(WebGpuProfile, CountsTimesAndResultsPerKernel) {
  if (!can_profile()) return;
  const Device gpu = b_->device();
  Tensor a = arange(0, 1000, 1, DType::F32).to(gpu), c = full({1000}, 0.5, DType::F32, gpu);
  Tensor m1 = rand_normal({33, 17}, 1).to(gpu), m2 = rand_normal({17, 9}, 2).to(gpu);
  // Unprofiled results (and compiled pipelines) first.
  const std::vector<float> add_want = add(a, c).to_vector<float>();
  const std::vector<float> mm_want = matmul(m1, m2).to_vector<float>();

  webgpu_profile(true);
  EXPECT_TRUE(webgpu_profiling());
  webgpu_profile_read(true);  // start from zero
  const auto s0 = b_->batch_stats();
  Tensor sum, prod;
  for (int i = 0; i < 5; ++i) sum = add(a, c);
  for (int i = 0; i < 3; ++i) prod = matmul(m1, m2);
  EXPECT_EQ(sum.to_vector<float>(), add_want) << "profiling changed the result of add";
  EXPECT_EQ(prod.to_vector<float>(), mm_want) << "profiling changed the result of matmul";
  const auto s1 = b_->batch_stats();
  const std::vector<KernelTime> ts = webgpu_profile_read(true);

  const uint64_t dispatched = s1.dispatches - s0.dispatches;
  EXPECT_EQ(s1.timed_dispatches - s0.timed_dispatches, dispatched);
  EXPECT_EQ(s1.passes - s0.passes, dispatched) << "profiling: one compute pass per dispatch";
  uint64_t counted = 0;
  for (const auto& t : ts) {
    counted += t.count;
    expect_sane(t, b_->dawn().validation());
  }
  EXPECT_EQ(counted, dispatched) << format_kernel_times(ts);
  std::printf("[profile] %s", format_kernel_times(ts).c_str());
  const KernelTime* add_k = find(ts, "binary");
  const KernelTime* mm_k = find(ts, "matmul");
  ASSERT_NE(add_k, nullptr) << format_kernel_times(ts);
  ASSERT_NE(mm_k, nullptr) << format_kernel_times(ts);
  EXPECT_EQ(add_k->count, 5u) << format_kernel_times(ts);
  EXPECT_EQ(mm_k->count, 3u) << format_kernel_times(ts);
  for (size_t i = 1; i < ts.size(); ++i) EXPECT_GE(ts[i - 1].total_us, ts[i].total_us) << "not sorted by total";

  // Reset: nothing left; new work is counted from zero.
  EXPECT_TRUE(webgpu_profile_read(false).empty());
  (void)add(a, c).to_vector<float>();
  const auto again = webgpu_profile_read(true);
  ASSERT_EQ(again.size(), 1u) << format_kernel_times(again);
  EXPECT_EQ(again[0].count, 1u);
  EXPECT_EQ(again[0].kernel, add_k->kernel);
}

TEST_F(WebGpuProfile, OffRestoresOnePassPerBatch) {
  if (!can_profile()) return;
  const Device gpu = b_->device();
  Tensor x = full({257}, 0.0, DType::F32, gpu), one = full({257}, 1.0, DType::F32, gpu);
  x = add(x, one);
  webgpu_profile(true);
  x = add(x, one);
  webgpu_profile(false);  // flushes the profiled batch
  EXPECT_FALSE(webgpu_profiling());
  webgpu_profile_read(true);
  b_->synchronize();
  const wgt::testing::NoEarlySubmission one_batch;  // 40 dispatches, one batch
  const auto s0 = b_->batch_stats();
  for (int i = 0; i < 40; ++i) x = add(x, one);
  b_->synchronize();
  const auto s1 = b_->batch_stats();
  EXPECT_EQ(s1.dispatches - s0.dispatches, 40u);
  EXPECT_EQ(s1.timed_dispatches, s0.timed_dispatches);
  ASSERT_GE(b_->max_batch(), 40u);
  EXPECT_EQ(s1.passes - s0.passes, 1u) << "40 dispatches in one batch are one compute pass";
  EXPECT_TRUE(webgpu_profile_read(true).empty()) << "dispatches were timed with profiling off";
  EXPECT_EQ(x.to_vector<float>()[256], 42.f);
}

// Small batches flush inside a sequence; a batch open while max_batch grows must still end
// before its query set (sized when the batch began) overflows.
TEST_F(WebGpuProfile, BatchLimitsAndQuerySetSize) {
  if (!can_profile()) return;
  const Device gpu = b_->device();
  Tensor x = full({64}, 0.0, DType::F32, gpu), one = full({64}, 1.0, DType::F32, gpu);
  x = add(x, one);
  b_->synchronize();
  b_->set_max_batch(2);
  webgpu_profile(true);
  webgpu_profile_read(true);
  x = add(x, one);          // opens a batch with room for 2 timed dispatches
  b_->set_max_batch(1000);  // the open batch keeps its query set
  for (int i = 0; i < 9; ++i) x = add(x, one);
  EXPECT_EQ(x.to_vector<float>()[63], 11.f);
  const auto ts = webgpu_profile_read(true);
  ASSERT_EQ(ts.size(), 1u) << format_kernel_times(ts);
  EXPECT_EQ(ts[0].count, 10u);
  expect_sane(ts[0], b_->dawn().validation());
  EXPECT_EQ(b_->profile_dropped(), 0u);
}

// Batch timing: one pass per batch with a timestamp at its beginning and end. The time of a
// batch of many dispatches covers them all, results are unchanged, the dispatches are counted,
// reset clears the totals, and turning it off leaves later batches untimed.
TEST_F(WebGpuProfile, BatchTimingTimesWholeBatches) {
  if (!can_profile()) {
    try {
      webgpu_batch_timing(true);
      ADD_FAILURE() << "webgpu_batch_timing(true) succeeded without timestamp-query";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    }
    return;
  }
  const Device gpu = b_->device();
  Tensor x = full({4096}, 0.0, DType::F32, gpu), one = full({4096}, 1.0, DType::F32, gpu);
  x = add(x, one);
  b_->synchronize();
  b_->set_max_batch(8);
  const uint64_t passes0 = b_->batch_stats().passes;
  webgpu_batch_timing(true);
  (void)webgpu_batch_time_read(true);
  for (int i = 0; i < 20; ++i) x = add(x, one);
  EXPECT_EQ(x.to_vector<float>()[4095], 21.f);  // reading flushes the last batch
  const BatchGpuTime t = webgpu_batch_time_read(true);
  EXPECT_EQ(t.dispatches, 20u);
  EXPECT_EQ(t.batches, 3u);  // 8 + 8 + 4 dispatches
  EXPECT_EQ(b_->batch_stats().passes - passes0, 3u);  // still one pass per batch
  EXPECT_GT(t.gpu_us, 0.0);
  EXPECT_LT(t.gpu_us, 60e6);  // a minute: a unit or ordering bug, not a slow GPU
  const BatchGpuTime empty = webgpu_batch_time_read(true);
  EXPECT_EQ(empty.batches, 0u);
  EXPECT_EQ(empty.gpu_us, 0.0);
  webgpu_batch_timing(false);
  x = add(x, one);
  EXPECT_EQ(x.to_vector<float>()[0], 22.f);
  EXPECT_EQ(webgpu_batch_time_read(true).batches, 0u);
}

// Per-dispatch profiling takes precedence over batch timing while both are on.
TEST_F(WebGpuProfile, ProfilingTakesPrecedenceOverBatchTiming) {
  if (!can_profile()) return;
  const Device gpu = b_->device();
  Tensor x = full({64}, 0.0, DType::F32, gpu), one = full({64}, 1.0, DType::F32, gpu);
  b_->synchronize();
  webgpu_batch_timing(true);
  webgpu_profile(true);
  (void)webgpu_profile_read(true);
  (void)webgpu_batch_time_read(true);
  for (int i = 0; i < 3; ++i) x = add(x, one);
  EXPECT_EQ(x.to_vector<float>()[0], 3.f);
  EXPECT_EQ(webgpu_batch_time_read(true).batches, 0u);
  const auto ts = webgpu_profile_read(true);
  ASSERT_EQ(ts.size(), 1u) << format_kernel_times(ts);
  EXPECT_EQ(ts[0].count, 3u);
  webgpu_profile(false);
  webgpu_batch_timing(false);
}

TEST(WebGpuProfileFormat, TableIsSortedByTotal) {
  const std::vector<KernelTime> ts = {{"small", 2, 10.0, 4.0, 6.0}, {"big", 1, 900.0, 900.0, 900.0},
                                      {"mid", 4, 90.0, 20.0, 25.0}};
  const std::string s = format_kernel_times(ts);
  const size_t big = s.find("  big\n"), mid = s.find("  mid\n"), small = s.find("  small\n");
  ASSERT_NE(big, std::string::npos) << s;
  ASSERT_NE(mid, std::string::npos) << s;
  ASSERT_NE(small, std::string::npos) << s;
  EXPECT_LT(big, mid);
  EXPECT_LT(mid, small);
  EXPECT_NE(s.find("3 kernels, 7 dispatches, 1.000 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("90.0%"), std::string::npos) << s;  // big's share of the total
  EXPECT_NE(format_kernel_times({}).find("0 kernels"), std::string::npos);
}

}  // namespace
}  // namespace wgt
