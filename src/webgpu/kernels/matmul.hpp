// Introspection of the WebGPU matmul launcher (kernels/matmul.cpp), for benchmarks and tests.
//
// Environment overrides read at every launch (so one process can sweep variants):
//   WGT_MATMUL_TILE = BMxBNxBKxTMxTN   tiled kernel shape, e.g. 128x128x8x8x8 (default: by size)
//   WGT_MATMUL_GEMV = WGxKS | off      small-M kernel: invocations x K-splitters, or never use it
//   WGT_MATMUL_ACC  = f32 | f16        accumulate type of f16 matmuls (default f32; f16 is faster
//                                      on CUDA cores but loses precision over long K)
#pragma once
#include <string>

namespace wgt::webgpu {
// Name of the variant chosen by the most recent matmul launch on this thread, e.g.
// "tiled 128x128x8 8x8 acc=f32 nn" or "gemv 256x64 kfast"; empty before the first launch.
const std::string& matmul_last_variant();
}  // namespace wgt::webgpu
