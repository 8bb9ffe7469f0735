// Fast CPU kernels (threads, SIMD, BLAS). Returns false when no fast path covers the call;
// the fast backend then runs the reference kernel.
#pragma once
#include "wgt/backend.hpp"

namespace wgt::cpu_fast {
bool try_execute(OpCall& call);
}  // namespace wgt::cpu_fast
