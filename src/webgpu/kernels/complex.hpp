// The complex64 family (registered by register_complex_kernels, context.hpp): every call that
// plans/complex_plan.hpp's is_complex_call() names goes to it instead of the per-kind kernels.
#pragma once
#include <string>

#include "webgpu/context.hpp"

namespace wgt::webgpu {
// Name of the plan run by this thread's latest c64 launch (e.g. "c64 mm3 64x64x8 4x4 a:k b:n"),
// empty before the first: tests and benchmarks check which variant ran.
const std::string& complex_last_plan();
}  // namespace wgt::webgpu
