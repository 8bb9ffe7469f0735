// FFTs against the direct DFT (long double sums) on random inputs: every kind and norm,
// prime lengths (Bluestein in the reference), length 1, padding/truncation, any axis of
// strided views, batched lines; round trips, Parseval, real-input symmetry; the FFTW fast
// path against the reference; n-dimensional composition; typed errors.
#include <complex>
#include <numbers>

#include "ref_test_util.hpp"

using namespace wgt;
using namespace wgt::test;

namespace {

using cd = std::complex<double>;

class Fft : public RefTest {};

Tensor cplx(const Shape& s, uint64_t seed) {
  std::vector<float> r = rand_uniform(s, seed, -1, 1).to_vector<float>(), i = rand_uniform(s, seed + 99, -1, 1).to_vector<float>();
  std::vector<c64_t> v;
  for (size_t k = 0; k < r.size(); ++k) v.push_back({r[k], i[k]});
  return Tensor::from_vector(v, s);
}

std::vector<cd> cvals(const Tensor& t) {
  std::vector<cd> out;
  for (c64_t v : t.to_vector<c64_t>()) out.emplace_back(v.re, v.im);
  return out;
}

// The textbook DFT of one line: sum_j x_j exp(sign 2 pi i jk / n), in long double.
std::vector<cd> direct_dft(const std::vector<cd>& x, int sign) {
  const size_t n = x.size();
  std::vector<cd> X(n);
  for (size_t k = 0; k < n; ++k) {
    std::complex<long double> acc = 0;
    for (size_t j = 0; j < n; ++j) {
      const long double ang = sign * 2.0L * std::numbers::pi_v<long double> * static_cast<long double>((j * k) % n) / n;
      acc += std::complex<long double>(x[j].real(), x[j].imag()) * std::complex<long double>(std::cos(ang), std::sin(ang));
    }
    X[k] = cd(static_cast<double>(acc.real()), static_cast<double>(acc.imag()));
  }
  return X;
}

void expect_close(const std::vector<cd>& got, const std::vector<cd>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1;
  for (cd w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i) EXPECT_LE(std::abs(got[i] - want[i]), tol * scale) << what << " [" << i << "]";
}

const double kTol = 2e-6;  // f32 storage of results; the sums themselves are exact to ~1e-15

}  // namespace

TEST_F(Fft, MatchesDirectDftForEveryLengthKindAndNorm) {
  for (int64_t n : {1, 2, 3, 5, 7, 8, 12, 16, 17, 30, 97, 128}) {
    Tensor x = cplx({n}, 1 + n);
    const std::vector<cd> xv = cvals(x), F = direct_dft(xv, -1), I = direct_dft(xv, +1);
    const double dn = static_cast<double>(n), sq = std::sqrt(dn);
    auto scaled = [](std::vector<cd> v, double s) { for (cd& c : v) c *= s; return v; };
    const std::string tag = "n=" + std::to_string(n);
    expect_close(cvals(fft(x)), F, kTol, tag + " fft");
    expect_close(cvals(fft(x, -1, -1, FftNorm::Ortho)), scaled(F, 1 / sq), kTol, tag + " fft ortho");
    expect_close(cvals(fft(x, -1, -1, FftNorm::Forward)), scaled(F, 1 / dn), kTol, tag + " fft forward");
    expect_close(cvals(ifft(x)), scaled(I, 1 / dn), kTol, tag + " ifft");
    expect_close(cvals(ifft(x, -1, -1, FftNorm::Ortho)), scaled(I, 1 / sq), kTol, tag + " ifft ortho");
    expect_close(cvals(ifft(x, -1, -1, FftNorm::Forward)), I, kTol, tag + " ifft forward");
    // rfft: the first n/2+1 entries of the DFT of the real part.
    Tensor r = rand_uniform({n}, 50 + n, -1, 1);
    std::vector<cd> rv;
    for (double v : vals(r)) rv.emplace_back(v, 0.0);
    std::vector<cd> RF = direct_dft(rv, -1);
    RF.resize(n / 2 + 1);
    Tensor R = rfft(r);
    EXPECT_EQ(R.shape(), (Shape{n / 2 + 1}));
    expect_close(cvals(R), RF, kTol, tag + " rfft");
    // irfft: the real inverse of the Hermitian extension (imaginary DC/Nyquist ignored).
    Tensor h = cplx({n / 2 + 1}, 70 + n);
    std::vector<cd> hv = cvals(h), full(n);
    for (int64_t k = 0; k <= n / 2; ++k) {
      cd v = hv[k];
      if (k == 0 || 2 * k == n) v = cd(v.real(), 0);
      full[k] = v;
      if (k > 0) full[n - k] = std::conj(v);
    }
    std::vector<cd> want = scaled(direct_dft(full, +1), 1 / dn);
    Tensor back = irfft(h, n);
    EXPECT_EQ(back.dtype(), DType::F32);
    std::vector<cd> got;
    for (double v : vals(back)) got.emplace_back(v, 0.0);
    for (cd& w : want) w = cd(w.real(), 0);
    expect_close(got, want, kTol, tag + " irfft");
  }
}

