// Introspection of the WebGPU attention launcher (kernels/nn.cpp), for tests and benchmarks.
#pragma once
#include <string>

namespace wgt::webgpu {
// The shader of the first (or only) pass of this thread's latest attention launch, e.g.
// "attention_prefill_sg", "attention_prefill" or "attention_decode_sg"; empty before the first.
const std::string& attention_last_shader();
}  // namespace wgt::webgpu
