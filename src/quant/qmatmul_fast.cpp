// Fast quantized matmul Y = X W^T: W stays packed; each block is decoded once into integer
// codes plus one affine pair (a_j, c_j) per sub-block, expanded to the block's f32 values in
// a small L1-resident buffer (w = a_j * q + c_j; the whole W is never materialized), and
// dotted with all M activation rows with AVX2 FMAs. Parallel over W rows (N), the long
// dimension of a weight.
#include <algorithm>
#include <climits>
#include <type_traits>

#include "cpu/fast/parallel.hpp"
#include "cpu/fast/simd.hpp"
#include "cpu/fast/widened_gemm.hpp"
#include "quant/blocks.hpp"
#include "quant/kernels.hpp"
#include "wgt/dtype.hpp"

namespace wgt::quant {
namespace {

inline float h2f(uint16_t h) {
#ifdef WGT_FAST_F16C
  return _cvtsh_ss(h);
#else
  return f16_to_f32(h);
#endif
}

// The fields of a Q4_K or Q5_K block (same offsets for what they share; qh only in Q5_K).
struct KBlock {
  const uint8_t* qs;
  const uint8_t* qh;  // nullptr for Q4_K
  const uint8_t* scales;
  float d, dmin;
};
inline KBlock k_block(QType t, const uint8_t* p) {
  const auto& b4 = *reinterpret_cast<const BlockQ4_K*>(p);
  const auto& b5 = *reinterpret_cast<const BlockQ5_K*>(p);
  const bool five = t == QType::Q5_K;
  return {five ? b5.qs : b4.qs, five ? b5.qh : nullptr, b4.scales, h2f(b4.d), h2f(b4.dmin)};
}

#ifndef WGT_FAST_AVX2
// One decoded block: codes q[0..qk), sub-block size g, affine pairs a[j], c[j] (w = a*q + c).
struct Decoded {
  alignas(32) float q[kQK256];
  float a[kQK256 / 16], c[kQK256 / 16];  // Q6_K has the most sub-blocks: 16
  int g = 32, nsub = 1;
};

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
    case QType::Q5_0:
    case QType::Q5_1: {
      // Q5_0's zero point is -16 d, Q5_1's the stored m; bit i of qh is bit 4 of code i.
      const bool one = t == QType::Q5_1;
      const auto& b0 = *reinterpret_cast<const BlockQ5_0*>(p);
      const auto& b1 = *reinterpret_cast<const BlockQ5_1*>(p);
      int q[kQK32];
      if (one) q5_codes(b1, q);
      else q5_codes(b0, q);
      out.g = 32, out.nsub = 1, out.a[0] = h2f(b0.d), out.c[0] = one ? h2f(b1.m) : -16.f * out.a[0];
      for (uint32_t i = 0; i < kQK32; ++i) out.q[i] = static_cast<float>(q[i]);
      return;
    }
    case QType::Q4_K:
    case QType::Q5_K: {
      const KBlock b = k_block(t, p);
      out.g = 32, out.nsub = 8;
      for (int j = 0; j < 8; ++j) {
        uint8_t sc, mn;
        unpack_scale_min_k(b.scales, j, sc, mn);
        out.a[j] = b.d * sc, out.c[j] = -b.dmin * mn;
      }
      for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
          int lo = b.qs[32 * c + l] & 0x0F, hi = b.qs[32 * c + l] >> 4;
          if (b.qh) lo |= ((b.qh[l] >> (2 * c)) & 1) << 4, hi |= ((b.qh[l] >> (2 * c + 1)) & 1) << 4;
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

#endif  // !WGT_FAST_AVX2

#ifdef WGT_FAST_AVX2
// ---- AVX2 block expansion: the block's values as f32, 8 at a time ----
// The scalar decode above converts and stores one code at a time, and then loops again for
// the affine step; at decode (M = 1) that was most of the product's time, for a kernel that
// should be bound by reading W. Here codes are split and widened 8 per instruction and the
// affine step is one FMA: w = a * q + c (for Q4_0, c = -8a exactly, so the FMA's one rounding
// gives d * (q - 8) as the reference does).

// Where a block's values go, 16 at a time (two vectors of 8, element i and i + 8 of the
// block's place in the 256-value chunk): stored to the chunk buffer (any M), or, for one row of
// x, multiplied straight into two running sums (no store and reload of the values).
struct StoreSink {
  float* dst;
  void put16(int64_t i, __m256 v0, __m256 v1) {
    _mm256_storeu_ps(dst + i, v0);
    _mm256_storeu_ps(dst + i + 8, v1);
  }
};
struct DotSink {
  const float* x;  // x at the chunk's first element
  __m256 s0, s1;
  void put16(int64_t i, __m256 v0, __m256 v1) {
    s0 = _mm256_fmadd_ps(v0, _mm256_loadu_ps(x + i), s0);
    s1 = _mm256_fmadd_ps(v1, _mm256_loadu_ps(x + i + 8), s1);
  }
};

// 8 codes (the low 8 bytes of `b`, unsigned or signed) -> a * q + c.
inline __m256 widen8u(__m128i b, __m256 a, __m256 c) {
  return _mm256_fmadd_ps(a, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), c);
}
inline __m256 widen8s(__m128i b, __m256 a) { return _mm256_mul_ps(a, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b))); }
// 16 codes of one 128-bit register with one affine pair, to element i of the sink.
template <class Sink>
inline void put16u(Sink& k, int64_t i, __m128i b, float a, float c) {
  const __m256 va = _mm256_set1_ps(a), vc = _mm256_set1_ps(c);
  k.put16(i, widen8u(b, va, vc), widen8u(_mm_srli_si128(b, 8), va, vc));
}
template <class Sink>
inline void put16s(Sink& k, int64_t i, __m128i b, float a) {
  const __m256 va = _mm256_set1_ps(a);
  k.put16(i, widen8s(b, va), widen8s(_mm_srli_si128(b, 8), va));
}

