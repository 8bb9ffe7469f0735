// The complex64 family's plans: every op call on c64 data that WebGPU runs (elementwise
// arithmetic, conj / abs / real / imag / exp, casts to and from c64, where, fill; reductions sum,
// mean, prod; matmul and its batched / transposed forms). Storage is interleaved (re, im) f32
// pairs, read as vec2<f32>. The plans are pure (no Dawn call); kernels/complex.cpp encodes them.
// Shaders: complex_ew.wgsl, complex_reduce.wgsl, complex_matmul.wgsl over complex_math.wgsl.
#pragma once
#include <cstdint>
#include <string>

#include "webgpu/plans/plan.hpp"
#include "webgpu/plans/tuning.hpp"

namespace wgt::webgpu {

// True for a call the complex family owns: a c64 input, output or output spec on one of the
// kinds below, or a conj / real / imag unary (whose input must then be c64). Data movement
// (Copy, Concat, IndexSelect, Gather) moves bits of any dtype and stays with its own kernels.
bool is_complex_call(const OpCall& call);

// ---- elementwise ----
// The values are complex_ew.wgsl's OP codes.
enum class ComplexEwOp : uint8_t {
  Add = 0, Sub = 1, Mul = 2, Div = 3, Eq = 4, Ne = 5,         // c64 x c64 (eq/ne: f32 0/1)
  Neg = 6, Conj = 7, Exp = 8, Copy = 9,                      // c64 -> c64
  Abs = 10, Real = 11, Imag = 12, Nonzero = 13,              // c64 -> f32 (nonzero: re != 0 or im != 0, NaN true)
  FromReal = 14,                                             // f32 -> c64 (zero imaginary part)
  Where = 15,                                                // bool ? c64 : c64
  Fill = 16,                                                 // -> c64 (value, 0)
};

// Binding element types of complex_ew.wgsl (T0..T2 / TO): c64 pairs, f32, bool bytes packed
// four per u32 word.
enum class ComplexSlot : uint8_t { None = 0, C64 = 1, F32 = 2, Bool = 3 };

struct ComplexEwShader {
  ComplexEwOp op = ComplexEwOp::Add;
  ComplexSlot in[3] = {ComplexSlot::None, ComplexSlot::None, ComplexSlot::None};
  ComplexSlot out = ComplexSlot::C64;
  uint8_t n_in = 0;
};

struct ComplexEwPlan {
  ComplexEwShader shader;
  // The call's real operand or result of another dtype goes through the existing cast kernels:
  // pre_cast: the input is cast to f32 (scratch) first; post_cast: the kernel writes f32
  // (scratch) and that is cast to the output's dtype (bool, f16, bf16, i32, u8).
  bool pre_cast = false, post_cast = false;
  PipelineKey key() const;
  ShaderVariant variant() const;
  std::string name() const;  // e.g. "c64 div", "c64 abs", "c64 real +cast"
};

// ---- reductions ----
enum class ComplexReduceOp : uint8_t { Sum = 0, Mean = 1, Prod = 2 };
// Serial: one invocation walks one output's reduced elements (few of them); Workgroup: 256
// invocations share one output and combine in workgroup memory.
enum class ComplexReduceKernel : uint8_t { Serial = 0, Workgroup = 1 };

struct ComplexReduceShader {
  ComplexReduceOp op = ComplexReduceOp::Sum;
  ComplexReduceKernel kernel = ComplexReduceKernel::Serial;
};
struct ComplexReducePlan {
  ComplexReduceShader shader;
  PipelineKey key() const;
  ShaderVariant variant() const;
  std::string name() const;  // e.g. "c64 sum wg", "c64 mean serial"
};
// Reduced elements per output below which the serial kernel runs.
constexpr uint64_t kComplexSerialReduce = 64;

// ---- matmul ----
struct ComplexMatmulShader {
  uint8_t three = 0;                   // 3 real products (Gauss) instead of 4
  uint8_t a_kfast = 0, b_kfast = 0;    // the operand's K stride is the unit one (coalesced fetch order)
  uint8_t pad = 0;
  uint16_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0;  // workgroup tile, invocation tile (complex elements)
  uint16_t pad2 = 0;
};
struct ComplexMatmulPlan {
  ComplexMatmulShader shader;
  bool compact_a = false, compact_b = false;  // no unit matrix stride: compacted first
  bool add_after = false;                     // attrs.has_bias: out += c by the c64 add kernel
  PipelineKey key() const;
  ShaderVariant variant() const;
  std::string name() const;  // e.g. "c64 mm4 64x64x8 4x4 a:k b:n", "c64 mm3 32x32x8 4x4"
};

Planned<ComplexEwPlan> plan_complex_ew(const Caps& caps, const OpCall& call);
Planned<ComplexReducePlan> plan_complex_reduce(const Caps& caps, const OpCall& call);
// Throws InvalidArgument for a c64_tile the device cannot run.
Planned<ComplexMatmulPlan> plan_complex_matmul(const Caps& caps, const MatmulTuning& tuning, const OpCall& call);

// Workgroup memory of a c64 tile (double-buffered re / im [/ re + im] stages of both operands).
uint32_t complex_tile_smem_bytes(uint32_t bm, uint32_t bn, uint32_t bk, bool three);

}  // namespace wgt::webgpu
