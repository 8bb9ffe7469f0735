// Fast-path dispatcher (kernels are added per op family in this folder).
#include "cpu/fast/fast.hpp"

namespace wgt::cpu_fast {
bool try_execute(OpCall& call) { return false; }
}  // namespace wgt::cpu_fast
