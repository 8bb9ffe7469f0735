// Conformance of the WebGPU elementwise family (copy, unary, binary, where, cast, fill,
// arange, random) against the CPU reference, through the harness in conformance.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "conformance.hpp"

namespace wgt::conformance {
namespace {

// Tolerances per output dtype: f32 kernels use WGSL builtins (a few ulp); 16-bit outputs
// are rounded once from f32, so they may differ by one unit in the last place.
Tolerance tol_for(DType t, double scale = 1.0) {
  switch (t) {
    case DType::F16: return {1e-6 * scale, 1e-3 * scale, 2e-3 * scale};
    case DType::BF16: return {1e-4 * scale, 1e-2 * scale, 1.6e-2 * scale};
    case DType::F32: return {1e-10 * scale, 1e-5 * scale, 1e-5 * scale};
    default: return {0, 0, 0};  // integers and bool: exact
  }
}

// The layouts every op is exercised on: odd sizes, size-1 dims, empty, 0-d, views.
struct Layout {
  const char* name;
  Shape shape;
  View view;
};
const Layout kLayouts[] = {
    {"vec1024", {1024}, View::Contiguous},       // f32 vec4 fast path
    {"odd1027", {1027}, View::Contiguous},
    {"3x1x17", {3, 1, 17}, View::Contiguous},
    {"t13x9", {13, 9}, View::Transposed},
    {"slice5x11", {5, 11}, View::Sliced},
    {"expand4x7", {4, 7}, View::Expanded},
    {"empty0x5", {0, 5}, View::Contiguous},
    {"scalar", {}, View::Contiguous},
};

void run_all(const std::vector<Case>& cases) {
  std::string why;
  DeviceBackend* gpu = gpu_backend(&why);
  ASSERT_NE(gpu, nullptr) << "WebGPU adapter required: " << why;
  int ran = 0;
  for (const Case& c : cases) {
    if (!selected(c.name)) continue;
    Result r = run(c, *gpu);
    EXPECT_TRUE(r.ran) << c.name << ": " << r.message;  // every case here is meant to run
    EXPECT_TRUE(!r.ran || r.ok) << c.name << ": " << r.message;
    if (perf_mode() && r.ran) std::printf("[perf] %-48s %9.3f ms\n", c.name.c_str(), r.gpu_ms);
    ++ran;
  }
  std::printf("[conformance] %d case(s) run\n", ran);
}

const DType kFloat[] = {DType::F32, DType::F16, DType::BF16};

TEST(WebGPUElementwise, Copy) {
  std::vector<Case> cases;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U8, DType::Bool, DType::I64})
    for (const Layout& l : kLayouts) {
      Case c{std::string("copy/") + dtype_name(t) + "/" + l.name, OpKind::Copy, "contiguous"};
      c.inputs = {{l.shape, t, l.view, -100, 100}};
      c.out_shape = l.shape;
      c.out_dtype = t;
      c.tol = {0, 0, 0};  // bits move exactly
      cases.push_back(c);
    }
  run_all(cases);
}

TEST(WebGPUElementwise, Unary) {
  std::vector<Case> cases;
  const UnaryOp ops[] = {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt,
                         UnaryOp::Rsqrt, UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tanh, UnaryOp::Sigmoid,
                         UnaryOp::Relu, UnaryOp::GeluErf, UnaryOp::GeluTanh, UnaryOp::Silu};
  for (UnaryOp op : ops) {
    const bool positive = op == UnaryOp::Log || op == UnaryOp::Sqrt || op == UnaryOp::Rsqrt;
    for (DType t : kFloat)
      for (const Layout& l : kLayouts) {
        Case c{std::string("unary/") + unary_op_name(op) + "/" + dtype_name(t) + "/" + l.name, OpKind::Unary,
               unary_op_name(op)};
        c.attrs.unary = op;
        c.inputs = {{l.shape, t, l.view, positive ? 0.05 : -4.0, positive ? 50.0 : 4.0}};
        c.out_shape = l.shape;
        c.out_dtype = t;
        // exp/tanh/erf builtins are a few ulp off libm; gelu-erf uses a 1.5e-7 erf.
        c.tol = tol_for(t, t == DType::F32 ? 30.0 : 1.0);
        cases.push_back(c);
      }
    // NaN/inf propagation through the f32 fast and general paths.
    if (op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Relu || op == UnaryOp::Exp || op == UnaryOp::Sqrt)
      for (Shape s : {Shape{1024}, Shape{37}}) {
        Case c{std::string("unary/") + unary_op_name(op) + "/f32/specials" + std::to_string(s[0]), OpKind::Unary,
               unary_op_name(op)};
        c.attrs.unary = op;
        c.inputs = {{s, DType::F32, View::Contiguous, 0.0, 3.0, true}};
        c.out_shape = s;
        c.tol = tol_for(DType::F32, 30.0);
        cases.push_back(c);
      }
  }
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu})
    for (const Layout& l : kLayouts) {
      Case c{std::string("unary/") + unary_op_name(op) + "/i32/" + l.name, OpKind::Unary, unary_op_name(op)};
      c.attrs.unary = op;
      c.inputs = {{l.shape, DType::I32, l.view, -1e6, 1e6}};
      c.out_shape = l.shape;
      c.out_dtype = DType::I32;
      c.tol = {0, 0, 0};
      cases.push_back(c);
    }
  run_all(cases);
}

