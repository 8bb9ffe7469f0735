// Elementwise launchers other kernel families reuse.
#pragma once
#include "webgpu/context.hpp"

namespace wgt::webgpu {
// dst = cast(src) on the device; src may be any strided view, dst contiguous (any offset).
// Handles packed f16 (no shader-f16 needed) and bf16.
void cast_on_device(Context& ctx, const Tensor& src, const Tensor& dst);
}  // namespace wgt::webgpu
