// Generated CSR test matrices with fixed seeds (tests, bench/bench_webgpu_sparse.cpp): the
// shapes of issue 21's conformance and performance sets. Built directly in CSR form on the
// host (sorted, no duplicates), values uniform in [-1, 1).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wgt/sparse.hpp"

namespace wgt::sparse_gen {

struct HostCsr {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> indptr, indices;
  std::vector<float> values;
};

HostCsr empty_rows(int64_t rows, int64_t cols);                // no stored entry
HostCsr diagonal(int64_t n, uint64_t seed);
HostCsr banded(int64_t n, int64_t half_width, uint64_t seed);  // |i - j| <= half_width
HostCsr laplacian_2d(int64_t side);                            // 5-point stencil, side^2 rows
HostCsr uniform(int64_t rows, int64_t cols, int64_t per_row, uint64_t seed);  // per_row distinct cols
// Rows empty with probability p_empty, else uniform of per_row entries; row `dense_row`
// (if >= 0) holds every column.
HostCsr mixed(int64_t rows, int64_t cols, int64_t per_row, double p_empty, int64_t dense_row, uint64_t seed);
// R-MAT power-law graph (a, b, c = 0.57, 0.19, 0.19): 2^scale vertices, avg_degree * 2^scale
// edges before duplicates are merged.
HostCsr rmat(int scale, int64_t avg_degree, uint64_t seed);

// As a CsrTensor with `index` i32/i64 and `values` f32/f16/bf16/f64, on the host.
CsrTensor to_csr(const HostCsr& h, DType index = DType::I64, DType values = DType::F32);

}  // namespace wgt::sparse_gen
