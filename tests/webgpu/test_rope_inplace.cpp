// rope_ (in-place RoPE) on a device: the WebGPU kernel (rope_inplace.wgsl) against the CPU
// reference and against rope() on the device, for both layouts, offsets, positions, f32/f16,
// strided views (fused-QKV head slices, transposed heads) whose other elements stay
// untouched, empty dims; the host round trip (unsupported views, i64 positions, cpu-only
// policy) and evicted storages; host tensors stay on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);

Tensor randn(const Shape& s, uint64_t seed, DType dt = DType::F32) { return rand_normal(s, seed, 0.0, 1.0, dt); }

class WebGpuRopeInplace : public wgt::testing::WebGpuTest {
 protected:
  void SetUp() override {
    WebGpuTest::SetUp();
    Runtime::get().reset_stats();
  }
  // Logical values as doubles, read with the reference kernels (any device, any dtype).
  // t on the host. A device view is compacted under the current policy first: reading a
  // non-contiguous device tensor under policy cpu-only recurses (copy_to_host -> contiguous ->
  // Copy on the CPU -> to(cpu) -> copy_to_host ...) until the stack overflows, a bug of
  // src/core/tensor.cpp.
  static Tensor host(const Tensor& t) {
    if (t.device().is_cpu()) return t;
    return t.numel() == 0 ? Tensor::empty(t.shape(), t.dtype()) : t.contiguous().cpu();
  }
  std::vector<double> values(const Tensor& t) {
    const Tensor c = host(t);
    Policy keep = Runtime::get().policy();
    use_cpu_reference();
    auto v = cast(c, DType::F64).to_vector<double>();
    Runtime::get().set_policy(keep);
    return v;
  }
  // max |got - want| / (1 + |want|).
  double rel_err(const Tensor& got, const Tensor& want) {
    EXPECT_EQ(shape_str(got.shape()), shape_str(want.shape()));
    auto g = values(got), w = values(want);
    double e = 0;
    for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
      if (std::isnan(g[i]) || std::isnan(w[i])) return INFINITY;
      e = std::max(e, std::fabs(g[i] - w[i]) / (1.0 + std::fabs(w[i])));
    }
    return e;
  }
  void expect_bits_equal(const Tensor& a, const Tensor& b, const std::string& what) {
    auto x = values(a), y = values(b);
    ASSERT_EQ(x.size(), y.size()) << what;
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], y[i]) << what << " [" << i << "]";
  }
  // The reference result of rope(x) computed on the host.
  Tensor reference(const Tensor& x, const Tensor* pos, int64_t offset, const RopeConfig& cfg) {
    const Tensor hx = host(x);
    const Tensor hp = pos ? host(*pos) : Tensor();
    Policy keep = Runtime::get().policy();
    use_cpu_reference();
    Tensor out = pos ? rope(hx, hp, cfg) : rope(hx, offset, cfg);
    Runtime::get().set_policy(keep);
    return out;
  }
  uint64_t calls(const std::string& op, const std::string& backend) {
    const auto& m = Runtime::get().stats().per_op;
    auto it = m.find(op);
    if (it == m.end()) return 0;
    auto jt = it->second.find(backend);
    return jt == it->second.end() ? 0 : jt->second.calls;
  }
  static double tol(DType dt) { return dt == DType::F16 ? 2e-3 : 2e-5; }  // as rope() in test_nn.cpp
  // With positions up to max_pos: the device's f32 angle is off by up to ~3e-7 * pos *
  // freq_scale radians against the reference's double one (docs/transformer.md), and an
  // output by as much relative to its pair's norm; 4e-7 leaves room.
  static double tol(DType dt, double max_pos, double freq_scale) { return tol(dt) + 4e-7 * max_pos * freq_scale; }
};

std::vector<RopeConfig> configs() {
  std::vector<RopeConfig> out;
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    RopeConfig full;
    full.style = style;
    out.push_back(full);
    for (int64_t n_rot : {6, 8}) {  // n_rot/2 odd (f16 neox: one unit per row) and even
      RopeConfig partial = full;
      partial.n_rot = n_rot;
      partial.base = 500.0;
      partial.freq_scale = 0.25;
      out.push_back(partial);
    }
  }
  return out;
}

