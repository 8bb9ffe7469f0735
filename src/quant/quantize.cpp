// Quantization of one row for every format (round to nearest). The legacy formats use the
// closed-form scale of their definition; the K-quants fit a scale (and min) per sub-block by
// a small grid of starting scales refined with least squares, then quantize the sub-block
// scales to 6/8 bits and refit the two fp16 super-block scales. Our own search: it aims
// at the error level of ggml's quantizer, not at its exact bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "quant/blocks.hpp"
#include "quant/kernels.hpp"
#include "wgt/dtype.hpp"

namespace wgt::quant {
namespace {

inline float rt16(float v) { return f16_to_f32(f32_to_f16(v)); }
inline int clampi(long v, int lo, int hi) { return static_cast<int>(std::min<long>(std::max<long>(v, lo), hi)); }
inline int rnd(float v) { return static_cast<int>(std::lrintf(v)); }

// Value of largest magnitude, sign kept (symmetric formats map it to the most negative code,
// which uses the full asymmetric code range [-2^(b-1), 2^(b-1)-1]).
float signed_absmax(const float* x, int n) {
  float best = 0.f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(best)) best = x[i];
  return best;
}

void quant_q8_0(const float* x, BlockQ8_0& b) {
  float amax = 0.f;
  for (uint32_t i = 0; i < kQK32; ++i) amax = std::max(amax, std::fabs(x[i]));
  b.d = f32_to_f16(amax / 127.f);
  const float d = f16_to_f32(b.d), id = d > 0.f ? 1.f / d : 0.f;  // quantize with the stored d
  for (uint32_t i = 0; i < kQK32; ++i) b.qs[i] = static_cast<int8_t>(clampi(rnd(x[i] * id), -127, 127));
}

// The legacy symmetric formats (Q4_0, Q5_0): the value of largest magnitude maps to code 0
// (d = v / -zero), codes round(x / d) + zero in [0, 2 zero - 1], with the fp16-rounded d.
void symmetric_codes(const float* x, int zero, uint16_t& d16, int q[kQK32]) {
  d16 = f32_to_f16(signed_absmax(x, kQK32) / static_cast<float>(-zero));
  const float d = f16_to_f32(d16), id = d != 0.f ? 1.f / d : 0.f;
  for (uint32_t i = 0; i < kQK32; ++i) q[i] = clampi(rnd(x[i] * id) + zero, 0, 2 * zero - 1);
}

// The legacy affine formats (Q4_1, Q5_1): d = (max - min) / nmax and m = min, both stored as
// fp16, codes round((x - m) / d) in [0, nmax] computed with the stored values.
void affine_codes(const float* x, int nmax, uint16_t& d16, uint16_t& m16, int q[kQK32]) {
  float mn = x[0], mx = x[0];
  for (uint32_t i = 1; i < kQK32; ++i) mn = std::min(mn, x[i]), mx = std::max(mx, x[i]);
  d16 = f32_to_f16((mx - mn) / static_cast<float>(nmax));
  m16 = f32_to_f16(mn);
  const float d = f16_to_f32(d16), m = f16_to_f32(m16), id = d > 0.f ? 1.f / d : 0.f;
  for (uint32_t i = 0; i < kQK32; ++i) q[i] = clampi(rnd((x[i] - m) * id), 0, nmax);
}

// Low 4 bits of the codes in Q4_0's nibble order: element i in the low nibble of qs[i], element
// i + 16 in the high nibble.
void pack_nibbles(const int q[kQK32], uint8_t qs[kQK32 / 2]) {
  for (uint32_t i = 0; i < kQK32 / 2; ++i) qs[i] = static_cast<uint8_t>((q[i] & 0x0F) | ((q[i + kQK32 / 2] & 0x0F) << 4));
}

// Q5_0 / Q5_1: the nibbles, and bit 4 of code j as bit j of the qh word (little-endian).
template <class B>
void pack_q5(const int q[kQK32], B& b) {
  pack_nibbles(q, b.qs);
  uint32_t h = 0;
  for (uint32_t i = 0; i < kQK32; ++i) h |= static_cast<uint32_t>(q[i] >> 4) << i;
  for (int k = 0; k < 4; ++k) b.qh[k] = static_cast<uint8_t>(h >> (8 * k));
}

void quant_q4_0(const float* x, BlockQ4_0& b) {
  int q[kQK32];
  symmetric_codes(x, static_cast<int>(kQ4_0Zero), b.d, q);
  pack_nibbles(q, b.qs);
}

void quant_q4_1(const float* x, BlockQ4_1& b) {
  int q[kQK32];
  affine_codes(x, 15, b.d, b.m, q);
  pack_nibbles(q, b.qs);
}

void quant_q5_0(const float* x, BlockQ5_0& b) {
  int q[kQK32];
  symmetric_codes(x, static_cast<int>(kQ5_0Zero), b.d, q);
  pack_q5(q, b);
}

void quant_q5_1(const float* x, BlockQ5_1& b) {
  int q[kQK32];
  affine_codes(x, 31, b.d, b.m, q);
  pack_q5(q, b);
}

// Fits x ~ s*q - m with q in [0, nmax], s >= 0, m >= 0 (offsets are subtractive only).
void fit_scale_min(const float* x, int n, int nmax, float& s_out, float& m_out) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  lo = std::min(lo, 0.f);
  s_out = 0.f;
  m_out = -lo;
  if (hi <= lo) return;
  double best_err = std::numeric_limits<double>::infinity();
  for (int t = -5; t <= 5; ++t) {  // starting scales around the plain (max - min) / nmax
    float s = (hi - lo) / (static_cast<float>(nmax) + 0.1f * t), b = lo;
    for (int iter = 0; iter < 3; ++iter) {
      double sq = 0, sx = 0, sqq = 0, sqx = 0;
      const float is = 1.f / s;
      for (int i = 0; i < n; ++i) {
        const double q = clampi(rnd((x[i] - b) * is), 0, nmax);
        sq += q, sx += x[i], sqq += q * q, sqx += q * x[i];
      }
      const double det = n * sqq - sq * sq;
      if (det <= 0) break;
      double ns = (n * sqx - sq * sx) / det, nb = (sx - ns * sq) / n;
      if (nb > 0) nb = 0, ns = sqx / sqq;  // the format cannot add a positive offset
      if (!(ns > 0)) break;
      s = static_cast<float>(ns), b = static_cast<float>(nb);
    }
    double err = 0;
    const float is = 1.f / s;
    for (int i = 0; i < n; ++i) {
      const float q = static_cast<float>(clampi(rnd((x[i] - b) * is), 0, nmax));
      const double e = s * q + b - x[i];
      err += e * e;
    }
    if (err < best_err) best_err = err, s_out = s, m_out = -b;
  }
}

