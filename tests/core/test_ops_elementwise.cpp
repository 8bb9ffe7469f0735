// Reference elementwise ops: hand-checked values, integer/bool/complex semantics, dtype
// promotion, broadcasting, strided views as inputs, casts across every dtype pair.
#include <cmath>
#include <limits>

#include "ref_test_util.hpp"

using namespace wgt;
using namespace wgt::test;

using Elementwise = RefTest;

TEST_F(Elementwise, UnaryHandValues) {
  Tensor x = D({-2.0, -0.5, 0.0, 1.0, 3.0}, {5});
  expect_near_vec(vals(neg(x)), {2, 0.5, 0, -1, -3}, 0);
  expect_near_vec(vals(abs(x)), {2, 0.5, 0, 1, 3}, 0);
  expect_near_vec(vals(relu(x)), {0, 0, 0, 1, 3}, 0);
  expect_near_vec(vals(exp(x)), {0.1353352832366127, 0.6065306597126334, 1, 2.718281828459045, 20.085536923187668}, 1e-15);
  expect_near_vec(vals(tanh(x)), {-0.9640275800758169, -0.46211715726000974, 0, 0.7615941559557649, 0.9950547536867305}, 1e-15);
  expect_near_vec(vals(sigmoid(x)), {0.11920292202211755, 0.3775406687981454, 0.5, 0.7310585786300049, 0.9525741268224334}, 1e-15);
  expect_near_vec(vals(silu(x)), {-0.2384058440442351, -0.1887703343990727, 0, 0.7310585786300049, 2.8577223804673}, 1e-14);
  // gelu erf: 0.5 x (1 + erf(x / sqrt 2)); tanh form with sqrt(2/pi) and 0.044715.
  expect_near_vec(vals(gelu(x)), {-0.04550026389635842, -0.15426876936299347, 0, 0.8413447460685429, 2.99595030590511}, 1e-14);
  expect_near_vec(vals(gelu(x, GeluApprox::Tanh)),
                  {-0.04540230591222494, -0.15428599017485606, 0, 0.8411919906082768, 2.996362607918227}, 1e-14);
  Tensor p = D({0.25, 1.0, 4.0}, {3});
  expect_near_vec(vals(sqrt(p)), {0.5, 1, 2}, 0);
  expect_near_vec(vals(rsqrt(p)), {2, 1, 0.5}, 0);
  expect_near_vec(vals(log(p)), {-1.3862943611198906, 0, 1.3862943611198906}, 1e-15);
  expect_near_vec(vals(sin(D({0, M_PI / 2}, {2}))), {0, 1}, 1e-15);
  expect_near_vec(vals(cos(D({0, M_PI}, {2}))), {1, -1}, 1e-15);
  // IEEE edge cases propagate rather than being clamped.
  auto e = vals(log(D({-1.0, 0.0}, {2})));
  EXPECT_TRUE(std::isnan(e[0]));
  EXPECT_EQ(e[1], -INFINITY);
  EXPECT_TRUE(std::isnan(vals(relu(D({NAN}, {1})))[0]));
}