std::string tag(DType dt, const RopeConfig& c) {
  return std::string(dtype_name(dt)) + (c.style == RopeStyle::Neox ? " neox" : " normal") + " n_rot " +
         std::to_string(c.n_rot);
}

TEST_F(WebGpuRopeInplace, EqualsReferenceAndDeviceRope) {
  use_gpu();
  for (DType dt : {DType::F32, DType::F16}) {
    for (const RopeConfig& cfg : configs()) {
      SCOPED_TRACE(tag(dt, cfg));
      for (const Shape& shape : {Shape{5, 3, 10}, Shape{2, 3, 4, 10}}) {  // odd seq; a batch
        const Tensor x = randn(shape, 11, dt).to(kGpu);
        Tensor y = x.clone();
        rope_(y, 7, cfg);
        EXPECT_LE(rel_err(y, reference(x, nullptr, 7, cfg)), tol(dt));
        // The same expression as rope.wgsl, so the two agree to about one rounding of x's dtype
        // (a shader compiler may still contract a multiply-add differently in each kernel).
        EXPECT_LE(rel_err(y, rope(x, 7, cfg)), dt == DType::F16 ? 1e-3 : 1e-6);
        const int64_t seq = shape[shape.size() - 3];
        const Tensor pos = Tensor::from_vector(std::vector<int32_t>{9, 0, 3, 1000, 2}, {5}).slice(0, 0, seq).to(kGpu);
        Tensor z = x.clone();
        rope_(z, pos, cfg);
        EXPECT_LE(rel_err(z, reference(x, &pos, 0, cfg)), tol(dt, 1000, cfg.freq_scale));
      }
    }
  }
  EXPECT_GT(calls("rope_", "webgpu:0"), 0u);
  EXPECT_EQ(calls("rope_", "host-write"), 0u) << "every call above must run the kernel";
}

// Long contexts: one row at each of several positions up to 2^20, a 128-dim head, against the
// CPU reference (angles in double) within the position's bound (tol above), in place and out
// of place, by position tensor and by offset.
TEST_F(WebGpuRopeInplace, LargePositionsWithinTheF32AngleBound) {
  use_gpu();
  for (RopeConfig cfg : configs()) {
    if (!cfg.n_rot) cfg.base = 500000.0;  // the full-rotation configs with Llama 3's base
    SCOPED_TRACE(tag(DType::F32, cfg));
    const Tensor x = randn({1, 2, 128}, 41).to(kGpu);
    for (int32_t p : {1000, 4095, 32767, 131071, 1048575}) {
      SCOPED_TRACE("position " + std::to_string(p));
      const double t = tol(DType::F32, p, cfg.freq_scale);
      const Tensor pos = Tensor::from_vector(std::vector<int32_t>{p}, {1}).to(kGpu);
      Tensor y = x.clone();
      rope_(y, pos, cfg);
      EXPECT_LE(rel_err(y, reference(x, &pos, 0, cfg)), t);
      EXPECT_LE(rel_err(rope(x, pos, cfg), reference(x, &pos, 0, cfg)), t);
      EXPECT_LE(rel_err(rope(x, p, cfg), reference(x, nullptr, p, cfg)), t);
    }
  }
  EXPECT_EQ(calls("rope_", "host-write"), 0u);
}