// Edge values of every float unary op (docs/semantics.md): NaN propagates, tanh and the other
// odd functions keep their relative accuracy near 0 (tanh(1e-10) = 1e-10), overflow gives inf,
// large |x| saturates. Both the f32 vec4 path (contiguous, multiple of 4) and the general path
// (a strided view), and f16. The tolerance is relative (plus the f32 subnormal range, which a
// device may flush), so a wrong tiny result fails.
TEST(WebGPUElementwise, UnaryEdgeValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> values = {nan, inf, -inf, 0.0, -0.0, 1e-10, -1e-10, 1e-30, -3e-5, 2e-3, 0.2, -0.2499,
                                      0.25, 0.3, -0.7, 1.0, -2.5, 9.0, -10.0, 20.0, -20.0, 88.0, 89.0, -88.0,
                                      -89.0, 100.0, -100.0, 1e4, -1e4, 3e38, -3e38, 0.5};
  // sin/cos reduce their argument modulo 2 pi exactly (angle_reduce.wgsl) for |x| < 2 pi 2^24;
  // beyond that an f32 angle has no meaningful phase left, so the huge values stay out.
  std::vector<double> moderate;
  for (double v : values)
    if (!(std::fabs(v) > 1e4)) moderate.push_back(v);
  std::vector<Case> cases;
  for (int o = 0; o <= static_cast<int>(UnaryOp::Silu); ++o) {
    const auto op = static_cast<UnaryOp>(o);
    const bool trig = op == UnaryOp::Sin || op == UnaryOp::Cos;
    for (DType t : {DType::F32, DType::F16})
      for (View v : {View::Contiguous, View::Sliced}) {
        Case c{std::string("unary_edge/") + unary_op_name(op) + "/" + dtype_name(t) + (v == View::Sliced ? "/sliced" : "/vec4"),
               OpKind::Unary, unary_op_name(op)};
        c.attrs.unary = op;
        c.inputs = {{{64}, t, v}};
        c.inputs[0].values = trig ? moderate : values;
        c.out_shape = {64};
        c.out_dtype = t;
        c.tol = t == DType::F16 ? tol_for(t) : Tolerance{1e-10, 1e-35, 2e-6};
        // erf is a 1.5e-7 (absolute) approximation; gelu-tanh's 1 + tanh cancels for x < 0;
        // sin/cos builtins are absolute-accurate.
        if (t == DType::F32 && (op == UnaryOp::GeluErf || op == UnaryOp::GeluTanh || trig)) c.tol.abs = 2e-6;
        cases.push_back(c);
      }
  }
  run_all(cases);
}

