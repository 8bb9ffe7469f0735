// Conformance of the WebGPU indexing family (concat, index_select, gather) against the CPU
// reference: every axis, N and strided inputs, 1/2/4/8-byte dtypes, i32/i64 indices, empty
// tensors, sub-word outputs at odd offsets with guard regions, out-of-range indices.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);
const DType kDTypes[] = {DType::F32, DType::I32, DType::I64, DType::F16, DType::U8};

class WebGpuIndex : public wgt::testing::WebGpuTest {
 protected:

  void use(PolicyMode mode) {
    Policy p = saved_;
    p.mode = mode;
    p.cpu_mode = CpuMode::Reference;
    p.allow_fallback = false;  // a GPU kernel that cannot run must raise, not hide on the CPU
    Runtime::get().set_policy(p);
  }

  // Small integers (exact in every dtype) of shape `s`, as `dt`, moved to `d`.
  Tensor ints(const Shape& s, DType dt, uint32_t seed, Device d) {
    use(PolicyMode::CpuOnly);
    std::mt19937 rng(seed);
    std::vector<float> v(static_cast<size_t>(checked_numel(s)));
    for (auto& x : v) x = static_cast<float>(rng() % 100);
    return cast(Tensor::from_vector(v, s), dt).to(d);
  }
  Tensor indices(const std::vector<int64_t>& v, const Shape& s, DType dt, Device d) {
    use(PolicyMode::CpuOnly);
    return cast(Tensor::from_vector(v, s), dt).to(d);
  }
  std::vector<double> host_values(const Tensor& t) {
    use(PolicyMode::CpuOnly);
    return cast(t.cpu(), DType::F64).to_vector<double>();
  }

  // Same op on the CPU reference and on the GPU (inputs built per device); exact match.
  void check(const std::string& what, const std::function<Tensor(Device)>& run) {
    SCOPED_TRACE(what);
    Tensor want = run(Device::cpu());
    ASSERT_TRUE(want.device().is_cpu());
    Tensor got = run(kGpu);
    ASSERT_TRUE(got.device() == kGpu);
    ASSERT_EQ(Runtime::get().last_decision().backend.rfind("webgpu", 0), 0u) << Runtime::get().last_decision().backend;
    ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape()));
    ASSERT_EQ(got.dtype(), want.dtype());
    std::vector<double> g = host_values(got), w = host_values(want);
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], w[i]) << "element " << i;
  }

  // Builds inputs (policy cpu-only for the helpers), then runs the op under the policy of `d`.
  PolicyMode mode_for(Device d) const { return d.is_cpu() ? PolicyMode::CpuOnly : PolicyMode::Auto; }

 private:
};

TEST_F(WebGpuIndex, ConcatEveryAxisDtypeAndStrides) {
  for (DType dt : kDTypes) {
    for (int64_t ax = 0; ax < 3; ++ax) {
      check(std::string("concat ") + dtype_name(dt) + " axis " + std::to_string(ax), [&](Device d) {
        Shape a{3, 5, 7}, b{3, 5, 7}, c{3, 5, 7};
        a[ax] = 1;
        b[ax] = 3;
        c[ax] = 0;  // an empty input contributes nothing
        Tensor ta = ints(a, dt, 1, d);
        Tensor tb = ints({b[2], b[0], b[1]}, dt, 2, d).permute({1, 2, 0});  // strided input
        Tensor tc = ints(c, dt, 3, d);
        Tensor td = ints({6, 10, 14}, dt, 4, d).slice(0, 0, 6, 2).slice(1, 1, 10, 2).slice(2, 0, 14, 2);
        use(mode_for(d));
        return concat({ta, tb, tc, td}, ax);
      });
    }
  }
  check("concat single input", [&](Device d) {
    Tensor t = ints({4, 9}, DType::F32, 5, d).t();
    use(mode_for(d));
    return concat({t}, 0);
  });
  check("concat 9 f16 inputs", [&](Device d) {
    std::vector<Tensor> xs;
    for (int i = 0; i < 9; ++i) xs.push_back(ints({2, i % 3 + 1}, DType::F16, 10 + i, d));
    use(mode_for(d));
    return concat(xs, 1);
  });
}

