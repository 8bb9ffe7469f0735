// The elementwise family's plan (Copy, Unary, Cast, Binary, Where, Fill, Arange, RandUniform,
// RandNormal): which kernel (the vec4 fast path of contiguous f32 operands or the word kernel
// over strided views, shaders/ew_main.wgsl), the compute type, the operand dtypes and the op.
// plan_elementwise is pure (no Dawn call); kernels/elementwise.cpp encodes the plan. The op
// code selects its WGSL expression inside the shader (shaders/ew_ops.wgsl, #if OP == n).
#pragma once
#include <cstdint>

#include "webgpu/plans/plan.hpp"

namespace wgt::webgpu {

enum class EwKernel : uint8_t { Copy, Unary, UnaryVec4, Binary, BinaryVec4, Where, Fill, Arange, Rand };

// The OP of a unary kernel that returns x as it is (Cast: the conversion is the load and store).
constexpr uint8_t kEwIdentity = 255;

// The fields that select the shader: the pipeline key is their bytes (no padding).
struct EwShader {
  EwKernel kernel = EwKernel::Copy;
  uint8_t op = 0;      // a UnaryOp or BinaryOp value, or kEwIdentity
  uint8_t ct_i32 = 0;  // compute type i32 (else f32)
  uint8_t cond_i32 = 0;  // Where: the condition is read as i32 (else f32)
  DType a = DType::F32, b = DType::F32, c = DType::F32;  // operand dtypes (Where: cond, a, b)
  DType out = DType::F32;
  uint8_t esize = 0;   // Copy: element size in bytes
  uint8_t normal = 0;  // Rand: normal (else uniform)
};

struct EwPlan {
  EwShader shader;
  // Copy: try the contiguous vec4 copy (copy_fast.cpp) first; it takes the call when the
  // operands' bytes are 16-byte aligned.
  bool try_vec4_copy = false;
  PipelineKey key() const;
  ShaderVariant variant() const;  // shader name and defines (built once per new pipeline)
};

// The plan of `call`, or why WebGPU's elementwise kernels cannot run it. The output is the
// call's (allocated or placeholder) output, else its out_specs.
Planned<EwPlan> plan_elementwise(const Caps& caps, const OpCall& call);
// The plan of dst = cast(src) (a Cast call without the checks, for other families' launchers).
EwPlan plan_cast(const Tensor& src, const Tensor& dst);

}  // namespace wgt::webgpu