// Shared by Q4_K (nmax 15) and Q5_K (nmax 31): produces d, dmin, 6-bit sc/mn and codes q.
struct KQuantized {
  uint16_t d, dmin;
  uint8_t sc[8], mn[8];
  uint8_t q[kQK256];
};

double kq_codes(const float* x, int nmax, float d, float dmin, const uint8_t* sc, const uint8_t* mn, uint8_t* q) {
  double err = 0;
  for (int j = 0; j < 8; ++j) {
    const float ds = d * sc[j], dm = dmin * mn[j], id = ds > 0.f ? 1.f / ds : 0.f;
    for (int l = 0; l < 32; ++l) {
      const float v = x[32 * j + l];
      const int c = clampi(rnd((v + dm) * id), 0, nmax);
      q[32 * j + l] = static_cast<uint8_t>(c);
      const double e = ds * c - dm - v;
      err += e * e;
    }
  }
  return err;
}

void quant_kq(const float* x, int nmax, KQuantized& out) {
  float s[8], m[8], smax = 0.f, mmax = 0.f;
  for (int j = 0; j < 8; ++j) {
    fit_scale_min(x + 32 * j, 32, nmax, s[j], m[j]);
    smax = std::max(smax, s[j]), mmax = std::max(mmax, m[j]);
  }
  out.d = f32_to_f16(smax / 63.f);
  out.dmin = f32_to_f16(mmax / 63.f);
  float d = f16_to_f32(out.d), dmin = f16_to_f32(out.dmin);
  for (int j = 0; j < 8; ++j) {
    out.sc[j] = static_cast<uint8_t>(d > 0.f ? clampi(rnd(s[j] / d), 0, 63) : 0);
    out.mn[j] = static_cast<uint8_t>(dmin > 0.f ? clampi(rnd(m[j] / dmin), 0, 63) : 0);
  }
  double err = kq_codes(x, nmax, d, dmin, out.sc, out.mn, out.q);
  // Refit the two super-block scales by least squares on y = d*(sc*q) - dmin*mn with the
  // integer parts fixed: recovers part of the error of rounding the scales to 6 bits.
  double aa = 0, ab = 0, bb = 0, ax = 0, bx = 0;
  for (int i = 0; i < 256; ++i) {
    const double a = static_cast<double>(out.sc[i / 32]) * out.q[i], bcoef = -static_cast<double>(out.mn[i / 32]);
    aa += a * a, ab += a * bcoef, bb += bcoef * bcoef, ax += a * x[i], bx += bcoef * x[i];
  }
  const double det = aa * bb - ab * ab;
  if (det > 0) {
    const float nd = static_cast<float>((ax * bb - bx * ab) / det), ndm = static_cast<float>((aa * bx - ab * ax) / det);
    if (nd > 0 && ndm >= 0) {
      KQuantized trial = out;
      trial.d = f32_to_f16(nd);
      trial.dmin = f32_to_f16(ndm);
      const double e2 = kq_codes(x, nmax, f16_to_f32(trial.d), f16_to_f32(trial.dmin), trial.sc, trial.mn, trial.q);
      if (e2 < err) out = trial;
    }
  }
}

