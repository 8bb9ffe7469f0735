// cpu-fast against cpu-reference: every fast path on random inputs of odd sizes, plus
// non-contiguous views (fallback or handled), empty tensors, huge logits and NaN handling.
// Tolerances (relative to max(1, |reference|)): f32 elementwise 2e-6 (fast exp ~2 ulp, f32
// transcendental math), f32 reductions/norms/softmax 1e-5 (f32 lanes, double block sums),
// f32 matmul 1e-4 (BLAS f32 accumulation over K), f64 1e-12, f16 2e-3 and bf16 1.6e-2
// (one rounding step of the 16-bit result may differ, computing in f32 vs double).
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>

#include "cpu/fast/fast.hpp"
#include "cpu/fast/parallel.hpp"
#include "core/ref_test_util.hpp"

namespace wgt::test {
namespace {

double tol_for(DType t, double f32_tol) {
  switch (t) {
    case DType::F16: return 2e-3;
    case DType::BF16: return 1.6e-2;
    case DType::F64: return 1e-12;
    default: return f32_tol;
  }
}

enum class Expect { Fast, Fallback };

// Like expect_near_vec, but equal infinities match and only the first mismatches are printed.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::fabs(g - w) <= tol * std::max(1.0, std::fabs(w));
    if (!ok && ++bad <= 5) ADD_FAILURE() << what << " [" << i << "] fast " << g << " reference " << w << " tol " << tol;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.size() << " elements differ";
}

class FastVsRef : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = Runtime::get().policy();
    Policy p = saved_;
    p.mode = PolicyMode::CpuOnly;
    Runtime::get().set_policy(p);
  }
  void TearDown() override { Runtime::get().set_policy(saved_); }

  Tensor run_mode(CpuMode m, const std::function<Tensor()>& f) {
    Policy p = Runtime::get().policy();
    p.cpu_mode = m;
    Runtime::get().set_policy(p);
    return f();
  }
  // Runs `f` in both modes, checks that the fast mode did (or did not) take its fast path and
  // that shapes, dtypes and values agree. Inputs must be built before (they are shared).
  void check(const char* what, const std::function<Tensor()>& f, double f32_tol, Expect expect = Expect::Fast) {
    const Tensor want = run_mode(CpuMode::Reference, f);
    const uint64_t before = cpu_fast::fast_path_hits();
    const Tensor got = run_mode(CpuMode::Fast, f);
    const uint64_t hits = cpu_fast::fast_path_hits() - before;
    if (expect == Expect::Fast) EXPECT_GE(hits, 1u) << what << ": the fast path did not run";
    else EXPECT_EQ(hits, 0u) << what << ": expected the reference fallback";
    ASSERT_EQ(got.shape(), want.shape()) << what;
    ASSERT_EQ(got.dtype(), want.dtype()) << what;
    expect_close(vals(got), vals(want), tol_for(want.dtype(), f32_tol), what);
  }
  // The input tensors are created in reference mode (creation ops have no fast path anyway).
  Tensor randn(Shape s, uint64_t seed, DType t = DType::F32, double scale = 1.0) {
    Tensor x = run_mode(CpuMode::Reference, [&] { return rand_normal(s, seed, 0.0, scale, DType::F32); });
    return t == DType::F32 ? x : run_mode(CpuMode::Reference, [&] { return cast(x, t); });
  }

 private:
  Policy saved_;
};

const DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16};
const int64_t kSizes[] = {1, 7, 33, 1031};

TEST_F(FastVsRef, UnaryAllOpsOddSizes) {
  const UnaryOp ops[] = {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt,
                         UnaryOp::Rsqrt, UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tanh, UnaryOp::Sigmoid,
                         UnaryOp::Relu, UnaryOp::GeluErf, UnaryOp::GeluTanh, UnaryOp::Silu};
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64})
    for (int64_t n : kSizes) {
      Tensor x = randn({3, n}, 11 + n, t, 4.0);
      Tensor pos = run_mode(CpuMode::Reference, [&] { return add(abs(x), 0.25); });  // log/sqrt domain
      for (UnaryOp op : ops) {
        const bool needs_pos = op == UnaryOp::Log || op == UnaryOp::Sqrt || op == UnaryOp::Rsqrt;
        const Tensor& in = needs_pos ? pos : x;
        std::string what = std::string(unary_op_name(op)) + " " + dtype_name(t) + " n=" + std::to_string(n);
        check(what.c_str(), [&] { return unary(op, in); }, 2e-6);
      }
    }
}

