// Front-ends of the FFTs (wgt/fft.hpp): input conversion, zero-padding or truncation to the
// transform length, the norm scale, and one Fft call per transformed axis.
// Contract with the backends (OpKind::Fft): inputs = {x}, attrs.axis normalized,
// attrs.fft_n = n >= 1 the transform length, attrs.scalar0 the scale applied to the result.
//   Forward / Inverse: x c64 with n entries along the axis (exp(-2 pi i jk/n) / exp(+...)),
//                      output c64 of x's shape.
//   RealForward:       x f32 with n entries, output c64 with n/2+1 entries (the
//                      non-negative frequencies).
//   RealInverse:       x c64 with n/2+1 entries (imaginary parts of entry 0 and, n even, of
//                      entry n/2 ignored), output f32 with n entries: the real inverse of the
//                      Hermitian spectrum those entries define.
// Output contiguous; x may be any strided view.
#include <cmath>

#include "ops/op_common.hpp"
#include "wgt/fft.hpp"
#include "wgt/ops.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

using Kind = OpAttrs::FftKind;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Forward: return "fft";
    case Kind::Inverse: return "ifft";
    case Kind::RealForward: return "rfft";
    case Kind::RealInverse: return "irfft";
  }
  return "fft";
}

// x along `axis` cut to, or zero-padded at the end to, n entries.
Tensor resize_axis(const Tensor& x, int axis, int64_t n) {
  const int64_t m = x.shape()[axis];
  if (m == n) return x;
  if (m > n) return x.slice(axis, 0, n);
  Shape pad = x.shape();
  pad[axis] = n - m;
  return concat({x, zeros(pad, x.dtype(), x.device())}, axis);
}

Tensor as_complex(const Tensor& x, const char* name) {
  if (x.dtype() == DType::Bool)
    throw_error(ErrorKind::DTypeMismatch, name, "is not defined for bool tensors; cast() to f32 or c64");
  return x.dtype() == DType::C64 ? x : cast(x, DType::C64);
}

Tensor as_real(const Tensor& x, const char* name) {
  if (x.dtype() == DType::C64)
    throw_error(ErrorKind::DTypeMismatch, name, "takes real input, got c64; use fft() for complex input");
  if (x.dtype() == DType::Bool)
    throw_error(ErrorKind::DTypeMismatch, name, "is not defined for bool tensors; cast() to f32");
  return x.dtype() == DType::F32 ? x : cast(x, DType::F32);
}

double norm_scale(FftNorm norm, int64_t n, bool inverse) {
  switch (norm) {
    case FftNorm::Backward: return inverse ? 1.0 / static_cast<double>(n) : 1.0;
    case FftNorm::Ortho: return 1.0 / std::sqrt(static_cast<double>(n));
    case FftNorm::Forward: return inverse ? 1.0 : 1.0 / static_cast<double>(n);
  }
  return 1.0;
}

Tensor fft_1d(const Tensor& x_in, int64_t n, int64_t axis_in, FftNorm norm, Kind kind) {
  const char* name = kind_name(kind);
  require_defined(x_in, name);
  if (x_in.dim() == 0)
    throw_error(ErrorKind::RankMismatch, name, "needs an input of rank >= 1, got a 0-d tensor");
  const int axis = normalize_axis(axis_in, x_in.dim(), name);
  const int64_t m = x_in.shape()[axis];
  if (n == -1) n = kind == Kind::RealInverse ? 2 * (m - 1) : m;
  if (n < 1)
    throw_error(ErrorKind::InvalidArgument, name,
                "the transform length must be >= 1, got " + std::to_string(n) +
                    (n == 0 || kind == Kind::RealInverse ? " (from an axis of " + std::to_string(m) + " entries); pass n" : ""));
  const bool real_in = kind == Kind::RealForward;
  Tensor x = real_in ? as_real(x_in, name) : as_complex(x_in, name);
  x = resize_axis(x, axis, kind == Kind::RealInverse ? n / 2 + 1 : n);
  Shape out = x.shape();
  out[axis] = kind == Kind::RealForward ? n / 2 + 1 : n;
  validate_shape(out, name);
  const bool inverse = kind == Kind::Inverse || kind == Kind::RealInverse;
  OpCall call{OpKind::Fft, name, {x}, {}, {}};
  call.attrs.axis = axis;
  call.attrs.fft_kind = kind;
  call.attrs.fft_n = n;
  call.attrs.scalar0 = norm_scale(norm, n, inverse);
  const double lines = numel_d(out) / static_cast<double>(out[axis] ? out[axis] : 1);
  call.work = 5.0 * lines * static_cast<double>(n) * std::max(1.0, std::log2(static_cast<double>(n)));
  return Runtime::get().run1(call, {out, kind == Kind::RealInverse ? DType::F32 : DType::C64}, x_in.device());
}

