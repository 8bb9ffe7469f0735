// Launchers of the quantized kernels on WebGPU, every GGUF format (Q8_0, Q4_0, Q4_1, Q4_K,
// Q5_K, Q6_K): y = x W^T (OpKind::QMatMul) encodes the plan of src/webgpu/plans/qmatmul_plan.cpp
// (the streaming matvec q_mv_stream[_sg] for small M; for prefill q_x_f16 + q_matmul_sgmat on
// subgroup matrices, else q_matmul_tiled),
// dequantize (OpKind::QDequantize; q_dequant) and the embedding lookup (OpKind::QGetRows;
// q_get_rows). Weights stay packed in their device buffers; the block constants are injected
// from src/quant/blocks.hpp (QCONST define), never retyped, and the format's shader parts are
// picked by the plan's defines.
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>

#include "quant/blocks.hpp"
#include "webgpu/context.hpp"
#include "webgpu/kernels/rope_append_route.hpp"
#include "webgpu/plans/qmatmul_plan.hpp"

namespace wgt::webgpu {
namespace {

// Mirrors `struct Params` of shaders/q_mv_stream_common.wgsl; the tiled kernel declares only
// its first four fields (a larger uniform buffer is fine).
struct QParams {
  uint32_t m, n, k, row_bytes;
  uint32_t g_off4, eps_bits;  // the fused RMSNorm prologue of the streaming matvec
  uint32_t c_off;             // the addend's element offset (its fused epilogue)
  uint32_t x_off4;            // x's offset in vec4 units (streaming matvec; 0 elsewhere)
  // The rope_append epilogue (matmul_epi_rope_append.wgsl), as MatmulParams: cache row, q and
  // k/v widths, head dim, rotated dims, log2(base), freq_scale, the freq factors' offset.
  uint32_t r_pos, r_qn, r_kvn, r_hd;
  uint32_t r_nrot;
  float r_base_log2, r_freq_scale;
  uint32_t r_f_off;
};
static_assert(sizeof(QParams) == 64, "QParams must match the WGSL Params layout");

// Mirrors `struct Params` of shaders/q_matmul_sgmat.wgsl.
struct QSgParams {
  uint32_t m, n, k, batch_base, a_ms, row_bytes, o_rs, pad;
};
static_assert(sizeof(QSgParams) == 32, "QSgParams must match the WGSL Params layout");

// Mirrors `struct Params` of shaders/q_x_f16.wgsl.
struct QXF16Params {
  uint32_t m, k4, x_off4, pad;
};
static_assert(sizeof(QXF16Params) == 16, "QXF16Params must match the WGSL Params layout");

// The plan of this thread's latest M <= 4 launch, and of its latest M > 4 one (test hooks below).
thread_local QMatmulPlan g_last_matvec;
thread_local QMatmulPlan g_last_prefill;

// Mirrors `struct Params` of shaders/q_dequant.wgsl.
struct QDeqParams {
  uint32_t rows, cols, row_bytes, pad;
};
static_assert(sizeof(QDeqParams) == 16, "QDeqParams must match the WGSL Params layout");

// Mirrors `struct Params` of shaders/q_get_rows.wgsl.
struct QGetRowsParams {
  uint32_t n_ids, cols, row_bytes, rows, nan_bits, flag, pad1, pad2;
};
static_assert(sizeof(QGetRowsParams) == 32, "QGetRowsParams must match the WGSL Params layout");

// The plan of QDequantize (inputs {bytes}) and QGetRows (inputs {bytes, ids i32 [n]}): one
// kernel each, specialised by the block format.
struct QDecodePlan {
  QType qtype = QType::Q8_0;
};

Support check_qdequantize(const Context& ctx, const OpCall& c) {
  const size_t n_in = c.kind == OpKind::QGetRows ? 2 : 1;
  if (c.inputs.size() != n_in) return Support::no(c.name + " expects " + std::to_string(n_in) + " input(s)");
  if (n_in == 2 && (c.inputs[1].dtype() != DType::I32 || c.inputs[1].dim() != 1))
    return Support::no("ids must be a 1-D i32 tensor on the device");
  if (c.attrs.qtype >= kNumQTypes) return Support::no("invalid qtype tag");
  const QType t = static_cast<QType>(c.attrs.qtype);
  const Tensor& w = c.inputs[0];
  if (w.dtype() != DType::U8 || w.dim() != 2 || !w.is_contiguous() || w.offset() != 0)
    return Support::no("packed weight must be a whole contiguous u8 [rows, row_bytes] buffer");
  const QTypeInfo& info = qtype_info(t);
  if (w.size(1) % info.block_bytes != 0) return Support::no("row bytes are not a whole number of blocks");
  const uint64_t out_rows = static_cast<uint64_t>(n_in == 2 ? c.inputs[1].numel() : w.size(0));
  const uint64_t elems = out_rows * static_cast<uint64_t>(w.size(1) / info.block_bytes) * info.block_elems;
  const uint64_t limit = ctx.limits().max_storage_buffer_binding_size;
  if (static_cast<uint64_t>(w.numel()) > limit || elems * 4 > limit) return Support::no("an operand exceeds maxStorageBufferBindingSize");
  if (elems >= (uint64_t{1} << 32) || static_cast<uint64_t>(w.numel()) >= (uint64_t{1} << 32))
    return Support::no("operands above 4 GiB / 2^32 elements");
  return Support::yes();
}

Planned<QDecodePlan> plan_qdecode(const Context& ctx, const OpCall& c) {
  if (Support s = check_qdequantize(ctx, c); !s.ok) return Planned<QDecodePlan>::no(std::move(s.reason));
  return {QDecodePlan{static_cast<QType>(c.attrs.qtype)}, {}};
}

void encode_qdequantize(Context& ctx, OpCall& c, const QDecodePlan& plan) {
  const QType t = plan.qtype;
  const QTypeInfo& info = qtype_info(t);
  const Tensor& w = c.inputs[0];
  const Tensor& y = c.outputs[0];
  QDeqParams p{};
  p.rows = static_cast<uint32_t>(w.size(0));
  p.row_bytes = static_cast<uint32_t>(w.size(1));
  p.cols = p.row_bytes / info.block_bytes * info.block_elems;
  const uint64_t threads = uint64_t{p.rows} * (p.cols / 8);  // one invocation per 8 elements
  if (threads == 0) return;
  Dispatch d;
  static const char family = 0;
  d.pipeline = ctx.pipeline(make_key(&family, static_cast<uint8_t>(t)), [&] {
    return ShaderVariant{"q_dequant", {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", qdecode_part(t)}}};
  });
  d.args = {ctx.arg(w, true), ctx.arg(y, false)};
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((threads + 63) / 64);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

Planned<QMatmulPlan> plan_for(const Context& ctx, const OpCall& c) {
  return plan_qmatmul(Caps::of(ctx), qmatvec_tuning(), c);
}

void encode_qmatmul(Context& ctx, OpCall& c, const QMatmulPlan& plan);

// A sub-call of a route (the plain product): planned here, since no supports() saw it.
void launch_qmatmul(Context& ctx, OpCall& c) {
  Planned<QMatmulPlan> planned = plan_for(ctx, c);
  if (!planned.ok()) throw_error(ErrorKind::Unsupported, c.name, planned.reject);
  encode_qmatmul(ctx, c, planned.plan);
}

// The prefill on subgroup matrices: x rounded to f16 with a power-of-two scale per row
// (q_x_f16, into scratch), then the tiled product that decodes W as it stages it
// (q_matmul_sgmat) and undoes the row scales as it stores y.
void encode_sgmat_prefill(Context& ctx, const QMatmulPlan& plan, const Tensor& x, const Tensor& w, const Tensor& y,
                          const QParams& q) {
  const QMatmulShader& s = plan.shader;
  const Tensor xh = ctx.scratch({int64_t{q.m}, int64_t{q.k}}, DType::F16);
  const Tensor rs = ctx.scratch({int64_t{q.m}}, DType::F32);
  QXF16Params xp{q.m, q.k / 4, static_cast<uint32_t>(x.offset() / 4), 0};
  Dispatch pre;
  static const char pre_family = 0;
  pre.pipeline = ctx.pipeline(make_key(&pre_family, uint8_t{0}), [] { return ShaderVariant{"q_x_f16", {}}; });
  pre.args = {ctx.arg(x, true), ctx.arg(xh, false), ctx.arg(rs, false)};
  pre.params = &xp;
  pre.params_size = sizeof xp;
  std::tie(pre.groups_x, pre.groups_y) = ctx.grid(q.m);  // one workgroup per row
  ctx.dispatch(pre);

  QSgParams p{q.m, q.n, q.k, 0, q.k, q.row_bytes, q.n, 0};
  Dispatch d;
  d.pipeline = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  d.args = {ctx.arg(xh, true), ctx.arg(w, true), ctx.arg(y, false), ctx.arg(rs, true)};
  d.params = &p;
  d.params_size = sizeof p;
  d.groups_x = (q.n + s.bn - 1) / s.bn;
  d.groups_y = (q.m + s.bm - 1) / s.bm;
  ctx.dispatch(d);
}

void encode_qmatmul(Context& ctx, OpCall& c, const QMatmulPlan& plan) {
  const QMatmulShader& s = plan.shader;
  switch (plan.route) {
    case QMatmulRoute::PrologueFirst: {
      OpCall plain = ctx.run_prologue(c);
      return launch_qmatmul(ctx, plain);
    }
    case QMatmulRoute::AddAfter: {
      OpCall plain = c;
      plain.inputs.erase(plain.inputs.begin() + 2);
      plain.attrs.has_bias = false;
      plain.outputs = {ctx.scratch(c.outputs[0].shape(), DType::F32)};
      launch_qmatmul(ctx, plain);
      OpCall sum{OpKind::Binary, "add", {plain.outputs[0], c.inputs[2]}, {c.outputs[0]}, {}};
      sum.attrs.binary = BinaryOp::Add;
      ctx.run_op(sum);
      return;
    }
    case QMatmulRoute::RopeAppendUnfused: return run_rope_append_unfused(ctx, c);
    case QMatmulRoute::Kernel: break;
  }
  const QType t = static_cast<QType>(c.attrs.qtype);
  // x as is where the plan allows (a Tensor copy costs two vector allocations).
  const Tensor x_copy = plan.compact_x ? ctx.compact(c.inputs[0]) : Tensor();
  const Tensor& x = plan.compact_x ? x_copy : c.inputs[0];
  const Tensor& w = c.inputs[1];
  const Tensor& y = c.outputs[0];
  QParams p{};
  p.m = static_cast<uint32_t>(x.size(0));
  p.k = static_cast<uint32_t>(x.size(1));
  p.n = static_cast<uint32_t>(y.size(1));
  p.row_bytes = static_cast<uint32_t>(qtype_row_bytes(t, p.k, "qmatmul_t"));
  p.x_off4 = static_cast<uint32_t>(x.offset() / 4);  // non-zero only for the streaming matvec
  if (uint64_t{p.m} * p.n == 0) return;
  Dispatch d;
  d.args = {ctx.arg(x, true), ctx.arg(w, true), ctx.arg(y, false)};
  d.params = &p;
  d.params_size = sizeof p;
  d.pipeline = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  if (s.kernel == QMatmulKernel::SgMat) {
    g_last_prefill = plan;
    return encode_sgmat_prefill(ctx, plan, x, w, y, p);
  }
  if (s.kernel == QMatmulKernel::Tiled) {
    g_last_prefill = plan;
    const uint32_t tile = 16u * s.tile_t;
    d.groups_x = (p.n + tile - 1) / tile;
    d.groups_y = (p.m + tile - 1) / tile;
    ctx.dispatch(d);
    return;
  }
  g_last_matvec = plan;
  // g (the norm weight) or up as vec4: contiguous from a multiple of 4 elements. Declared
  // here, not in the branch: a compacted copy must outlive the dispatch that binds it.
  Tensor gd;
  if (s.norm || s.silu) {
    gd = c.inputs.back();
    if (!gd.is_contiguous() || gd.offset() % 4 != 0) gd = ctx.compact(gd);
    d.args.push_back(ctx.arg(gd));
    p.g_off4 = static_cast<uint32_t>(gd.offset() / 4);
    const float eps = static_cast<float>(c.attrs.eps);
    std::memcpy(&p.eps_bits, &eps, sizeof eps);
  }
  if (s.add) {  // bound after g
    d.args.push_back(ctx.arg(c.inputs[2]));
    p.c_off = static_cast<uint32_t>(c.inputs[2].offset());
  }
  Tensor freqs;  // kept alive until the dispatch is recorded
  if (s.epi) {  // the caches after g, then the freq factors
    const Tensor &kc = c.inputs[2], &vc = c.inputs[3];
    d.args.push_back(ctx.arg(kc, false));
    d.args.push_back(ctx.arg(vc, false));
    if (s.epi_freqs) {
      freqs = ctx.dense(c.inputs[4]);
      d.args.push_back(ctx.arg(freqs));
      p.r_f_off = static_cast<uint32_t>(freqs.offset());
    }
    p.r_pos = static_cast<uint32_t>(c.attrs.pos_offset);
    p.r_hd = static_cast<uint32_t>(kc.size(2));
    p.r_kvn = static_cast<uint32_t>(kc.size(1) * kc.size(2));
    p.r_qn = p.n - 2 * p.r_kvn;
    p.r_nrot = static_cast<uint32_t>(c.attrs.n_rot);
    p.r_base_log2 = static_cast<float>(std::log2(c.attrs.scalar0));  // as launch_kv_append_rope
    p.r_freq_scale = static_cast<float>(c.attrs.scalar1);
  }
  // one workgroup per (x row, group of warps / ksplit * rows weight rows)
  const uint64_t group_rows = plan.group_rows();
  auto [gx, gy] = ctx.grid(uint64_t{p.m} * ((uint64_t{p.n} + group_rows - 1) / group_rows));
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

void encode_qget_rows(Context& ctx, OpCall& c, const QDecodePlan& plan) {
  const QType t = plan.qtype;
  const QTypeInfo& info = qtype_info(t);
  const Tensor& w = c.inputs[0];
  const Tensor ids = ctx.compact(c.inputs[1]);
  const Tensor& y = c.outputs[0];
  QGetRowsParams p{};
  p.n_ids = static_cast<uint32_t>(ids.numel());
  p.rows = static_cast<uint32_t>(w.size(0));
  p.row_bytes = static_cast<uint32_t>(w.size(1));
  p.cols = p.row_bytes / info.block_bytes * info.block_elems;
  p.nan_bits = 0x7fc00000u;
  const uint64_t threads = uint64_t{p.n_ids} * (p.cols / 8);  // one invocation per 8 elements
  if (threads == 0) return;
  Dispatch d;
  static const char family = 0;
  d.pipeline = ctx.pipeline(make_key(&family, static_cast<uint8_t>(t)), [&] {
    return ShaderVariant{"q_get_rows", {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", qdecode_part(t)}}};
  });
  const Context::StatusFlag st = ctx.status_flag(c.name.c_str());
  p.flag = st.bit;
  d.args = {ctx.arg(w, true), ctx.arg(ids, true), ctx.arg(y, false), st.arg};
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((threads + 63) / 64);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

}  // namespace

// Test hook: the plan of this thread's last M <= 4 qmatmul_t launch (a default plan before
// any), to check on the device what ran. Not declared in a header: the tests declare it.
QMatmulPlan last_qmatvec_plan_for_testing() { return g_last_matvec; }
// The same for M > 4 (the tiled or subgroup-matrix prefill).
QMatmulPlan last_qprefill_plan_for_testing() { return g_last_prefill; }

void register_quant_kernels(KernelRegistry& r) {
  r.add_planned<QDecodePlan, plan_qdecode, encode_qget_rows>(OpKind::QGetRows);
  r.add_planned<QMatmulPlan, plan_for, encode_qmatmul>(OpKind::QMatMul);
  r.add_planned<QDecodePlan, plan_qdecode, encode_qdequantize>(OpKind::QDequantize);
}

}  // namespace wgt::webgpu
