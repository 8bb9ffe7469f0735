// The indexing family's plan (Concat, IndexSelect, Gather): the kernel (concat.wgsl, one
// dispatch per input; gather.wgsl for both index ops), the element size moved as raw bits and
// the index width. plan_index is pure (no Dawn call); kernels/index.cpp encodes the plan.
#pragma once
#include <cstdint>
#include <vector>

#include "webgpu/plans/plan.hpp"

namespace wgt::webgpu {

enum class IndexKernel : uint8_t { Concat, Gather };

// The fields that select the shader: the pipeline key is their bytes (no padding).
struct IndexShader {
  IndexKernel kernel = IndexKernel::Concat;
  uint8_t elem_bytes = 4;  // 1, 2, 4 or 8: elements are moved as raw bits
  uint8_t index_words = 1;  // Gather: 2 for i64 indices (read as u32 pairs)
};

struct IndexPlan {
  IndexShader shader;
  PipelineKey key() const;
  ShaderVariant variant() const;
};

Planned<IndexPlan> plan_index(const Caps& caps, const OpCall& call);

// Iteration dims of the kernels, row-major, with two stride sets (sa: the source, sb: the
// output for Concat, the indices for Gather); size-1 dims dropped, contiguous neighbours merged.
struct IndexDim {
  int64_t size, sa, sb;
};
std::vector<IndexDim> index_coalesce(const std::vector<IndexDim>& dims);
// The gather kernel's dims over the output (x strides in sa, index strides in sb).
std::vector<IndexDim> gather_dims(const OpCall& call);

}  // namespace wgt::webgpu
