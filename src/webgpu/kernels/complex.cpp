// Launchers of the complex64 family (plans/complex_plan.hpp): elementwise, reductions and the
// tiled matmul on interleaved (re, im) f32 pairs. Each reads its plan and nothing else; real
// operands or results of dtypes other than f32 go through the existing cast kernels (run_op).
#include "webgpu/kernels/complex.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "webgpu/kernels/ew_helpers.hpp"
#include "webgpu/kernels/matmul_grid.hpp"
#include "webgpu/plans/complex_plan.hpp"
#include "webgpu/plans/matmul_plan.hpp"

namespace wgt::webgpu {
namespace {

// Mirrors `struct Params` of shaders/complex_ew.wgsl.
struct EwParams {
  uint32_t n, rank, out_off, zero;
  uint32_t off[4];
  uint32_t shape[8];
  uint32_t strides[3][8];
  float f0, f1;
  uint32_t pad0, pad1;
};
static_assert(sizeof(EwParams) == 176, "EwParams must match complex_ew.wgsl's Params");

// Mirrors `struct Params` of shaders/complex_reduce.wgsl.
struct ReduceParams {
  uint32_t oshape[8], ostride[8], ishape[8], istride[8];
  uint32_t orank, irank, n_out, n_red;
  uint32_t in_off, out_off, zero, pad0;
};
static_assert(sizeof(ReduceParams) == 160, "ReduceParams must match complex_reduce.wgsl's Params");

// Mirrors `struct Params` of shaders/complex_matmul.wgsl (complex element units).
struct MatmulParams {
  uint32_t M, N, K, batch_base;
  uint32_t a_off, a_ms, a_ks, o_off;
  uint32_t b_off, b_ks, b_ns, o_rs;
  uint32_t o_bs, bd1, bd2, pad0;
  uint32_t a_bs0, a_bs1, a_bs2, pad1;
  uint32_t b_bs0, b_bs1, b_bs2, pad2;
};
static_assert(sizeof(MatmulParams) == 96, "MatmulParams must match complex_matmul.wgsl's Params");

thread_local std::string g_last;

uint32_t u32(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); }

// double -> f32 as the CPU's stores round it (beyond the range: +-inf, never UB).
float to_f32(double v) {
  constexpr double kMaxRoundsToFinite = 3.4028235677973366e38;
  if (v >= kMaxRoundsToFinite) return std::numeric_limits<float>::infinity();
  if (v <= -kMaxRoundsToFinite) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

void dispatch_1d(Context& ctx, const Pipeline* pipe, std::vector<Arg> args, const void* params, size_t params_size,
                 uint64_t groups) {
  if (groups == 0) return;
  Dispatch d;
  d.pipeline = pipe;
  d.args = std::move(args);
  d.params = params;
  d.params_size = params_size;
  auto [gx, gy] = ctx.grid(groups);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// ---- elementwise ----

Planned<ComplexEwPlan> plan_ew_for(const Context& ctx, const OpCall& c) { return plan_complex_ew(Caps::of(ctx), c); }

void encode_ew(Context& ctx, OpCall& c, const ComplexEwPlan& plan) {
  g_last = plan.name();
  const Tensor& out = c.outputs[0];
  if (out.numel() == 0) return;
  std::vector<Tensor> ins(c.inputs.begin(), c.inputs.end());
  if (plan.pre_cast) {  // a real input of another dtype: to f32 first (exact or one rounding, as the CPU)
    Tensor f = ctx.scratch(ins[0].shape(), DType::F32);
    OpCall cast{OpKind::Cast, "cast", {ins[0]}, {f}, {}};
    ctx.run_op(cast);
    ins[0] = f;
  }
  const Tensor dst = plan.post_cast ? ctx.scratch(out.shape(), DType::F32) : out;
  EwParams p{};
  p.n = static_cast<uint32_t>(out.numel());
  p.out_off = static_cast<uint32_t>(dst.offset());
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : ins) ptrs.push_back(&t);
  set_ew_layout(p, out.shape(), ptrs);
  p.f0 = to_f32(c.attrs.scalar0);
  const Pipeline* pipe = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  std::vector<Arg> args;
  for (const Tensor& t : ins) args.push_back(ctx.arg(t));
  args.push_back(ctx.arg(dst, false));
  dispatch_1d(ctx, pipe, std::move(args), &p, sizeof p, (uint64_t{p.n} + 255) / 256);
  if (plan.post_cast) {
    OpCall cast{OpKind::Cast, "cast", {dst}, {out}, {}};
    ctx.run_op(cast);
  }
}

// ---- reductions ----

struct Dim {
  int64_t size, stride;
};
std::vector<Dim> merge_dims(std::vector<Dim> dims) {
  std::vector<Dim> out;
  for (const Dim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty() && out.back().stride == d.stride * d.size) out.back() = {out.back().size * d.size, d.stride};
    else out.push_back(d);
  }
  return out;
}

Planned<ComplexReducePlan> plan_reduce_for(const Context& ctx, const OpCall& c) {
  return plan_complex_reduce(Caps::of(ctx), c);
}

void encode_reduce(Context& ctx, OpCall& c, const ComplexReducePlan& plan) {
  g_last = plan.name();
  const Tensor& x = c.inputs[0];
  const Tensor& out = c.outputs[0];
  if (out.numel() == 0) return;
  std::vector<Dim> outer, inner;
  for (int d = 0; d < x.dim(); ++d) {
    const bool red = std::find(c.attrs.axes.begin(), c.attrs.axes.end(), d) != c.attrs.axes.end();
    (red ? inner : outer).push_back({x.shape()[d], x.strides()[d]});
  }
  // The output follows the kept dims in order (keepdim only inserts size-1 dims), so merging
  // kept dims by their input strides keeps the output's row-major order.
  outer = merge_dims(outer);
  inner = merge_dims(inner);
  ReduceParams p{};
  for (int i = 0; i < 8; ++i) p.oshape[i] = p.ishape[i] = 1;
  uint64_t n_red = 1;
  for (size_t i = 0; i < outer.size(); ++i) p.oshape[i] = u32(outer[i].size), p.ostride[i] = u32(outer[i].stride);
  for (size_t i = 0; i < inner.size(); ++i) {
    p.ishape[i] = u32(inner[i].size), p.istride[i] = u32(inner[i].stride);
    n_red *= static_cast<uint64_t>(inner[i].size);
  }
  p.orank = static_cast<uint32_t>(outer.size());
  p.irank = static_cast<uint32_t>(inner.size());
  p.n_out = static_cast<uint32_t>(out.numel());
  p.n_red = static_cast<uint32_t>(n_red);
  p.in_off = u32(x.offset());
  p.out_off = u32(out.offset());
  const Pipeline* pipe = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  const bool wg = plan.shader.kernel == ComplexReduceKernel::Workgroup;
  dispatch_1d(ctx, pipe, {ctx.arg(x), ctx.arg(out, false)}, &p, sizeof p, wg ? p.n_out : (uint64_t{p.n_out} + 255) / 256);
}

// ---- matmul ----

Planned<ComplexMatmulPlan> plan_matmul_for(const Context& ctx, const OpCall& c) {
  return plan_complex_matmul(Caps::of(ctx), matmul_tuning(), c);
}

void encode_matmul(Context& ctx, OpCall& c, const ComplexMatmulPlan& plan) {
  const ComplexMatmulShader& s = plan.shader;
  g_last = plan.name();
  if (c.outputs[0].numel() == 0) return;
  // With an addend the product goes to a scratch tensor and the add writes the output (one
  // buffer is never bound for reading and writing in one dispatch).
  Tensor out = plan.add_after ? ctx.scratch(c.outputs[0].shape(), DType::C64) : c.outputs[0];
  const bool tb = c.attrs.transpose_b;
  const Tensor A = plan.compact_a ? ctx.compact(c.inputs[0]) : c.inputs[0];
  const Tensor B = plan.compact_b ? ctx.compact(c.inputs[1]) : c.inputs[1];
  if (A.size(-1) == 0) {  // an empty sum: zeros
    OpCall fill{OpKind::Fill, "zeros", {}, {out}, {}};
    fill.attrs.scalar0 = 0.0;
    ctx.run_op(fill);
  } else {
    const Pipeline* pipe = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
    dispatch_matmul_grid(ctx, pipe, {ctx.arg(A), ctx.arg(B), ctx.arg(out, false)}, MatmulParams{}, A, B, out, tb, s.bm,
                         s.bn, false);
  }
  if (plan.add_after) {
    OpCall add{OpKind::Binary, "add", {out, c.inputs[2]}, {c.outputs[0]}, {}};
    add.attrs.binary = BinaryOp::Add;
    ctx.run_op(add);
  }
  g_last = plan.name();
}

}  // namespace

// The complex family claims the c64 calls of kinds it shares with the real families
// (is_complex_call); the registry hands it those calls and the real kernels the others.
void register_complex_kernels(KernelRegistry& r) {
  for (OpKind k : {OpKind::Unary, OpKind::Binary, OpKind::Cast, OpKind::Where, OpKind::Fill})
    r.add_planned<ComplexEwPlan, plan_ew_for, encode_ew>(k, is_complex_call);
  r.add_planned<ComplexReducePlan, plan_reduce_for, encode_reduce>(OpKind::Reduce, is_complex_call);
  r.add_planned<ComplexMatmulPlan, plan_matmul_for, encode_matmul>(OpKind::MatMul, is_complex_call);
}

const std::string& complex_last_plan() { return g_last; }

}  // namespace wgt::webgpu