TEST_F(FastVsRef, ExpCoversFullRangeAndSpecials) {
  // Sweep exp's whole f32 range including overflow/underflow and the special values.
  std::vector<float> v;
  for (float x = -110.f; x <= 95.f; x += 0.37f) v.push_back(x);
  for (float s : {0.f, -0.f, 88.7f, -87.3f, INFINITY, -INFINITY, NAN}) v.push_back(s);
  Tensor x = F(v, {static_cast<int64_t>(v.size())});
  check("exp sweep", [&] { return exp(x); }, 2e-6);
  check("sigmoid sweep", [&] { return sigmoid(x); }, 2e-6);
}

TEST_F(FastVsRef, BinaryAllOpsWithBroadcast) {
  const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Pow,
                          BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt,
                          BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge};
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64})
    for (int64_t n : kSizes) {
      Tensor a = randn({5, n}, 100 + n, t);
      Tensor b = randn({5, n}, 200 + n, t);
      Tensor row = randn({n}, 300 + n, t);        // row-vector broadcast
      Tensor col = randn({5, 1}, 400 + n, t);     // one value per row (inner stride 0)
      Tensor sc = randn({}, 500 + n, t);          // 0-d scalar
      Tensor pa = run_mode(CpuMode::Reference, [&] { return add(abs(a), 0.5); });  // pow base > 0
      for (BinaryOp op : ops) {
        const Tensor& lhs = op == BinaryOp::Pow ? pa : a;
        std::string w = std::string(binary_op_name(op)) + " " + dtype_name(t) + " n=" + std::to_string(n);
        check((w + " same").c_str(), [&] { return binary(op, lhs, b); }, 2e-6);
        check((w + " row").c_str(), [&] { return binary(op, lhs, row); }, 2e-6);
        check((w + " col").c_str(), [&] { return binary(op, lhs, col); }, 2e-6);
        check((w + " scalar").c_str(), [&] { return binary(op, lhs, sc); }, 2e-6);
        check((w + " scalar-lhs").c_str(), [&] { return binary(op, sc, b); }, 2e-6);
      }
    }
}

TEST_F(FastVsRef, BinaryEqualValuesAndNaN) {
  Tensor a = F({1.f, NAN, 2.f, -0.f, INFINITY, NAN, 3.f}, {7});
  Tensor b = F({1.f, 1.f, NAN, 0.f, INFINITY, NAN, -3.f}, {7});
  for (BinaryOp op : {BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Ge,
                      BinaryOp::Add, BinaryOp::Sub})
    check(binary_op_name(op), [&] { return binary(op, a, b); }, 0.0);
}

TEST_F(FastVsRef, NonContiguousElementwise) {
  Tensor a = randn({33, 40}, 7);
  Tensor b = randn({40, 33}, 8);
  Tensor at = a.t();                  // inner stride 33: not a fast plan -> reference
  check("add transposed", [&] { return add(at, b); }, 0.0, Expect::Fallback);
  check("exp transposed", [&] { return exp(at); }, 0.0, Expect::Fallback);
  Tensor sl = a.slice(1, 3, 36);      // rows of 33 with inner stride 1, row stride 40: handled
  Tensor c = randn({33, 33}, 9);
  check("add sliced rows", [&] { return add(sl, c); }, 2e-6);
  check("tanh sliced rows", [&] { return tanh(sl); }, 2e-6);
  Tensor stepped = a.slice(1, 0, 40, 2);  // inner stride 2 -> reference
  check("neg stepped", [&] { return neg(stepped); }, 0.0, Expect::Fallback);
  Tensor ex = randn({1, 40}, 10).expand({33, 40});  // stride-0 rows broadcast: handled
  check("mul expanded", [&] { return mul(ex, a); }, 2e-6);
}

