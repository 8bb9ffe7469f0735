// The host's double-precision radix-2 FFT, shared by the CPU reference FFT
// (src/cpu/reference/fft.cpp, the oracle) and the WebGPU launcher's Bluestein tables
// (src/webgpu/kernels/fft.cpp, the chirp's spectrum).
#pragma once
#include <complex>
#include <cstddef>
#include <numbers>
#include <utility>
#include <vector>

namespace wgt::fft_detail {

// In place, unnormalized, for a power-of-two a.size(): sign -1 forward (exp(-2 pi i jk/n)),
// +1 inverse. Iterative: bit-reversal permutation, then log2(n) levels of butterflies with
// each level's twiddles computed once.
inline void fft_pow2(std::vector<std::complex<double>>& a, int sign) {
  using cd = std::complex<double>;
  const size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t half = len / 2;
    std::vector<cd> tw(half);
    for (size_t k = 0; k < half; ++k)
      tw[k] = std::polar(1.0, sign * 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(len));
    for (size_t s = 0; s < n; s += len)
      for (size_t k = 0; k < half; ++k) {
        const cd u = a[s + k], v = a[s + k + half] * tw[k];
        a[s + k] = u + v;
        a[s + k + half] = u - v;
      }
  }
}

}  // namespace wgt::fft_detail
