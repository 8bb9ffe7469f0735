// Encoders of the elementwise family: Copy, Unary, Binary, Where, Cast, Fill, Arange,
// RandUniform, RandNormal (shaders: copy, unary, binary, where, fill, rand, *_vec4). The kernel
// choice is plans/elementwise_plan.cpp's; this file turns a plan and the call into params and
// dispatches. f16 operands are packed u32 words (shaders/ew_f16.wgsl), so none of these
// kernels needs the shader-f16 feature (docs/webgpu.md, "f16 without the shader-f16 feature").
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/reference/random.hpp"
#include "webgpu/context.hpp"
#include "webgpu/kernels/copy_fast.hpp"
#include "webgpu/kernels/ew_helpers.hpp"
#include "webgpu/plans/elementwise_plan.hpp"

namespace wgt::webgpu {

EwLayout ew_collapse(const Shape& out, const std::vector<const Tensor*>& ins) {
  const int rank = static_cast<int>(out.size());
  EwLayout l;
  l.strides.resize(ins.size());
  for (int d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::vector<int64_t> s(ins.size());
    for (size_t k = 0; k < ins.size(); ++k) {
      const Tensor& t = *ins[k];
      const int td = d - (rank - t.dim());
      s[k] = (td < 0 || t.shape()[td] == 1) ? 0 : t.strides()[td];
    }
    if (!l.shape.empty()) {
      bool merge = true;
      for (size_t k = 0; k < ins.size(); ++k) merge &= l.strides[k].back() == s[k] * out[d];
      if (merge) {
        l.shape.back() *= out[d];
        for (size_t k = 0; k < ins.size(); ++k) l.strides[k].back() = s[k];
        continue;
      }
    }
    l.shape.push_back(out[d]);
    for (size_t k = 0; k < ins.size(); ++k) l.strides[k].push_back(s[k]);
  }
  return l;
}


namespace {
// Mirrors `struct Params` of shaders/ew_common.wgsl.
struct EwParams {
  uint32_t n, rank, out_off, op;
  uint32_t off[4];
  uint32_t shape[8];
  uint32_t strides[3][8];
  float f0, f1;
  int32_t i0, i1;
  uint32_t u0, u1, u2, zero;  // zero must stay 0 (the shaders build NaN/inf from it)
};
static_assert(sizeof(EwParams) == 192, "EwParams must match the WGSL Params layout");

EwParams make_params(const Tensor& out, const std::vector<const Tensor*>& ins) {
  EwParams p;
  std::memset(&p, 0, sizeof p);
  p.n = static_cast<uint32_t>(out.numel());
  p.out_off = static_cast<uint32_t>(out.offset());
  set_ew_layout(p, out.shape(), ins);
  return p;
}

// Records one dispatch of the plan's kernel: one invocation per output word (ew_main.wgsl),
// or per vec4 for the vec4 kernels (p counted in vec4s then).
void dispatch_plan(Context& ctx, const EwPlan& plan, const std::vector<const Tensor*>& ins, const Tensor& out,
                   const EwParams& p) {
  if (p.n == 0) return;
  Dispatch d;
  d.pipeline = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  for (const Tensor* t : ins) d.args.push_back(ctx.arg(*t, true));
  d.args.push_back(ctx.arg(out, false));
  d.params = &p;
  d.params_size = sizeof p;
  uint64_t items = p.n;
  const EwKernel k = plan.shader.kernel;
  if (k != EwKernel::UnaryVec4 && k != EwKernel::BinaryVec4) {
    const uint64_t out_pw = plan.shader.kernel == EwKernel::Copy
                                ? (plan.shader.esize >= 4 ? 1 : 4 / plan.shader.esize)
                                : 4 / dtype_size(plan.shader.out);
    items = (uint64_t{p.out_off} + p.n + out_pw - 1) / out_pw - p.out_off / out_pw;  // output words
  }
  auto [gx, gy] = ctx.grid((items + 255) / 256);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// vec4 kernels: element counts and offsets in vec4s.
void to_vec4_units(EwParams& p, const std::vector<const Tensor*>& ins, const Tensor& out) {
  p.n = static_cast<uint32_t>(out.numel() / 4);
  for (size_t k = 0; k < ins.size(); ++k) p.off[k] = static_cast<uint32_t>(ins[k]->offset() / 4);
  p.out_off = static_cast<uint32_t>(out.offset() / 4);
}

void encode_copy(Context& ctx, const OpCall& c, const EwPlan& plan) {
  const Tensor& x = c.inputs[0];
  const Tensor& o = c.outputs[0];
  if (plan.try_vec4_copy && copy_contiguous_vec4(ctx, x, o)) return;  // 16-byte aligned: kernels/copy_fast.cpp
  EwParams p = make_params(o, {&x});
  if (plan.shader.esize == 8) {  // counted in words: two per element
    p.n *= 2;
    p.out_off *= 2;
  }
  dispatch_plan(ctx, plan, {&x}, o, p);
}

void encode_unary_like(Context& ctx, const Tensor& x, const Tensor& o, const EwPlan& plan) {
  EwParams p = make_params(o, {&x});
  if (plan.shader.kernel == EwKernel::UnaryVec4) {
    std::memset(&p, 0, sizeof p);
    to_vec4_units(p, {&x}, o);
  }
  dispatch_plan(ctx, plan, {&x}, o, p);
}

void encode_binary(Context& ctx, const OpCall& c, const EwPlan& plan) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1], &o = c.outputs[0];
  EwParams p;
  if (plan.shader.kernel == EwKernel::BinaryVec4) {
    std::memset(&p, 0, sizeof p);
    to_vec4_units(p, {&a, &b}, o);
  } else {
    p = make_params(o, {&a, &b});
  }
  dispatch_plan(ctx, plan, {&a, &b}, o, p);
}

void encode_creation(Context& ctx, const OpCall& c, const EwPlan& plan) {
  const Tensor& o = c.outputs[0];
  EwParams p = make_params(o, {});
  p.f0 = static_cast<float>(c.attrs.scalar0);
  p.f1 = static_cast<float>(c.attrs.scalar1);
  if (!is_floating(o.dtype())) {  // saturate to i32 for integer fills (u8/bool take the low bits / != 0)
    auto sat = [](double v) { return static_cast<int32_t>(std::clamp(v, -2147483648.0, 2147483647.0)); };
    p.i0 = sat(c.attrs.scalar0);
    p.i1 = sat(c.attrs.scalar1);
    if (o.dtype() == DType::Bool) p.i0 = c.attrs.scalar0 != 0.0;
  }
  // The reference's key derivation (the shader, rand.wgsl, does the per-element part).
  if (plan.shader.kernel == EwKernel::Rand) p.u0 = cpu_ref::rng_key(c.attrs.seed);
  dispatch_plan(ctx, plan, {}, o, p);
}

Planned<EwPlan> plan_for(const Context& ctx, const OpCall& c) { return plan_elementwise(Caps::of(ctx), c); }

void encode(Context& ctx, OpCall& c, const EwPlan& plan) {
  switch (plan.shader.kernel) {
    case EwKernel::Copy: return encode_copy(ctx, c, plan);
    case EwKernel::Unary:
    case EwKernel::UnaryVec4: return encode_unary_like(ctx, c.inputs[0], c.outputs[0], plan);
    case EwKernel::Binary:
    case EwKernel::BinaryVec4: return encode_binary(ctx, c, plan);
    case EwKernel::Where: {
      const Tensor &cond = c.inputs[0], &a = c.inputs[1], &b = c.inputs[2], &o = c.outputs[0];
      return dispatch_plan(ctx, plan, {&cond, &a, &b}, o, make_params(o, {&cond, &a, &b}));
    }
    case EwKernel::Fill:
    case EwKernel::Arange:
    case EwKernel::Rand: return encode_creation(ctx, c, plan);
  }
}

}  // namespace

void cast_on_device(Context& ctx, const Tensor& src, const Tensor& dst) {
  encode_unary_like(ctx, src, dst, plan_cast(src, dst));
}

void register_elementwise_kernels(KernelRegistry& r) {
  for (OpKind k : {OpKind::Copy, OpKind::Unary, OpKind::Cast, OpKind::Binary, OpKind::Where, OpKind::Fill,
                   OpKind::Arange, OpKind::RandUniform, OpKind::RandNormal})
    r.add_planned<EwPlan, plan_for, encode>(k);
}

}  // namespace wgt::webgpu
