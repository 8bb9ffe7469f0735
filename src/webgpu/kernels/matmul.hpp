// Introspection of the WebGPU matmul launcher (kernels/matmul.cpp), for benchmarks and tests.
//
// Tuning (webgpu/plans/tuning.hpp: taken from these variables once per settings snapshot, so a
// process sweeping variants calls settings_reload() after each change; or set in C++ with
// set_kernel_tuning_override):
//   WGT_MATMUL_TILE = BMxBNxBKxTMxTN   tiled kernel shape, e.g. 128x128x8x8x8 (default: by size)
//   WGT_MATMUL_GEMV = WGxKS | off      small-M kernel: invocations x K-splitters, or never use it
//   WGT_MATMUL_GEMV_VEC = WGxKS[xRB] | off  small-M kernel for K-contiguous B (x @ W^T) that
//                                      loads B 8 elements at a time where B's offset and row
//                                      stride are multiples of 8, RB rows of B per invocation
//                                      (default 256x32x2; off: the scalar gemv)
// Mixed precision: A f32 with B f16 gives an f32 output (B converted exactly), on every kernel.
//   WGT_MATMUL_SUBGROUPS = on | off    subgroupAdd reductions in the vector gemv where the device
//                                      has subgroups (default on)
//   WGT_MATMUL_ACC  = f32 | f16        accumulate type of native-f16 matmuls (default f32; f16 is
//                                      faster on CUDA cores but loses precision over long K)
//   WGT_MATMUL_VEC  = on | off         vec4 global loads/stores where the layout allows (default on;
//                                      off also turns off WGT_MATMUL_GEMV_VEC's kernel)
//   WGT_MATMUL_F16  = auto | native | packed   f16 storage: native `f16` (needs shader-f16) or two
//                                      halves per u32 with unpack2x16float / pack2x16float and f32
//                                      math (core WGSL). auto: native when the adapter has it.
#pragma once
#include <string>

namespace wgt::webgpu {
// Name of the plan run by the most recent matmul launch on this thread (MatmulPlan::name(),
// built when asked), e.g.
// "tiled 128x128x8 8x8 acc=f32 a:k b:n a:v4 b:v4 o:v4", "gemv 256x64 kfast" or "gemv_vec 256x32 m1 sg"
// (" f16p" appended for packed f16); empty before the first launch.
const std::string& matmul_last_variant();
}  // namespace wgt::webgpu
