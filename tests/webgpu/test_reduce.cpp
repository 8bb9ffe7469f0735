// Conformance of the WebGPU reduce family (reduce, argmax, softmax, log_softmax, rms_norm,
// layer_norm) against the CPU reference: odd sizes, size-1 and empty dims, strided views,
// every axis combination with keepdim, extreme values, NaN/inf, f16, and guard regions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "settings_env.hpp"
#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);
using MakeInputs = std::function<std::vector<Tensor>(Device)>;
using RunOp = std::function<Tensor(const std::vector<Tensor>&)>;

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Fixture: the binary needs a real adapter; GPU runs use policy auto without fallback so a
// kernel that cannot run raises Unsupported instead of silently running on the CPU.
class WebGpuReduce : public wgt::testing::WebGpuTest {
 protected:


  // Values of any real/integer tensor as doubles, via the CPU reference cast.
  std::vector<double> host_values(const Tensor& t) {
    use_cpu_reference();
    return cast(t.cpu(), DType::F64).to_vector<double>();
  }

  // Runs `op` on the CPU reference and on the GPU with the same inputs; compares shape, dtype,
  // NaN pattern and |got - want| <= atol + rtol * |want|.
  void check(const std::string& what, const MakeInputs& make, const RunOp& op, double atol, double rtol) {
    SCOPED_TRACE(what);
    use_cpu_reference();
    Tensor want = op(make(Device::cpu()));
    use_gpu();
    Tensor got = op(make(kGpu));
    ASSERT_EQ(Runtime::get().last_decision().backend.rfind("webgpu", 0), 0u) << Runtime::get().last_decision().backend;
    ASSERT_TRUE(got.device() == kGpu);
    ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape()));
    ASSERT_EQ(got.dtype(), want.dtype());
    std::vector<double> g = host_values(got), w = host_values(want);
    ASSERT_EQ(g.size(), w.size());
    int bad = 0;
    for (size_t i = 0; i < g.size() && bad < 5; ++i) {
      const bool ok = std::isnan(w[i]) ? std::isnan(g[i])
                                       : (g[i] == w[i] || std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]));
      if (!ok) {
        ++bad;
        ADD_FAILURE() << "element " << i << ": got " << g[i] << ", want " << w[i];
      }
    }
  }

 private:
};

MakeInputs dense(Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  return [=](Device d) {
    auto v = random_floats(static_cast<size_t>(checked_numel(shape)), seed, lo, hi);
    return std::vector<Tensor>{Tensor::from_vector(v, shape, d)};
  };
}

// ---------------- reduce ----------------

const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod};

double sum_tol(int64_t n) { return 2e-6 * std::sqrt(static_cast<double>(n) + 1) + 1e-6; }

TEST_F(WebGpuReduce, RowLengthsAllOps) {
  for (int64_t n : {1, 3, 7, 33, 257, 1031, 5000}) {
    for (ReduceOp op : kOps) {
      // Products of many values drift towards 0/inf: keep them near 1 so the check means something.
      const bool prod = op == ReduceOp::Prod;
      check(std::string(reduce_op_name(op)) + " n=" + std::to_string(n), dense({2, n}, 7 + n, prod ? 0.99f : -1.f, prod ? 1.01f : 1.f),
            [op](const std::vector<Tensor>& in) { return reduce(op, in[0], {1}); }, sum_tol(n), prod ? 1e-4 : 1e-5);
    }
    check("argmax n=" + std::to_string(n), dense({3, n}, 11 + n),
          [](const std::vector<Tensor>& in) { return argmax(in[0], 1); }, 0, 0);
  }
}

TEST_F(WebGpuReduce, AllAxisCombinationsWithKeepdim) {
  const Shape s{3, 1, 7, 5};
  for (int mask = 1; mask < 16; ++mask) {
    std::vector<int64_t> axes;
    for (int a = 0; a < 4; ++a)
      if (mask & (1 << a)) axes.push_back(a);
    for (bool keep : {false, true}) {
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Mean}) {
        check(std::string(reduce_op_name(op)) + " mask=" + std::to_string(mask) + (keep ? " keepdim" : ""), dense(s, 100 + mask),
              [&](const std::vector<Tensor>& in) { return reduce(op, in[0], axes, keep); }, 1e-5, 1e-5);
      }
    }
  }
  for (int a = 0; a < 4; ++a)
    for (bool keep : {false, true})
      check("argmax axis " + std::to_string(a), dense(s, 200 + a),
            [&](const std::vector<Tensor>& in) { return argmax(in[0], a, keep); }, 0, 0);
}

