// y = x W^T on the CPU for a weight W stored in a narrower form (16-bit floats, GGUF blocks)
// that the caller widens to f32: the two schedules the 16-bit matmul_t (cpu/fast/matmul.cpp)
// and the quantized product (quant/qmatmul_fast.cpp) share. x is [M, K] (f32, rows
// contiguous), y is [M, N] (f32, rows N apart). Why not widen all of W and call sgemm: that
// writes an f32 copy of the weight at every call, fresh pages each time, for a product that
// reads each weight once when M is small.
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include <cblas.h>

#include "cpu/fast/parallel.hpp"
#include "cpu/fast/simd.hpp"

namespace wgt::cpu_fast {

// Values of a W row widened at a time by the row schedule (a multiple of every block size).
constexpr int64_t kWidenChunk = 256;

// Few rows of x: parallel over W's rows; each row is widened kWidenChunk values at a time
// into an L1 buffer by widen(n, e0, len, dst) (row n, elements e0 .. e0 + len - 1) and dotted
// with every row of x: chunk sums in f32, their total in f64, so long K stays accurate.
template <class Widen>
void gemm_t_by_rows(const float* x, int64_t M, int64_t K, int64_t N, float* y, Widen&& widen) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, K * M));
  parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
    alignas(32) float wb[kWidenChunk];
    std::vector<double> acc(static_cast<size_t>(M));
    for (int64_t n = n0; n < n1; ++n) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t e0 = 0; e0 < K; e0 += kWidenChunk) {
        const int64_t len = std::min(kWidenChunk, K - e0);
        widen(n, e0, len, wb);
        for (int64_t m = 0; m < M; ++m) acc[static_cast<size_t>(m)] += dot_row(wb, x + m * K + e0, len);
      }
      for (int64_t m = 0; m < M; ++m) y[m * N + n] = static_cast<float>(acc[static_cast<size_t>(m)]);
    }
  });
}

// Rows of W per panel of gemm_t_by_panels: about 8 MiB of f32, at least 16 rows.
inline int64_t widened_panel_rows(int64_t K) { return std::max<int64_t>(16, (int64_t{1} << 21) / std::max<int64_t>(1, K)); }

// Many rows of x: W is widened panel_rows rows at a time (widen_row(n, dst): row n, K values)
// and each panel is one sgemm into its columns of y, so BLAS reuses every widened weight
// across the rows of x from registers. M, N, K at most INT_MAX (the caller checks).
template <class WidenRow>
void gemm_t_by_panels(const float* x, int64_t M, int64_t K, int64_t N, float* y, int64_t panel_rows,
                      WidenRow&& widen_row) {
  const int64_t P = std::min(N, std::max<int64_t>(1, panel_rows));
  std::vector<float> panel(static_cast<size_t>(P * K));
  for (int64_t n0 = 0; n0 < N; n0 += P) {
    const int64_t p = std::min(P, N - n0);
    parallel_for(0, p, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, K)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) widen_row(n0 + r, panel.data() + r * K);
    });
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)p, (int)K, 1.0f, x, (int)K, panel.data(), (int)K,
                0.0f, y + n0, (int)N);
  }
}

}  // namespace wgt::cpu_fast
