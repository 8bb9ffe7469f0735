// Fast CPU kernels (threads, SIMD, BLAS). Returns false when no fast path covers the call;
// the fast backend then runs the reference kernel.
#pragma once
#include <cstdint>

#include "wgt/backend.hpp"

namespace wgt::cpu_fast {
bool try_execute(OpCall& call);
// Number of calls a fast kernel has run since start-up (process-wide). Tests use it to tell
// a fast-path result from a reference fallback.
uint64_t fast_path_hits();
}  // namespace wgt::cpu_fast
