// The reduce family's plan (Reduce, Softmax, LogSoftmax, RMSNorm, LayerNorm): the row kernel
// (a workgroup per output row, the register-cached vec4 row kernel, or an invocation per output
// for short strided rows), its options, and whether f16 runs through f32 (no shader-f16).
// plan_reduce is pure (no Dawn call); kernels/reduce.cpp encodes the plan. Shaders:
// reduce_rows / reduce_cols / reduce_row_v4, softmax[_row_v4], rmsnorm[_row_v4],
// layernorm[_row_v4] (F16 and SG select their variants with #if).
#pragma once
#include <cstdint>
#include <vector>

#include "webgpu/plans/plan.hpp"
#include "webgpu/plans/tuning.hpp"

namespace wgt::webgpu {

enum class ReduceKernel : uint8_t { Rows, Cols, RowV4, Softmax, SoftmaxRowV4, RmsNorm, RmsNormRowV4, LayerNorm, LayerNormRowV4 };

// The fields that select the shader: the pipeline key is their bytes (no padding).
struct ReduceShader {
  ReduceKernel kernel = ReduceKernel::Rows;
  uint8_t op = 0;      // Reduce: a ReduceOp value
  uint8_t f16 = 0;     // the kernel computes on f16 (with shader-f16)
  uint8_t log = 0;     // LogSoftmax
  uint8_t has_w = 0, has_b = 0;  // norms: weight, bias (LayerNorm)
  uint8_t cache = 0;   // row kernels: vec4 per invocation kept in registers
  uint8_t sg = 0;      // row kernels: subgroup reductions
};

struct ReducePlan {
  ReduceShader shader;
  // f16 operands on a device without shader-f16: the f32 kernel runs between casts on the
  // device (the cast kernel reads and writes packed f16); `shader` is that f32 kernel.
  bool f16_via_f32 = false;
  uint64_t groups = 0;  // workgroups of the dispatch (0: nothing to compute)
  PipelineKey key() const;
  ShaderVariant variant() const;
};

// The plan of `call`, or why the reduce family cannot run it.
Planned<ReducePlan> plan_reduce(const Caps& caps, const ReduceTuning& tuning, const OpCall& call);

constexpr uint32_t kReduceWG = 256;  // invocations per workgroup of every reduce-family kernel

// ---- geometry shared by the plan and the launcher ----
// One logical dim with its input and output strides (elements; may be negative).
struct ReduceDim {
  int64_t size, s_in, s_out;
};
// The kept dims (outer: one output per element) and the reduced ones (inner: the row), with
// size-1 dims dropped and neighbours contiguous in both input and output merged.
struct ReduceRows {
  std::vector<ReduceDim> outer, inner;
  int64_t n_out = 1, n_red = 1;
  int64_t out_istride = 0;  // output stride along the row (softmax)
};
ReduceRows reduce_rows(const OpCall& call);

}  // namespace wgt::webgpu
