// A call is planned once: the plan supports() makes of a call is the one execute() encodes
// (OpCall::plan), for every planned family. Counted with the registry's test hook
// (webgpu::kernel_plans_computed): a second plan of the same call would be a regression to
// the check-then-check-again-then-plan of before (three plans per call).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "sparse/generate.hpp"
#include "webgpu/context.hpp"
#include "webgpu_test.hpp"
#include "wgt/fft.hpp"
#include "wgt/quant.hpp"
#include "wgt/sparse.hpp"

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

Tensor random_c64(const Shape& shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const std::vector<float> f = rand_uniform({2 * n}, seed, -1.0, 1.0).to_vector<float>();
  std::vector<c64_t> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = {f[2 * i], f[2 * i + 1]};
  return Tensor::from_vector(v, shape);
}

// Elements of a result as floats (c64: re, im interleaved), for the comparison.
std::vector<float> values_of(const Tensor& t) {
  const Tensor h = t.cpu();
  if (h.dtype() != DType::C64) return cast(h, DType::F32).to_vector<float>();
  std::vector<float> out;
  for (const c64_t& z : h.to_vector<c64_t>()) out.insert(out.end(), {z.re, z.im});
  return out;
}

// The families that planned a call twice before (check, then launch planned again): the FFT,
// the sparse ops (a batch of matrices planned once for all its members), the quantized
// lookups and the complex family (claimed by the registry by its calls' data). Each call is
// planned once, and its result is the CPU reference's.
TEST_F(WebGpuPlanOnce, FormerlyUnplannedFamiliesPlanACallOnce) {
  use_gpu();
  const Device gpu = Device::webgpu(0);
  const CsrTensor a = sparse_gen::to_csr(sparse_gen::mixed(37, 45, 4, 0.2, 5, 3), DType::I32, DType::F32);
  const CsrTensor batch = a.with_values(rand_uniform({3, a.nnz()}, 31, -1.0, 1.0));
  const Tensor x = rand_uniform({45}, 32, -1.0, 1.0), bm = rand_uniform({45, 12}, 33, -1.0, 1.0);
  const Tensor xb = rand_uniform({3, 45}, 34, -1.0, 1.0), bb = rand_uniform({3, 45, 8}, 35, -1.0, 1.0);
  const QTensor qw = quantize(rand_uniform({5, 64}, 36, -1.0, 1.0), QType::Q8_0);
  const Tensor za = random_c64({7, 9}, 37), zb = random_c64({7, 9}, 38), zw = random_c64({9, 5}, 39);
  const Tensor line = random_c64({3, 24}, 40);
  struct Case {
    std::string what;
    std::function<Tensor(Device)> op;
  };
  const std::vector<Case> cases = {
      {"fft", [&](Device d) { return fft(line.to(d)); }},
      {"spmv", [&](Device d) { return spmv(a.to(d), x.to(d)); }},
      {"spmm", [&](Device d) { return spmm(a.to(d), bm.to(d)); }},
      {"batched spmv", [&](Device d) { return spmv(batch.to(d), xb.to(d)); }},
      {"batched spmm", [&](Device d) { return spmm(batch.to(d), bb.to(d)); }},
      {"sparse_row_sum", [&](Device d) { return sparse_row_sum(batch.to(d)); }},
      {"dequantize", [&](Device d) { return dequantize(qw.to(d)); }},
      {"c64 add", [&](Device d) { return add(za.to(d), zb.to(d)); }},
      {"c64 matmul", [&](Device d) { return matmul(za.to(d), zw.to(d)); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    use_gpu();
    // Uploads (Tensor::to) are transfers, not kernel calls: they plan nothing.
    const uint64_t before = webgpu::kernel_plans_computed();
    Runtime::get().reset_stats();
    const Tensor y = c.op(gpu);
    const uint64_t plans = webgpu::kernel_plans_computed() - before;
    EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);
    EXPECT_TRUE(y.device().is_webgpu());
    use_cpu_reference();
    const std::vector<float> got = values_of(y), want = values_of(c.op(Device::cpu()));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << i;
    EXPECT_EQ(plans, 1u);
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