TEST_F(Fft, PrimeLengthsRoundTripsAndParseval) {
  for (int64_t n : {17, 97, 1009}) {
    Tensor x = cplx({3, n}, 100 + n);
    if (n < 1009) expect_close(cvals(fft(x).select(0, 1)), direct_dft(cvals(x.select(0, 1)), -1), kTol, "prime dft");
    expect_close(cvals(ifft(fft(x))), cvals(x), 1e-6, "round trip " + std::to_string(n));
    // Parseval with ortho: the transform is unitary, sum |x|^2 = sum |X|^2 per line.
    std::vector<cd> X = cvals(fft(x, -1, -1, FftNorm::Ortho)), xv = cvals(x);
    double ex = 0, eX = 0;
    for (size_t i = 0; i < xv.size(); ++i) {
      ex += std::norm(xv[i]);
      eX += std::norm(X[i]);
    }
    EXPECT_NEAR(eX, ex, 1e-6 * ex) << n;
    Tensor r = rand_uniform({2, n}, 200 + n, -1, 1);
    expect_near_vec(vals(irfft(rfft(r), n)), vals(r), 1e-6, "real round trip");
  }
}

TEST_F(Fft, RealInputSymmetry) {
  // The DFT of real input is Hermitian: X[n-k] = conj(X[k]); rfft is its first half.
  const int64_t n = 12;
  Tensor r = rand_uniform({n}, 300, -1, 1);
  std::vector<cd> X = cvals(fft(r)), R = cvals(rfft(r));
  for (int64_t k = 1; k < n; ++k) EXPECT_LE(std::abs(X[n - k] - std::conj(X[k])), 1e-6) << k;
  for (int64_t k = 0; k <= n / 2; ++k) EXPECT_LE(std::abs(R[k] - X[k]), 1e-6) << k;
  EXPECT_LE(std::abs(X[0].imag()), 1e-6);  // the DC term of real input is real
}

TEST_F(Fft, AxesStridedViewsPaddingAndBatches) {
  Tensor x = cplx({4, 6, 5}, 400);
  // Axis 1 of a transposed view equals the last axis of the compacted transpose.
  Tensor v = x.transpose(0, 2);  // [5, 6, 4]
  Tensor a = fft(v, -1, 1);
  Tensor b = fft(v.transpose(1, 2).contiguous(), -1, -1).transpose(1, 2);
  expect_close(cvals(a), cvals(b.contiguous()), 1e-6, "axis of a view");
  // Each line of a batch is its own transform.
  Tensor line = fft(x, -1, 0).select(2, 3).select(1, 2);
  expect_close(cvals(line), direct_dft(cvals(x.select(2, 3).select(1, 2)), -1), kTol, "batched line");
  // n pads with zeros or truncates.
  Tensor s = cplx({6}, 401);
  std::vector<cd> sv = cvals(s), padded = sv;
  padded.resize(9);
  expect_close(cvals(fft(s, 9)), direct_dft(padded, -1), kTol, "padded");
  expect_close(cvals(fft(s, 4)), direct_dft({sv.begin(), sv.begin() + 4}, -1), kTol, "truncated");
  // Real inputs of other dtypes are converted; empty batches give empty results.
  expect_close(cvals(fft(cast(rand_uniform({8}, 402, -1, 1), DType::F16))),
               cvals(fft(cast(cast(rand_uniform({8}, 402, -1, 1), DType::F16), DType::F32))), 0, "f16 input");
  EXPECT_EQ(fft(cplx({0, 8}, 403)).shape(), (Shape{0, 8}));
  EXPECT_EQ(irfft(cplx({3, 5}, 404)).shape(), (Shape{3, 8}));
}

