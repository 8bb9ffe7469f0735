// The sparse CSR kernels (registered by register_sparse_kernels, context.hpp).
#pragma once
#include <string>

namespace wgt::webgpu {
// Name of the SpMM/SpMV plan run by this thread's latest launch (SpmmPlan::name, e.g.
// "adaptive G70 F"), empty before the first: tests and benchmarks check which kernel ran.
const std::string& spmm_last_plan();
}  // namespace wgt::webgpu