TEST_F(WebGpuReduce, OuterAxisOfWideMatrixUsesColumnKernel) {
  // 4096 outputs, short strided rows: the one-invocation-per-output kernel.
  check("sum axis 0", dense({6, 4096}, 5), [](const std::vector<Tensor>& in) { return sum(in[0], {0}); }, 1e-5, 1e-5);
  check("argmax axis 0", dense({6, 4096}, 6), [](const std::vector<Tensor>& in) { return argmax(in[0], 0); }, 0, 0);
  check("min axes 0,2", dense({5, 700, 3}, 8), [](const std::vector<Tensor>& in) { return min(in[0], {0, 2}); }, 0, 0);
}

TEST_F(WebGpuReduce, StridedViews) {
  auto permuted = [](Device d) {
    auto v = random_floats(7 * 33 * 3, 21);
    return std::vector<Tensor>{Tensor::from_vector(v, {7, 33, 3}, d).permute({2, 0, 1})};
  };
  auto sliced = [](Device d) {
    auto v = random_floats(9 * 40, 22);
    return std::vector<Tensor>{Tensor::from_vector(v, {9, 40}, d).slice(0, 1, 9, 2).slice(1, 3, 40, 3)};
  };
  auto expanded = [](Device d) {
    auto v = random_floats(5, 23);
    return std::vector<Tensor>{Tensor::from_vector(v, {5, 1}, d).expand({5, 300})};
  };
  for (int64_t ax = 0; ax < 3; ++ax)
    check("sum permuted axis " + std::to_string(ax), permuted,
          [ax](const std::vector<Tensor>& in) { return sum(in[0], {ax}); }, 1e-5, 1e-5);
  check("max permuted axes 0,2", permuted, [](const std::vector<Tensor>& in) { return max(in[0], {0, 2}, true); }, 0, 0);
  check("argmax sliced", sliced, [](const std::vector<Tensor>& in) { return argmax(in[0], 1); }, 0, 0);
  check("mean sliced", sliced, [](const std::vector<Tensor>& in) { return mean(in[0], {0}); }, 1e-6, 1e-5);
  check("sum expanded", expanded, [](const std::vector<Tensor>& in) { return sum(in[0], {1}); }, 1e-4, 1e-5);
}

TEST_F(WebGpuReduce, EmptyAndScalar) {
  check("sum of empty rows", dense({0, 5}, 1), [](const std::vector<Tensor>& in) { return sum(in[0], {1}); }, 0, 0);
  check("sum over empty axis", dense({0, 5}, 1), [](const std::vector<Tensor>& in) { return sum(in[0], {0}); }, 0, 0);
  check("prod over empty axis", dense({4, 0}, 1), [](const std::vector<Tensor>& in) { return prod(in[0], {1}); }, 0, 0);
  check("mean over empty axis is NaN", dense({0, 3}, 1), [](const std::vector<Tensor>& in) { return mean(in[0], {0}); }, 0, 0);
  check("0-d sum", dense({}, 2), [](const std::vector<Tensor>& in) { return sum(in[0]); }, 0, 0);
}

TEST_F(WebGpuReduce, NanAndInfSemantics) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Rows: NaN in the middle, two NaNs, -inf only, +inf and -inf, ties (first index wins).
  std::vector<float> v{1, nan, 3, 2, nan, 0, nan, 5, -inf, -inf, -inf, -inf, inf, -inf, 1, 2, 7, 7, 1, 7};
  auto make = [v](Device d) { return std::vector<Tensor>{Tensor::from_vector(v, {5, 4}, d)}; };
  for (ReduceOp op : kOps)
    check(std::string(reduce_op_name(op)) + " nan/inf", make,
          [op](const std::vector<Tensor>& in) { return reduce(op, in[0], {1}); }, 1e-6, 1e-6);
  check("argmax nan/inf", make, [](const std::vector<Tensor>& in) { return argmax(in[0], 1); }, 0, 0);
  check("argmax nan/inf axis 0", make, [](const std::vector<Tensor>& in) { return argmax(in[0], 0); }, 0, 0);
}

