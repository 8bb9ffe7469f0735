// CPU backends: "cpu-reference" (plain loops, the oracle) and "cpu-fast" (threads, SIMD, BLAS).
#pragma once
#include <memory>

#include "wgt/runtime.hpp"

namespace wgt {
std::unique_ptr<Backend> make_cpu_backend(CpuMode mode);
}