TEST(WebGPUElementwise, Binary) {
  std::vector<Case> cases;
  struct Pair {
    const char* name;
    Input a, b;
    Shape out;
  };
  auto pairs = [](DType t, double lo, double hi) {
    return std::vector<Pair>{
        {"same1024", {{1024}, t, View::Contiguous, lo, hi}, {{1024}, t, View::Contiguous, lo, hi}, {1024}},
        {"same1027", {{1027}, t, View::Contiguous, lo, hi}, {{1027}, t, View::Contiguous, lo, hi}, {1027}},
        {"bcast5x1x7_1x6x7", {{5, 1, 7}, t, View::Contiguous, lo, hi}, {{1, 6, 7}, t, View::Contiguous, lo, hi}, {5, 6, 7}},
        {"rowvec", {{9, 33}, t, View::Transposed, lo, hi}, {{33}, t, View::Contiguous, lo, hi}, {9, 33}},
        {"scalar", {{4, 3}, t, View::Sliced, lo, hi}, {{}, t, View::Contiguous, lo, hi}, {4, 3}},
        {"expand", {{6, 5}, t, View::Expanded, lo, hi}, {{6, 5}, t, View::Transposed, lo, hi}, {6, 5}},
        {"empty", {{0, 3}, t, View::Contiguous, lo, hi}, {{1, 3}, t, View::Contiguous, lo, hi}, {0, 3}},
    };
  };
  const BinaryOp all[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Pow,
                          BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt,
                          BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge};
  for (BinaryOp op : all) {
    const bool cmp = is_comparison(op);
    const bool pos = op == BinaryOp::Pow || op == BinaryOp::Div;  // keep away from 0 and negative bases
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32}) {
      if (t == DType::I32 && (op == BinaryOp::Div || op == BinaryOp::Pow)) continue;
      const double lo = t == DType::I32 ? -1000 : (pos ? 0.5 : -3.0), hi = t == DType::I32 ? 1000 : (pos ? 2.0 : 3.0);
      for (const Pair& p : pairs(t, lo, hi)) {
        Case c{std::string("binary/") + binary_op_name(op) + "/" + dtype_name(t) + "/" + p.name, OpKind::Binary,
               binary_op_name(op)};
        c.attrs.binary = op;
        c.inputs = {p.a, p.b};
        if (cmp && t != DType::I32) c.inputs[1].lo = c.inputs[0].lo;  // equal values happen via rounding only
        c.out_shape = p.out;
        c.out_dtype = cmp ? DType::Bool : t;
        c.tol = cmp ? Tolerance{0, 0, 0} : tol_for(t, op == BinaryOp::Pow ? 50.0 : 4.0);
        cases.push_back(c);
      }
    }
    // u8 and bool operands compute in i32 (values kept in range: no wrap-around semantics).
    if (op != BinaryOp::Div && op != BinaryOp::Pow && op != BinaryOp::Sub && op != BinaryOp::Mul)
      for (DType t : {DType::U8, DType::Bool}) {
        if (t == DType::Bool && !cmp) continue;
        Case c{std::string("binary/") + binary_op_name(op) + "/" + dtype_name(t) + "/bcast", OpKind::Binary,
               binary_op_name(op)};
        c.attrs.binary = op;
        c.inputs = {{{6, 1, 5}, t, View::Contiguous, 0, 100}, {{7, 5}, t, View::Transposed, 0, 100}};
        c.out_shape = {6, 7, 5};
        c.out_dtype = cmp ? DType::Bool : t;
        c.tol = {0, 0, 0};
        cases.push_back(c);
      }
    // NaN/inf agreement on f32.
    Case c{std::string("binary/") + binary_op_name(op) + "/f32/specials", OpKind::Binary, binary_op_name(op)};
    c.attrs.binary = op;
    c.inputs = {{{257}, DType::F32, View::Contiguous, 0.5, 2.0, true}, {{257}, DType::F32, View::Contiguous, 0.5, 2.0, true}};
    c.out_shape = {257};
    c.out_dtype = cmp ? DType::Bool : DType::F32;
    c.tol = cmp ? Tolerance{0, 0, 0} : tol_for(DType::F32, 50.0);
    cases.push_back(c);
  }
  run_all(cases);
}

// Division of every pair of edge values (docs/semantics.md, "Division"): IEEE results for
// zeros, infinities and NaN, and the exact quotient for divisors beyond 2^126 (3e38 / 3e38 = 1),
// which a driver dividing as x * (1 / y) flushes to 0. The vec4 path (contiguous, a multiple of
// 4) and the general path (a sliced view), f32 and f16.
TEST(WebGPUElementwise, DivisionEdgeValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> f32v = {nan, inf, -inf, 0.0, -0.0, 1.0, -2.5, 7.0, 3e38, -2e38, 1e38, 8.5e37, 1e-30};
  const std::vector<double> f16v = {nan, inf, -inf, 0.0, -0.0, 1.0, -2.5, 7.0, 60000.0, -40000.0, 1e-3};
  for (DType t : {DType::F32, DType::F16}) {
    const auto& v = t == DType::F32 ? f32v : f16v;
    std::vector<double> xs, ys;
    for (double x : v)
      for (double y : v) {
        xs.push_back(x);
        ys.push_back(y);
      }
    while (xs.size() % 4) {
      xs.push_back(1.0);
      ys.push_back(1.0);
    }
    const int64_t n = static_cast<int64_t>(xs.size());
    std::vector<Case> cases;
    for (View view : {View::Contiguous, View::Sliced}) {
      Case c{std::string("div_edge/") + dtype_name(t) + (view == View::Sliced ? "/sliced" : "/vec4"), OpKind::Binary, "div"};
      c.attrs.binary = BinaryOp::Div;
      c.inputs = {{{n}, t, view}, {{n}, t, view}};
      c.inputs[0].values = xs;
      c.inputs[1].values = ys;
      c.out_shape = {n};
      c.out_dtype = t;
      c.tol = t == DType::F16 ? tol_for(t) : Tolerance{1e-10, 1e-35, 2e-7};
      cases.push_back(c);
    }
    run_all(cases);
  }
}

