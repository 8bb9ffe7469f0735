// The complex64 family's entry points for the backend (webgpu_backend.cpp): every call that
// plans/complex_plan.hpp's is_complex_call() names goes here instead of the per-kind kernels.
#pragma once
#include <string>

#include "webgpu/context.hpp"

namespace wgt::webgpu {
// The plan's answer (the reject reason when the family cannot run the call).
Support complex_supports(const Context& ctx, const OpCall& call);
// Encodes the planned kernels (throws Unsupported with the reason when the plan rejects).
void complex_execute(Context& ctx, OpCall& call);
// Name of the plan run by this thread's latest c64 launch (e.g. "c64 mm3 64x64x8 4x4 a:k b:n"),
// empty before the first: tests and benchmarks check which variant ran.
const std::string& complex_last_plan();
}  // namespace wgt::webgpu