// ---------------- softmax / log_softmax ----------------

TEST_F(WebGpuReduce, SoftmaxRowLengths) {
  // 4, 1024 and 4096 take the register-cached vec4 kernel; the others the strided one.
  for (int64_t n : {1, 3, 4, 7, 33, 257, 1024, 1031, 4096, 20000}) {
    for (bool log : {false, true}) {
      check(std::string(log ? "log_softmax" : "softmax") + " n=" + std::to_string(n), dense({3, n}, 31 + n, -5, 5),
            [log](const std::vector<Tensor>& in) { return log ? log_softmax(in[0]) : softmax(in[0]); }, 1e-6, 1e-4);
    }
  }
}

TEST_F(WebGpuReduce, SoftmaxEveryAxisAndViews) {
  for (int64_t ax = 0; ax < 3; ++ax)
    for (bool log : {false, true})
      check("axis " + std::to_string(ax), dense({5, 1, 12}, 40 + ax, -3, 3),
            [=](const std::vector<Tensor>& in) { return log ? log_softmax(in[0], ax) : softmax(in[0], ax); }, 1e-6, 1e-4);
  auto permuted = [](Device d) {
    auto v = random_floats(8 * 6 * 4, 44, -3, 3);
    return std::vector<Tensor>{Tensor::from_vector(v, {8, 6, 4}, d).permute({1, 2, 0})};
  };
  check("permuted last axis", permuted, [](const std::vector<Tensor>& in) { return softmax(in[0]); }, 1e-6, 1e-4);
  check("permuted axis 1", permuted, [](const std::vector<Tensor>& in) { return log_softmax(in[0], 1); }, 1e-6, 1e-4);
  auto sliced_rows = [](Device d) {  // rows of 8 at a row stride of 12 and an offset of 4: vec4 path with offsets
    auto v = random_floats(10 * 12, 45, -3, 3);
    return std::vector<Tensor>{Tensor::from_vector(v, {10, 12}, d).slice(1, 4, 12).slice(0, 1, 10, 3)};
  };
  check("sliced rows", sliced_rows, [](const std::vector<Tensor>& in) { return softmax(in[0]); }, 1e-6, 1e-4);
  check("empty rows", dense({0, 7}, 1), [](const std::vector<Tensor>& in) { return softmax(in[0]); }, 0, 0);
  check("empty axis", dense({3, 0}, 1), [](const std::vector<Tensor>& in) { return log_softmax(in[0]); }, 0, 0);
}

TEST_F(WebGpuReduce, SoftmaxExtremeLogits) {
  for (int64_t n : {33, 4096})
    for (bool log : {false, true})
      check("+-1e4 logits n=" + std::to_string(n), dense({4, n}, 50 + n, -1e4f, 1e4f),
            [log](const std::vector<Tensor>& in) { return log ? log_softmax(in[0]) : softmax(in[0]); }, 1e-6, 1e-4);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Rows: a NaN, all -inf, -inf mixed with finite, a +inf.
  std::vector<float> v{1, nan, 2, 3, -inf, -inf, -inf, -inf, -inf, 1, -inf, 2, 0, inf, 1, 2};
  for (bool log : {false, true})
    for (int64_t ax : {0, 1})
      check(std::string("nan/inf rows ") + (log ? "log" : "") + " axis " + std::to_string(ax),
            [v](Device d) { return std::vector<Tensor>{Tensor::from_vector(v, {4, 4}, d)}; },
            [=](const std::vector<Tensor>& in) { return log ? log_softmax(in[0], ax) : softmax(in[0], ax); }, 1e-6, 1e-5);
}

// ---------------- rms_norm / layer_norm ----------------