// Hands the qk values of the block at p to the sink as its elements at0 .. at0 + qk - 1 (a
// template: the format's case is chosen once per call, and the small blocks of the 32-element
// formats inline into the row loop).
template <QType t, class Sink>
inline void expand(const uint8_t* p, Sink& k, int64_t at0) {
  const __m128i m4 = _mm_set1_epi8(0x0F);
  const __m256i m4y = _mm256_set1_epi8(0x0F);
  switch (t) {
    case QType::Q8_0: {
      const auto& b = *reinterpret_cast<const BlockQ8_0*>(p);
      const float d = h2f(b.d);
      put16s(k, at0, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)), d);
      put16s(k, at0 + 16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16)), d);
      return;
    }
    case QType::Q4_0:
    case QType::Q4_1: {
      // Same nibble order; Q4_0's zero point is -8 d, Q4_1's the stored m.
      const bool one = t == QType::Q4_1;
      const auto& b0 = *reinterpret_cast<const BlockQ4_0*>(p);
      const auto& b1 = *reinterpret_cast<const BlockQ4_1*>(p);
      const float d = h2f(b0.d), c = one ? h2f(b1.m) : -8.f * d;
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(one ? b1.qs : b0.qs));
      put16u(k, at0, _mm_and_si128(raw, m4), d, c);
      put16u(k, at0 + 16, _mm_and_si128(_mm_srli_epi16(raw, 4), m4), d, c);
      return;
    }
    case QType::Q5_0:
    case QType::Q5_1: {
      // Q4_0 / Q4_1's nibbles plus a fifth bit: bit i of the qh word is bit 4 of code i. Each
      // byte lane picks the qh byte holding its bit (a shuffle), tests its bit (an and and a
      // compare with the lane's one-bit mask) and contributes 16 where it is set.
      const bool one = t == QType::Q5_1;
      const auto& b0 = *reinterpret_cast<const BlockQ5_0*>(p);
      const auto& b1 = *reinterpret_cast<const BlockQ5_1*>(p);
      const float d = h2f(b0.d), c = one ? h2f(b1.m) : -16.f * d;
      const __m128i hv = _mm_cvtsi32_si128(static_cast<int>(q5_high_bits(one ? b1.qh : b0.qh)));
      const __m128i bits = _mm_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
      const __m128i sixteen = _mm_set1_epi8(0x10);
      auto fifth = [&](int byte0) {  // 16 where bit (8 byte0 + lane) of h is set, lanes 0..15
        const __m128i sel = _mm_shuffle_epi8(hv, _mm_setr_epi8(byte0, byte0, byte0, byte0, byte0, byte0, byte0, byte0,
                                                              byte0 + 1, byte0 + 1, byte0 + 1, byte0 + 1, byte0 + 1,
                                                              byte0 + 1, byte0 + 1, byte0 + 1));
        return _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(sel, bits), bits), sixteen);
      };
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(one ? b1.qs : b0.qs));
      put16u(k, at0, _mm_or_si128(_mm_and_si128(raw, m4), fifth(0)), d, c);
      put16u(k, at0 + 16, _mm_or_si128(_mm_and_si128(_mm_srli_epi16(raw, 4), m4), fifth(2)), d, c);
      return;
    }
    case QType::Q4_K:
    case QType::Q5_K: {
      const KBlock kb = k_block(t, p);
      const bool five = kb.qh != nullptr;
      const uint8_t* qs = kb.qs;
      const float d = kb.d, dmin = kb.dmin;
      const __m256i qh = five ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kb.qh)) : _mm256_setzero_si256();
      const __m256i bit = _mm256_set1_epi8(1);
      for (int c = 0; c < 4; ++c) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
        __m256i lo = _mm256_and_si256(raw, m4y), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4y);
        if (five) {
          // bit 2c (2c + 1) of qh[l] is bit 4 of element 64c + l (64c + 32 + l); shifts of 16-bit
          // lanes are masked back to one bit per byte before moving it up within the byte.
          lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c)), bit), 4));
          hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c + 1)), bit), 4));
        }
        for (int h = 0; h < 2; ++h) {
          uint8_t sc, mn;
          unpack_scale_min_k(kb.scales, 2 * c + h, sc, mn);
          const __m256i v = h ? hi : lo;
          const float a = d * sc, cc = -dmin * mn;
          const int64_t at = at0 + 64 * c + 32 * h;
          put16u(k, at, _mm256_castsi256_si128(v), a, cc);
          put16u(k, at + 16, _mm256_extracti128_si256(v, 1), a, cc);
        }
      }
      return;
    }
    case QType::Q6_K: {
      const auto& b = *reinterpret_cast<const BlockQ6_K*>(p);
      const float d = h2f(b.d);
      const __m256i m3 = _mm256_set1_epi8(3), off = _mm256_set1_epi8(32);
      for (int h = 0; h < 2; ++h) {
        const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h));
        const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32));
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
        // Two high bits of element 128h + 32r + l are bits 2r, 2r+1 of qh[32h + l].
        auto high = [&](int r) {
          return _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * r)), m3), 4);
        };
        const __m256i q[4] = {_mm256_or_si256(_mm256_and_si256(l0, m4y), high(0)),
                              _mm256_or_si256(_mm256_and_si256(l1, m4y), high(1)),
                              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4y), high(2)),
                              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4y), high(3))};
        for (int r = 0; r < 4; ++r) {
          const __m256i v = _mm256_sub_epi8(q[r], off);  // q - 32, as signed bytes
          const int j = 8 * h + 2 * r;                   // sub-blocks of 16: j, then j + 1
          const int64_t at = at0 + 128 * h + 32 * r;
          put16s(k, at, _mm256_castsi256_si128(v), d * b.scales[j]);
          put16s(k, at + 16, _mm256_extracti128_si256(v, 1), d * b.scales[j + 1]);
        }
      }
      return;
    }
  }
}