TEST_F(Elementwise, UnaryIntegersExactAndWrapping) {
  Tensor x = I32({-3, 0, 7, std::numeric_limits<int32_t>::min()}, {4});
  EXPECT_EQ(neg(x).to_vector<int32_t>(), (std::vector<int32_t>{3, 0, -7, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(abs(x).to_vector<int32_t>(), (std::vector<int32_t>{3, 0, 7, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(relu(x).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 7, 0}));
  EXPECT_EQ(neg(U8({0, 1, 200}, {3})).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 255, 56}));
}

TEST_F(Elementwise, HalfPrecisionComputesInHigherPrecisionAndRounds) {
  Tensor h = cast(F({1.0f, 2.0f, 0.1f}, {3}), DType::F16);
  Tensor r = exp(h);
  EXPECT_EQ(r.dtype(), DType::F16);
  // 0.1 in f16 is 0.0999755859375; exp of it rounded to f16 is 1.10546875.
  expect_near_vec(vals(r), {2.71875, 7.390625, 1.10546875}, 0);
  Tensor bf = cast(F({1.0f, 3.0f}, {2}), DType::BF16);
  expect_near_vec(vals(sqrt(bf)), {1.0, 1.734375}, 0);  // sqrt 3 = 1.7320508 -> bf16 1.734375
}

TEST_F(Elementwise, BinaryBroadcastAndPromotion) {
  Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor col = I32({10, 20}, {2, 1});
  Tensor r = add(a, col);
  EXPECT_EQ(r.dtype(), DType::F32);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  expect_near_vec(vals(r), {11, 12, 13, 24, 25, 26}, 0);
  // [3] x [2, 1] -> [2, 3]
  Tensor s = mul(F({1, 2, 3}, {3}), I64({2, -1}, {2, 1}));
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  expect_near_vec(vals(s), {2, 4, 6, -1, -2, -3}, 0);
  EXPECT_EQ(add(I32({1}, {1}), I64({2}, {1})).dtype(), DType::I64);
  EXPECT_EQ(add(cast(F({1}, {1}), DType::F16), cast(F({1}, {1}), DType::BF16)).dtype(), DType::F32);
  EXPECT_EQ(add(U8({1}, {1}), B({1}, {1})).dtype(), DType::U8);
  // 0-d with n-d and size-1 dims
  EXPECT_EQ(add(D({5}, {}), D({1, 2}, {1, 2, 1})).shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(sub(a, scalar_like(a, 1.0)).to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(add(a, 0.5).to_vector<float>(), (std::vector<float>{1.5, 2.5, 3.5, 4.5, 5.5, 6.5}));
  EXPECT_EQ(mul(a, 2.0).to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ((a - a * a / a).to_vector<float>(), (std::vector<float>(6, 0.0f)));
  EXPECT_EQ((-a).to_vector<float>(), (std::vector<float>{-1, -2, -3, -4, -5, -6}));
}

TEST_F(Elementwise, BinaryFloatSemantics) {
  Tensor a = D({1, -2, NAN, 2, 0}, {5}), b = D({3, -2, 1, 0.5, 0}, {5});
  expect_near_vec(vals(div(a, b)), {1.0 / 3, 1, NAN, 4, NAN}, 1e-16);
  expect_near_vec(vals(pow(a, b)), {1, 0.25, NAN, 1.4142135623730951, 1}, 1e-16);
  expect_near_vec(vals(maximum(a, b)), {3, -2, NAN, 2, 0}, 0);
  expect_near_vec(vals(minimum(a, b)), {1, -2, NAN, 0.5, 0}, 0);
  EXPECT_EQ(vals(eq(a, b)), (std::vector<double>{0, 1, 0, 0, 1}));
  EXPECT_EQ(eq(a, b).dtype(), DType::Bool);
  EXPECT_EQ(vals(ne(a, b)), (std::vector<double>{1, 0, 1, 1, 0}));  // NaN != x is true
  EXPECT_EQ(vals(lt(a, b)), (std::vector<double>{1, 0, 0, 0, 0}));
  EXPECT_EQ(vals(le(a, b)), (std::vector<double>{1, 1, 0, 0, 1}));
  EXPECT_EQ(vals(gt(a, b)), (std::vector<double>{0, 0, 0, 1, 0}));
  EXPECT_EQ(vals(ge(a, b)), (std::vector<double>{0, 1, 0, 1, 1}));
}

TEST_F(Elementwise, BinaryIntegerSemantics) {
  Tensor a = I32({7, -7, 7, -7, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}, {6});
  Tensor b = I32({2, 2, -2, -2, 1, -1}, {6});
  // Truncating division; INT_MIN / -1 wraps.
  EXPECT_EQ(div(a, b).to_vector<int32_t>(),
            (std::vector<int32_t>{3, -3, -3, 3, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
  // Addition wraps two's complement.
  EXPECT_EQ(add(a, b).to_vector<int32_t>()[4], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(sub(U8({3}, {1}), U8({5}, {1})).to_vector<uint8_t>(), (std::vector<uint8_t>{254}));
  EXPECT_EQ(mul(I64({int64_t{1} << 62}, {1}), I64({4}, {1})).to_vector<int64_t>(), (std::vector<int64_t>{0}));
  EXPECT_EQ(pow(I64({2, 3, -2, 1, -1, 5, 0}, {7}), I64({10, 0, 3, -5, -3, -1, 0}, {7})).to_vector<int64_t>(),
            (std::vector<int64_t>{1024, 1, -8, 1, -1, 0, 1}));
  EXPECT_EQ(maximum(I32({1, 5}, {2}), I32({3, 2}, {2})).to_vector<int32_t>(), (std::vector<int32_t>{3, 5}));
  EXPECT_EQ(vals(lt(I64({-1}, {1}), I64({0}, {1}))), (std::vector<double>{1}));
  // Division by zero is an error, not undefined behaviour.
  EXPECT_WGT_ERROR(div(I32({1, 2}, {2}), I32({1, 0}, {2})), InvalidArgument, "div");
  EXPECT_WGT_ERROR(pow(I32({0}, {1}), I32({-1}, {1})), InvalidArgument, "pow");
}

TEST_F(Elementwise, BoolLogic) {
  Tensor a = B({0, 0, 1, 1}, {4}), b = B({0, 1, 0, 1}, {4});
  EXPECT_EQ(vals(add(a, b)), (std::vector<double>{0, 1, 1, 1}));  // or
  EXPECT_EQ(vals(mul(a, b)), (std::vector<double>{0, 0, 0, 1}));  // and
  EXPECT_EQ(add(a, b).dtype(), DType::Bool);
  EXPECT_EQ(vals(eq(a, b)), (std::vector<double>{1, 0, 0, 1}));
}

TEST_F(Elementwise, ComplexParts) {
  std::vector<c64_t> v = {{3, -4}, {-1.5f, 2}, {3e38f, 3e38f}, {1e-30f, -1e-30f}};
  Tensor z = Tensor::from_vector(v, {4});
  Tensor re = real(z), im = imag(z), ab = abs(z), cj = conj(z);
  EXPECT_EQ(re.dtype(), DType::F32);
  EXPECT_EQ(ab.dtype(), DType::F32);
  EXPECT_EQ(cj.dtype(), DType::C64);
  EXPECT_EQ(re.to_vector<float>(), (std::vector<float>{3, -1.5f, 3e38f, 1e-30f}));
  EXPECT_EQ(im.to_vector<float>(), (std::vector<float>{-4, 2, 3e38f, -1e-30f}));
  auto a = ab.to_vector<float>();
  EXPECT_EQ(a[0], 5.0f);
  EXPECT_EQ(a[1], 2.5f);
  EXPECT_TRUE(std::isinf(a[2]));                      // 4.24e38: beyond f32, not NaN
  EXPECT_FLOAT_EQ(a[3], 1.41421356e-30f);             // the squares would underflow in f32
  auto c = cj.to_vector<c64_t>();
  EXPECT_EQ(c[0].im, 4.0f);
  EXPECT_EQ(c[1].re, -1.5f);
  // |inf + NaN i| = inf (hypot), e^(-inf + 1i) = 0, e^(x + 0i) keeps a zero imaginary part.
  std::vector<c64_t> s = {{INFINITY, NAN}, {-INFINITY, 1}, {100, 0}};
  Tensor zs = Tensor::from_vector(s, {3});
  EXPECT_TRUE(std::isinf(abs(zs).to_vector<float>()[0]));
  auto es = exp(zs).to_vector<c64_t>();
  EXPECT_EQ(es[1].re, 0.0f);
  EXPECT_EQ(es[1].im, 0.0f);
  EXPECT_TRUE(std::isinf(es[2].re));
  EXPECT_EQ(es[2].im, 0.0f);
  // Real dtypes: conj and real are the input, imag zeros of its dtype.
  Tensor x = F({1, -2}, {2});
  EXPECT_EQ(conj(x).to_vector<float>(), (std::vector<float>{1, -2}));
  EXPECT_EQ(real(x).to_vector<float>(), (std::vector<float>{1, -2}));
  EXPECT_EQ(imag(x).to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(imag(x).dtype(), DType::F32);
}

TEST_F(Elementwise, ComplexArithmetic) {
  std::vector<c64_t> av = {{1, 2}, {3, -1}}, bv = {{0, 1}, {2, 0}};
  Tensor a = Tensor::from_vector(av, {2}), b = Tensor::from_vector(bv, {2});
  auto m = mul(a, b).to_vector<c64_t>();  // (1+2i)i = -2+i ; (3-i)*2 = 6-2i
  EXPECT_EQ(m[0].re, -2);
  EXPECT_EQ(m[0].im, 1);
  EXPECT_EQ(m[1].re, 6);
  EXPECT_EQ(m[1].im, -2);
  auto d = div(a, b).to_vector<c64_t>();  // (1+2i)/i = 2-i
  EXPECT_FLOAT_EQ(d[0].re, 2);
  EXPECT_FLOAT_EQ(d[0].im, -1);
  auto n = neg(a).to_vector<c64_t>();
  EXPECT_EQ(n[1].re, -3);
  EXPECT_EQ(n[1].im, 1);
  EXPECT_EQ(vals(eq(a, a)), (std::vector<double>{1, 1}));
  auto s = sub(a, F({1, 1}, {2})).to_vector<c64_t>();  // promotion f32 -> c64
  EXPECT_EQ(s[0].re, 0);
  EXPECT_EQ(s[0].im, 2);
  auto e = exp(a).to_vector<c64_t>();  // e^(1+2i) = e (cos 2 + i sin 2)
  EXPECT_NEAR(e[0].re, std::exp(1.0) * std::cos(2.0), 1e-6);
  EXPECT_NEAR(e[0].im, std::exp(1.0) * std::sin(2.0), 1e-6);
  EXPECT_WGT_ERROR(sqrt(a), Unsupported, "sqrt");
  EXPECT_WGT_ERROR(pow(a, a), Unsupported, "pow");
  EXPECT_WGT_ERROR(lt(a, a), DTypeMismatch, "lt");
}

TEST_F(Elementwise, StridedViewsAsInputs) {
  Tensor base = F({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor tr = base.t();                         // [4, 3] transposed
  Tensor sl = base.slice(1, 0, 4, 2);           // [3, 2] step 2: cols 0, 2
  Tensor ex = F({100, 200, 300}, {3, 1}).expand({3, 2});  // stride 0
  expect_near_vec(vals(add(sl, ex)), {100, 102, 204, 206, 308, 310}, 0);
  expect_near_vec(vals(neg(tr)), {0, -4, -8, -1, -5, -9, -2, -6, -10, -3, -7, -11}, 0);
  Tensor rev_sel = base.select(1, 3);  // [3, 7, 11] with stride 4
  expect_near_vec(vals(mul(rev_sel, rev_sel)), {9, 49, 121}, 0);
}

TEST_F(Elementwise, EmptyAndSizeOneTensors) {
  Tensor e = Tensor::empty({0, 3}, DType::F32);
  Tensor r = add(e, F({1, 2, 3}, {3}));
  EXPECT_EQ(r.shape(), (Shape{0, 3}));
  EXPECT_EQ(r.numel(), 0);
  EXPECT_EQ(exp(e).shape(), (Shape{0, 3}));
  EXPECT_EQ(add(F({1}, {1, 1}), F({2}, {1})).shape(), (Shape{1, 1}));
  EXPECT_EQ(add(Tensor::empty({2, 0}, DType::F32), F({1}, {1})).shape(), (Shape{2, 0}));
}

TEST_F(Elementwise, Where) {
  Tensor c = B({1, 0, 1}, {3});
  Tensor a = F({1, 2, 3}, {3});
  Tensor b = F({-1, -2, -3, -4, -5, -6}, {2, 3});
  Tensor r = where(c, a, b);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  expect_near_vec(vals(r), {1, -2, 3, 1, -5, 3}, 0);
  Tensor r2 = where(gt(a, scalar_like(a, 1.5)), a, scalar_like(a, 0));
  expect_near_vec(vals(r2), {0, 2, 3}, 0);
  EXPECT_EQ(where(c, I32({1, 2, 3}, {3}), D({0}, {1})).dtype(), DType::F64);
  EXPECT_WGT_ERROR(where(a, a, a), DTypeMismatch, "where");
}

// Every ordered pair of dtypes: small integers survive a round trip through any dtype that
// can hold them, and every cast produces the target dtype with the expected values.
TEST_F(Elementwise, CastRoundTripsAllPairs) {
  const std::vector<double> v = {0, 1, 2, 7, 100};
  for (int i = 0; i < kNumDTypes; ++i)
    for (int j = 0; j < kNumDTypes; ++j) {
      DType s = static_cast<DType>(i), t = static_cast<DType>(j);
      if (s == DType::Bool || t == DType::Bool) continue;
      Tensor x = cast(D(v, {5}), s);
      Tensor y = cast(x, t);
      EXPECT_EQ(y.dtype(), t);
      Tensor back = cast(y, DType::F64);
      SCOPED_TRACE(std::string(dtype_name(s)) + "->" + dtype_name(t));
      EXPECT_EQ(back.to_vector<double>(), v);
    }
  for (int i = 0; i < kNumDTypes; ++i) {
    DType s = static_cast<DType>(i);
    SCOPED_TRACE(dtype_name(s));
    EXPECT_EQ(vals(cast(cast(D({0, 1, 2}, {3}), s), DType::Bool)), (std::vector<double>{0, 1, 1}));
    EXPECT_EQ(vals(cast(B({0, 1}, {2}), s)), (std::vector<double>{0, 1}));
  }
}

TEST_F(Elementwise, CastDefinedOnEdgeValues) {
  Tensor x = D({NAN, INFINITY, -INFINITY, 3.9, -3.9, 1e20, -1e20, 255.5, -0.5}, {9});
  EXPECT_EQ(cast(x, DType::I32).to_vector<int32_t>(),
            (std::vector<int32_t>{0, INT32_MAX, INT32_MIN, 3, -3, INT32_MAX, INT32_MIN, 255, 0}));
  EXPECT_EQ(cast(x, DType::U8).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 255, 0, 3, 0, 255, 0, 255, 0}));
  EXPECT_EQ(cast(x, DType::I64).to_vector<int64_t>()[5], INT64_MAX);  // 1e20 saturates
  EXPECT_EQ(cast(D({-9.5e18}, {1}), DType::I64).to_vector<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(cast(x, DType::I64).to_vector<int64_t>()[1], INT64_MAX);
  EXPECT_EQ(vals(cast(x, DType::Bool)), (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  // int -> int wraps
  EXPECT_EQ(cast(I64({256 + 7, -1, int64_t{1} << 32}, {3}), DType::U8).to_vector<uint8_t>(), (std::vector<uint8_t>{7, 255, 0}));
  EXPECT_EQ(cast(I64({-1, int64_t{1} << 32}, {2}), DType::I32).to_vector<int32_t>(), (std::vector<int32_t>{-1, 0}));
  // f64 -> f32 overflow goes to inf, not UB
  EXPECT_EQ(vals(cast(D({1e300, -1e300}, {2}), DType::F32)), (std::vector<double>{INFINITY, -INFINITY}));
  // complex -> real keeps the real part; complex -> bool tests both parts
  std::vector<c64_t> cv = {{1.5f, 2}, {0, 3}, {0, 0}};
  Tensor c = Tensor::from_vector(cv, {3});
  EXPECT_EQ(vals(c), (std::vector<double>{1.5, 0, 0}));
  EXPECT_EQ(vals(cast(c, DType::Bool)), (std::vector<double>{1, 1, 0}));
}

// i64 compares and min/max in exact int64 (docs/semantics.md), not through double, which
// cannot tell 2^53 + 1 from 2^53; an i32 operand is widened exactly; a float operand makes
// the comparison a float one (the promoted dtype).
TEST_F(Elementwise, Int64ComparisonsAreExact) {
  const int64_t big = (int64_t{1} << 53), mx = INT64_MAX, mn = INT64_MIN;
  Tensor a = I64({big + 1, mx, mn, mx - 1, -1}, {5}), b = I64({big, mx - 1, mn + 1, mx, 0}, {5});
  EXPECT_EQ(vals(eq(a, b)), (std::vector<double>{0, 0, 0, 0, 0}));
  EXPECT_EQ(vals(lt(a, b)), (std::vector<double>{0, 0, 1, 1, 1}));
  EXPECT_EQ(maximum(a, b).to_vector<int64_t>(), (std::vector<int64_t>{big + 1, mx, mn + 1, mx, 0}));
  EXPECT_EQ(minimum(a, b).to_vector<int64_t>(), (std::vector<int64_t>{big, mx - 1, mn, mx - 1, -1}));
  Tensor c = I32({INT32_MAX, INT32_MIN, -1, 0, 7}, {5});
  EXPECT_EQ(vals(lt(c, I64({int64_t{INT32_MAX} + 1, int64_t{INT32_MIN} - 1, -1, 0, 8}, {5}))),
            (std::vector<double>{1, 0, 0, 0, 1}));
}

TEST_F(Elementwise, CastHalfRounding) {
  // f16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10 -> rounds to even (1); 1 + 3*2^-11 -> up.
  Tensor x = D({1.0 + std::ldexp(1.0, -11), 1.0 + 3 * std::ldexp(1.0, -11), 65504, 65520, 1e-8, std::ldexp(1.0, -24)}, {6});
  expect_near_vec(vals(cast(x, DType::F16)), {1.0, 1.0 + std::ldexp(1.0, -9), 65504, INFINITY, 0, std::ldexp(1.0, -24)}, 0);
  // bf16 keeps 8 bits of mantissa: 1 + 2^-8 is a tie -> 1; 1 + 3*2^-8 -> 1 + 2^-6.
  Tensor y = D({1.0 + std::ldexp(1.0, -8), 1.0 + 3 * std::ldexp(1.0, -8), 3e38}, {3});
  expect_near_vec(vals(cast(y, DType::BF16)), {1.0, 1.0 + std::ldexp(1.0, -6), 3.00405527047391e38}, 0);  // rounds up: 3e38 = 0x7F61B1E6
  EXPECT_TRUE(std::isnan(vals(cast(D({NAN}, {1}), DType::F16))[0]));
  EXPECT_TRUE(std::isnan(vals(cast(D({NAN}, {1}), DType::BF16))[0]));
}