TEST_F(WebGpuRopeInplace, FusedQkvHeadSlicesOnDevice) {
  use_gpu();
  const int64_t seq = 3, H = 4, Hkv = 2, D = 8;
  for (DType dt : {DType::F32, DType::F16}) {
    for (const RopeConfig& cfg : configs()) {
      SCOPED_TRACE(tag(dt, cfg));
      Tensor qkv = randn({seq, (H + 2 * Hkv) * D}, 21, dt).to(kGpu);
      const Tensor before = qkv.clone();
      const Tensor b3 = before.view({seq, H + 2 * Hkv, D});
      Tensor heads = qkv.view({seq, H + 2 * Hkv, D});
      Tensor q = heads.slice(1, 0, H), k = heads.slice(1, H, H + Hkv);
      rope_(q, 4, cfg);
      rope_(k, 4, cfg);
      EXPECT_LE(rel_err(q, reference(b3.slice(1, 0, H), nullptr, 4, cfg)), tol(dt));
      EXPECT_LE(rel_err(k, reference(b3.slice(1, H, H + Hkv), nullptr, 4, cfg)), tol(dt));
      expect_bits_equal(heads.slice(1, H + Hkv, H + 2 * Hkv), b3.slice(1, H + Hkv, H + 2 * Hkv), "v untouched");
      if (cfg.n_rot && cfg.n_rot < D) {  // dims >= n_rot of q and k are not written either
        expect_bits_equal(heads.slice(1, 0, H + Hkv).slice(2, cfg.n_rot, D), b3.slice(1, 0, H + Hkv).slice(2, cfg.n_rot, D),
                          "unrotated dims untouched");
      }
    }
  }
  EXPECT_EQ(calls("rope_", "host-write"), 0u);
}

TEST_F(WebGpuRopeInplace, F32TransposedHeadsRunTheKernel) {
  use_gpu();
  for (const RopeConfig& cfg : configs()) {
    SCOPED_TRACE(tag(DType::F32, cfg));
    Tensor base = randn({3, 10, 2}, 31).to(kGpu);  // head_dim stride 2
    const Tensor orig = base.clone();
    Tensor x = base.transpose(1, 2);
    rope_(x, 2, cfg);
    EXPECT_LE(rel_err(x, reference(orig.transpose(1, 2), nullptr, 2, cfg)), 2e-5);
  }
  EXPECT_EQ(calls("rope_", "host-write"), 0u);
}

TEST_F(WebGpuRopeInplace, EmptyAndSizeOneDims) {
  use_gpu();
  for (const Shape& s : {Shape{0, 2, 4}, Shape{3, 0, 4}, Shape{1, 1, 2}, Shape{1, 3, 1, 2}}) {
    SCOPED_TRACE(shape_str(s));
    const Tensor x = randn(s, 41).to(kGpu);
    Tensor y = randn(s, 41).to(kGpu);  // not x.clone(): the device Copy kernel refuses size 0
    rope_(y, 3);
    EXPECT_LE(rel_err(y, reference(x, nullptr, 3, {})), 2e-5);
  }
}

// f16 rows that do not own whole 32-bit words, and i64 positions, are beyond the kernel: a
// typed Unsupported without fallback (x unchanged), the host round trip with it.
TEST_F(WebGpuRopeInplace, UnsupportedCallsFallBackThroughTheHost) {
  RopeConfig cfg;
  cfg.n_rot = 4;
  cfg.style = RopeStyle::Neox;
  auto odd_view = [](Tensor& storage) { return storage.slice(1, 1, 11).view({3, 2, 5}); };  // starts at element 1
  Tensor buf = randn({3, 12}, 71, DType::F16).to(kGpu);
  const Tensor buf0 = buf.clone();
  Tensor x = odd_view(buf);
  use_gpu();
  try {
    rope_(x, 3, cfg);
    ADD_FAILURE() << "an odd f16 view must not run the kernel";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("rope_"), std::string::npos);
  }
  expect_bits_equal(buf, buf0, "x after the refused call");

  Policy p = saved_;
  p.mode = PolicyMode::Auto;
  p.allow_fallback = true;
  Runtime::get().set_policy(p);
  const uint64_t fb0 = Runtime::get().stats().fallbacks;
  rope_(x, 3, cfg);
  Tensor b0 = buf0.clone();
  EXPECT_LE(rel_err(x, reference(odd_view(b0), nullptr, 3, cfg)), 2e-3);
  expect_bits_equal(buf.slice(1, 0, 1), buf0.slice(1, 0, 1), "element before the view");
  expect_bits_equal(buf.slice(1, 11, 12), buf0.slice(1, 11, 12), "element after the view");
  EXPECT_EQ(calls("rope_", "host-write"), 1u);
  EXPECT_EQ(Runtime::get().stats().fallbacks, fb0 + 1);

  const Tensor y0 = randn({4, 2, 8}, 72).to(kGpu);
  Tensor y = y0.clone();
  const Tensor pos64 = Tensor::from_vector(std::vector<int64_t>{5, 1, 0, 7}, {4}).to(kGpu);
  rope_(y, pos64);
  EXPECT_LE(rel_err(y, reference(y0, &pos64, 0, {})), 2e-5);
  EXPECT_EQ(calls("rope_", "host-write"), 2u);
}

