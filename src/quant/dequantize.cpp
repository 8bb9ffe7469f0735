// Dequantization of one packed row for every format: the bit-level definition of each
// layout (see blocks.hpp), used by dequantize(), get_rows() and the reference matmul.
#include <vector>

#include "quant/blocks.hpp"
#include "quant/kernels.hpp"
#include "wgt/dtype.hpp"

namespace wgt::quant {
namespace {

inline float h2f(uint16_t h) { return f16_to_f32(h); }

void deq_q8_0(const BlockQ8_0& b, float* y) {
  const float d = h2f(b.d);
  for (uint32_t i = 0; i < kQK32; ++i) y[i] = d * static_cast<float>(b.qs[i]);
}
void deq_q4_0(const BlockQ4_0& b, float* y) {
  const float d = h2f(b.d);
  for (uint32_t i = 0; i < kQK32 / 2; ++i) {
    y[i] = d * static_cast<float>((b.qs[i] & 0x0F) - 8);
    y[i + kQK32 / 2] = d * static_cast<float>((b.qs[i] >> 4) - 8);
  }
}
void deq_q4_1(const BlockQ4_1& b, float* y) {
  const float d = h2f(b.d), m = h2f(b.m);
  for (uint32_t i = 0; i < kQK32 / 2; ++i) {
    y[i] = d * static_cast<float>(b.qs[i] & 0x0F) + m;
    y[i + kQK32 / 2] = d * static_cast<float>(b.qs[i] >> 4) + m;
  }
}
// Q5_0 / Q5_1: codes from q5_codes (blocks.hpp).
void deq_q5_0(const BlockQ5_0& b, float* y) {
  const float d = h2f(b.d);
  int q[kQK32];
  q5_codes(b, q);
  for (uint32_t i = 0; i < kQK32; ++i) y[i] = d * static_cast<float>(q[i] - static_cast<int>(kQ5_0Zero));
}
void deq_q5_1(const BlockQ5_1& b, float* y) {
  const float d = h2f(b.d), m = h2f(b.m);
  int q[kQK32];
  q5_codes(b, q);
  for (uint32_t i = 0; i < kQK32; ++i) y[i] = d * static_cast<float>(q[i]) + m;
}
void deq_q4_k(const BlockQ4_K& b, float* y) {
  const float d = h2f(b.d), dmin = h2f(b.dmin);
  for (int c = 0; c < 4; ++c) {  // 64 elements = sub-blocks 2c (low nibbles), 2c+1 (high)
    uint8_t sc0, mn0, sc1, mn1;
    unpack_scale_min_k(b.scales, 2 * c, sc0, mn0);
    unpack_scale_min_k(b.scales, 2 * c + 1, sc1, mn1);
    const float d0 = d * sc0, m0 = dmin * mn0, d1 = d * sc1, m1 = dmin * mn1;
    const uint8_t* q = b.qs + 32 * c;
    for (int l = 0; l < 32; ++l) {
      y[64 * c + l] = d0 * static_cast<float>(q[l] & 0x0F) - m0;
      y[64 * c + 32 + l] = d1 * static_cast<float>(q[l] >> 4) - m1;
    }
  }
}
void deq_q5_k(const BlockQ5_K& b, float* y) {
  const float d = h2f(b.d), dmin = h2f(b.dmin);
  for (int c = 0; c < 4; ++c) {
    uint8_t sc0, mn0, sc1, mn1;
    unpack_scale_min_k(b.scales, 2 * c, sc0, mn0);
    unpack_scale_min_k(b.scales, 2 * c + 1, sc1, mn1);
    const float d0 = d * sc0, m0 = dmin * mn0, d1 = d * sc1, m1 = dmin * mn1;
    const uint8_t* q = b.qs + 32 * c;
    for (int l = 0; l < 32; ++l) {
      const int lo = (q[l] & 0x0F) | (((b.qh[l] >> (2 * c)) & 1) << 4);
      const int hi = (q[l] >> 4) | (((b.qh[l] >> (2 * c + 1)) & 1) << 4);
      y[64 * c + l] = d0 * static_cast<float>(lo) - m0;
      y[64 * c + 32 + l] = d1 * static_cast<float>(hi) - m1;
    }
  }
}
void deq_q6_k(const BlockQ6_K& b, float* y) {
  const float d = h2f(b.d);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    float* yh = y + 128 * h;
    for (int l = 0; l < 32; ++l) {
      const int q0 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q1 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      // element e uses the scale of its 16-element sub-block, e / 16
      yh[l] = d * b.scales[8 * h + (l >> 4)] * static_cast<float>(q0);
      yh[l + 32] = d * b.scales[8 * h + 2 + (l >> 4)] * static_cast<float>(q1);
      yh[l + 64] = d * b.scales[8 * h + 4 + (l >> 4)] * static_cast<float>(q2);
      yh[l + 96] = d * b.scales[8 * h + 6 + (l >> 4)] * static_cast<float>(q3);
    }
  }
}

template <QType T, typename F>
void deq_row(const uint8_t* src, float* y, int64_t cols, F f) {
  using B = typename BlockOf<T>::type;
  const int64_t nb = cols / BlockOf<T>::qk;
  const B* blocks = reinterpret_cast<const B*>(src);
  for (int64_t i = 0; i < nb; ++i) f(blocks[i], y + i * BlockOf<T>::qk);
}

}  // namespace

void dequantize_row(QType t, const uint8_t* src, float* y, int64_t cols) {
  switch (t) {
    case QType::Q8_0: return deq_row<QType::Q8_0>(src, y, cols, deq_q8_0);
    case QType::Q4_0: return deq_row<QType::Q4_0>(src, y, cols, deq_q4_0);
    case QType::Q4_1: return deq_row<QType::Q4_1>(src, y, cols, deq_q4_1);
    case QType::Q5_0: return deq_row<QType::Q5_0>(src, y, cols, deq_q5_0);
    case QType::Q5_1: return deq_row<QType::Q5_1>(src, y, cols, deq_q5_1);
    case QType::Q4_K: return deq_row<QType::Q4_K>(src, y, cols, deq_q4_k);
    case QType::Q5_K: return deq_row<QType::Q5_K>(src, y, cols, deq_q5_k);
    case QType::Q6_K: return deq_row<QType::Q6_K>(src, y, cols, deq_q6_k);
  }
}

}  // namespace wgt::quant

namespace wgt::quant {

void qmatmul_t_reference(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w,
                         size_t w_row_bytes, int64_t N, float* y) {
  std::vector<float> wrow(static_cast<size_t>(K));
  for (int64_t n = 0; n < N; ++n) {
    dequantize_row(t, w + static_cast<size_t>(n) * w_row_bytes, wrow.data(), K);
    for (int64_t m = 0; m < M; ++m) {
      const float* xm = x + m * K;
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(xm[k]) * wrow[static_cast<size_t>(k)];
      y[m * N + n] = static_cast<float>(acc);
    }
  }
}

}  // namespace wgt::quant
