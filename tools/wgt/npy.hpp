// NumPy .npy (format 1.0) output of f32 arrays.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace wgt::cli {

// Writes `data` (row-major, shape `shape`) as little-endian f32; wgt::Error{IO} on failure.
void write_npy_f32(const std::string& path, const float* data, const std::vector<int64_t>& shape);

}  // namespace wgt::cli