MakeInputs norm_inputs(Shape shape, int n_params, uint32_t seed) {
  return [=](Device d) {
    std::vector<Tensor> in = dense(shape, seed, -2, 2)(d);
    for (int i = 0; i < n_params; ++i) {
      auto w = random_floats(static_cast<size_t>(shape.back()), seed + 1 + i, 0.5f, 1.5f);
      in.push_back(Tensor::from_vector(w, {shape.back()}, d));
    }
    return in;
  };
}

// The register-cached row kernels reduce with subgroup operations where the adapter has them
// (lavapipe and the H200 do) and through workgroup memory otherwise; both forms must agree
// with the reference, including the NaN/inf rows.
TEST_F(WebGpuReduce, RowKernelsWithAndWithoutSubgroups) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special{1, nan, 2, 3, -inf, -inf, -inf, -inf, -inf, 1, -inf, 2, 0, inf, 1, 2};
  for (const char* mode : {"off", "on"}) {
    ASSERT_EQ(test_setenv("WGT_REDUCE_SUBGROUPS", mode), 0);
    const std::string m = std::string(" subgroups=") + mode;
    for (int64_t n : {4, 64, 1024, 4096}) {
      const std::string sn = " n=" + std::to_string(n) + m;
      for (bool log : {false, true})
        check(std::string(log ? "log_softmax" : "softmax") + sn, dense({5, n}, 90 + n, -6, 6),
              [log](const std::vector<Tensor>& in) { return log ? log_softmax(in[0]) : softmax(in[0]); }, 1e-6, 1e-4);
      check("rms_norm w" + sn, norm_inputs({5, n}, 1, n),
            [](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1], 1e-5); }, 1e-5, 1e-4);
      check("layer_norm w+b" + sn, norm_inputs({5, n}, 2, n),
            [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2], 1e-3); }, 1e-4, 1e-4);
    }
    for (bool log : {false, true})
      check(std::string("nan/inf rows") + (log ? " log" : "") + m,
            [special](Device d) { return std::vector<Tensor>{Tensor::from_vector(special, {4, 4}, d)}; },
            [=](const std::vector<Tensor>& in) { return log ? log_softmax(in[0]) : softmax(in[0]); }, 1e-6, 1e-5);
  }
  test_unsetenv("WGT_REDUCE_SUBGROUPS");
}

// Sum / mean of contiguous rows whose length is a multiple of 4 take the vec4 kernel
// (reduce_row_v4): lengths below, at and past one sweep of its 256 x 4 vec4s, rows of a view at
// a 16-byte-aligned offset (and, for comparison, at an unaligned one: the generic kernel), huge
// values, both row reductions.
TEST_F(WebGpuReduce, SumMeanOfVec4Rows) {
  auto view = [](int64_t n, int64_t off) {
    return [=](Device d) {
      auto v = random_floats(static_cast<size_t>(7 * (n + 8)), 31 + static_cast<uint32_t>(off));
      return std::vector<Tensor>{Tensor::from_vector(v, {7, n + 8}, d).slice(1, off, off + n)};
    };
  };
  for (const char* mode : {"off", "on"}) {
    ASSERT_EQ(test_setenv("WGT_REDUCE_SUBGROUPS", mode), 0);
    const std::string m = std::string(" subgroups=") + mode;
    for (int64_t n : {4, 1028, 4096, 4100, 12288}) {
      const std::string sn = " n=" + std::to_string(n) + m;
      check("sum" + sn, dense({3, n}, 60 + n), [](const std::vector<Tensor>& in) { return sum(in[0], {1}); }, sum_tol(n), 1e-5);
      check("mean keepdim" + sn, dense({3, n}, 61 + n), [](const std::vector<Tensor>& in) { return mean(in[0], {1}, true); },
            sum_tol(n) / n, 1e-5);
    }
    for (int64_t off : {4, 2})
      check("sum of a view at offset " + std::to_string(off) + m, view(1024, off),
            [](const std::vector<Tensor>& in) { return sum(in[0], {1}); }, sum_tol(1024), 1e-5);
    check("sum of huge values" + m, dense({2, 2048}, 62, -1e30f, 1e30f),
          [](const std::vector<Tensor>& in) { return sum(in[0], {1}); }, 0, 1e-4);
  }
  test_unsetenv("WGT_REDUCE_SUBGROUPS");
}