// Axes (normalized, distinct) and lengths of an n-dimensional transform.
void nd_args(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& axes_in, const char* name,
             std::vector<int>& axes, std::vector<int64_t>& lens) {
  require_defined(x, name);
  std::vector<bool> seen(x.dim(), false);
  if (axes_in.empty())
    for (int d = 0; d < x.dim(); ++d) axes.push_back(d);
  for (int64_t a : axes_in) {
    const int d = normalize_axis(a, x.dim(), name);
    if (seen[d])
      throw_error(ErrorKind::InvalidArgument, name, "axis " + std::to_string(d) + " is listed twice; list each axis once");
    seen[d] = true;
    axes.push_back(d);
  }
  if (axes.empty()) throw_error(ErrorKind::RankMismatch, name, "needs an input of rank >= 1, got a 0-d tensor");
  if (!s.empty() && s.size() != axes.size())
    throw_error(ErrorKind::InvalidArgument, name,
                "s has " + std::to_string(s.size()) + " lengths for " + std::to_string(axes.size()) + " axes");
  lens = s.empty() ? std::vector<int64_t>(axes.size(), -1) : s;
}

}  // namespace

Tensor fft(const Tensor& x, int64_t n, int64_t axis, FftNorm norm) { return fft_1d(x, n, axis, norm, Kind::Forward); }
Tensor ifft(const Tensor& x, int64_t n, int64_t axis, FftNorm norm) { return fft_1d(x, n, axis, norm, Kind::Inverse); }
Tensor rfft(const Tensor& x, int64_t n, int64_t axis, FftNorm norm) { return fft_1d(x, n, axis, norm, Kind::RealForward); }
Tensor irfft(const Tensor& x, int64_t n, int64_t axis, FftNorm norm) { return fft_1d(x, n, axis, norm, Kind::RealInverse); }

namespace {
// fftn / ifftn: the 1-D transform along each axis, last axis first (any order gives the same
// result; this one matches NumPy's loop).
template <class OneAxis>
Tensor complex_nd(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& axes_in, FftNorm norm,
                  const char* name, OneAxis one_axis) {
  std::vector<int> axes;
  std::vector<int64_t> lens;
  nd_args(x, s, axes_in, name, axes, lens);
  Tensor r = x;
  for (size_t i = axes.size(); i-- > 0;) r = one_axis(r, lens[i], axes[i], norm);
  return r;
}
}  // namespace

Tensor fftn(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& axes_in, FftNorm norm) {
  return complex_nd(x, s, axes_in, norm, "fftn", fft);
}

Tensor ifftn(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& axes_in, FftNorm norm) {
  return complex_nd(x, s, axes_in, norm, "ifftn", ifft);
}

Tensor rfftn(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& axes_in, FftNorm norm) {
  std::vector<int> axes;
  std::vector<int64_t> lens;
  nd_args(x, s, axes_in, "rfftn", axes, lens);
  Tensor r = rfft(x, lens.back(), axes.back(), norm);
  for (size_t i = axes.size() - 1; i-- > 0;) r = fft(r, lens[i], axes[i], norm);
  return r;
}

Tensor irfftn(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& axes_in, FftNorm norm) {
  std::vector<int> axes;
  std::vector<int64_t> lens;
  nd_args(x, s, axes_in, "irfftn", axes, lens);
  Tensor r = x;
  for (size_t i = 0; i + 1 < axes.size(); ++i) r = ifft(r, lens[i], axes[i], norm);
  return irfft(r, lens.back(), axes.back(), norm);
}

}  // namespace wgt
