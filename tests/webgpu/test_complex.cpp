// complex64 on WebGPU (kernels/complex.cpp) against the CPU reference on the same inputs:
// elementwise arithmetic with broadcasting and strided views, division, abs and exp on every
// combination of special parts (0, -0, inf, NaN, huge, tiny), casts to and from c64, where and
// fill, reductions over any axes (both kernels, empty sets), matmul in both algorithms and
// tiles on transposed / sliced / batched operands, and dot_general / einsum through it. Every
// op runs with the fallback off, so a CPU run would be an error.
#include <cmath>
#include <complex>
#include <random>

#include "webgpu/kernels/complex.hpp"
#include "webgpu/plans/tuning.hpp"
#include "webgpu_test.hpp"

namespace wgt {
namespace {

using cd = std::complex<double>;

std::vector<c64_t> random_c64(int64_t n, uint32_t seed, float lo = -2, float hi = 2) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<c64_t> v(static_cast<size_t>(n));
  for (auto& z : v) z = {u(g), u(g)};
  return v;
}
Tensor crand(const Shape& s, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return Tensor::from_vector(random_c64(n, seed), s);
}

// Every combination of these as (re, im) / (re, im) pairs: the special values of the C99
// Annex G definitions, huge values whose squares overflow f32 and tiny ones whose squares
// underflow.
const float kSpecial[] = {0.0f, -0.0f, 1.0f, -2.5f, INFINITY, -INFINITY, NAN, 3e38f, -2e38f, 1e-30f};

// Values of a result as complex doubles (real dtypes: zero imaginary part).
std::vector<cd> values(const Tensor& t) {
  std::vector<cd> out;
  if (t.dtype() == DType::C64) {
    for (const c64_t& z : t.cpu().to_vector<c64_t>()) out.emplace_back(z.re, z.im);
  } else {
    for (double v : cast(t.cpu(), DType::F64).to_vector<double>()) out.emplace_back(v, 0.0);
  }
  return out;
}

// One part: NaN where the reference has NaN, the same infinity, else within tol relative to
// `scale` (the magnitude of the whole value: a component much smaller than its value's modulus
// carries the modulus's rounding).
void expect_part(double got, double want, double scale, double tol, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got << ", want NaN";
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what;
  } else {
    EXPECT_NEAR(got, want, tol * std::max(1.0, scale)) << what;
  }
}

class WebGpuComplex : public testing::WebGpuTest {
 protected:
  void TearDown() override {
    webgpu::set_kernel_tuning_override(std::nullopt);
    testing::WebGpuTest::TearDown();
  }
  // f on device copies (no fallback) against f on the host with the CPU reference.
  template <typename F>
  void compare(const std::vector<Tensor>& host, F f, double tol, const std::string& what = "") {
    use_cpu_reference();
    const Tensor ref = f(host);
    std::vector<cd> want = values(ref);
    std::vector<Tensor> dev;
    for (const Tensor& t : host) dev.push_back(t.to(Device::webgpu()));
    use_gpu();
    Tensor r = f(dev);
    EXPECT_TRUE(r.device().is_webgpu()) << what;
    EXPECT_EQ(r.dtype(), ref.dtype()) << what;
    EXPECT_EQ(r.shape(), ref.shape()) << what;
    use_cpu_reference();
    std::vector<cd> got = values(r);
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
      double scale = 0;  // the modulus, from the finite parts where one is not
      for (double part : {want[i].real(), want[i].imag()})
        if (std::isfinite(part)) scale = std::max(scale, std::fabs(part));
      const std::string at = what + " [" + std::to_string(i) + "]";
      expect_part(got[i].real(), want[i].real(), scale, tol, at + " re");
      expect_part(got[i].imag(), want[i].imag(), scale, tol, at + " im");
    }
  }
  void force(webgpu::ComplexAlgo algo, std::optional<std::array<uint32_t, 5>> tile = std::nullopt) {
    webgpu::KernelTuning t;
    t.matmul.c64 = algo;
    t.matmul.c64_tile = tile;
    webgpu::set_kernel_tuning_override(t);
  }
};