TEST_F(WebGpuReduce, NormsRowLengthsAndOperands) {
  for (int64_t n : {1, 3, 4, 7, 33, 257, 1031, 4096}) {
    const std::string sn = " n=" + std::to_string(n);
    check("rms_norm" + sn, norm_inputs({3, n}, 0, n), [](const std::vector<Tensor>& in) { return rms_norm(in[0]); }, 1e-5, 1e-4);
    check("rms_norm w" + sn, norm_inputs({3, n}, 1, n),
          [](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1], 1e-5); }, 1e-5, 1e-4);
    check("layer_norm" + sn, norm_inputs({3, n}, 0, n), [](const std::vector<Tensor>& in) { return layer_norm(in[0]); }, 1e-4, 1e-4);
    check("layer_norm w" + sn, norm_inputs({3, n}, 1, n),
          [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1]); }, 1e-4, 1e-4);
    check("layer_norm b" + sn, norm_inputs({3, n}, 1, n),
          [](const std::vector<Tensor>& in) { return layer_norm(in[0], std::nullopt, in[1]); }, 1e-4, 1e-4);
    check("layer_norm w+b" + sn, norm_inputs({3, n}, 2, n),
          [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2], 1e-3); }, 1e-4, 1e-4);
  }
}

TEST_F(WebGpuReduce, NormsStridedAndEmpty) {
  auto strided = [](Device d) {  // x: transposed (last-dim stride 9); weight: every other element
    auto v = random_floats(16 * 9, 60, -2, 2);
    auto w = random_floats(32, 61, 0.5f, 1.5f);
    auto b = random_floats(19, 62);
    return std::vector<Tensor>{Tensor::from_vector(v, {16, 9}, d).t(), Tensor::from_vector(w, {32}, d).slice(0, 0, 32, 2),
                               Tensor::from_vector(b, {19}, d).slice(0, 3, 19)};
  };
  check("rms_norm strided", strided, [](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1]); }, 1e-5, 1e-4);
  check("layer_norm strided", strided, [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); }, 1e-4, 1e-4);
  check("rms_norm 3-d with size-1 dim", norm_inputs({2, 1, 5, 8}, 1, 63),
        [](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1]); }, 1e-5, 1e-4);
  check("rms_norm empty", norm_inputs({0, 8}, 1, 64), [](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1]); }, 0, 0);
}

TEST_F(WebGpuReduce, HalfPrecision) {
  auto half = [](Shape shape, uint32_t seed) {
    return [=](Device d) {
      std::vector<Tensor> in = dense(shape, seed, -3, 3)(Device::cpu());
      Tensor h = cast(in[0], DType::F16);  // built on the CPU reference, then moved
      return std::vector<Tensor>{h.to(d)};
    };
  };
  try {
    check("f16 sum", half({3, 257}, 70), [](const std::vector<Tensor>& in) { return sum(in[0], {1}); }, 1e-2, 2e-3);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Unsupported) GTEST_SKIP() << "f16 unsupported here: " << e.what();
    throw;
  }
  check("f16 argmax", half({3, 257}, 71), [](const std::vector<Tensor>& in) { return argmax(in[0], 1); }, 0, 0);
  check("f16 softmax v4", half({3, 1024}, 72), [](const std::vector<Tensor>& in) { return softmax(in[0]); }, 1e-4, 2e-3);
  check("f16 softmax", half({3, 33}, 73), [](const std::vector<Tensor>& in) { return log_softmax(in[0]); }, 1e-3, 2e-3);
  check("f16 rms_norm v4", half({3, 1024}, 74), [](const std::vector<Tensor>& in) { return rms_norm(in[0]); }, 1e-3, 2e-3);
  check("f16 layer_norm", half({3, 7}, 75), [](const std::vector<Tensor>& in) { return layer_norm(in[0]); }, 1e-3, 2e-3);
}

// ---------------- guard regions ----------------

