// The transformer-op family's plan (Rope, SiluMul, KVAppend): which kernel runs (rope into an
// output or in place; silu_mul; the KV-cache append of one cache, of both caches in one
// dispatch, or with RoPE of k and an in-place q in one dispatch, else its three-kernel
// composition) and the operand forms that select its shader. plan_nn is pure (no Dawn call);
// kernels/nn.cpp encodes the plan. Attention has its own plan (attention_plan.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "webgpu/plans/plan.hpp"

namespace wgt::webgpu {

enum class NnKernel : uint8_t {
  Rope,           // rope.wgsl into the output
  RopeInplace,    // rope_inplace.wgsl
  SiluMul,        // silu_mul.wgsl
  KvAppend,       // attention_kv_append.wgsl: one cache (a composite route runs one per cache)
  KvAppend2,      // attention_kv_append2.wgsl: both caches, whole words
  KvAppendRope,   // attention_kv_append_rope.wgsl: RoPE of k and of q in place, and both appends
};
// What the launcher runs: the planned kernel, or a composition of sub-plans: an append per
// cache (KvAppendEach), or rope_inplace on q, rope of k into a scratch and the plain append
// (KvAppendRopeUnfused).
enum class NnRoute : uint8_t { Kernel, KvAppendEach, KvAppendRopeUnfused };

// The fields that select the shader: the pipeline key is their bytes (no padding).
struct NnShader {
  NnKernel kernel = NnKernel::Rope;
  uint8_t f16 = 0;        // Rope, RopeInplace: x (and the output) packed f16; SiluMul: the output
  uint8_t has_pos = 0;    // Rope, RopeInplace: a positions tensor (else pos_offset)
  uint8_t freqs = 0;      // rope kernels: the freq-factors input
  uint8_t cache_f16 = 0;  // KvAppend*: the cache(s)
  uint8_t src_f16 = 0;    // KvAppend*: the source rows
  uint8_t q_f16 = 0;      // KvAppendRope: q
  uint8_t q_shared = 0;   // KvAppendRope: q, k and v are one buffer (bound once)
};

struct NnPlan {
  NnRoute route = NnRoute::Kernel;
  NnShader shader;
  PipelineKey key() const;
  ShaderVariant variant() const;
};

// The plan of `call`, or why WebGPU cannot run it (caps: the storage-buffer limit of the
// one-dispatch rope append).
Planned<NnPlan> plan_nn(const Caps& caps, const OpCall& call);

// Sub-plans of the composite routes (no checks: the composite call was planned).
NnPlan plan_kv_append_one(const Tensor& cache, const Tensor& src);
NnPlan plan_rope_call(const OpCall& rope_call);

// Rows of rotation work of an in-place rope: pairs per unit (rope_inplace.wgsl). f32: one pair
// per unit. f16: a unit must own whole words: normal pairs (2i, 2i+1) are one word; neox pairs
// (i, i + n_rot/2) take two adjacent pairs per unit when n_rot/2 is even, else the whole row.
int64_t rope_pairs_per_unit(DType t, const OpAttrs& a);
// The positions tensor of a Rope call, or null (the freq factors, when present, are last).
const Tensor* rope_positions(const OpCall& call);

}  // namespace wgt::webgpu