TEST_F(WebGpuComplex, ArithmeticBroadcastAndViews) {
  Tensor a = crand({3, 5, 7}, 1), b = crand({3, 5, 7}, 2), row = crand({5, 1}, 3), s = crand({}, 4);
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
    const std::string n = binary_op_name(op);
    compare({a, b}, [&](const std::vector<Tensor>& t) { return binary(op, t[0], t[1]); }, 1e-6, n);
    compare({a, row}, [&](const std::vector<Tensor>& t) { return binary(op, t[0], t[1]); }, 1e-6, n + " bcast");
    compare({s, a}, [&](const std::vector<Tensor>& t) { return binary(op, t[0], t[1]); }, 1e-6, n + " scalar");
    // Transposed and stepped views of both operands.
    compare({a, b}, [&](const std::vector<Tensor>& t) {
      return binary(op, t[0].permute({2, 0, 1}).slice(0, 1, 7, 2), t[1].transpose(0, 2).slice(0, 0, 6, 2).transpose(1, 2));
    }, 1e-6, n + " views");
  }
  // Promotion: an f32 operand is cast to c64 first (on the device too).
  compare({a, rand_uniform({7}, 5, -1, 1)}, [](const std::vector<Tensor>& t) { return sub(t[0], t[1]); }, 1e-6, "f32 promo");
  // eq / ne give bool, NaN parts unequal.
  std::vector<c64_t> x = {{1, 2}, {NAN, 0}, {0, -0.0f}, {3, 4}}, y = {{1, 2}, {NAN, 0}, {-0.0f, 0}, {3, -4}};
  Tensor tx = Tensor::from_vector(x, {4}), ty = Tensor::from_vector(y, {4});
  compare({tx, ty}, [](const std::vector<Tensor>& t) { return eq(t[0], t[1]); }, 0, "eq");
  compare({tx, ty}, [](const std::vector<Tensor>& t) { return ne(t[0], t[1]); }, 0, "ne");
  // Empty and size-1 tensors.
  compare({crand({0, 3}, 6), crand({1, 3}, 7)}, [](const std::vector<Tensor>& t) { return mul(t[0], t[1]); }, 0, "empty");
  compare({crand({1}, 8), crand({1}, 9)}, [](const std::vector<Tensor>& t) { return div(t[0], t[1]); }, 1e-6, "one");
}

// Division, abs and exp on every pair of special parts: the device must give the CPU's NaN,
// inf and zero pattern, and no overflow where the true value is finite.
TEST_F(WebGpuComplex, SpecialValuesOfDivAbsExp) {
  std::vector<c64_t> zs;
  for (float re : kSpecial)
    for (float im : kSpecial) zs.push_back({re, im});
  const int64_t n = static_cast<int64_t>(zs.size());
  Tensor z = Tensor::from_vector(zs, {n});
  // x[i] / y[j] for all i, j: outer broadcasting.
  compare({z.view({n, 1}), z.view({1, n})}, [](const std::vector<Tensor>& t) { return div(t[0], t[1]); }, 1e-6, "div");
  compare({z}, [](const std::vector<Tensor>& t) { return abs(t[0]); }, 1e-6, "abs");
  // exp: imaginary parts within the exact angle reduction's range (|y| < 2 pi 2^24, as sin / cos).
  std::vector<c64_t> ze;
  for (float re : kSpecial)
    for (float im : kSpecial)
      if (!std::isfinite(im) || std::fabs(im) < 1e8f) ze.push_back({re, im});
  compare({Tensor::from_vector(ze, {static_cast<int64_t>(ze.size())})},
          [](const std::vector<Tensor>& t) { return exp(t[0]); }, 1e-5, "exp");
  // Huge and tiny quotients computed without overflow / underflow of the intermediate terms.
  std::vector<c64_t> a = {{3e38f, 3e38f}, {1e-30f, 2e-30f}, {3e38f, -1e38f}, {1, 1}, {2e-38f, 0}};
  std::vector<c64_t> b = {{3e38f, 3e38f}, {3e-30f, 1e-30f}, {1e-3f, 2e-3f}, {3e38f, 3e38f}, {1e-38f, 1e-38f}};
  compare({Tensor::from_vector(a, {5}), Tensor::from_vector(b, {5})},
          [](const std::vector<Tensor>& t) { return div(t[0], t[1]); }, 1e-6, "div huge");
  // exp where e^x alone overflows f32 but e^x cos(y) does not (y away from the zeros of cos and
  // sin: WGSL bounds their error only absolutely, 2^-11, so e^89 cos(1.5707) has no relative
  // accuracy to check on a device; the H200 gave 2.6e-4).
  std::vector<c64_t> e = {{89.0f, 1.0f}, {88.5f, -2.0f}, {-100.0f, 1.0f}, {20.0f, -3.0f}, {0.5f, 1e4f}};
  compare({Tensor::from_vector(e, {static_cast<int64_t>(e.size())})}, [](const std::vector<Tensor>& t) { return exp(t[0]); }, 1e-5, "exp range");
}

