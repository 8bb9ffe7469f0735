// WebGPU launcher for OpKind::MatMul (matmul and matmul_t and their fused forms): encodes the
// plan of src/webgpu/plans/matmul_plan.cpp (which kernel, tile, storage forms and fusions)
// into dispatches of shaders/matmul_tiled.wgsl, matmul_sgmat.wgsl, matmul_gemv.wgsl or
// matmul_gemv_vec.wgsl (the grid: kernels/matmul_grid.hpp):
// compacts an operand the plan says to, folds the broadcast batch dims (at most three per
// dispatch, further ones looped here), describes every operand by element strides so
// transposed views run without a copy, and splits grids beyond the device's limits.
// f16 runs natively with shader-f16, else stored packed two per u32 and computed in f32; where
// the adapter has f16 subgroup matrices (Debian's Dawn on NVIDIA) f16 products run on them.
// attrs.n_rot > 0 (KVCache::rms_norm_qkv_append_rope) adds RoPE and the KV-cache append as the
// vector gemv's epilogue (matmul_epi_rope_append.wgsl), or runs kv_append_rope after the product.
#include "webgpu/kernels/matmul.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "webgpu/context.hpp"
#include "webgpu/kernels/rope_append_route.hpp"
#include "webgpu/kernels/matmul_grid.hpp"
#include "webgpu/plans/matmul_plan.hpp"

namespace wgt::webgpu {
namespace {

// Mirrors `struct Params` of both matmul shaders; element units.
struct MatmulParams {
  uint32_t M, N, K, batch_base;
  uint32_t a_off, a_ms, a_ks, o_off;
  uint32_t b_off, b_ks, b_ns, o_rs;
  uint32_t o_bs, bd1, bd2, c_off;  // c_off: element offset of the addend (attrs.has_bias)
  uint32_t a_bs0, a_bs1, a_bs2, g_off;  // g_off: the prologue operand's element offset (norm weight) or delta to a (up)
  uint32_t b_bs0, b_bs1, b_bs2, eps_bits;  // eps_bits: the norm's eps as f32 bits
  // The rope_append epilogue (matmul_epi_rope_append.wgsl): cache row, q and k/v widths, head
  // dim, rotated dims, log2(base), freq_scale, element offset of the freq factors.
  uint32_t r_pos, r_qn, r_kvn, r_hd;
  uint32_t r_nrot;
  float r_base_log2, r_freq_scale;
  uint32_t r_f_off;
};
static_assert(sizeof(MatmulParams) == 128, "must match the WGSL Params struct");

// The plan of this thread's latest launch, for matmul_last_variant() (its name is built only
// when asked: a launch stores the small struct and nothing else).
thread_local MatmulPlan g_last_plan;
thread_local bool g_have_last = false;

Planned<MatmulPlan> plan_for(const Context& ctx, const OpCall& call) {
  return plan_matmul(Caps::of(ctx), matmul_tuning(), call);
}

void encode_matmul(Context& ctx, OpCall& call, const MatmulPlan& plan);

// A sub-call of a route (the plain or unfused product): planned here, since no supports() saw it.
void launch_matmul(Context& ctx, OpCall& call) {
  Planned<MatmulPlan> planned = plan_for(ctx, call);
  if (!planned.ok()) throw_error(ErrorKind::Unsupported, call.name, planned.reject);
  encode_matmul(ctx, call, planned.plan);
}

void encode_matmul(Context& ctx, OpCall& call, const MatmulPlan& plan) {
  Tensor& out = call.outputs[0];
  if (out.numel() == 0) return;
  switch (plan.route) {
    case MatmulRoute::RopeAppendUnfused: return run_rope_append_unfused(ctx, call);
    case MatmulRoute::PrologueFirst: {
      OpCall plain = ctx.run_prologue(call);
      return launch_matmul(ctx, plain);
    }
    case MatmulRoute::Kernel: break;
  }
  const MatmulShader& s = plan.shader;
  g_last_plan = plan;
  g_have_last = true;
  const Tensor A = plan.compact_a ? ctx.compact(call.inputs[0]) : call.inputs[0];
  const Tensor B = plan.compact_b ? ctx.compact(call.inputs[1]) : call.inputs[1];
  const uint64_t N = static_cast<uint64_t>(out.size(-1));
  const Pipeline* pipe = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  MatmulParams base{};  // the grid's fields are filled by dispatch_matmul_grid
  std::vector<Arg> args = {ctx.arg(A), ctx.arg(B), ctx.arg(out, false)};
  if (s.fuse_c) args.push_back(ctx.arg(call.inputs[2]));
  base.c_off = s.fuse_c ? static_cast<uint32_t>(call.inputs[2].offset()) : 0;
  const Tensor* pro_t = s.pro ? &call.inputs.back() : nullptr;
  Tensor gd;  // a compacted norm weight must outlive the dispatches that bind it
  if (s.pro == 1) {
    gd = ctx.dense(*pro_t);
    args.push_back(ctx.arg(gd));
    base.g_off = static_cast<uint32_t>(gd.offset());
    const float eps = static_cast<float>(call.attrs.eps);
    std::memcpy(&base.eps_bits, &eps, sizeof eps);
  } else if (s.pro == 2) {
    // up[i] for A index i sits at i + (up's offset - A's offset) (mod 2^32: the shader's u32
    // arithmetic wraps, so a negative delta works too).
    args.push_back(ctx.arg(*pro_t));
    base.g_off = static_cast<uint32_t>(pro_t->offset() - A.offset());
  }
  Tensor freqs;  // kept alive until the dispatches are recorded
  if (s.epi) {
    const Tensor &kc = call.inputs[2], &vc_t = call.inputs[3];
    args.push_back(ctx.arg(kc, false));
    args.push_back(ctx.arg(vc_t, false));
    if (s.epi_freqs) {
      freqs = ctx.dense(call.inputs[4]);
      args.push_back(ctx.arg(freqs));
      base.r_f_off = static_cast<uint32_t>(freqs.offset());
    }
    base.r_pos = static_cast<uint32_t>(call.attrs.pos_offset);
    base.r_hd = static_cast<uint32_t>(kc.size(2));
    base.r_kvn = static_cast<uint32_t>(kc.size(1) * kc.size(2));
    base.r_qn = static_cast<uint32_t>(N) - 2 * base.r_kvn;
    base.r_nrot = static_cast<uint32_t>(call.attrs.n_rot);
    base.r_base_log2 = static_cast<float>(std::log2(call.attrs.scalar0));  // as launch_kv_append_rope
    base.r_freq_scale = static_cast<float>(call.attrs.scalar1);
  }

  const bool gemv = s.kernel == MatmulKernel::Gemv || s.kernel == MatmulKernel::GemvVec;
  dispatch_matmul_grid(ctx, pipe, args, base, A, B, out, call.attrs.transpose_b, plan.row_tile(), plan.col_tile(), gemv);
  if (call.attrs.has_bias && !s.fuse_c) {
    // out += c elementwise, in place (each element read and written by one invocation).
    OpCall add{OpKind::Binary, "add", {out, call.inputs[2]}, {out}, {}};
    add.attrs.binary = BinaryOp::Add;
    ctx.run_op(add);
  }
}

}  // namespace

const std::string& matmul_last_variant() {
  thread_local std::string name;
  name = g_have_last ? g_last_plan.name() : std::string();
  return name;
}

void register_matmul_kernels(KernelRegistry& r) { r.add_planned<MatmulPlan, plan_for, encode_matmul>(OpKind::MatMul); }

}  // namespace wgt::webgpu