TEST_F(FastVsRef, WhereAndCast) {
  for (int64_t n : kSizes) {
    Tensor a = randn({4, n}, 20 + n);
    Tensor b = randn({n}, 30 + n);
    Tensor cond = run_mode(CpuMode::Reference, [&] { return gt(a, randn({4, n}, 40 + n)); });
    check("where", [&] { return where(cond, a, b); }, 0.0);
    for (DType from : {DType::F32, DType::F16, DType::BF16, DType::F64})
      for (DType to : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
        Tensor x = randn({4, n}, 50 + n, from, 300.0);  // reaches f16's coarse range
        const bool fast = from == to || (from != DType::F64 && to != DType::F64) ||
                          from == DType::F32 || to == DType::F32;
        std::string w = std::string("cast ") + dtype_name(from) + "->" + dtype_name(to);
        check(w.c_str(), [&] { return cast(x, to); }, 0.0, fast ? Expect::Fast : Expect::Fallback);
      }
  }
  // Overflow to inf and NaN through f32 -> f16.
  Tensor big = F({70000.f, -70000.f, 65519.f, NAN, 1e-8f}, {5});
  check("cast f16 specials", [&] { return cast(big, DType::F16); }, 0.0);
}

TEST_F(FastVsRef, ReductionsLastAndAllAxes) {
  const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min};
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64})
    for (int64_t n : kSizes)
      for (ReduceOp op : ops) {
        Tensor x = randn({6, n}, 60 + n, t);
        std::string w = std::string(reduce_op_name(op)) + " " + dtype_name(t) + " n=" + std::to_string(n);
        check((w + " last").c_str(), [&] { return reduce(op, x, {-1}); }, 1e-5);
        check((w + " last keepdim").c_str(), [&] { return reduce(op, x, {1}, true); }, 1e-5);
        check((w + " all").c_str(), [&] { return reduce(op, x); }, 1e-5);
        check((w + " axis0").c_str(), [&] { return reduce(op, x, {0}); }, 0.0, Expect::Fallback);
      }
  // One long row takes the split-row path (blocks reduced in parallel, combined in order).
  Tensor longx = randn({1 << 18}, 77, DType::F32, 3.0);
  for (ReduceOp op : ops) check(reduce_op_name(op), [&] { return reduce(op, longx); }, 1e-5);
}

TEST_F(FastVsRef, ReductionNaNAndEdgeCases) {
  std::vector<float> v(1031, 1.0f);
  v[517] = NAN;
  Tensor x = F(v, {1031});
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min, ReduceOp::Sum, ReduceOp::Mean})
    check(reduce_op_name(op), [&] { return reduce(op, x); }, 0.0);
  Tensor inf = F({-INFINITY, 3.f, INFINITY, 2.f, 1.f, 0.f, -1.f, 5.f, 9.f}, {9});
  check("max inf", [&] { return max(inf); }, 0.0);
  check("min inf", [&] { return min(inf); }, 0.0);
  // Empty: the reduced axis is empty (sum -> 0, mean -> NaN: reference) or no rows (fast).
  Tensor e0 = randn({3, 0}, 1);
  check("sum empty axis", [&] { return sum(e0, {1}); }, 0.0, Expect::Fallback);
  check("mean empty axis", [&] { return mean(e0, {1}); }, 0.0, Expect::Fallback);
  Tensor e1 = randn({0, 5}, 2);
  check("sum no rows", [&] { return sum(e1, {1}); }, 0.0);
  // Non-contiguous input: reference.
  Tensor t = randn({7, 33}, 3).t();
  check("sum transposed", [&] { return sum(t, {1}); }, 1e-5, Expect::Fallback);
}

TEST_F(FastVsRef, SoftmaxAndLogSoftmax) {
  for (DType t : kFloatTypes)
    for (int64_t n : kSizes) {
      Tensor x = randn({5, n}, 80 + n, t, 3.0);
      std::string w = std::string(dtype_name(t)) + " n=" + std::to_string(n);
      check(("softmax " + w).c_str(), [&] { return softmax(x, -1); }, 1e-5);
      check(("log_softmax " + w).c_str(), [&] { return log_softmax(x, -1); }, 1e-5);
      check(("softmax axis0 " + w).c_str(), [&] { return softmax(x, 0); }, 1e-5, Expect::Fallback);
    }
  Tensor nc = randn({33, 7}, 5).t();
  check("softmax transposed", [&] { return softmax(nc, -1); }, 1e-5, Expect::Fallback);
  Tensor empty = randn({0, 9}, 6);
  check("softmax empty", [&] { return softmax(empty, -1); }, 0.0);
}

