// Member calls of batched sparse calls (see sparse_batch.hpp).
#include "sparse/sparse_batch.hpp"

namespace wgt::sparse_detail {

int64_t call_batch(const OpCall& call) {
  auto lead = [&](size_t i, int dims) {
    return call.inputs.size() > i && call.inputs[i].dim() == dims ? call.inputs[i].size(0) : 0;
  };
  switch (call.kind) {
    case OpKind::SpMM:
    case OpKind::SpAddDense: return lead(2, 2);  // values [batch, nnz]
    case OpKind::SDDMM: return lead(2, 3);       // x [batch, rows, k]
    case OpKind::SpRowReduce:
    case OpKind::SpSoftmax: return lead(1, 2);
    default: return 0;
  }
}

OpCall call_member(const OpCall& call, int64_t b) {
  OpCall m = call;
  for (Tensor& t : m.inputs)
    if (is_floating(t.dtype())) t = t.select(0, b);
  for (Tensor& t : m.outputs) t = t.select(0, b);
  for (auto& spec : m.out_specs)
    if (!spec.first.empty()) spec.first.erase(spec.first.begin());
  const double n = static_cast<double>(call_batch(call));
  m.work = call.work / (n > 0 ? n : 1.0);
  return m;
}

}  // namespace wgt::sparse_detail
