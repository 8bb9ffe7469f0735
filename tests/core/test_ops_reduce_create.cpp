// Reference creation ops (full, arange, counter-based random) and reductions (sum, mean, max,
// min, prod, argmax) over single and multiple axes, keepdim, views and empty tensors.
#include <cmath>

#include "cpu/reference/random.hpp"
#include "ref_test_util.hpp"

using namespace wgt;
using namespace wgt::test;

using Creation = RefTest;
using Reduce = RefTest;

TEST_F(Creation, FullZerosOnesArange) {
  EXPECT_EQ(full({2, 2}, 3.5).to_vector<float>(), (std::vector<float>{3.5, 3.5, 3.5, 3.5}));
  EXPECT_EQ(zeros({3}, DType::I64).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(vals(ones({2}, DType::Bool)), (std::vector<double>{1, 1}));
  EXPECT_EQ(vals(ones({2}, DType::F16)), (std::vector<double>{1, 1}));
  EXPECT_EQ(full({}, 7, DType::U8).item(), 7.0);
  EXPECT_EQ(arange(0, 5).to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(1, 2, 0.25, DType::F64).to_vector<double>(), (std::vector<double>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(arange(5, 0, -2, DType::I32).to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 1}));
  EXPECT_EQ(arange(0, 0).numel(), 0);
  EXPECT_EQ(arange(3, 0).numel(), 0);  // wrong direction: empty, like numpy
  EXPECT_WGT_ERROR(arange(0, 1, 0), InvalidArgument, "arange");
  EXPECT_WGT_ERROR(full({2}, 2.5, DType::I32), InvalidArgument, "full");
  EXPECT_WGT_ERROR(full({2}, 300, DType::U8), InvalidArgument, "full");
  EXPECT_WGT_ERROR(arange(0, 3, 1, DType::Bool), DTypeMismatch, "arange");
}

// The algorithm documented in random.hpp, checked against values computed by hand from the
// u32 formulas (so a WGSL port has fixed targets).
TEST_F(Creation, RandomHashIsTheDocumentedU32Algorithm) {
  auto mix = [](uint32_t x) {  // spelled out again, independently of random.hpp
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16; return x;
  };
  const uint64_t seed = 0x0000000500000007ull;
  const uint32_t key = mix(mix(0x243F6A88u ^ 7u) ^ 5u);
  EXPECT_EQ(cpu_ref::rng_key(seed), key);
  Tensor u = rand_uniform({5}, seed, 0.0, 1.0, DType::F64);
  auto uv = u.to_vector<double>();
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(uv[i], (mix(mix(key ^ i) ^ 0u) >> 8) * 0x1p-24) << i;
  // Counter-based: element i does not depend on the shape or on the other elements.
  auto big = rand_uniform({2, 3}, seed, 0.0, 1.0, DType::F64).to_vector<double>();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(big[i], uv[i]);
  EXPECT_NE(rand_uniform({5}, seed + 1, 0.0, 1.0, DType::F64).to_vector<double>(), uv);
  // Normal: Box-Muller on counters 2i and 2i+1.
  auto nv = rand_normal({3}, seed, 0.0, 1.0, DType::F64).to_vector<double>();
  for (uint32_t i = 0; i < 3; ++i) {
    double u1 = ((mix(mix(key ^ (2 * i))) >> 8) + 1) * 0x1p-24, u2 = (mix(mix(key ^ (2 * i + 1))) >> 8) * 0x1p-24;
    EXPECT_DOUBLE_EQ(nv[i], std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2)) << i;
  }
}

TEST_F(Creation, RandomStatistics) {
  const int64_t n = 20000;
  auto u = rand_uniform({n}, 42, -1.0, 3.0).to_vector<float>();
  double s = 0, mn = 1e9, mx = -1e9;
  for (float v : u) { s += v; mn = std::min<double>(mn, v); mx = std::max<double>(mx, v); }
  EXPECT_GE(mn, -1.0);
  EXPECT_LT(mx, 3.0);
  EXPECT_NEAR(s / n, 1.0, 0.05);  // mean of U(-1, 3); sd of the mean ~0.008
  auto z = rand_normal({n}, 7, 2.0, 0.5).to_vector<float>();
  double m = 0, v2 = 0;
  for (float v : z) m += v;
  m /= n;
  for (float v : z) v2 += (v - m) * (v - m);
  EXPECT_NEAR(m, 2.0, 0.02);
  EXPECT_NEAR(std::sqrt(v2 / n), 0.5, 0.02);
  EXPECT_EQ(rand_uniform({4}, 1).to_vector<float>(), rand_uniform({4}, 1).to_vector<float>());
  EXPECT_WGT_ERROR(rand_uniform({2}, 1, 0, 1, DType::I32), DTypeMismatch, "rand_uniform");
  EXPECT_WGT_ERROR(rand_normal({2}, 1, 0, -1), InvalidArgument, "rand_normal");
}