TEST_F(FastVsRef, SoftmaxHugeLogitsAndNaN) {
  // 1e4-scale logits: exp would overflow without the max shift.
  Tensor big = randn({4, 1031}, 90, DType::F32, 1e4);
  check("softmax 1e4", [&] { return softmax(big, -1); }, 1e-5);
  check("log_softmax 1e4", [&] { return log_softmax(big, -1); }, 1e-5);
  // Rows: with a NaN (whole row NaN), all -inf (NaN), with +inf (NaN), one-hot by -inf.
  const float ninf = -std::numeric_limits<float>::infinity();
  Tensor s = F({1.f, NAN, 2.f, 3.f,
                ninf, ninf, ninf, ninf,
                1.f, INFINITY, 0.f, 2.f,
                ninf, 5.f, ninf, ninf}, {4, 4});
  check("softmax specials", [&] { return softmax(s, -1); }, 1e-6);
  check("log_softmax specials", [&] { return log_softmax(s, -1); }, 1e-6);
}

TEST_F(FastVsRef, RmsNormAndLayerNorm) {
  for (DType t : kFloatTypes)
    for (int64_t n : kSizes) {
      Tensor x = randn({6, n}, 120 + n, t, 2.0);
      Tensor shifted = run_mode(CpuMode::Reference, [&] { return add(x, 100.0); });  // large mean
      Tensor w = randn({n}, 130 + n, t);
      Tensor b = randn({n}, 140 + n, t);
      std::string s = std::string(dtype_name(t)) + " n=" + std::to_string(n);
      check(("rms " + s).c_str(), [&] { return rms_norm(x, std::nullopt, 1e-6); }, 1e-5);
      check(("rms w " + s).c_str(), [&] { return rms_norm(x, w, 1e-5); }, 1e-5);
      check(("ln " + s).c_str(), [&] { return layer_norm(x, std::nullopt, std::nullopt, 1e-5); }, 1e-5);
      check(("ln w b " + s).c_str(), [&] { return layer_norm(x, w, b, 1e-5); }, 1e-5);
      check(("ln b " + s).c_str(), [&] { return layer_norm(x, std::nullopt, b, 1e-5); }, 1e-5);
      // The two-pass variance keeps this within f32 tolerance (one pass would not for n=1031).
      // 16-bit inputs at offset 100 are coarsely quantized; compare in f32 only.
      if (t == DType::F32) check(("ln shifted " + s).c_str(), [&] { return layer_norm(shifted, w, b, 1e-5); }, 1e-4);
    }
  Tensor nc = randn({40, 9}, 150).t();
  check("rms transposed", [&] { return rms_norm(nc); }, 1e-5, Expect::Fallback);
  Tensor empty = randn({0, 16}, 151);
  check("ln empty", [&] { return layer_norm(empty); }, 0.0);
}

// Rows whose f32 moments overflow (|x| ~ 1e19 squared, 1e38 of both signs summed or centered),
// constant huge rows, and inf / NaN rows: the fast norms give the reference's (double) answer
// (docs/semantics.md), also through the fused rms_norm_matmul_t.
TEST_F(FastVsRef, NormsHugeAndSpecialRows) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::vector<float>> heads = {{3e19f, 1, 1, 1}, {1e38f, -1e38f, 0, 0}, {3e38f, 3e38f, -3e38f, 2},
                                                 {1e30f, 1e30f, 1e30f, 1e30f}, {inf, 1, 2, 3}, {NAN, 1, 2, 3},
                                                 {-2e19f, 5e18f, 1e19f, -7}};
  for (int64_t n : {4, 37, 1031}) {
    // Each row: its pattern repeated over the row (the constant row stays constant).
    std::vector<float> v;
    for (const auto& h : heads)
      for (int64_t i = 0; i < n; ++i) v.push_back(h[i % 4]);
    const int64_t rows = static_cast<int64_t>(heads.size());
    Tensor x = F(v, {rows, n});
    Tensor w = randn({n}, 160 + n), b = randn({n}, 170 + n);
    const std::string s = "n=" + std::to_string(n);
    check(("rms huge " + s).c_str(), [&] { return rms_norm(x, w, 1e-6); }, 1e-5);
    check(("ln huge " + s).c_str(), [&] { return layer_norm(x, w, b, 1e-5); }, 1e-5);
    Tensor m = randn({5, n}, 180 + n, DType::F32, 0.1);
    check(("rms_norm_matmul_t huge " + s).c_str(), [&] { return rms_norm_matmul_t(x, w, m, 1e-6); }, 1e-4);
  }
}