TEST_F(WebGpuComplex, UnaryPartsAndCasts) {
  Tensor a = crand({4, 9, 5}, 11);
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Conj, UnaryOp::Exp, UnaryOp::Abs, UnaryOp::Real, UnaryOp::Imag}) {
    compare({a}, [&](const std::vector<Tensor>& t) { return unary(op, t[0]); }, 1e-6, unary_op_name(op));
    compare({a}, [&](const std::vector<Tensor>& t) { return unary(op, t[0].permute({1, 2, 0}).slice(0, 1, 9, 3)); }, 1e-6,
            std::string(unary_op_name(op)) + " view");
  }
  // c64 -> every real dtype WebGPU stores (real part; bool: either part nonzero, NaN true).
  std::vector<c64_t> s = {{1.5f, 0}, {0, 2}, {0, 0}, {NAN, 0}, {-3e9f, 1}, {300, -1}, {-0.7f, 0}};
  Tensor sv = Tensor::from_vector(s, {7});
  for (DType to : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U8, DType::Bool, DType::C64})
    compare({sv}, [&](const std::vector<Tensor>& t) { return cast(t[0], to); }, 0, std::string("to ") + dtype_name(to));
  // Every real dtype -> c64 (zero imaginary part), from a strided view.
  Tensor r = rand_uniform({6, 5}, 12, -300, 300);
  for (DType from : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U8, DType::Bool})
    compare({cast(r, from)}, [](const std::vector<Tensor>& t) { return cast(t[0].t(), DType::C64); }, 0,
            std::string("from ") + dtype_name(from));
}

TEST_F(WebGpuComplex, WhereFillAndCopies) {
  Tensor a = crand({3, 4}, 21), b = crand({4}, 22), r = rand_uniform({3, 4}, 23, -1, 1);
  Tensor c = gt(r, scalar_like(r, 0.0));
  compare({c, a, b}, [](const std::vector<Tensor>& t) { return where(t[0], t[1], t[2]); }, 0, "where");
  use_gpu();
  Tensor f = full({3, 5}, -2.5, DType::C64, Device::webgpu());
  for (const c64_t& z : f.cpu().to_vector<c64_t>()) {
    EXPECT_EQ(z.re, -2.5f);
    EXPECT_EQ(z.im, 0.0f);
  }
  // Compaction of strided c64 views and concatenation move whole (re, im) pairs.
  compare({crand({5, 6, 3}, 24)}, [](const std::vector<Tensor>& t) { return t[0].permute({2, 0, 1}).slice(1, 1, 5, 2).contiguous(); },
          0, "contiguous");
  compare({crand({2, 3}, 25), crand({4, 3}, 26)}, [](const std::vector<Tensor>& t) { return concat({t[0], t[1]}, 0); }, 0, "concat");
}

TEST_F(WebGpuComplex, Reductions) {
  Tensor x = crand({6, 70, 3}, 31);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean}) {
    const std::string n = reduce_op_name(op);
    // Few elements per output (serial kernel) and many (workgroup kernel), any axes, views.
    for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0, 2}, {0, 1, 2}})
      compare({x}, [&](const std::vector<Tensor>& t) { return reduce(op, t[0], axes, false); }, 1e-5, n);
    compare({x}, [&](const std::vector<Tensor>& t) { return reduce(op, t[0].transpose(0, 1).slice(0, 3, 70, 2), {0}, true); },
            1e-5, n + " view keepdim");
    compare({crand({4, 0}, 32)}, [&](const std::vector<Tensor>& t) { return reduce(op, t[0], {1}, false); }, 0, n + " empty");
  }
  Tensor small = Tensor::from_vector(random_c64(5 * 7, 33, -1.2f, 1.2f), {5, 7});
  compare({small}, [](const std::vector<Tensor>& t) { return prod(t[0], {1}); }, 1e-5, "prod");
  // Moduli near 1, so 100 factors neither overflow nor vanish.
  std::vector<c64_t> near1 = random_c64(3 * 100, 34, -0.1f, 0.1f);
  for (c64_t& z : near1) z.re += 1.0f;
  compare({Tensor::from_vector(near1, {3, 100})}, [](const std::vector<Tensor>& t) { return prod(t[0], {1}); }, 1e-4, "prod wg");
  EXPECT_EQ(webgpu::complex_last_plan(), "c64 prod wg");
}

