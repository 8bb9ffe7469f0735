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
// Fast: parallel over W rows; each block is decoded once to small integers and dotted with
// all M activation rows, with scales/mins factored out of the inner loop.
void qmatmul_t_fast(QType t, const float* x, int64_t M, int64_t K, const uint8_t* w,
                    size_t w_row_bytes, int64_t N, float* y);

}  // namespace wgt::quant
