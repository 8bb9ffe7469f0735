// Encoders of the indexing family: Concat (N strided inputs, any axis, one dispatch per input),
// IndexSelect and Gather (one shared gather kernel; i32 or i64 indices); the checks are
// plans/index_plan.cpp's. Any element size of 1, 2, 4 or 8 bytes is moved as raw bits, so
// every dtype works.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu/plans/index_plan.hpp"

namespace wgt::webgpu {
namespace {

constexpr uint32_t kWG = 256;

// Mirrors IndexParams of shaders/index_common.wgsl.
struct IndexParams {
  uint32_t shape[8], sa[8], sb[8];
  uint32_t rank, numel, x_off, y_off;
  uint32_t b_off, ax_stride, ax_size, flag;
};
static_assert(sizeof(IndexParams) == 128, "IndexParams must match the WGSL struct");

// Offsets wrap modulo 2^32 in the shader, so negative strides travel as two's complement.
uint32_t u32(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); }

IndexParams make_params(const std::vector<IndexDim>& dims) {
  IndexParams p{};
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    p.shape[i] = u32(dims[i].size);
    p.sa[i] = u32(dims[i].sa);
    p.sb[i] = u32(dims[i].sb);
    n *= dims[i].size;
  }
  for (size_t i = dims.size(); i < 8; ++i) p.shape[i] = 1;
  p.rank = static_cast<uint32_t>(dims.size());
  p.numel = u32(n);
  return p;
}

void run(Context& ctx, const IndexPlan& plan, std::vector<Arg> args, const IndexParams& p) {
  if (p.numel == 0) return;
  auto [gx, gy] = ctx.grid((uint64_t{p.numel} + kWG - 1) / kWG);
  Dispatch d;
  d.pipeline = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  d.args = std::move(args);
  d.params = &p;
  d.params_size = sizeof p;
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// ---------------- Concat ----------------

void encode_concat(Context& ctx, const OpCall& call, const IndexPlan& plan) {
  const Tensor& y = call.outputs[0];
  const int ax = static_cast<int>(call.attrs.axis);
  const Strides ys = y.strides();
  int64_t start = 0;
  for (const Tensor& x : call.inputs) {
    std::vector<IndexDim> dims;
    for (int d = 0; d < x.dim(); ++d) dims.push_back({x.size(d), x.strides()[d], ys[d]});
    IndexParams p = make_params(index_coalesce(dims));
    p.x_off = u32(x.offset());
    p.y_off = u32(y.offset() + start * ys[ax]);
    start += x.size(ax);
    // Inputs of the same buffer as the output cannot occur (outputs are fresh allocations).
    run(ctx, plan, {ctx.arg(x), ctx.arg(y, false)}, p);
  }
}

// ---------------- IndexSelect / Gather ----------------

void encode_gather(Context& ctx, const OpCall& call, const IndexPlan& plan) {
  const Tensor &x = call.inputs[0], &idx = call.inputs[1];
  const Tensor& y = call.outputs[0];
  const int ax = static_cast<int>(call.attrs.axis);
  IndexParams p = make_params(gather_dims(call));
  p.x_off = u32(x.offset());
  p.y_off = u32(y.offset());
  p.b_off = u32(idx.offset());
  p.ax_stride = u32(x.strides()[ax]);
  p.ax_size = u32(x.size(ax));
  if (p.numel == 0) return;  // no index is read: nothing to flag (and no check armed)
  const Context::StatusFlag st = ctx.status_flag(call.name.c_str());
  p.flag = st.bit;
  run(ctx, plan, {ctx.arg(x), ctx.arg(idx), ctx.arg(y, false), st.arg}, p);
}

Planned<IndexPlan> plan_for(const Context& ctx, const OpCall& call) { return plan_index(Caps::of(ctx), call); }

void encode(Context& ctx, OpCall& call, const IndexPlan& plan) {
  if (plan.shader.kernel == IndexKernel::Concat) return encode_concat(ctx, call, plan);
  encode_gather(ctx, call, plan);
}

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  for (OpKind k : {OpKind::Concat, OpKind::IndexSelect, OpKind::Gather}) r.add_planned<IndexPlan, plan_for, encode>(k);
}

}  // namespace wgt::webgpu
