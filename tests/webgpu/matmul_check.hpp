// Shared by the matmul conformance tests (test_matmul.cpp, test_matmul_sgmat.cpp): random
// device operands, the CPU reference (f64) oracle, and a checked GPU run into a guarded
// output. Each test file gets its own copy (anonymous namespace).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "webgpu/kernels/matmul.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

constexpr int64_t kGuard = 37;  // odd, so f16 outputs also start mid-word

DeviceBackend* gpu_or_skip(std::string* why) {
  DeviceBackend* gpu = Runtime::get().webgpu_backend(0, why);
  return gpu;
}

#define REQUIRE_GPU(gpu)                                 \
  std::string why_;                                      \
  DeviceBackend* gpu = gpu_or_skip(&why_);               \
  if (!gpu) GTEST_SKIP() << "no WebGPU adapter: " << why_;

std::vector<float> host_values(const Tensor& t) {  // logical elements, row-major, as f32
  // Download the whole storage and walk the view on the host, so reading a strided GPU view
  // depends on nothing but the transfer.
  auto host = std::make_shared<Storage>(t.storage()->nbytes(), Device::cpu());
  host->ensure_host();
  Runtime::get().read_bytes(*t.storage(), 0, host->host_data(), host->nbytes());
  Tensor c = Tensor(host, t.shape(), t.strides(), t.offset(), t.dtype()).contiguous();
  std::vector<float> v(static_cast<size_t>(c.numel()));
  if (t.dtype() == DType::F32) return c.to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = f16_to_f32(c.data<f16_t>()[i].bits);
  return v;
}

// Uniform values in [-scale, scale), stored as `dt`, uploaded to the GPU.
Tensor random_gpu(const Shape& shape, DType dt, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  const size_t n = static_cast<size_t>(checked_numel(shape));
  if (dt == DType::F32) {
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return Tensor::from_host(v.data(), n * 4, shape, dt, Device::webgpu());
  }
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = f32_to_f16(dist(rng));
  return Tensor::from_host(v.data(), n * 2, shape, dt, Device::webgpu());
}

struct Oracle {
  std::vector<double> ref, scale;  // result and sum_k |a*b| per element (error scale)
  Shape shape;
};

// The CPU reference backend's matmul on f64 copies of the operands (exact values of the
// stored f32/f16 elements), batch dims broadcast as the front-end does.
std::vector<double> reference_matmul(const std::vector<double>& av, const Shape& as, const std::vector<double>& bv,
                                     const Shape& bs, bool tb, const Shape& batch, const Shape& out_shape) {
  Shape af = batch, bf = batch;
  af.insert(af.end(), as.end() - 2, as.end());
  bf.insert(bf.end(), bs.end() - 2, bs.end());
  Tensor a = Tensor::from_vector(av, as).expand(af), b = Tensor::from_vector(bv, bs).expand(bf);
  OpCall call{OpKind::MatMul, tb ? "matmul_t" : "matmul", {a, b}, {Tensor::empty(out_shape, DType::F64)}, {}, 0.0};
  call.attrs.transpose_b = tb;
  Backend& ref = Runtime::get().cpu_backend(CpuMode::Reference);
  Support s = ref.supports(call);
  if (!s.ok) throw_error(ErrorKind::Unsupported, "test_matmul", "cpu-reference cannot run matmul: " + s.reason);
  ref.execute(call);
  return call.outputs[0].to_vector<double>();
}

Oracle oracle(const Tensor& a, const Tensor& b, bool tb) {
  const std::vector<float> af = host_values(a), bf = host_values(b);
  std::vector<double> av(af.begin(), af.end()), bv(bf.begin(), bf.end());
  const int64_t M = a.size(-2), N = tb ? b.size(-2) : b.size(-1);
  Shape batch = broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                                 Shape(b.shape().begin(), b.shape().end() - 2), "oracle");
  Oracle o;
  o.shape = batch;
  o.shape.push_back(M);
  o.shape.push_back(N);
  o.ref = reference_matmul(av, a.shape(), bv, b.shape(), tb, batch, o.shape);
  for (double& x : av) x = std::fabs(x);
  for (double& x : bv) x = std::fabs(x);
  o.scale = reference_matmul(av, a.shape(), bv, b.shape(), tb, batch, o.shape);
  return o;
}

// Runs matmul(a, b) on the GPU into a guarded output (kGuard elements each side, shadowing the
// default) and checks it against the oracle.
// `variant` gets the kernel variant the launcher chose.
void check_impl(DeviceBackend* gpu, const Tensor& a, const Tensor& b, bool tb, std::string& variant, int64_t kGuard) {
  const Oracle o = oracle(a, b, tb);
  const DType dt = a.dtype();
  const int64_t n = checked_numel(o.shape), total = n + 2 * kGuard;
  const float sentinel = 1234.0f;  // exactly representable in f16
  std::vector<uint8_t> init(static_cast<size_t>(total) * dtype_size(dt));
  for (int64_t i = 0; i < total; ++i) {
    if (dt == DType::F32) std::memcpy(&init[i * 4], &sentinel, 4);
    else { uint16_t h = f32_to_f16(sentinel); std::memcpy(&init[i * 2], &h, 2); }
  }
  Tensor whole = Tensor::from_host(init.data(), init.size(), {total}, dt, Device::webgpu());
  Tensor out(whole.storage(), o.shape, contiguous_strides(o.shape), kGuard, dt);

  OpCall call{OpKind::MatMul, tb ? "matmul_t" : "matmul", {a, b}, {out}, {}, 0.0};
  call.attrs.transpose_b = tb;
  Support s = gpu->supports(call);
  EXPECT_TRUE(s.ok) << s.reason;
  if (!s.ok) return;
  gpu->execute(call);
  variant = webgpu::matmul_last_variant();

  const std::vector<float> got = host_values(whole);
  const std::string what = std::string(dtype_name(dt)) + " a" + shape_str(a.shape()) + " b" + shape_str(b.shape()) +
                           (tb ? " (b transposed)" : "") + " via " + variant;
  for (int64_t i = 0; i < kGuard; ++i) {
    ASSERT_EQ(got[i], sentinel) << "guard before the output overwritten at " << i << ": " << what;
    ASSERT_EQ(got[total - 1 - i], sentinel) << "guard after the output overwritten: " << what;
  }
  // f16 results are rounded once (2^-11 relative) on top of f32 accumulation.
  const double rel = dt == DType::F32 ? 2e-6 : 1e-3;
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double g = got[kGuard + i], r = o.ref[i];
    ASSERT_TRUE(std::isfinite(g)) << "non-finite at " << i << " (ref " << r << "): " << what;
    // f16 also rounds to its subnormal grid (2^-24) near zero.
    const double abs_tol = dt == DType::F32 ? 1e-30 : 6e-8;
    ASSERT_LE(std::fabs(g - r), rel * o.scale[i] + abs_tol) << "element " << i << " got " << g << " ref " << r << ": " << what;
    err2 += (g - r) * (g - r);
    ref2 += r * r;
  }
  if (ref2 > 0) {
    EXPECT_LE(err2 / ref2, dt == DType::F32 ? 1e-11 : 1e-6) << "NMSE: " << what;
  }
}

// `guard` elements of sentinel on each side; the output starts at that element offset (odd by
// default, so f16 outputs start mid-word).
std::string check_matmul(DeviceBackend* gpu, const Tensor& a, const Tensor& b, bool tb, int64_t guard = kGuard) {
  std::string variant;
  check_impl(gpu, a, b, tb, variant, guard);
  return variant;
}

}  // namespace
}  // namespace wgt