TEST_F(Fft, NdimensionalByComposition) {
  Tensor x = cplx({3, 4, 5}, 500);
  // fft2 = fft over axis -1 then -2; fftn over all axes; the inverse undoes it.
  expect_close(cvals(fft2(x)), cvals(fft(fft(x, -1, -1), -1, -2)), 1e-6, "fft2");
  expect_close(cvals(fftn(x)), cvals(fft(fft(fft(x, -1, 2), -1, 1), -1, 0)), 1e-6, "fftn");
  expect_close(cvals(ifftn(fftn(x, {}, {}, FftNorm::Ortho), {}, {}, FftNorm::Ortho)), cvals(x), 1e-6, "ifftn");
  expect_close(cvals(ifft2(fft2(x))), cvals(x), 1e-6, "ifft2");
  Tensor r = rand_uniform({4, 6}, 501, -1, 1);
  Tensor R = rfftn(r);
  EXPECT_EQ(R.shape(), (Shape{4, 4}));
  expect_close(cvals(R), cvals(fft(rfft(r), -1, 0)), 1e-6, "rfftn");
  expect_near_vec(vals(irfftn(R, {4, 6})), vals(r), 1e-6, "irfftn");
}

TEST_F(Fft, FftwFastPathMatchesReference) {
  std::vector<Tensor> ins = {cplx({3, 1009}, 600), cplx({2, 5, 64}, 601).transpose(1, 2), rand_uniform({7, 30}, 602, -1, 1)};
  for (FftNorm norm : {FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward}) {
    auto run_all = [&] {
      std::vector<std::vector<cd>> out;
      out.push_back(cvals(fft(ins[0], -1, -1, norm)));
      out.push_back(cvals(ifft(ins[1], -1, 1, norm)));
      out.push_back(cvals(rfft(ins[2], -1, 0, norm)));
      std::vector<cd> re;
      for (double v : vals(irfft(ins[1], 9, 2, norm))) re.emplace_back(v, 0);  // non-Hermitian DC
      out.push_back(re);
      return out;
    };
    auto ref = run_all();
    Policy p = Runtime::get().policy();
    p.cpu_mode = CpuMode::Fast;
    Runtime::get().set_policy(p);
    auto fast = run_all();
    p.cpu_mode = CpuMode::Reference;
    Runtime::get().set_policy(p);
    for (size_t i = 0; i < ref.size(); ++i) expect_close(fast[i], ref[i], 1e-5, "fast vs ref " + std::to_string(i));
  }
}

TEST_F(Fft, TypedErrors) {
  Tensor x = cplx({4}, 700);
  EXPECT_WGT_ERROR(fft(x, 0), InvalidArgument, "fft");
  EXPECT_WGT_ERROR(fft(x, -2), InvalidArgument, "fft");
  EXPECT_WGT_ERROR(fft(x, -1, 1), OutOfRange, "fft");
  EXPECT_WGT_ERROR(fft(full({}, 1.0)), RankMismatch, "fft");
  EXPECT_WGT_ERROR(irfft(cplx({1}, 701)), InvalidArgument, "irfft");  // 2 * (1 - 1) = 0 points
  EXPECT_WGT_ERROR(rfft(x), DTypeMismatch, "rfft");
  EXPECT_WGT_ERROR(fft(cast(full({3}, 1.0), DType::Bool)), DTypeMismatch, "fft");
  EXPECT_WGT_ERROR(fftn(x, {4, 4}, {0}), InvalidArgument, "fftn");
  EXPECT_WGT_ERROR(fftn(cplx({2, 2}, 702), {}, {0, -2}), InvalidArgument, "fftn");
  EXPECT_WGT_ERROR(fft(Tensor()), InvalidArgument, "fft");
}
