// Batched sparse calls (a batch of CSR matrices sharing one pattern: values [batch, nnz]):
// the backends run each member as the single-matrix call, with the floating operands (values,
// dense operands) and the outputs viewed at the member's index of their leading dimension;
// the pattern (indptr, indices, bin rows) is shared. Contracts: src/sparse/sparse_ops.cpp.
#pragma once
#include <cstdint>

#include "wgt/backend.hpp"

namespace wgt::sparse_detail {

// Members of a batched sparse call; 0 for a single matrix (or a call of another kind).
int64_t call_batch(const OpCall& call);
// The single-matrix call of member b (views; shares the pattern inputs).
OpCall call_member(const OpCall& call, int64_t b);

// Runs fn on each member's call when `call` is batched (and says so); false otherwise.
template <class F>
bool for_each_member(const OpCall& call, F&& fn) {
  const int64_t n = call_batch(call);
  if (n == 0) return false;
  for (int64_t b = 0; b < n; ++b) {
    OpCall m = call_member(call, b);
    fn(m);
  }
  return true;
}

}  // namespace wgt::sparse_detail
