// A call is planned once: the plan supports() makes of a call is the one execute() encodes
// (OpCall::plan), for every planned family. Counted with the registry's test hook
// (webgpu::kernel_plans_computed): a second plan of the same call would be a regression to
// the check-then-check-again-then-plan of before (three plans per call).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu_test.hpp"

namespace wgt::testing {
namespace {

class WebGpuPlanOnce : public WebGpuTest {};

TEST_F(WebGpuPlanOnce, EveryFamilyPlansACallOnce) {
  use_gpu();
  const Device gpu = Device::webgpu(0);
  // Contiguous device operands: no call moves an input or compacts one (a compaction is a
  // Copy call of its own, planned itself).
  const Tensor a = rand_uniform({6, 32}, 11, -1.0, 1.0).to(gpu), b = rand_uniform({6, 32}, 12, -1.0, 1.0).to(gpu);
  const Tensor w = rand_uniform({32, 5}, 13, -1.0, 1.0).to(gpu);
  const Tensor q = rand_uniform({3, 4, 8}, 14, -1.0, 1.0).to(gpu), k = rand_uniform({5, 2, 8}, 15, -1.0, 1.0).to(gpu);
  const Tensor v = rand_uniform({5, 2, 8}, 16, -1.0, 1.0).to(gpu);
  const Tensor idx = full({3}, 2.0, DType::I32).to(gpu);
  const std::vector<std::pair<std::string, std::function<Tensor()>>> ops = {
      {"add (vec4)", [&] { return add(a, b); }},
      {"mul (strided)", [&] { return mul(a.t(), b.t()); }},
      {"exp", [&] { return exp(a); }},
      {"cast", [&] { return cast(a, DType::F16); }},
      {"sum", [&] { return sum(a, {1}); }},
      {"softmax", [&] { return softmax(a, -1); }},
      {"rms_norm", [&] { return rms_norm(a); }},
      {"matmul", [&] { return matmul(a, w); }},
      {"silu_mul", [&] { return silu_mul(a, b); }},
      {"attention", [&] { return attention(q, k, v); }},
      {"concat", [&] { return concat({a, b}, 0); }},
      {"index_select", [&] { return index_select(a, 1, idx); }},
  };
  for (const auto& [what, op] : ops) {
    SCOPED_TRACE(what);
    const uint64_t before = webgpu::kernel_plans_computed();
    Runtime::get().reset_stats();
    const Tensor y = op();
    EXPECT_EQ(webgpu::kernel_plans_computed() - before, 1u);
    EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);
    EXPECT_TRUE(y.device().is_webgpu());
  }
  synchronize();
}

// The plan handed to execute() is the one of the call as executed: a host input moved to the
// device (a strided view is compacted on the way) is planned again on the device tensor, and
// the result matches the CPU reference.
TEST_F(WebGpuPlanOnce, MovedInputsArePlannedAgain) {
  use_gpu();
  Policy p = Runtime::get().policy();
  p.min_gpu_work = 0;
  Runtime::get().set_policy(p);
  const Tensor a = rand_uniform({8, 12}, 21, -1.0, 1.0), b = rand_uniform({12, 8}, 22, -1.0, 1.0);
  const uint64_t before = webgpu::kernel_plans_computed();
  const Tensor y = add(a, b.t());  // b.t(): strided on the host, contiguous once uploaded
  EXPECT_EQ(webgpu::kernel_plans_computed() - before, 2u);
  EXPECT_EQ(Runtime::get().last_decision().backend, "webgpu:0");
  use_cpu_reference();
  const Tensor want = add(a, b.t());
  const std::vector<float> got = y.to_vector<float>(), ref = want.to_vector<float>();
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], ref[i]) << i;
}

}  // namespace
}  // namespace wgt::testing