TEST_F(Reduce, SumMeanOverAxesWithKeepdim) {
  Tensor x = arange(0, 24, 1, DType::F64).view({2, 3, 4});
  EXPECT_EQ(sum(x).item(), 276.0);
  EXPECT_EQ(sum(x).dim(), 0);
  Tensor s02 = sum(x, {0, 2});
  EXPECT_EQ(s02.shape(), (Shape{3}));
  // x[i][j][k] = 12i + 4j + k; for j = 0: (0+1+2+3) + (12+13+14+15) = 60, +32 per j
  EXPECT_EQ(s02.to_vector<double>(), (std::vector<double>{60, 92, 124}));
  Tensor k = sum(x, {-1, 0}, true);
  EXPECT_EQ(k.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(k.to_vector<double>(), (std::vector<double>{60, 92, 124}));
  Tensor m = mean(x, {1});
  EXPECT_EQ(m.shape(), (Shape{2, 4}));
  EXPECT_EQ(m.to_vector<double>(), (std::vector<double>{4, 5, 6, 7, 16, 17, 18, 19}));
  EXPECT_EQ(mean(x, {0, 1, 2}, true).shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(mean(x, {0, 1, 2}, true).item(), 11.5);
}

TEST_F(Reduce, MaxMinProdAndIntegerDtypes) {
  Tensor x = F({3, -1, 4, 1, -5, 9}, {2, 3});
  EXPECT_EQ(max(x, {1}).to_vector<float>(), (std::vector<float>{4, 9}));
  EXPECT_EQ(min(x, {0}).to_vector<float>(), (std::vector<float>{1, -5, 4}));
  EXPECT_EQ(prod(x, {1}).to_vector<float>(), (std::vector<float>{-12, -45}));
  EXPECT_TRUE(std::isnan(max(F({1, NAN, 3}, {3})).item()));  // NaN propagates
  Tensor xi = I32({2147483647, 1, -3, 4}, {2, 2});
  Tensor si = sum(xi, {1});
  EXPECT_EQ(si.dtype(), DType::I64);  // integer sums widen to i64
  EXPECT_EQ(si.to_vector<int64_t>(), (std::vector<int64_t>{2147483648LL, 1}));
  EXPECT_EQ(max(xi).item(), 2147483647.0);
  EXPECT_EQ(max(xi).dtype(), DType::I32);
  EXPECT_EQ(sum(B({1, 1, 0}, {3})).to_vector<int64_t>(), (std::vector<int64_t>{2}));
  EXPECT_EQ(prod(U8({200, 2}, {2})).to_vector<int64_t>(), (std::vector<int64_t>{400}));
  EXPECT_WGT_ERROR(mean(xi), DTypeMismatch, "mean");
  std::vector<c64_t> cv = {{1, 1}, {2, -3}};
  auto cs = sum(Tensor::from_vector(cv, {2})).to_vector<c64_t>();
  EXPECT_EQ(cs[0].re, 3);
  EXPECT_EQ(cs[0].im, -2);
  auto cm = mean(Tensor::from_vector(cv, {2})).to_vector<c64_t>();
  EXPECT_EQ(cm[0].re, 1.5f);
  EXPECT_EQ(cm[0].im, -1.0f);
  auto ce = mean(Tensor::from_vector(cv, {2}).slice(0, 0, 0), {0}).to_vector<c64_t>();  // empty: 0/0 in each part
  EXPECT_TRUE(std::isnan(ce[0].re) && std::isnan(ce[0].im));
  EXPECT_WGT_ERROR(max(Tensor::from_vector(cv, {2})), DTypeMismatch, "max");
}

TEST_F(Reduce, ArgMaxTiesAndNaN) {
  Tensor x = F({1, 5, 5, 2, 7, 7, 7, 0}, {2, 4});
  EXPECT_EQ(argmax(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));  // first max wins
  EXPECT_EQ(argmax(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(argmax(x, -1, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(argmax(F({1, NAN, 9, NAN}, {4}), 0).item(), 1.0);  // first NaN counts as the max
  EXPECT_EQ(argmax(I32({-4, -2, -2}, {3}), 0).item(), 1.0);
  EXPECT_WGT_ERROR(argmax(Tensor::empty({0, 2}, DType::F32), 0), InvalidArgument, "argmax");
  EXPECT_WGT_ERROR(reduce(ReduceOp::ArgMax, x, {0, 1}), InvalidArgument, "argmax");
}

TEST_F(Reduce, ViewsEmptyAndScalars) {
  Tensor base = arange(0, 12, 1, DType::F32).view({3, 4});
  EXPECT_EQ(sum(base.t(), {1}).to_vector<float>(), (std::vector<float>{12, 15, 18, 21}));
  EXPECT_EQ(sum(base.slice(1, 1, 4, 2), {0}).to_vector<float>(), (std::vector<float>{15, 21}));
  EXPECT_EQ(sum(F({2}, {1}).expand({5}), {0}).item(), 10.0);
  Tensor e = Tensor::empty({0, 3}, DType::F32);
  EXPECT_EQ(sum(e, {0}).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(prod(e, {0}).to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_TRUE(std::isnan(mean(e).item()));  // 0 / 0
  EXPECT_EQ(sum(e, {1}).shape(), (Shape{0}));
  EXPECT_WGT_ERROR(max(e, {0}), InvalidArgument, "max");
  EXPECT_EQ(sum(F({4}, {})).item(), 4.0);  // 0-d reduces to itself
  EXPECT_WGT_ERROR(sum(base, {1, -1}), InvalidArgument, "sum");  // duplicate axis
  EXPECT_WGT_ERROR(sum(base, {2}), OutOfRange, "sum");
}
