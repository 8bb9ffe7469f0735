// Elementwise launchers other kernel families reuse.
#pragma once
#include <cstdint>
#include <vector>

#include "webgpu/context.hpp"

namespace wgt::webgpu {
// dst = cast(src) on the device; src may be any strided view, dst contiguous (any offset).
// Handles packed f16 (no shader-f16 needed) and bf16.
void cast_on_device(Context& ctx, const Tensor& src, const Tensor& dst);

// Output shape + per-input strides broadcast to it, with size-1 dims dropped and dims that
// are contiguous in every input merged (fewer divisions per element in the shader).
struct EwLayout {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides;
};
EwLayout ew_collapse(const Shape& out, const std::vector<const Tensor*>& ins);

// The collapsed layout into an elementwise kernel's params (the real kernels' and the
// complex64 ones', ew_offset.wgsl): rank, shape, and each input's element offset and strides.
template <class Params>
void set_ew_layout(Params& p, const Shape& out, const std::vector<const Tensor*>& ins) {
  const EwLayout l = ew_collapse(out, ins);
  p.rank = static_cast<uint32_t>(l.shape.size());
  for (size_t d = 0; d < l.shape.size(); ++d) p.shape[d] = static_cast<uint32_t>(l.shape[d]);
  for (size_t k = 0; k < ins.size(); ++k) {
    p.off[k] = static_cast<uint32_t>(ins[k]->offset());
    for (size_t d = 0; d < l.shape.size(); ++d) p.strides[k][d] = static_cast<uint32_t>(l.strides[k][d]);
  }
}
}  // namespace wgt::webgpu
