// Fast quantized matmul Y = X W^T: W stays packed; each block is decoded once into small
// integer codes (as floats) plus one affine pair (a_j, c_j) per sub-block, so that
//   sum_l w_l x_l = sum_j a_j * dot(q_j, x_j) + c_j * sum(x_j),
// and is then reused for all M activation rows while it sits in L1. Sub-block sums of x are
// computed once per call. Parallel over W rows (N), the long dimension of a weight.
#include <algorithm>
#include <vector>

#include "cpu/fast/parallel.hpp"
#include "quant/blocks.hpp"
#include "quant/kernels.hpp"
#include "wgt/dtype.hpp"

namespace wgt::quant {
namespace {

constexpr int kG = 16;  // finest sub-block (Q6_K); coarser formats use 2 or more of these

// One decoded block: codes q[0..qk), sub-block size g, affine pairs a[j], c[j].
struct Decoded {
  alignas(32) float q[kQK256];
  float a[kQK256 / kG], c[kQK256 / kG];
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

inline float dot(const float* a, const float* b, int n) {
  float s = 0.f;
#pragma GCC unroll 4
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

void qmatmul_t_fast(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w,
                    size_t w_row_bytes, int64_t N, float* y) {
  const QTypeInfo& info = qtype_info(t);
  const int64_t qk = info.block_elems, nblocks = K / qk, ng = K / kG;
  // xs[m][i] = sum of x[m][16i .. 16i+15]: the c_j terms need only these sums.
  std::vector<float> xs(static_cast<size_t>(M * ng));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t i = 0; i < ng; ++i) {
      float s = 0.f;
      for (int l = 0; l < kG; ++l) s += x[m * K + i * kG + l];
      xs[static_cast<size_t>(m * ng + i)] = s;
    }
  const int64_t work_per_row = std::max<int64_t>(1, K * M);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / work_per_row);
  cpu_fast::parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
    Decoded dec;
    std::vector<double> acc(static_cast<size_t>(M));
    for (int64_t n = n0; n < n1; ++n) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const uint8_t* row = w + static_cast<size_t>(n) * w_row_bytes;
      for (int64_t bi = 0; bi < nblocks; ++bi) {
        decode(t, row + static_cast<size_t>(bi) * info.block_bytes, dec);
        const int per = dec.g / kG;  // 16-sums per sub-block
        for (int64_t m = 0; m < M; ++m) {
          const float* xb = x + m * K + bi * qk;
          const float* xsb = xs.data() + m * ng + bi * (qk / kG);
          float s = 0.f;
          for (int j = 0; j < dec.nsub; ++j) {
            float sum_x = xsb[j * per];
            if (per == 2) sum_x += xsb[j * per + 1];
            s += dec.a[j] * dot(dec.q + j * dec.g, xb + j * dec.g, dec.g) + dec.c[j] * sum_x;
          }
          acc[static_cast<size_t>(m)] += s;  // per-block partials in double: long K stays accurate
        }
      }
      for (int64_t m = 0; m < M; ++m) y[m * N + n] = static_cast<float>(acc[static_cast<size_t>(m)]);
    }
  });
}

}  // namespace wgt::quant
