// Discrete Fourier transforms with NumPy's numpy.fft semantics. docs/algebra.md.
// Complex results are c64; real inputs (f32, f16, bf16, f64) are converted to f32 / c64
// first. `n` (-1: the input's length along the axis) zero-pads or truncates the input, as
// NumPy does. Norm modes (scale of the forward / inverse transform):
//   Backward: 1 / (1/n)   Ortho: 1/sqrt(n) / 1/sqrt(n)   Forward: 1/n / 1
// irfft reads the first n/2+1 entries and ignores the imaginary parts of the zero (and, for
// even n, the n/2) frequency, as the Hermitian input it assumes has them real.
#pragma once
#include <vector>

#include "wgt/tensor.hpp"

namespace wgt {

enum class FftNorm : uint8_t { Backward, Ortho, Forward };

Tensor fft(const Tensor& x, int64_t n = -1, int64_t axis = -1, FftNorm norm = FftNorm::Backward);
Tensor ifft(const Tensor& x, int64_t n = -1, int64_t axis = -1, FftNorm norm = FftNorm::Backward);
// Real input, the n/2+1 non-negative frequencies.
Tensor rfft(const Tensor& x, int64_t n = -1, int64_t axis = -1, FftNorm norm = FftNorm::Backward);
// Hermitian input, real (f32) output of length n (default 2 * (m - 1) for m input entries).
Tensor irfft(const Tensor& x, int64_t n = -1, int64_t axis = -1, FftNorm norm = FftNorm::Backward);

// Over several axes (empty `axes`: all of them), one 1-D transform per axis; `s` (empty: the
// input's sizes) gives the lengths per axis as `n` does. rfftn transforms the last listed
// axis real-to-complex and the others complex; irfftn the reverse.
Tensor fftn(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& axes = {},
            FftNorm norm = FftNorm::Backward);
Tensor ifftn(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& axes = {},
             FftNorm norm = FftNorm::Backward);
Tensor rfftn(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& axes = {},
             FftNorm norm = FftNorm::Backward);
Tensor irfftn(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& axes = {},
              FftNorm norm = FftNorm::Backward);
inline Tensor fft2(const Tensor& x, FftNorm norm = FftNorm::Backward) { return fftn(x, {}, {-2, -1}, norm); }
inline Tensor ifft2(const Tensor& x, FftNorm norm = FftNorm::Backward) { return ifftn(x, {}, {-2, -1}, norm); }

}  // namespace wgt