template <QType t>
void expand_to(const uint8_t* p, float* dst) {
  StoreSink k{dst};
  expand<t>(p, k, 0);
}

// One row of x (decode): each 256-value chunk's blocks go straight into two running sums,
// reduced per chunk and accumulated in f64 as in the buffered path.
template <QType t>
float row_dot(const float* x, int64_t K, const uint8_t* row) {
  const QTypeInfo& info = qtype_info(t);
  const int64_t qk = info.block_elems;
  double acc = 0.0;
  for (int64_t e0 = 0; e0 < K; e0 += kQK256) {
    const int64_t len = std::min<int64_t>(kQK256, K - e0);
    DotSink k{x + e0, _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t bi = e0 / qk; bi < (e0 + len) / qk; ++bi)
      expand<t>(row + static_cast<size_t>(bi) * info.block_bytes, k, bi * qk - e0);
    acc += cpu_fast::hsum256(_mm256_add_ps(k.s0, k.s1));
  }
  return static_cast<float>(acc);
}
#else
// Writes the qk values of the block at p to dst (portable: decode, then the affine step).
template <QType t>
void expand_to(const uint8_t* p, float* dst) {
  Decoded dec;
  decode(t, p, dec);
  for (int j = 0; j < dec.nsub; ++j) {
    const float a = dec.a[j], c = dec.c[j];
    for (int l = 0; l < dec.g; ++l) dst[j * dec.g + l] = a * dec.q[j * dec.g + l] + c;
  }
}
#endif

