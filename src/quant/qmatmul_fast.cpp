// Fast quantized matmul Y = X W^T: W stays packed; each block is decoded once into integer
// codes plus one affine pair (a_j, c_j) per sub-block, expanded to the block's f32 values in
// a small L1-resident buffer (w = a_j * q + c_j; the whole W is never materialized), and
// dotted with all M activation rows with AVX2 FMAs. Parallel over W rows (N), the long
// dimension of a weight.
#include <algorithm>
#include <vector>

#include "cpu/fast/parallel.hpp"
#include "cpu/fast/simd.hpp"
#include "quant/blocks.hpp"
#include "quant/kernels.hpp"
#include "wgt/dtype.hpp"

namespace wgt::quant {
namespace {

// One decoded block: codes q[0..qk), sub-block size g, affine pairs a[j], c[j] (w = a*q + c).
struct Decoded {
  alignas(32) float q[kQK256];
  float a[kQK256 / 16], c[kQK256 / 16];  // Q6_K has the most sub-blocks: 16
  int g = 32, nsub = 1;
};

inline float h2f(uint16_t h) { return f16_to_f32(h); }

void decode(QType t, const uint8_t* p, Decoded& out) {
  switch (t) {
    case QType::Q8_0: {
      const auto& b = *reinterpret_cast<const BlockQ8_0*>(p);
      out.g = 32, out.nsub = 1, out.a[0] = h2f(b.d), out.c[0] = 0.f;
      for (int i = 0; i < 32; ++i) out.q[i] = b.qs[i];
      return;
    }
    case QType::Q4_0: {
      const auto& b = *reinterpret_cast<const BlockQ4_0*>(p);
      out.g = 32, out.nsub = 1, out.a[0] = h2f(b.d), out.c[0] = -8.f * out.a[0];
      for (int i = 0; i < 16; ++i) out.q[i] = b.qs[i] & 0x0F, out.q[i + 16] = b.qs[i] >> 4;
      return;
    }
    case QType::Q4_1: {
      const auto& b = *reinterpret_cast<const BlockQ4_1*>(p);
      out.g = 32, out.nsub = 1, out.a[0] = h2f(b.d), out.c[0] = h2f(b.m);
      for (int i = 0; i < 16; ++i) out.q[i] = b.qs[i] & 0x0F, out.q[i + 16] = b.qs[i] >> 4;
      return;
    }
    case QType::Q4_K:
    case QType::Q5_K: {
      // Q4_K and Q5_K share d, dmin and scales at the same offsets; Q5_K adds qh.
      const bool five = t == QType::Q5_K;
      const auto& b4 = *reinterpret_cast<const BlockQ4_K*>(p);
      const auto& b5 = *reinterpret_cast<const BlockQ5_K*>(p);
      const uint8_t* qs = five ? b5.qs : b4.qs;
      const float d = h2f(b4.d), dmin = h2f(b4.dmin);
      out.g = 32, out.nsub = 8;
      for (int j = 0; j < 8; ++j) {
        uint8_t sc, mn;
        unpack_scale_min_k(b4.scales, j, sc, mn);
        out.a[j] = d * sc, out.c[j] = -dmin * mn;
      }
      for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
          int lo = qs[32 * c + l] & 0x0F, hi = qs[32 * c + l] >> 4;
          if (five) lo |= ((b5.qh[l] >> (2 * c)) & 1) << 4, hi |= ((b5.qh[l] >> (2 * c + 1)) & 1) << 4;
          out.q[64 * c + l] = static_cast<float>(lo), out.q[64 * c + 32 + l] = static_cast<float>(hi);
        }
      return;
    }
    case QType::Q6_K: {
      const auto& b = *reinterpret_cast<const BlockQ6_K*>(p);
      const float d = h2f(b.d);
      out.g = 16, out.nsub = 16;
      for (int j = 0; j < 16; ++j) out.a[j] = d * b.scales[j], out.c[j] = 0.f;
      for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
          const uint8_t ql0 = b.ql[64 * h + l], ql1 = b.ql[64 * h + 32 + l], qh = b.qh[32 * h + l];
          float* q = out.q + 128 * h + l;
          q[0] = static_cast<float>(((ql0 & 0x0F) | ((qh & 3) << 4)) - 32);
          q[32] = static_cast<float>(((ql1 & 0x0F) | (((qh >> 2) & 3) << 4)) - 32);
          q[64] = static_cast<float>(((ql0 >> 4) | (((qh >> 4) & 3) << 4)) - 32);
          q[96] = static_cast<float>(((ql1 >> 4) | (((qh >> 6) & 3) << 4)) - 32);
        }
      return;
    }
  }
}

// Dot product of n floats, n a multiple of 32. Several accumulators: a single running sum
// would serialize on the FMA latency (and the compiler may not reassociate it).
inline float dot(const float* a, const float* b, int64_t n) {
#ifdef WGT_FAST_AVX2
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_hadd_ps(h, h);
  h = _mm_hadd_ps(h, h);
  return _mm_cvtss_f32(h);
#else
  float acc[8] = {};
  for (int64_t i = 0; i < n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
#endif
}

}  // namespace

void qmatmul_t_fast(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w,
                    size_t w_row_bytes, int64_t N, float* y) {
  const QTypeInfo& info = qtype_info(t);
  const int64_t qk = info.block_elems;
  const int64_t work_per_row = std::max<int64_t>(1, K * M);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / work_per_row);
  cpu_fast::parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
    Decoded dec;
    alignas(32) float wb[kQK256];  // the current block's values
    std::vector<double> acc(static_cast<size_t>(M));
    for (int64_t n = n0; n < n1; ++n) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const uint8_t* row = w + static_cast<size_t>(n) * w_row_bytes;
      // 256 values at a time (8 blocks of the 32-element formats): long enough dot products
      // to amortize their horizontal sums.
      for (int64_t e0 = 0; e0 < K; e0 += kQK256) {
        const int64_t len = std::min<int64_t>(kQK256, K - e0);
        for (int64_t bi = e0 / qk; bi < (e0 + len) / qk; ++bi) {
          decode(t, row + static_cast<size_t>(bi) * info.block_bytes, dec);
          float* dst = wb + (bi * qk - e0);
          for (int j = 0; j < dec.nsub; ++j) {
            const float a = dec.a[j], c = dec.c[j];
            for (int l = 0; l < dec.g; ++l) dst[j * dec.g + l] = a * dec.q[j * dec.g + l] + c;
          }
        }
        // per-chunk partial sums accumulate in double: long K stays accurate
        for (int64_t m = 0; m < M; ++m) acc[static_cast<size_t>(m)] += dot(wb, x + m * K + e0, len);
      }
      for (int64_t m = 0; m < M; ++m) y[m * N + n] = static_cast<float>(acc[static_cast<size_t>(m)]);
    }
  });
}

}  // namespace wgt::quant
