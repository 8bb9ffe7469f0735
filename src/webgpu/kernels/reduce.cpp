// Encoders of the reduce family: Reduce (sum/mean/max/min/prod/argmax over any axes),
// Softmax/LogSoftmax (any axis) and RMSNorm/LayerNorm (last dim). The kernel choice is
// plans/reduce_plan.cpp's. Every kernel reads strided views directly: the reduced axes form the
// inner "row", the kept axes the outer row index, each group coalesced, so no compaction copy
// is needed.
#include <cstdint>
#include <limits>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu/kernels/ew_helpers.hpp"
#include "webgpu/plans/reduce_plan.hpp"

namespace wgt::webgpu {
namespace {

// Mirrors RowParams of shaders/reduce_common.wgsl.
struct RowParams {
  uint32_t oshape[8], ostride[8], oostride[8], ishape[8], istride[8];
  uint32_t orank, irank, n_out, n_red;
  uint32_t in_off, out_off, out_istride, w_stride;
  uint32_t w_off, b_off, b_stride;
  float pinf;
  float eps, qnan;
  uint32_t pad0, pad1;
};
static_assert(sizeof(RowParams) == 224, "RowParams must match the WGSL struct");

// Strides and offsets travel as u32 (two's complement wraps back to the right offset).
uint32_t u32(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); }

RowParams make_params(const ReduceRows& r, const Tensor& x, const Tensor& y) {
  RowParams p{};
  for (int i = 0; i < 8; ++i) p.oshape[i] = p.ishape[i] = 1;
  for (size_t i = 0; i < r.outer.size(); ++i) {
    p.oshape[i] = u32(r.outer[i].size);
    p.ostride[i] = u32(r.outer[i].s_in);
    p.oostride[i] = u32(r.outer[i].s_out);
  }
  for (size_t i = 0; i < r.inner.size(); ++i) {
    p.ishape[i] = u32(r.inner[i].size);
    p.istride[i] = u32(r.inner[i].s_in);
  }
  p.orank = static_cast<uint32_t>(r.outer.size());
  p.irank = static_cast<uint32_t>(r.inner.size());
  p.n_out = u32(r.n_out);
  p.n_red = u32(r.n_red);
  p.in_off = u32(x.offset());
  p.out_off = u32(y.offset());
  p.out_istride = u32(r.out_istride);
  p.pinf = std::numeric_limits<float>::infinity();
  p.qnan = std::numeric_limits<float>::quiet_NaN();
  return p;
}

void encode_f32(Context& ctx, const OpCall& call, const ReducePlan& plan) {
  if (plan.groups == 0) return;
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.outputs[0];
  RowParams p = make_params(reduce_rows(call), x, y);
  std::vector<Arg> args{ctx.arg(x)};
  if (call.kind == OpKind::RMSNorm || call.kind == OpKind::LayerNorm) {
    const bool hw = call.attrs.has_weight, hb = call.attrs.has_bias;
    const Tensor* w = hw ? &call.inputs[1] : nullptr;
    const Tensor* b = hb ? &call.inputs[hw ? 2 : 1] : nullptr;
    p.eps = static_cast<float>(call.attrs.eps);
    if (w) { p.w_off = u32(w->offset()); p.w_stride = u32(w->strides()[0]); }
    if (b) { p.b_off = u32(b->offset()); p.b_stride = u32(b->strides()[0]); }
    // Absent operands are bound to x: the layout stays fixed and the shader never reads them.
    args.push_back(ctx.arg(w ? *w : x));
    if (call.kind == OpKind::LayerNorm) args.push_back(ctx.arg(b ? *b : x));
  }
  args.push_back(ctx.arg(y, false));
  auto [gx, gy] = ctx.grid(plan.groups);
  Dispatch d;
  d.pipeline = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  d.args = std::move(args);
  d.params = &p;
  d.params_size = sizeof p;
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// f16 without the shader-f16 feature (the H200 with this Dawn build): the planned f32 kernel
// runs between casts on the device (the cast kernel reads and writes packed f16), so the op
// stays on the GPU at the cost of two extra passes over the f16 data.
void encode(Context& ctx, OpCall& call, const ReducePlan& plan) {
  if (!plan.f16_via_f32) return encode_f32(ctx, call, plan);
  OpCall c32 = call;
  for (Tensor& t : c32.inputs) {
    if (!t.defined() || t.dtype() != DType::F16) continue;
    Tensor f = Tensor::empty(t.shape(), DType::F32, t.device());
    cast_on_device(ctx, t, f);
    t = f;
  }
  for (Tensor& o : c32.outputs)
    if (o.dtype() == DType::F16) o = Tensor::empty(o.shape(), DType::F32, o.device());
  for (auto& spec : c32.out_specs)
    if (spec.second == DType::F16) spec.second = DType::F32;
  encode_f32(ctx, c32, plan);
  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (call.outputs[i].dtype() == DType::F16) cast_on_device(ctx, c32.outputs[i], call.outputs[i]);
}

Planned<ReducePlan> plan_for(const Context& ctx, const OpCall& call) {
  return plan_reduce(Caps::of(ctx), reduce_tuning(), call);
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  for (OpKind k : {OpKind::Reduce, OpKind::Softmax, OpKind::LogSoftmax, OpKind::RMSNorm, OpKind::LayerNorm})
    r.add_planned<ReducePlan, plan_for, encode>(k);
}

}  // namespace wgt::webgpu
