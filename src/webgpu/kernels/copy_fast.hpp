// Fast path of the WebGPU Copy kernel (kernels/copy_fast.cpp): contiguous -> contiguous copies
// of 16-byte aligned ranges run as one vec4<u32> copy instead of the per-word strided kernel.
#pragma once
#include "webgpu/context.hpp"

namespace wgt::webgpu {
// Records the vec4 copy of x into out and returns true when both are contiguous with the same
// element count and dtype, start at 16-byte aligned byte offsets and span a multiple of 16
// bytes; returns false (recording nothing) otherwise, leaving the general kernel to run.
bool copy_contiguous_vec4(Context& ctx, const Tensor& x, const Tensor& out);
}  // namespace wgt::webgpu