TEST_F(WebGpuIndex, IndexSelectAxesDtypesAndIndexTypes) {
  for (DType dt : kDTypes) {
    for (DType it : {DType::I32, DType::I64}) {
      for (int64_t ax = 0; ax < 3; ++ax) {
        check(std::string("index_select ") + dtype_name(dt) + "/" + dtype_name(it) + " axis " + std::to_string(ax),
              [&](Device d) {
                Tensor x = ints({4, 5, 3}, dt, 20 + static_cast<uint32_t>(ax), d);
                const int64_t n = x.size(ax);
                Tensor idx = indices({n - 1, 0, 0, n / 2, 1 % n, n - 1}, {2, 3}, it, d);
                use(mode_for(d));
                return index_select(x, ax, idx);
              });
      }
    }
  }
  check("index_select strided x and idx", [&](Device d) {
    Tensor x = ints({7, 6}, DType::F32, 30, d).t();  // [6, 7], strided
    Tensor idx = indices({5, 9, 2, 9, 0, 9, 6, 9}, {8}, DType::I64, d).slice(0, 0, 8, 2);  // 5, 2, 0, 6
    use(mode_for(d));
    return index_select(x, 1, idx);
  });
  check("index_select empty indices", [&](Device d) {
    Tensor x = ints({3, 4}, DType::F32, 31, d);
    Tensor idx = indices({}, {0}, DType::I32, d);
    use(mode_for(d));
    return index_select(x, 0, idx);
  });
  check("index_select 0-d index", [&](Device d) {
    Tensor x = ints({3, 4}, DType::U8, 32, d);
    Tensor idx = indices({2}, {}, DType::I32, d);
    use(mode_for(d));
    return index_select(x, 1, idx);
  });
}

TEST_F(WebGpuIndex, GatherAxesDtypesAndStrides) {
  for (DType dt : kDTypes) {
    for (DType it : {DType::I32, DType::I64}) {
      for (int64_t ax = 0; ax < 3; ++ax) {
        check(std::string("gather ") + dtype_name(dt) + "/" + dtype_name(it) + " axis " + std::to_string(ax),
              [&](Device d) {
                Tensor x = ints({4, 5, 3}, dt, 40 + static_cast<uint32_t>(ax), d);
                Shape is{3, 4, 2};
                std::mt19937 rng(41);
                std::vector<int64_t> v(24);
                for (auto& e : v) e = static_cast<int64_t>(rng() % static_cast<uint32_t>(x.size(ax)));
                Tensor idx = indices(v, is, it, d);
                use(mode_for(d));
                return gather(x, ax, idx);
              });
      }
    }
  }
  check("gather strided idx", [&](Device d) {
    Tensor x = ints({5, 6}, DType::I64, 50, d);
    Tensor idx = indices({0, 4, 1, 3, 2, 2, 4, 0, 1, 1, 3, 3}, {3, 4}, DType::I32, d).t();  // [4, 3]
    use(mode_for(d));
    return gather(x, 0, idx);
  });
}

// Direct backend call with the output at element offset `guard` of a sentinel-filled buffer;
// returns the output words and checks that no guard byte changed.
std::vector<uint8_t> run_guarded(OpCall call, const Shape& out_shape, DType dt, int64_t guard) {
  DeviceBackend* gpu = Runtime::get().webgpu_backend(0);
  EXPECT_NE(gpu, nullptr);
  const size_t es = dtype_size(dt);
  const int64_t n = checked_numel(out_shape);
  const size_t total = static_cast<size_t>(n + 2 * guard) * es;
  std::vector<uint8_t> sentinel(total, 0xA5);
  Tensor big = Tensor::from_host(sentinel.data(), total, {static_cast<int64_t>(total)}, DType::U8, kGpu);
  call.outputs = {Tensor(big.storage(), out_shape, contiguous_strides(out_shape), guard, dt)};
  Support s = gpu->supports(call);
  EXPECT_TRUE(s.ok) << s.reason;
  if (!s.ok) return {};
  gpu->execute(call);
  std::vector<uint8_t> back(total);
  big.copy_to_host(back.data(), total);
  for (size_t i = 0; i < static_cast<size_t>(guard) * es; ++i) {
    EXPECT_EQ(back[i], 0xA5) << "guard byte " << i << " before the output was overwritten";
    EXPECT_EQ(back[total - 1 - i], 0xA5) << "guard byte " << i << " after the output was overwritten";
  }
  return std::vector<uint8_t>(back.begin() + guard * es, back.end() - guard * es);
}