TEST(WebGPUElementwise, WhereAndCast) {
  std::vector<Case> cases;
  for (DType t : {DType::F32, DType::F16, DType::I32, DType::U8}) {
    Case c{std::string("where/") + dtype_name(t), OpKind::Where, "where"};
    c.inputs = {{{5, 1, 9}, DType::Bool, View::Contiguous}, {{5, 4, 9}, t, View::Transposed, 0, 100},
                {{9}, t, View::Contiguous, 0, 100}};
    c.out_shape = {5, 4, 9};
    c.out_dtype = t;
    c.tol = {0, 0, 0};
    cases.push_back(c);
  }
  const DType ts[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U8, DType::Bool};
  for (DType from : ts)
    for (DType to : ts) {
      Case c{std::string("cast/") + dtype_name(from) + "->" + dtype_name(to), OpKind::Cast, "cast"};
      // Non-negative values below 250 keep float->u8 in range; fractions test truncation.
      c.inputs = {{{7, 45}, from, View::Sliced, 0.0, 249.0}};
      c.out_shape = {7, 45};
      c.out_dtype = to;
      c.tol = {0, 0, 0};  // conversions are exactly specified
      cases.push_back(c);
    }
  run_all(cases);
}

// Casts of edge values (docs/semantics.md): float -> integer truncates and saturates, NaN -> 0;
// -> bool is x != 0 with NaN true; f32 -> f16/bf16 overflows to inf; integer -> integer wraps.
TEST(WebGPUElementwise, CastEdgeValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> fvals = {nan, -nan, inf, -inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 254.9, 255.0,
                                     255.5, 256.0, 300.0, -1.0, -256.0, 1e5, -1e5, 65504.0, 65520.0, 1e9, 2147483520.0,
                                     2147483648.0, -2147483648.0, 3e9, -3e9, 1e20, -1e20, 3e38, -3e38, 1e-30};
  const std::vector<double> ivals = {0, 1, -1, 127, 128, 255, 256, 257, -255, -256, 65535, 65536, 16777217,
                                     -16777217, 2147483647, -2147483647, 100000, -100000};
  std::vector<Case> cases;
  for (DType from : {DType::F32, DType::F16, DType::BF16, DType::I32})
    for (DType to : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U8, DType::Bool}) {
      if (from == to) continue;
      for (View v : {View::Contiguous, View::Sliced}) {
        Case c{std::string("cast_edge/") + dtype_name(from) + "->" + dtype_name(to) + (v == View::Sliced ? "/sliced" : ""),
               OpKind::Cast, "cast"};
        c.inputs = {{{3, 37}, from, v}};
        c.inputs[0].values = from == DType::I32 ? ivals : fvals;
        c.out_shape = {3, 37};
        c.out_dtype = to;
        c.tol = {0, 0, 0};
        cases.push_back(c);
      }
    }
  run_all(cases);
}

TEST(WebGPUElementwise, Creation) {
  std::vector<Case> cases;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U8, DType::Bool})
    for (Shape s : {Shape{1}, Shape{3, 7}, Shape{1031}, Shape{0}}) {
      Case f{std::string("fill/") + dtype_name(t) + "/" + shape_str(s), OpKind::Fill, "full"};
      f.attrs.scalar0 = t == DType::Bool ? 1.0 : 3.25;
      f.out_shape = s;
      f.out_dtype = t;
      f.tol = {0, 0, 0};
      cases.push_back(f);
      Case a{std::string("arange/") + dtype_name(t) + "/" + shape_str(s), OpKind::Arange, "arange"};
      a.attrs.scalar0 = is_floating(t) ? -2.5 : 3.0;
      a.attrs.scalar1 = is_floating(t) ? 0.25 : 1.0;
      a.out_shape = s;
      a.out_dtype = t;
      a.tol = tol_for(t);
      if (t == DType::Bool || t == DType::U8) continue;  // arange of bool/u8 is not meaningful
      cases.push_back(a);
    }
  for (DType t : kFloat)
    for (Shape s : {Shape{1}, Shape{5, 67}, Shape{4099}}) {
      Case u{std::string("rand_uniform/") + dtype_name(t) + "/" + shape_str(s), OpKind::RandUniform, "rand_uniform"};
      u.attrs.scalar0 = -1.5;
      u.attrs.scalar1 = 4.0;
      u.attrs.seed = 0x123456789abcull;
      u.out_shape = s;
      u.out_dtype = t;
      u.tol = tol_for(t);
      cases.push_back(u);
      Case nrm{std::string("rand_normal/") + dtype_name(t) + "/" + shape_str(s), OpKind::RandNormal, "rand_normal"};
      nrm.attrs.scalar0 = 0.5;
      nrm.attrs.scalar1 = 2.0;
      nrm.attrs.seed = 7;
      nrm.out_shape = s;
      nrm.out_dtype = t;
      nrm.tol = tol_for(t, t == DType::F32 ? 20.0 : 1.0);  // GPU log/cos vs libm
      cases.push_back(nrm);
    }
  run_all(cases);
}

}  // namespace
}  // namespace wgt::conformance