// Calls f with the format as a compile-time constant (std::integral_constant<QType, t>), so
// that each format's expansion is a template instance chosen once per call.
template <class F>
void with_qtype(QType t, F&& f) {
  switch (t) {
    case QType::Q8_0: return f(std::integral_constant<QType, QType::Q8_0>{});
    case QType::Q4_0: return f(std::integral_constant<QType, QType::Q4_0>{});
    case QType::Q4_1: return f(std::integral_constant<QType, QType::Q4_1>{});
    case QType::Q4_K: return f(std::integral_constant<QType, QType::Q4_K>{});
    case QType::Q5_K: return f(std::integral_constant<QType, QType::Q5_K>{});
    case QType::Q5_0: return f(std::integral_constant<QType, QType::Q5_0>{});
    case QType::Q5_1: return f(std::integral_constant<QType, QType::Q5_1>{});
    case QType::Q6_K: return f(std::integral_constant<QType, QType::Q6_K>{});
  }
}

// Many rows of x (prompt processing): sgemm on panels of W expanded to f32
// (cpu_fast::gemm_t_by_panels). BLAS's register blocking reuses each expanded weight across
// the rows of x, where the row schedule dots every row with the chunk buffer in turn; the
// expansion of all of W per call is what it costs (hence the row threshold, kQGemmMinRows).
template <QType t>
void qmatmul_panels(const float* x, int64_t M, int64_t K, const uint8_t* w, size_t w_row_bytes, int64_t N, float* y,
                    int64_t panel_rows) {
  const QTypeInfo& info = qtype_info(t);
  const int64_t qk = info.block_elems, nb = K / qk;
  cpu_fast::gemm_t_by_panels(x, M, K, N, y, panel_rows, [&](int64_t n, float* dst) {
    const uint8_t* row = w + static_cast<size_t>(n) * w_row_bytes;
    for (int64_t bi = 0; bi < nb; ++bi) expand_to<t>(row + static_cast<size_t>(bi) * info.block_bytes, dst + bi * qk);
  });
}

template <QType t>
void qmatmul_rows(const float* x, int64_t M, int64_t K, const uint8_t* w, size_t w_row_bytes, int64_t N, float* y) {
  if (M >= kQGemmMinRows && M <= INT_MAX && N <= INT_MAX && K <= INT_MAX)
    return qmatmul_panels<t>(x, M, K, w, w_row_bytes, N, y, cpu_fast::widened_panel_rows(K));
  const QTypeInfo& info = qtype_info(t);
  const int64_t qk = info.block_elems;
#ifdef WGT_FAST_AVX2
  if (M == 1) {
    cpu_fast::parallel_for(0, N, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, K)),
                           [&](int64_t n0, int64_t n1) {
                             for (int64_t n = n0; n < n1; ++n) y[n] = row_dot<t>(x, K, w + static_cast<size_t>(n) * w_row_bytes);
                           });
    return;
  }
#endif
  // 256 values at a time (8 blocks of the 32-element formats): long enough dot products to
  // amortize their horizontal sums.
  static_assert(cpu_fast::kWidenChunk == kQK256, "a chunk holds whole blocks of every format");
  cpu_fast::gemm_t_by_rows(x, M, K, N, y, [&](int64_t n, int64_t e0, int64_t len, float* dst) {
    const uint8_t* row = w + static_cast<size_t>(n) * w_row_bytes;
    for (int64_t bi = e0 / qk; bi < (e0 + len) / qk; ++bi)
      expand_to<t>(row + static_cast<size_t>(bi) * info.block_bytes, dst + (bi * qk - e0));
  });
}

}  // namespace

void qmatmul_t_fast_panels(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w, size_t w_row_bytes,
                           int64_t N, float* y, int64_t panel_rows) {
  with_qtype(t, [&](auto q) { qmatmul_panels<q.value>(x, M, K, w, w_row_bytes, N, y, panel_rows); });
}

void qmatmul_t_fast(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w,
                    size_t w_row_bytes, int64_t N, float* y) {
  with_qtype(t, [&](auto q) { qmatmul_rows<q.value>(x, M, K, w, w_row_bytes, N, y); });
}

}  // namespace wgt::quant