TEST_F(WebGpuIndex, SubWordOutputsAtOddOffsetsKeepGuards) {
  for (DType dt : {DType::F16, DType::U8, DType::F32, DType::I64}) {
    for (int64_t guard : {1, 3}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " guard " + std::to_string(guard));
      Tensor a = ints({3, 5}, dt, 60, kGpu), b = ints({3, 2}, dt, 61, kGpu);
      use(PolicyMode::CpuOnly);
      Tensor want = concat({a.cpu(), b.cpu()}, 1);
      std::vector<uint8_t> expect(want.nbytes());
      want.copy_to_host(expect.data(), expect.size());
      OpCall c{OpKind::Concat, "concat", {a, b}, {}, {}};
      c.attrs.axis = 1;
      EXPECT_EQ(run_guarded(c, {3, 7}, dt, guard), expect);

      Tensor idx = indices({4, 0, 2, 2}, {4}, DType::I64, kGpu);
      want = index_select(a.cpu(), 1, idx.cpu());
      expect.resize(want.nbytes());
      want.copy_to_host(expect.data(), expect.size());
      OpCall s{OpKind::IndexSelect, "index_select", {a, idx}, {}, {}};
      s.attrs.axis = 1;
      EXPECT_EQ(run_guarded(s, {3, 4}, dt, guard), expect);
    }
  }
}

// The front-end cannot see device-resident index values: the kernel stays in bounds, writes
// zeros for invalid indices and sets the op's bit in the device status word, so the next read
// (the wait that follows anyway) throws OutOfRange naming the op, once (docs/semantics.md).
TEST_F(WebGpuIndex, OutOfRangeIndicesNeverReadOrWriteOutOfBoundsAndRaiseAtRead) {
  Tensor x = ints({4, 3}, DType::F32, 70, kGpu);
  for (const char* name : {"index_select", "gather"}) {
    SCOPED_TRACE(name);
    const bool sel = std::string(name) == "index_select";
    Tensor idx = sel ? indices({1, -1, 4, 1LL << 33, 3}, {5}, DType::I64, kGpu)
                     : indices({1, -1, 4, 1LL << 33, 3}, {5, 1}, DType::I64, kGpu).expand({5, 3}).contiguous();
    OpCall s{sel ? OpKind::IndexSelect : OpKind::Gather, name, {x, idx}, {}, {}};
    s.attrs.axis = 0;
    DeviceBackend* gpu = Runtime::get().webgpu_backend(0);
    ASSERT_NE(gpu, nullptr);
    Tensor out = Tensor::empty({5, 3}, DType::F32, kGpu);
    s.outputs = {out};
    gpu->execute(s);
    std::vector<float> got(15);
    try {
      out.copy_to_host(got.data(), got.size() * 4);
      ADD_FAILURE() << "no OutOfRange at the read";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::OutOfRange) << e.what();
      EXPECT_EQ(e.op(), name) << e.what();
    }
    // Reported once: the word is cleared, and the data (zeros for the bad rows) reads back.
    out.copy_to_host(got.data(), got.size() * 4);
    std::vector<double> xv = host_values(x);
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(got[0 * 3 + j], xv[1 * 3 + j]);
      EXPECT_EQ(got[1 * 3 + j], 0.0f) << "negative index";
      EXPECT_EQ(got[2 * 3 + j], 0.0f) << "index == size";
      EXPECT_EQ(got[3 * 3 + j], 0.0f) << "index >= 2^32";
      EXPECT_EQ(got[4 * 3 + j], xv[3 * 3 + j]);
    }
  }
  // i32 indices through the public op, reported at synchronize() when nothing is read.
  Tensor bad = indices({0, 7}, {2}, DType::I32, kGpu);
  use(PolicyMode::Auto);
  Tensor y = index_select(x, 1, bad);
  try {
    Runtime::get().webgpu_backend(0)->synchronize();
    ADD_FAILURE() << "no OutOfRange at synchronize";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfRange) << e.what();
    EXPECT_EQ(e.op(), "index_select") << e.what();
  }
  EXPECT_NO_THROW(Runtime::get().webgpu_backend(0)->synchronize());
  // In-range indices leave no trace: the next op's result reads back normally.
  Tensor ok = index_select(x, 0, indices({3, 0}, {2}, DType::I32, kGpu));
  EXPECT_EQ(host_values(ok), (std::vector<double>{host_values(x)[9], host_values(x)[10], host_values(x)[11],
                                                  host_values(x)[0], host_values(x)[1], host_values(x)[2]}));
}

}  // namespace
}  // namespace wgt
