// Reference CPU kernels: plain loops over strided inputs, computed in double (or exact
// integer) precision. These are the oracle every other backend is tested against.
#pragma once
#include "wgt/backend.hpp"

namespace wgt::cpu_ref {
Support supports(const OpCall& call);
void execute(OpCall& call);  // inputs are CPU tensors (any strides); outputs contiguous
}  // namespace wgt::cpu_ref
