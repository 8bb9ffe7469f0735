// Vector helpers shared by the fast kernels: f16/bf16 <-> f32 row conversion and a vectorized
// expf. AVX2/F16C intrinsics are used only when the compiler targets them (CMake passes
// -mavx2 -mfma -mf16c for this folder); every helper has a portable scalar path.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define WGT_FAST_AVX2 1
#endif
#if defined(__F16C__)
#include <immintrin.h>
#define WGT_FAST_F16C 1
#endif

#include "wgt/dtype.hpp"

namespace wgt::cpu_fast {

// ---- 16-bit float rows (RNE, like wgt::f32_to_f16 / f32_to_bf16) ----
inline void f16_to_f32_row(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#ifdef WGT_FAST_F16C
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; ++i) dst[i] = f16_to_f32(src[i]);
}
inline void f32_to_f16_row(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
#ifdef WGT_FAST_F16C
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; ++i) dst[i] = f32_to_f16(src[i]);
}
inline void bf16_to_f32_row(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(src[i]);
}
inline void f32_to_bf16_row(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_bf16(src[i]);
}
// Converts n elements of a 16-bit float dtype (F16 or BF16) to f32 and back.
inline void half_to_f32_row(DType t, const void* src, float* dst, int64_t n) {
  if (t == DType::F16) f16_to_f32_row(static_cast<const uint16_t*>(src), dst, n);
  else bf16_to_f32_row(static_cast<const uint16_t*>(src), dst, n);
}
inline void f32_to_half_row(DType t, const float* src, void* dst, int64_t n) {
  if (t == DType::F16) f32_to_f16_row(src, static_cast<uint16_t*>(dst), n);
  else f32_to_bf16_row(src, static_cast<uint16_t*>(dst), n);
}
inline bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

// ---- exp ----
#ifdef WGT_FAST_AVX2
// expf for 8 lanes: x = n*ln2 + r with |r| <= ln2/2 (ln2 split in two parts for an exact
// product), e^r by a degree-6 minimax-style polynomial, 2^n built in the exponent bits.
// Max relative error about 2 ulp on the normal range; overflow -> +inf, underflow -> 0,
// NaN -> NaN. Results below FLT_MIN are flushed to 0 (softmax terms that small do not
// change a sum of at least 1).
inline __m256 exp256(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.7228394f), lo = _mm256_set1_ps(-87.3365479f);
  const __m256 nan_mask = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  __m256 xc = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  // e^r = 1 + r + r^2 * P(r)
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  __m256 r2 = _mm256_mul_ps(r, r);
  __m256 y = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // n is in [-126, 128]; build 2^n in two halves so n = 128 does not overflow the exponent field.
  __m256i ni = _mm256_cvtps_epi32(n);
  __m256i n1 = _mm256_srai_epi32(ni, 1);
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
  __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
  y = _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
  y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), over);
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(), under);
  return _mm256_blendv_ps(y, x, nan_mask);
}
#endif

#ifdef WGT_FAST_AVX2
// The sum of the 8 lanes.
inline float hsum256(__m256 s) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_hadd_ps(h, h);
  h = _mm_hadd_ps(h, h);
  return _mm_cvtss_f32(h);
}
#endif

// Dot product of n floats in f32. Four accumulators: a single running sum would serialize on
// the FMA latency (and the compiler may not reassociate it).
inline float dot_row(const float* a, const float* b, int64_t n) {
  int64_t i = 0;
  float tail = 0.f;
#ifdef WGT_FAST_AVX2
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  tail = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
#else
  float acc[8] = {};
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
  tail = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
#endif
  for (; i < n; ++i) tail += a[i] * b[i];
  return tail;
}

// dst[i] = exp(src[i]) for n floats (dst may alias src).
inline void exp_row(const float* src, float* dst, int64_t n) {
  int64_t i = 0;
#ifdef WGT_FAST_AVX2
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, exp256(_mm256_loadu_ps(src + i)));
#endif
  for (; i < n; ++i) dst[i] = std::exp(src[i]);
}

// dst[i] = exp(src[i] - shift); returns the sum of dst accumulated in double per 8-lane
// block (the terms are in [0, 1] for softmax, so f32 lanes plus a double total are enough).
inline double exp_shift_sum_row(const float* src, float shift, float* dst, int64_t n) {
  int64_t i = 0;
  double total = 0.0;
#ifdef WGT_FAST_AVX2
  const __m256 vs = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int blk = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(src + i), vs));
    _mm256_storeu_ps(dst + i, e);
    acc = _mm256_add_ps(acc, e);
    if (++blk == 128) {  // flush to double every 1024 terms to bound f32 rounding growth
      alignas(32) float t[8];
      _mm256_store_ps(t, acc);
      for (float v : t) total += v;
      acc = _mm256_setzero_ps();
      blk = 0;
    }
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, acc);
  for (float v : t) total += v;
#endif
  for (; i < n; ++i) {
    dst[i] = std::exp(src[i] - shift);
    total += dst[i];
  }
  return total;
}

}  // namespace wgt::cpu_fast