// Runs `call` on the GPU backend directly with its output placed at element offset `guard`
// of a larger buffer filled with a sentinel, then checks the sentinel and the values.
void run_with_guards(OpCall call, const Shape& out_shape, DType out_dt, const std::vector<double>& want, int64_t guard) {
  DeviceBackend* gpu = Runtime::get().webgpu_backend(0);
  ASSERT_NE(gpu, nullptr);
  const int64_t n = checked_numel(out_shape);
  const int64_t words = (n + 2 * guard) * static_cast<int64_t>(dtype_size(out_dt) / 4);
  std::vector<uint32_t> sentinel(static_cast<size_t>(words), 0xDEADBEEFu);
  Tensor big = Tensor::from_host(sentinel.data(), sentinel.size() * 4, {words}, DType::I32, kGpu);
  Tensor out(big.storage(), out_shape, contiguous_strides(out_shape), guard, out_dt);
  call.outputs = {out};
  Support s = gpu->supports(call);
  ASSERT_TRUE(s.ok) << s.reason;
  gpu->execute(call);
  std::vector<uint32_t> back(sentinel.size());
  big.copy_to_host(back.data(), back.size() * 4);
  const int64_t gw = guard * static_cast<int64_t>(dtype_size(out_dt) / 4);
  for (int64_t i = 0; i < gw; ++i) {
    ASSERT_EQ(back[i], 0xDEADBEEFu) << "guard before output overwritten at word " << i;
    ASSERT_EQ(back[back.size() - 1 - i], 0xDEADBEEFu) << "guard after output overwritten at word " << i;
  }
  for (int64_t i = 0; i < n; ++i) {
    double g;
    if (out_dt == DType::I64) {
      int64_t v;
      std::memcpy(&v, &back[gw + 2 * i], 8);
      g = static_cast<double>(v);
    } else {
      float v;
      std::memcpy(&v, &back[gw + i], 4);
      g = v;
    }
    ASSERT_NEAR(g, want[i], 1e-5 + 1e-4 * std::fabs(want[i])) << "element " << i;
  }
}

TEST_F(WebGpuReduce, OutputsHonorOffsetsAndGuards) {
  for (int64_t guard : {5, 8}) {  // 5: unaligned (scalar kernels), 8: vec4-aligned
    SCOPED_TRACE("guard " + std::to_string(guard));
    auto v = random_floats(6 * 64, 80);
    auto w = random_floats(64, 81, 0.5f, 1.5f);
    use_cpu_reference();
    Tensor xc = Tensor::from_vector(v, {6, 64}), wc = Tensor::from_vector(w, {64});
    std::vector<double> want_sum = host_values(sum(xc, {1})), want_arg = host_values(argmax(xc, 0)),
                        want_sm = host_values(softmax(xc)), want_rms = host_values(rms_norm(xc, wc)),
                        want_ln = host_values(layer_norm(xc, wc, wc));
    Tensor x = xc.to(kGpu), wg = wc.to(kGpu);
    OpCall c{OpKind::Reduce, "sum", {x}, {}, {}};
    c.attrs.axes = {1};
    run_with_guards(c, {6}, DType::F32, want_sum, guard);
    c.name = "argmax";
    c.attrs.reduce = ReduceOp::ArgMax;
    c.attrs.axes = {0};
    run_with_guards(c, {64}, DType::I64, want_arg, guard);
    OpCall sm{OpKind::Softmax, "softmax", {x}, {}, {}};
    sm.attrs.axis = 1;
    run_with_guards(sm, {6, 64}, DType::F32, want_sm, guard);
    OpCall rn{OpKind::RMSNorm, "rms_norm", {x, wg}, {}, {}};
    rn.attrs.has_weight = true;
    rn.attrs.eps = 1e-6;
    run_with_guards(rn, {6, 64}, DType::F32, want_rms, guard);
    OpCall ln{OpKind::LayerNorm, "layer_norm", {x, wg, wg}, {}, {}};
    ln.attrs.has_weight = ln.attrs.has_bias = true;
    ln.attrs.eps = 1e-5;
    run_with_guards(ln, {6, 64}, DType::F32, want_ln, guard);
  }
}

}  // namespace
}  // namespace wgt
