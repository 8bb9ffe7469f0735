// The rope_append epilogue unfused (MatmulRoute / QMatmulRoute::RopeAppendUnfused), for the
// dense and the quantized q/k/v projection of KVCache::rms_norm_qkv_append_rope where the
// epilogue cannot run in the product's kernel.
#pragma once
#include "webgpu/context.hpp"

namespace wgt::webgpu {

// The product with its prologue into the call's output (the same op kind without the caches),
// then kv_append_rope on the output's q, k and v columns: q rotated in place, rope(k) and v
// appended at the cache row attrs.pos_offset (one dispatch where kernels/nn.cpp's conditions
// hold).
void run_rope_append_unfused(Context& ctx, OpCall& call);

}  // namespace wgt::webgpu