TEST_F(FastVsRef, MatmulShapesLayoutsAndDtypes) {
  struct Case { int64_t M, K, N; };
  const Case cases[] = {{1, 1, 1}, {7, 33, 1}, {1, 33, 7}, {33, 7, 33}, {64, 1031, 9}};
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (const Case& c : cases) {
      std::string s = std::string(dtype_name(t)) + " " + std::to_string(c.M) + "x" + std::to_string(c.K) + "x" +
                      std::to_string(c.N);
      Tensor a = randn({c.M, c.K}, 200 + c.K, t);
      Tensor b = randn({c.K, c.N}, 300 + c.N, t);
      Tensor bt = randn({c.N, c.K}, 400 + c.N, t);
      check(("mm " + s).c_str(), [&] { return matmul(a, b); }, 1e-4);
      check(("mm_t " + s).c_str(), [&] { return matmul_t(a, bt); }, 1e-4);
      // Transposed views go to BLAS as Trans with their leading dimension.
      Tensor a_cm = randn({c.K, c.M}, 500 + c.M, t).t();
      check(("mm a^T " + s).c_str(), [&] { return matmul(a_cm, b); }, 1e-4);
      check(("mm b^T view " + s).c_str(), [&] { return matmul(a, bt.t()); }, 1e-4);
    }
  // Batched with broadcast batch dims, and the folded x @ W^T with a shared W.
  Tensor a3 = randn({3, 1, 5, 33}, 600);
  Tensor b3 = randn({4, 33, 7}, 601);
  check("mm batched broadcast", [&] { return matmul(a3, b3); }, 1e-4);
  Tensor x = randn({2, 3, 17, 33}, 602);
  Tensor w = randn({9, 33}, 603);
  check("mm_t shared weight", [&] { return matmul_t(x, w); }, 1e-4);
  // Neither axis has unit stride: compacted first.
  Tensor stepped = randn({10, 66}, 604).slice(1, 0, 66, 2);
  Tensor rhs = randn({33, 5}, 605);
  check("mm stepped", [&] { return matmul(stepped, rhs); }, 1e-4);
  // 1-D operands (numpy rules) reach the kernel as rank-2 views.
  Tensor v = randn({33}, 606);
  Tensor m = randn({7, 33}, 607);
  check("mv", [&] { return matmul(m, v); }, 1e-4);
  // Empty: M = 0, and K = 0 (zeros).
  Tensor m0 = randn({0, 4}, 608), r0 = randn({4, 3}, 609), k0a = randn({3, 0}, 610), k0b = randn({0, 5}, 611);
  check("mm M=0", [&] { return matmul(m0, r0); }, 0.0);
  check("mm K=0", [&] { return matmul(k0a, k0b); }, 0.0);
  // Integers have no BLAS path.
  Tensor ia = run_mode(CpuMode::Reference, [&] { return cast(mul(randn({4, 6}, 612), 10.0), DType::I32); });
  Tensor ib = run_mode(CpuMode::Reference, [&] { return cast(mul(randn({6, 3}, 613), 10.0), DType::I32); });
  check("mm i32", [&] { return matmul(ia, ib); }, 0.0, Expect::Fallback);
}

