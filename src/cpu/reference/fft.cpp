// Reference FFT (OpKind::Fft, contract in src/fft/fft_ops.cpp) in double precision: an
// iterative radix-2 transform for powers of two and Bluestein's chirp-z algorithm (through a
// power-of-two convolution) for every other length, so any length costs O(n log n) and the
// error stays near double rounding. Lines are read through the input's strides.
#include <cmath>
#include <complex>
#include <numbers>

#include "cpu/reference/families.hpp"
#include "cpu/reference/ref_common.hpp"
#include "fft/radix2.hpp"

namespace wgt::cpu_ref {

namespace {

using cd = std::complex<double>;
using Kind = OpAttrs::FftKind;
using fft_detail::fft_pow2;

bool is_pow2(size_t n) { return n && !(n & (n - 1)); }

// Any length: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}) with w_k = exp(sign i pi k^2 / n), the
// sum a circular convolution of power-of-two length >= 2n - 1.
void dft(std::vector<cd>& a, int sign) {
  const size_t n = a.size();
  if (n <= 1) return;
  if (is_pow2(n)) return fft_pow2(a, sign);
  size_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  std::vector<cd> w(n), A(m), B(m);
  for (size_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle small, so it stays exact for large k.
    const double q = static_cast<double>((static_cast<unsigned __int128>(k) * k) % (2 * n));
    w[k] = std::polar(1.0, sign * std::numbers::pi * q / static_cast<double>(n));
  }
  for (size_t k = 0; k < n; ++k) A[k] = a[k] * w[k];
  B[0] = std::conj(w[0]);
  for (size_t k = 1; k < n; ++k) B[k] = B[m - k] = std::conj(w[k]);
  fft_pow2(A, -1);
  fft_pow2(B, -1);
  for (size_t k = 0; k < m; ++k) A[k] *= B[k];
  fft_pow2(A, +1);
  for (size_t k = 0; k < n; ++k) a[k] = w[k] * A[k] / static_cast<double>(m);
}

}  // namespace

void run_fft(OpCall& call) {
  const Tensor& x = call.inputs[0];
  Tensor& out = call.outputs[0];
  const int axis = static_cast<int>(call.attrs.axis);
  const Kind kind = call.attrs.fft_kind;
  const size_t n = static_cast<size_t>(call.attrs.fft_n);
  const double scale = call.attrs.scalar0;
  const int sign = (kind == Kind::Inverse || kind == Kind::RealInverse) ? +1 : -1;
  const Split sx = split_axes(x, {axis});
  const Strides ost = contiguous_strides(out.shape());
  const Split so = split_axes(Tensor(out.storage(), out.shape(), ost, 0, out.dtype()), {axis});
  const int64_t in_len = x.shape()[axis], out_len = out.shape()[axis];
  const int64_t xs = x.strides()[axis], os = ost[axis];
  const uint8_t* xb = base_of(x);
  uint8_t* ob = mut_base_of(out);
  std::vector<cd> line(n);
  walk<2>(sx.outer_shape, {sx.outer_strides.data(), so.outer_strides.data()}, {x.offset(), 0},
          [&](int64_t, const std::array<int64_t, 2>& o) {
    std::fill(line.begin(), line.end(), cd{});
    if (kind == Kind::RealInverse) {
      // The Hermitian spectrum of the n/2+1 entries: X[n-k] = conj(X[k]), real DC and Nyquist.
      for (int64_t k = 0; k < in_len; ++k) {
        cd v = load_cplx(xb, x.dtype(), o[0] + k * xs);
        if (k == 0 || (n % 2 == 0 && static_cast<size_t>(k) == n / 2)) v = cd(v.real(), 0.0);
        line[k] = v;
        if (k > 0) line[n - k] = std::conj(v);
      }
    } else {
      for (int64_t k = 0; k < in_len; ++k)
        line[k] = kind == Kind::RealForward ? cd(load_real(xb, x.dtype(), o[0] + k * xs), 0.0)
                                            : load_cplx(xb, x.dtype(), o[0] + k * xs);
    }
    dft(line, sign);
    for (int64_t k = 0; k < out_len; ++k) {
      const cd v = line[k] * scale;
      if (kind == Kind::RealInverse) store_real(ob, out.dtype(), o[1] + k * os, v.real());
      else store_cplx(ob, out.dtype(), o[1] + k * os, v);
    }
  });
}

}  // namespace wgt::cpu_ref