void quant_q4_k(const float* x, BlockQ4_K& b) {
  KQuantized k;
  quant_kq(x, 15, k);
  b.d = k.d, b.dmin = k.dmin;
  pack_scales_mins_k(k.sc, k.mn, b.scales);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) b.qs[32 * c + l] = static_cast<uint8_t>(k.q[64 * c + l] | (k.q[64 * c + 32 + l] << 4));
}

void quant_q5_k(const float* x, BlockQ5_K& b) {
  KQuantized k;
  quant_kq(x, 31, k);
  b.d = k.d, b.dmin = k.dmin;
  pack_scales_mins_k(k.sc, k.mn, b.scales);
  std::memset(b.qh, 0, sizeof b.qh);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      const uint8_t lo = k.q[64 * c + l], hi = k.q[64 * c + 32 + l];
      b.qs[32 * c + l] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
      b.qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
    }
}

// Fits x ~ s*q with q in [-32, 31] (s may be negative: the largest magnitude maps to -32).
float fit_scale_sym6(const float* x, int n) {
  const float v = signed_absmax(x, n);
  if (v == 0.f) return 0.f;
  float best_s = v / -32.f;
  double best_err = std::numeric_limits<double>::infinity();
  for (int t = -4; t <= 4; ++t) {
    float s = v / -(32.f + 0.1f * t);
    for (int iter = 0; iter < 2; ++iter) {
      double sqx = 0, sqq = 0;
      for (int i = 0; i < n; ++i) {
        const double q = clampi(rnd(x[i] / s), -32, 31);
        sqx += q * x[i], sqq += q * q;
      }
      if (sqq <= 0) break;
      s = static_cast<float>(sqx / sqq);
    }
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const double e = s * clampi(rnd(x[i] / s), -32, 31) - x[i];
      err += e * e;
    }
    if (err < best_err) best_err = err, best_s = s;
  }
  return best_s;
}

