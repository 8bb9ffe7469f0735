// Fast concat (OpKind::Concat) of contiguous inputs into a contiguous output: per index of the
// dims before the axis, each input's slab (its extent along the axis times the dims after it)
// is one memcpy, in parallel over those indices. Why: the reference copies element by element
// through a strided walk, and a model's load concatenates its q/k/v and gate/up weights
// (hundreds of MiB) with it.
#include <cstring>

#include "cpu/fast/kernels.hpp"

namespace wgt::cpu_fast {

bool try_concat(OpCall& call) {
  Tensor& out = call.outputs[0];
  if (!out.is_contiguous()) return false;
  for (const Tensor& x : call.inputs)
    if ((x.numel() && !x.is_contiguous()) || x.dtype() != out.dtype()) return false;  // an empty input copies nothing
  const int64_t ax = call.attrs.axis;
  const size_t es = dtype_size(out.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < ax; ++d) outer *= out.shape()[d];
  for (int64_t d = ax + 1; d < out.dim(); ++d) inner *= out.shape()[d];
  const size_t out_row = static_cast<size_t>(out.shape()[ax] * inner) * es;  // bytes per outer index
  if (out.numel() == 0) return true;
  uint8_t* ob = static_cast<uint8_t*>(out.data_ptr());
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>((size_t{1} << 20) / std::max<size_t>(out_row, 1)));
  parallel_for(0, outer, grain, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      size_t at = static_cast<size_t>(o) * out_row;
      for (const Tensor& x : call.inputs) {
        const size_t slab = static_cast<size_t>(x.shape()[ax] * inner) * es;
        if (slab) std::memcpy(ob + at, static_cast<const uint8_t*>(x.data_ptr()) + static_cast<size_t>(o) * slab, slab);
        at += slab;
      }
    }
  });
  return true;
}

}  // namespace wgt::cpu_fast