TEST_F(WebGpuRopeInplace, CpuOnlyPolicyAndHostTensors) {
  const Tensor x0 = randn({5, 2, 8}, 81).to(kGpu);
  Tensor x = x0.clone();
  use_cpu_reference();
  rope_(x, 9);
  EXPECT_TRUE(x.device() == kGpu);
  EXPECT_LE(rel_err(x, reference(x0, nullptr, 9, {})), 1e-6);
  EXPECT_EQ(calls("rope_", "host-write"), 1u);
  // A host tensor is rotated by the CPU whatever its size: the policy's load threshold would
  // move it to the device and rotate a copy.
  Policy p = saved_;
  p.mode = PolicyMode::Auto;
  p.min_gpu_work = 0;
  Runtime::get().set_policy(p);
  const Tensor h0 = randn({64, 4, 16}, 82);
  Tensor h = h0.clone();
  rope_(h, 2);
  EXPECT_TRUE(h.device().is_cpu());
  EXPECT_LE(rel_err(h, reference(h0, nullptr, 2, {})), 1e-6);
  EXPECT_EQ(calls("rope_", "webgpu:0"), 0u);
}

// An evicted storage is re-uploaded and rotated on the device (kernel path), or rotated in its
// host copy (host path); either way the data read back afterwards is the rotated one.
TEST_F(WebGpuRopeInplace, EvictedStorages) {
  constexpr int64_t kMiB = 1 << 20;
  Policy p = saved_;
  p.mode = PolicyMode::Auto;
  p.allow_fallback = true;
  synchronize();
  Runtime::get().webgpu_backend(0)->release_cached();
  const uint64_t base = Runtime::get().memory_stats(0).allocated;
  p.memory_budget = base + 3 * kMiB + kMiB / 2;
  Runtime::get().set_policy(p);
  // 1 MiB of f32, with few positions: f32 angles of large positions are less accurate than
  // the tolerance (2e-5) is tight.
  const Shape shape{16, 256, 64};
  for (bool kernel : {true, false}) {
    SCOPED_TRACE(kernel ? "kernel" : "host path");
    const Tensor x0 = randn(shape, 91);  // on the host: the reference input
    Tensor x = x0.to(kGpu);
    // Three newer 1 MiB residents overflow the 3.5 MiB budget: x, least recently used, goes.
    Tensor a = randn(shape, 95).to(kGpu), b = randn(shape, 96).to(kGpu), c = randn(shape, 97).to(kGpu);
    ASSERT_FALSE(Runtime::get().is_resident(x)) << "x should have been evicted";
    // i64 positions 11, 12, ... (the same rotation as offset 11) take the host path: WGSL
    // has no 64-bit integers.
    std::vector<int64_t> p64(16);
    for (int64_t s = 0; s < 16; ++s) p64[s] = 11 + s;
    if (kernel) rope_(x, 11);
    else rope_(x, Tensor::from_vector(p64, {16}).to(kGpu));
    EXPECT_EQ(calls("rope_", "host-write"), kernel ? 0u : 1u);
    const Tensor want = reference(x0, nullptr, 11, {});
    EXPECT_LE(rel_err(x, want), 2e-5);
  }
  EXPECT_GT(Runtime::get().stats().evictions, 0u);
}

}  // namespace
}  // namespace wgt