double q6_codes(const float* x, float d, const int8_t* sc, int8_t* q) {
  double err = 0;
  for (int j = 0; j < 16; ++j) {
    const float ds = d * sc[j], id = ds != 0.f ? 1.f / ds : 0.f;
    for (int l = 0; l < 16; ++l) {
      const int c = clampi(rnd(x[16 * j + l] * id), -32, 31);
      q[16 * j + l] = static_cast<int8_t>(c);
      const double e = ds * c - x[16 * j + l];
      err += e * e;
    }
  }
  return err;
}

void quant_q6_k(const float* x, BlockQ6_K& b) {
  float s[16], amax = 0.f;
  for (int j = 0; j < 16; ++j) s[j] = fit_scale_sym6(x + 16 * j, 16), amax = std::max(amax, std::fabs(s[j]));
  uint16_t dh = f32_to_f16(amax / 127.f);
  float d = f16_to_f32(dh);
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(d > 0.f ? clampi(rnd(s[j] / d), -127, 127) : 0);
  int8_t q[kQK256];
  double err = q6_codes(x, d, b.scales, q);
  // Refit d by least squares with the integer scales and codes fixed (as for Q4_K).
  double sxx = 0, sax = 0;
  for (int i = 0; i < 256; ++i) {
    const double a = static_cast<double>(b.scales[i / 16]) * q[i];
    sxx += a * a, sax += a * x[i];
  }
  if (sxx > 0) {
    const uint16_t dh2 = f32_to_f16(static_cast<float>(sax / sxx));
    int8_t q2[kQK256];
    const double e2 = f16_to_f32(dh2) > 0.f ? q6_codes(x, f16_to_f32(dh2), b.scales, q2) : err;
    if (e2 < err) dh = dh2, std::memcpy(q, q2, sizeof q);
  }
  b.d = dh;
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int base = 128 * h + l;
      const int u0 = q[base] + 32, u1 = q[base + 32] + 32, u2 = q[base + 64] + 32, u3 = q[base + 96] + 32;
      b.ql[64 * h + l] = static_cast<uint8_t>((u0 & 0x0F) | ((u2 & 0x0F) << 4));
      b.ql[64 * h + 32 + l] = static_cast<uint8_t>((u1 & 0x0F) | ((u3 & 0x0F) << 4));
      b.qh[32 * h + l] = static_cast<uint8_t>((u0 >> 4) | ((u1 >> 4) << 2) | ((u2 >> 4) << 4) | ((u3 >> 4) << 6));
    }
}

template <QType T, typename F>
void quant_row(const float* x, uint8_t* dst, int64_t cols, F f) {
  using B = typename BlockOf<T>::type;
  B* blocks = reinterpret_cast<B*>(dst);
  for (int64_t i = 0; i < cols / BlockOf<T>::qk; ++i) f(x + i * BlockOf<T>::qk, blocks[i]);
}

}  // namespace

void quantize_row(QType t, const float* x, uint8_t* dst, int64_t cols) {
  switch (t) {
    case QType::Q8_0: return quant_row<QType::Q8_0>(x, dst, cols, quant_q8_0);
    case QType::Q4_0: return quant_row<QType::Q4_0>(x, dst, cols, quant_q4_0);
    case QType::Q4_1: return quant_row<QType::Q4_1>(x, dst, cols, quant_q4_1);
    case QType::Q4_K: return quant_row<QType::Q4_K>(x, dst, cols, quant_q4_k);
    case QType::Q5_K: return quant_row<QType::Q5_K>(x, dst, cols, quant_q5_k);
    case QType::Q5_0: return quant_row<QType::Q5_0>(x, dst, cols, quant_q5_0);
    case QType::Q5_1: return quant_row<QType::Q5_1>(x, dst, cols, quant_q5_1);
    case QType::Q6_K: return quant_row<QType::Q6_K>(x, dst, cols, quant_q6_k);
  }
}

}  // namespace wgt::quant
