// Internal CPU kernels of the quantized formats: row quantize/dequantize, and the reference
// and fast quantized matmuls. The public front-ends (qtensor.cpp) validate; these don't.
#pragma once
#include <cstdint>

#include "wgt/quant.hpp"

namespace wgt::quant {

// One row of `cols` elements (a multiple of the block size) <-> its packed blocks.
void quantize_row(QType t, const float* x, uint8_t* dst, int64_t cols);
void dequantize_row(QType t, const uint8_t* src, float* y, int64_t cols);

// Y[M, N] = X[M, K] W^T, W packed [N, K] with row stride w_row_bytes. X rows contiguous.
// Reference: dequantizes each W row to f32 and accumulates in double (the oracle).
void qmatmul_t_reference(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w,
                         size_t w_row_bytes, int64_t N, float* y);
// Fast: below kQGemmMinRows rows of X, parallel over W rows, each block expanded once to f32
// and dotted with every row of X; from it on, sgemm on panels of W expanded to f32
// (qmatmul_t_fast_panels with about 8 MiB panels).
void qmatmul_t_fast(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w,
                    size_t w_row_bytes, int64_t N, float* y);
// Rows of X from which qmatmul_t_fast runs on panels: measured on 2 cores (llama3.2-1b Q4_0,
// BENCHMARKS.md "CPU: language models"), the row loop wins at 32 rows, the panels from 64.
constexpr int64_t kQGemmMinRows = 64;
// The panel path with `panel_rows` rows of W per sgemm (exposed so that tests reach several
// panels on small shapes). M, N, K at most INT_MAX.
void qmatmul_t_fast_panels(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w, size_t w_row_bytes,
                           int64_t N, float* y, int64_t panel_rows);

}  // namespace wgt::quant