// x W^T with a 16-bit W: at most 8 rows of x (the direct half-weight product), more through
// sgemm on panels of W: f32 x (mixed) and half x, batched x folded over one W, x as a transposed view, W
// rows with a stride past K (a column slice), K not a multiple of the 256-value chunk, and
// NaN / inf / huge weights, which must reach the outputs as in the reference.
TEST_F(FastVsRef, MatmulTFewRowsAgainstHalfWeights) {
  for (DType wt : {DType::F16, DType::BF16}) {
    const std::string w_name = dtype_name(wt);
    for (int64_t M : {1, 3, 8, 9}) {
      const std::string s = w_name + " M " + std::to_string(M);
      Tensor x = randn({M, 517}, 700 + M);
      Tensor w = randn({37, 517}, 701, wt);
      check(("x f32, W " + s).c_str(), [&] { return matmul_t(x, w); }, 1e-4);
      Tensor xh = randn({M, 517}, 702 + M, wt);
      check(("x and W " + s).c_str(), [&] { return matmul_t(xh, w); }, 1e-4);
    }
    // More rows than the direct path takes, and W widened in three panels (of 2^21 / K = 128
    // rows, the last one short) for sgemm. x scaled by 1 / sqrt(K): outputs of order 1, so the
    // tolerance (relative to max(1, |y|)) measures the kernel, not the f32 sum's cancellation.
    Tensor xl = randn({9, 16384}, 715, DType::F32, 1.0 / 128);
    Tensor wl = randn({300, 16384}, 716, wt);
    check(("x f32, W in panels " + w_name).c_str(), [&] { return matmul_t(xl, wl); }, 1e-4);
    Tensor xb = randn({2, 3, 300}, 710);  // 6 rows over one W
    Tensor wide = randn({11, 320}, 711, wt).slice(1, 0, 300);  // rows 320 apart
    check(("batched x, sliced W " + w_name).c_str(), [&] { return matmul_t(xb, wide); }, 1e-4);
    Tensor xt = randn({300, 4}, 712).t();  // [4, 300], K strided
    check(("x^T view " + w_name).c_str(), [&] { return matmul_t(xt, wide); }, 1e-4);
    Tensor special = run_mode(CpuMode::Reference, [&] {
      std::vector<float> v(5 * 64, 0.25f);
      v[3] = NAN;
      v[64 + 7] = INFINITY;
      v[128 + 1] = -INFINITY;
      v[192] = 6e4f;  // near f16's largest
      return cast(Tensor::from_vector(v, {5, 64}), wt);
    });
    Tensor x2 = randn({2, 64}, 713);
    check(("NaN/inf weights " + w_name).c_str(), [&] { return matmul_t(x2, special); }, 1e-4);
  }
}

// Attention: GQA groups 1/3/4, causal or not, several queries (the causal alignment), an
// additive mask with -inf entries and a fully masked row (zeros), f16 and bf16 operands and
// outputs, scores near 1e4 (exp only of differences), a NaN in K (its rows NaN, as the
// reference), an odd head dim, one key; a strided q goes to the reference.
TEST_F(FastVsRef, AttentionShapesMasksDtypes) {
  struct Case { int64_t Lq, Lk, H, Hkv, D; bool causal; DType t; double amp; };
  const Case cases[] = {{1, 37, 8, 2, 64, true, DType::F32, 1.0},   {5, 41, 6, 2, 33, true, DType::F32, 1.0},
                        {3, 3, 4, 4, 16, false, DType::F32, 1.0},   {1, 1, 4, 1, 8, true, DType::F32, 1.0},
                        {2, 29, 4, 1, 24, true, DType::F16, 1.0},   {2, 29, 4, 2, 24, false, DType::BF16, 1.0},
                        {4, 50, 4, 2, 128, true, DType::F32, 9.0}};
  uint64_t seed = 800;
  for (const Case& c : cases) {
    const std::string s = std::string(dtype_name(c.t)) + " Lq " + std::to_string(c.Lq) + " Lk " + std::to_string(c.Lk) +
                          " H " + std::to_string(c.H) + "/" + std::to_string(c.Hkv) + " D " + std::to_string(c.D) +
                          (c.causal ? " causal" : "") + (c.amp != 1.0 ? " large scores" : "");
    Tensor q = randn({c.Lq, c.H, c.D}, ++seed, c.t, c.amp), k = randn({c.Lk, c.Hkv, c.D}, ++seed, c.t, c.amp),
           v = randn({c.Lk, c.Hkv, c.D}, ++seed, c.t);
    AttnConfig ac;
    ac.causal = c.causal;
    check(("attention " + s).c_str(), [&] { return attention(q, k, v, ac); }, 1e-5);
    // A mask: some -inf, some finite offsets, row 0 fully masked when there are several rows.
    Tensor m = run_mode(CpuMode::Reference, [&] {
      std::vector<float> mv(static_cast<size_t>(c.Lq * c.Lk));
      for (size_t e = 0; e < mv.size(); ++e) mv[e] = e % 7 == 3 ? -INFINITY : -0.25f * static_cast<float>(e % 4);
      if (c.Lq > 1)
        for (int64_t j = 0; j < c.Lk; ++j) mv[static_cast<size_t>(j)] = -INFINITY;
      return Tensor::from_vector(mv, {c.Lq, c.Lk});
    });
    AttnConfig am = ac;
    am.mask = m;
    check(("attention masked " + s).c_str(), [&] { return attention(q, k, v, am); }, 1e-5);
  }
  // NaN in one K row: every query head of its group that sees it is NaN, as in the reference.
  Tensor q = randn({2, 4, 16}, 900), v = randn({9, 2, 16}, 902);
  Tensor k = run_mode(CpuMode::Reference, [&] {
    auto kv = randn({9, 2, 16}, 901).to_vector<float>();
    kv[static_cast<size_t>((4 * 2 + 1) * 16 + 5)] = NAN;  // key 4, kv head 1
    return Tensor::from_vector(kv, {9, 2, 16});
  });
  AttnConfig causal;
  causal.causal = true;
  check("attention NaN key", [&] { return attention(q, k, v, causal); }, 1e-5);
  // A strided q: the reference kernel.
  Tensor qs = randn({2, 4, 32}, 903).slice(2, 0, 32, 2);
  Tensor k16 = randn({9, 2, 16}, 904), v16 = randn({9, 2, 16}, 905);
  check("attention strided q", [&] { return attention(qs, k16, v16, causal); }, 1e-5, Expect::Fallback);
}