// Both algorithms, both tiles (forced through the tuning override), on odd sizes, transposed
// and sliced operands (read through their strides), a view that needs compaction, broadcast
// batch dims, an empty contraction, and K = 1.
TEST_F(WebGpuComplex, MatmulBothAlgorithms) {
  const std::optional<std::array<uint32_t, 5>> tiles[] = {std::nullopt, std::array<uint32_t, 5>{64, 64, 4, 4, 4}};
  for (webgpu::ComplexAlgo algo : {webgpu::ComplexAlgo::FourMult, webgpu::ComplexAlgo::ThreeMult}) {
    for (const auto& tile : tiles) {
      force(algo, tile);
      const std::string what = std::string(algo == webgpu::ComplexAlgo::ThreeMult ? "mm3" : "mm4") + (tile ? " 64" : "");
      const double tol = 2e-5;
      Tensor a = crand({37, 29}, 41), b = crand({29, 67}, 42);
      compare({a, b}, [](const std::vector<Tensor>& t) { return matmul(t[0], t[1]); }, tol, what);
      EXPECT_NE(webgpu::complex_last_plan().find(what.substr(0, 3)), std::string::npos) << webgpu::complex_last_plan();
      compare({a, crand({19, 29}, 43)}, [](const std::vector<Tensor>& t) { return matmul_t(t[0], t[1]); }, tol, what + " t");
      compare({crand({29, 37}, 44), crand({67, 29}, 45)},
              [](const std::vector<Tensor>& t) { return matmul(t[0].t(), t[1].t()); }, tol, what + " views");
      // Neither matrix stride is the unit one: compacted on the device first.
      compare({crand({9, 4, 13}, 46), crand({7, 5}, 53)},
              [](const std::vector<Tensor>& t) { return matmul(t[0].slice(2, 0, 13, 2).select(1, 0), t[1]); }, tol,
              what + " compact");
      compare({crand({2, 1, 5, 11}, 47), crand({3, 11, 6}, 48)},
              [](const std::vector<Tensor>& t) { return matmul(t[0], t[1]); }, tol, what + " batch");
      compare({crand({4, 0}, 49), crand({0, 3}, 50)}, [](const std::vector<Tensor>& t) { return matmul(t[0], t[1]); }, 0,
              what + " k0");
      compare({crand({5, 1}, 51), crand({1, 7}, 52)}, [](const std::vector<Tensor>& t) { return matmul(t[0], t[1]); }, tol,
              what + " k1");
    }
  }
}

TEST_F(WebGpuComplex, MatmulSpecialValues) {
  // NaN and inf in a row / column reach exactly the outputs that read them.
  std::vector<c64_t> av = random_c64(6 * 5, 61), bv = random_c64(5 * 4, 62);
  av[7] = {NAN, 0};
  bv[9] = {INFINITY, 0};
  Tensor a = Tensor::from_vector(av, {6, 5}), b = Tensor::from_vector(bv, {5, 4});
  for (webgpu::ComplexAlgo algo : {webgpu::ComplexAlgo::FourMult, webgpu::ComplexAlgo::ThreeMult}) {
    force(algo);
    use_cpu_reference();
    std::vector<cd> want = values(matmul(a, b));
    use_gpu();
    std::vector<cd> got = values(matmul(a.to(Device::webgpu()), b.to(Device::webgpu())));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const bool bad_want = !std::isfinite(want[i].real()) || !std::isfinite(want[i].imag());
      const bool bad_got = !std::isfinite(got[i].real()) || !std::isfinite(got[i].imag());
      EXPECT_EQ(bad_got, bad_want) << i;
    }
  }
}

TEST_F(WebGpuComplex, DotGeneralAndEinsumRunOnTheDevice) {
  Tensor a = crand({3, 5, 7, 4}, 71), b = crand({7, 3, 4, 6}, 72);
  compare({a, b}, [](const std::vector<Tensor>& t) { return dot_general(t[0], t[1], {{0}, {1}, {2, 3}, {0, 2}}); }, 2e-5,
          "dot_general");
  compare({crand({2, 3, 4}, 73), crand({4, 5}, 74), crand({5, 3}, 75)},
          [](const std::vector<Tensor>& t) { return einsum("bij,jk,ki->b", t); }, 2e-5, "einsum chain");
  compare({crand({6, 6}, 76)}, [](const std::vector<Tensor>& t) { return einsum("ii->", t); }, 1e-5, "trace");
}

}  // namespace
}  // namespace wgt
