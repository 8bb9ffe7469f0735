// Host-side helpers of the CSR code: index arrays read back as int64 and made from them.
#pragma once
#include <cstdint>
#include <vector>

#include "wgt/tensor.hpp"

namespace wgt::sparse_detail {
// The elements of an i32/i64 tensor (any device, any strides) as int64.
std::vector<int64_t> host_ints(const Tensor& t);
// A 1-D index tensor of dtype `dt` (i32 or i64) on `d`.
Tensor index_tensor(const std::vector<int64_t>& v, DType dt, Device d);
}  // namespace wgt::sparse_detail
