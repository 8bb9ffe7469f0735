// The rope_append epilogue's conditions shared by the dense (matmul_gemv_vec) and quantized
// (q_mv_stream_sg) q/k/v projections of KVCache::rms_norm_qkv_append_rope: RoPE and the KV
// cache append run as the decode step's one q/k/v row is stored (matmul_epi_rope_append.wgsl).
#pragma once
#include <cstdint>
#include <string>

#include "wgt/backend.hpp"

namespace wgt::webgpu {

// Empty when the call's caches (inputs 2 and 3: contiguous f32 or f16 [C, Hkv, D] from offset
// 0, one shape and dtype, distinct from each other and from the output), its output (`rows`
// = 1 row of n_out = (H + 2 Hkv) D columns), n_rot (even, <= D) and cache row (pos_offset, in
// range and exact in f32) suit the epilogue; else the reason.
std::string check_rope_append(const OpCall& call, int64_t rows, int64_t n_out);

}  // namespace wgt::webgpu