// Concat of contiguous inputs (slab copies) along the first, a middle and the last axis, with
// an empty input, for f32, f16 and i32 (exact); a strided input goes to the reference.
TEST_F(FastVsRef, ConcatSlabs) {
  for (DType t : {DType::F32, DType::F16, DType::I32}) {
    const std::string n = dtype_name(t);
    Tensor a = run_mode(CpuMode::Reference, [&] { return cast(randn({3, 5, 7}, 950), t); });
    Tensor b = run_mode(CpuMode::Reference, [&] { return cast(randn({3, 2, 7}, 951), t); });
    Tensor e = run_mode(CpuMode::Reference, [&] { return cast(randn({3, 0, 7}, 952), t); });
    Tensor c = run_mode(CpuMode::Reference, [&] { return cast(randn({3, 5, 4}, 953), t); });
    Tensor d = run_mode(CpuMode::Reference, [&] { return cast(randn({1, 5, 7}, 954), t); });
    check(("concat axis 1 " + n).c_str(), [&] { return concat({a, b, e, a}, 1); }, 0.0);
    check(("concat axis 2 " + n).c_str(), [&] { return concat({a, c}, 2); }, 0.0);
    check(("concat axis 0 " + n).c_str(), [&] { return concat({d, a, d}, 0); }, 0.0);
    Tensor strided = run_mode(CpuMode::Reference, [&] { return cast(randn({3, 5, 14}, 955), t); }).slice(2, 0, 14, 2);
    check(("concat strided " + n).c_str(), [&] { return concat({a, strided}, 1); }, 0.0, Expect::Fallback);
  }
}

TEST(ParallelFor, CoversRangeOnceAndNests) {
  const int64_t n = 100003;
  std::vector<std::atomic<int>> seen(n);
  for (auto& s : seen) s = 0;
  std::atomic<int64_t> nested{0};
  cpu_fast::parallel_for(0, n, 1000, [&](int64_t b, int64_t e) {
    EXPECT_LE(b, e);
    for (int64_t i = b; i < e; ++i) seen[i]++;
    // A nested parallel_for runs inline on the worker and still covers its range.
    cpu_fast::parallel_for(0, 10, 1, [&](int64_t b2, int64_t e2) { nested += e2 - b2; });
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << i;
  EXPECT_GT(nested.load(), 0);
  EXPECT_EQ(nested.load() % 10, 0);
  EXPECT_GE(cpu_fast::num_threads(), 1);
  int calls = 0;
  cpu_fast::parallel_for(5, 5, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, RethrowsOnCaller) {
  EXPECT_THROW(cpu_fast::parallel_for(0, 1 << 20, 1024,
                                      [&](int64_t b, int64_t) {
                                        if (b == 0) throw std::runtime_error("boom");
                                      }),
               std::runtime_error);
  // The pool is usable afterwards.
  std::atomic<int64_t> total{0};
  cpu_fast::parallel_for(0, 1 << 16, 64, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 1 << 16);
}

}  // namespace
}  // namespace wgt::test
