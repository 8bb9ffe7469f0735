// WebGPU launchers of the sparse CSR ops (contracts: src/sparse/sparse_ops.cpp): SpMM/SpMV
// with the schedule the front-end chose from the matrix's row statistics, SDDMM, the
// per-row reductions and softmax, and sparse + dense. Index arrays are i32 or i64 (the low
// word is read; every index and nnz fit in 31 bits, which the checks make sure of);
// values f32, f16 or bf16 (packed), accumulated in f32. A batch of matrices sharing the
// pattern runs member by member.
#include <algorithm>
#include <cstdint>
#include <string>

#include "webgpu/kernels/sparse.hpp"

#include "sparse/sparse_batch.hpp"
#include "webgpu/context.hpp"
#include "webgpu/plans/sparse_plan.hpp"
#include "wgt/sparse.hpp"

namespace wgt::webgpu {
namespace {

constexpr int64_t kU31 = int64_t{1} << 31;

thread_local std::string g_last_spmm;

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

int value_type(DType dt) {
  switch (dt) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::BF16: return 2;
    default: return -1;
  }
}

std::string iw(const Tensor& idx) { return idx.dtype() == DType::I64 ? "2" : "1"; }

// Largest element offset a strided view reaches (strides are >= 0 for every view).
int64_t last_elem(const Tensor& t) {
  int64_t e = t.offset();
  for (int d = 0; d < t.dim(); ++d) e += (t.size(d) - 1) * t.strides()[d];
  return e;
}

// The CSR arrays: index dtype, 1-D, sizes inside the kernels' 31-bit element arithmetic.
Support check_csr(const Tensor& ip, const Tensor* ix) {
  if (ip.dtype() != DType::I32 && ip.dtype() != DType::I64) return Support::no("indptr must be i32 or i64");
  if (ix && ix->dtype() != ip.dtype()) return Support::no("indptr and indices differ in dtype");
  if (ip.numel() >= kU31 || (ix && ix->numel() >= kU31)) return Support::no("2^31 or more rows or stored entries");
  return Support::yes();
}

Support check_value(const Tensor& t, const char* what) {
  if (value_type(t.dtype()) < 0) return Support::no(std::string(what) + " dtype " + dtype_name(t.dtype()) + " (WebGPU: f32, f16, bf16)");
  for (int d = 0; d < t.dim(); ++d)
    if (t.strides()[d] < 0) return Support::no("negative strides");
  if (t.numel() > 0 && last_elem(t) >= kU31) return Support::no(std::string(what) + " reaches past element 2^31");
  return Support::yes();
}

void launch(Context& ctx, const ShaderVariant& v, std::vector<Arg> args, const void* params, size_t size,
            uint64_t groups) {
  if (groups == 0) return;
  auto [gx, gy] = ctx.grid(groups);
  Dispatch d;
  d.pipeline = ctx.pipeline(v);
  d.args = std::move(args);
  d.params = params;
  d.params_size = size;
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

int64_t pow2_at_least(int64_t v, int64_t cap) {
  int64_t p = 1;
  while (p < v && p < cap) p *= 2;
  return p;
}

// ---------------- SpMM / SpMV ----------------

struct SpmmParams {
  uint32_t count, list_off, n, y_off;
  uint32_t ip_off, ix_off, v_off, b_off;
  uint32_t bs0, bs1, pad0, pad1;
};
static_assert(sizeof(SpmmParams) == 48, "mirrors Params of sparse_spmm.wgsl");

struct MergeParams {
  uint32_t rows, nnz, n, y_off;
  uint32_t ip_off, ix_off, v_off, b_off;
  uint32_t bs0, bs1, groups, pad0;
};
static_assert(sizeof(MergeParams) == 48, "mirrors Params of sparse_merge*.wgsl");

struct AdaptiveParams {
  uint32_t blocks, rb_off, y_off, ip_off;
  uint32_t ix_off, v_off, b_off, bs0;
};
static_assert(sizeof(AdaptiveParams) == 32, "mirrors Params of sparse_adaptive*.wgsl");

Planned<SpmmPlan> plan_spmm_for(const Context&, const OpCall& call) { return plan_spmm(call); }

// The merge path: partition, main pass, fix-up of the rows that cross workgroups.
void launch_merge(Context& ctx, const SpmmPlan& plan, const Tensor& ip, const Tensor& ix, const Tensor& v,
                  const Tensor& b, const Tensor& y) {
  const int64_t rows = ip.numel() - 1, n = b.dim() == 1 ? 1 : b.size(1);
  MergeParams p{u32(rows), u32(ix.numel()), u32(n), u32(y.offset()), u32(ip.offset()), u32(ix.offset()),
                u32(v.offset()), u32(b.offset()), u32(b.strides()[0]), b.dim() == 2 ? u32(b.strides()[1]) : 0,
                u32(plan.groups), 0};
  const Tensor carry = ctx.scratch({static_cast<int64_t>(plan.carry_words(n))}, DType::F32);
  auto pass = [&](int which, std::vector<Arg> args, uint64_t groups) {
    launch(ctx, plan.merge_variant(which, ip.dtype(), v.dtype()), std::move(args), &p, sizeof p, groups);
  };
  pass(0, {ctx.arg(ip), ctx.arg(carry, false)}, (plan.groups + 1 + 255) / 256);
  pass(1, {ctx.arg(ip), ctx.arg(ix), ctx.arg(v), ctx.arg(b), ctx.arg(carry, false), ctx.arg(y, false)}, plan.groups);
  pass(2, {ctx.arg(carry), ctx.arg(y, false)}, (plan.groups * static_cast<uint64_t>(n) + 255) / 256);
}

// The Adaptive SpMV: a workgroup per row block, then (where rows are split over blocks) the
// fix-up pass that adds each split row's partial sums.
void launch_adaptive(Context& ctx, const SpmmPlan& plan, const Tensor& ip, const Tensor& ix, const Tensor& v,
                     const Tensor& x, const Tensor& blocks, const Tensor& y) {
  AdaptiveParams p{u32(plan.groups), u32(blocks.offset()), u32(y.offset()), u32(ip.offset()),
                   u32(ix.offset()), u32(v.offset()), u32(x.offset()), u32(x.strides()[0])};
  // Partial sums of the split rows' chunks, one f32 per block (only chunks write theirs).
  const Tensor carry = ctx.scratch({plan.fixup ? static_cast<int64_t>(plan.groups) : 1}, DType::F32);
  launch(ctx, plan.adaptive_variant(0, ip.dtype(), v.dtype()),
         {ctx.arg(ip), ctx.arg(ix), ctx.arg(v), ctx.arg(x), ctx.arg(blocks), ctx.arg(carry, false), ctx.arg(y, false)}, &p,
         sizeof p, plan.groups);
  if (plan.fixup)
    launch(ctx, plan.adaptive_variant(1, ip.dtype(), v.dtype()), {ctx.arg(blocks), ctx.arg(carry), ctx.arg(y, false)},
           &p, sizeof p, (plan.groups + 255) / 256);
}

void encode_spmm(Context& ctx, OpCall& call, const SpmmPlan& plan) {
  const Tensor ip = ctx.dense(call.inputs[0]), ix = ctx.dense(call.inputs[1]), v = ctx.dense(call.inputs[2]);
  const Tensor& b = call.inputs[3];
  const Tensor& y = call.outputs[0];
  const int64_t rows = ip.numel() - 1, n = b.dim() == 1 ? 1 : b.size(1);
  g_last_spmm = plan.name();
  if (rows == 0 || n == 0) return;
  if (plan.kernel == SpmmKernel::Merge) return launch_merge(ctx, plan, ip, ix, v, b, y);
  if (plan.kernel == SpmmKernel::Adaptive)
    return launch_adaptive(ctx, plan, ip, ix, v, b, ctx.dense(call.inputs[5]), y);
  SpmmParams p{};
  p.n = u32(n);
  p.y_off = u32(y.offset());
  p.ip_off = u32(ip.offset());
  p.ix_off = u32(ix.offset());
  p.v_off = u32(v.offset());
  p.b_off = u32(b.offset());
  p.bs0 = u32(b.strides()[0]);
  p.bs1 = b.dim() == 2 ? u32(b.strides()[1]) : 0;
  const int64_t C = plan.cols;
  // The bin list is read only by the binned schedule; any buffer fills its slot otherwise.
  const Tensor& list = call.inputs[4];
  auto run = [&](int64_t lanes, bool use_list, int64_t first, int64_t count) {
    const int64_t L = std::max<int64_t>(1, std::min(lanes, 256 / C));
    const int64_t R = 256 / (L * C);
    SpmmParams q = p;
    q.count = u32(count);
    q.list_off = u32(first + (use_list ? list.offset() : 0));
    launch(ctx, plan.rows_variant(static_cast<uint32_t>(L), use_list, ip.dtype(), v.dtype()), {ctx.arg(ip), ctx.arg(ix), ctx.arg(v), ctx.arg(b), ctx.arg(list), ctx.arg(y, false)}, &q,
           sizeof q, static_cast<uint64_t>((count + R - 1) / R));
  };
  if (plan.kernel == SpmmKernel::Binned) {
    for (int bin = 0; bin < CsrRowStats::kBins; ++bin) {
      const int64_t b0 = call.attrs.sp_bin_start[bin], b1 = call.attrs.sp_bin_start[bin + 1];
      if (b1 > b0) run(CsrRowStats::kBinLanes[bin], true, b0, b1 - b0);
    }
  } else {
    run(plan.lanes, false, 0, rows);
  }
}

// ---------------- row reductions, softmax ----------------

struct RowsParams {
  uint32_t rows, ip_off, v_off, y_off;
  uint32_t zero, pad0, pad1, pad2;
};

// The row kernel's shape: lanes per row and the operation (0 sum, 1 max, 2 softmax).
struct SpRowsPlan {
  int64_t lanes = 1;
  int op = 0;
  bool operator==(const SpRowsPlan&) const = default;
};

Planned<SpRowsPlan> plan_rows(const Context&, const OpCall& call) {
  using P = Planned<SpRowsPlan>;
  if (call.inputs.size() != 2) return P::no("expects {indptr, values}");
  if (Support s = check_csr(call.inputs[0], nullptr); !s.ok) return P::no(s.reason);
  if (call.kind == OpKind::SpRowReduce && call.attrs.reduce != ReduceOp::Sum && call.attrs.reduce != ReduceOp::Max)
    return P::no("row reductions are sum and max");
  if (Support s = check_value(call.inputs[1], "values"); !s.ok) return P::no(s.reason);
  SpRowsPlan p;
  // Lanes per row from the mean row length: a few entries per lane.
  const int64_t rows = call.inputs[0].numel() - 1;
  p.lanes = pow2_at_least(std::max<int64_t>(1, call.inputs[1].numel() / std::max<int64_t>(1, rows) / 4), 32);
  p.op = call.kind == OpKind::SpSoftmax ? 2 : call.attrs.reduce == ReduceOp::Max ? 1 : 0;
  return {p, {}};
}

void encode_rows(Context& ctx, OpCall& call, const SpRowsPlan& plan) {
  const Tensor ip = ctx.dense(call.inputs[0]), v = ctx.dense(call.inputs[1]);
  const Tensor& y = call.outputs[0];
  const int64_t rows = ip.numel() - 1;
  if (rows == 0) return;
  const int64_t L = plan.lanes;
  RowsParams p{u32(rows), u32(ip.offset()), u32(v.offset()), u32(y.offset()), 0, 0, 0, 0};
  ShaderVariant var{"sparse_rows",
                    {{"IW", iw(ip)}, {"VT", std::to_string(value_type(v.dtype()))}, {"L", std::to_string(L)},
                     {"OP", std::to_string(plan.op)}}};
  launch(ctx, var, {ctx.arg(ip), ctx.arg(v), ctx.arg(y, false)}, &p, sizeof p,
         static_cast<uint64_t>((rows + 256 / L - 1) / (256 / L)));
}

// ---------------- SDDMM ----------------

struct SddmmParams {
  uint32_t nnz, rows, kdim, y_off;
  uint32_t ip_off, ix_off, x_off, w_off;
  uint32_t xs0, xs1, ws0, ws1;
};

// SDDMM and sparse + dense have one kernel each, with nothing to choose: their plan is the
// capability check's verdict.
struct SpCheckedPlan {
  bool operator==(const SpCheckedPlan&) const = default;
};

Planned<SpCheckedPlan> checked(Support s) {
  return s.ok ? Planned<SpCheckedPlan>{} : Planned<SpCheckedPlan>::no(std::move(s.reason));
}

Support check_sddmm(const OpCall& call) {
  if (call.inputs.size() != 4) return Support::no("expects {indptr, indices, x, y}");
  const Tensor &ip = call.inputs[0], &ix = call.inputs[1], &x = call.inputs[2], &w = call.inputs[3];
  if (Support s = check_csr(ip, &ix); !s.ok) return s;
  if (Support s = check_value(x, "x"); !s.ok) return s;
  if (Support s = check_value(w, "y"); !s.ok) return s;
  if (x.dtype() != w.dtype()) return Support::no("x and y differ in dtype");
  return Support::yes();
}

Planned<SpCheckedPlan> plan_sddmm(const Context&, const OpCall& call) { return checked(check_sddmm(call)); }

void encode_sddmm(Context& ctx, OpCall& call, const SpCheckedPlan&) {
  const Tensor ip = ctx.dense(call.inputs[0]), ix = ctx.dense(call.inputs[1]);
  const Tensor &x = call.inputs[2], &w = call.inputs[3];
  const Tensor& y = call.outputs[0];
  const int64_t nnz = ix.numel();
  if (nnz == 0) return;
  SddmmParams p{u32(nnz), u32(ip.numel() - 1), u32(x.size(1)), u32(y.offset()),
                u32(ip.offset()), u32(ix.offset()), u32(x.offset()), u32(w.offset()),
                u32(x.strides()[0]), u32(x.strides()[1]), u32(w.strides()[0]), u32(w.strides()[1])};
  ShaderVariant var{"sparse_sddmm", {{"IW", iw(ip)}, {"VT", std::to_string(value_type(x.dtype()))}}};
  launch(ctx, var, {ctx.arg(ip), ctx.arg(ix), ctx.arg(x), ctx.arg(w), ctx.arg(y, false)}, &p, sizeof p,
         static_cast<uint64_t>((nnz + 255) / 256));
}

// ---------------- sparse + dense ----------------

struct AddParams {
  uint32_t rows, cols, y_off, ip_off;
  uint32_t ix_off, v_off, pad0, pad1;
};

Support check_add(const OpCall& call) {
  if (call.inputs.size() != 4) return Support::no("expects {indptr, indices, values, dense}");
  if (Support s = check_csr(call.inputs[0], &call.inputs[1]); !s.ok) return s;
  if (Support s = check_value(call.inputs[2], "values"); !s.ok) return s;
  if (Support s = check_value(call.inputs[3], "dense operand"); !s.ok) return s;
  if (call.inputs[2].dtype() != call.inputs[3].dtype()) return Support::no("values and dense operand differ in dtype");
  if (call.inputs[3].numel() >= kU31) return Support::no("dense operand of 2^31 or more elements");
  return Support::yes();
}

Planned<SpCheckedPlan> plan_add(const Context&, const OpCall& call) { return checked(check_add(call)); }

void encode_add(Context& ctx, OpCall& call, const SpCheckedPlan&) {
  const Tensor ip = ctx.dense(call.inputs[0]), ix = ctx.dense(call.inputs[1]), v = ctx.dense(call.inputs[2]);
  Tensor& y = call.outputs[0];
  OpCall copy{OpKind::Copy, call.name, {call.inputs[3]}, {y}, {}};
  ctx.run_op(copy);
  const int64_t rows = ip.numel() - 1;
  if (rows == 0 || ix.numel() == 0) return;
  AddParams p{u32(rows), u32(y.size(1)), u32(y.offset()), u32(ip.offset()), u32(ix.offset()), u32(v.offset()), 0, 0};
  launch(ctx, {"sparse_add_dense", {{"IW", iw(ip)}, {"VT", std::to_string(value_type(v.dtype()))}}}, {ctx.arg(ip), ctx.arg(ix), ctx.arg(v), ctx.arg(y, false)}, &p,
         sizeof p, static_cast<uint64_t>((rows + 255) / 256));
}

// ---------------- batches ----------------

// A batch of matrices (sparse/sparse_batch.hpp) runs member by member, each one the
// single-matrix call on views. Members share every shape, so one plan serves them all
// unless it depends on their offsets: the range checks, which the last member (at the
// largest offsets) decides, and SpMM's vec4 alignment, which holds for every member iff it
// holds for members 0 and 1 (member b's offsets are affine in b). So the plan is the last
// member's, checked equal to those of members 0 and 1; where they differ (a batch stride
// that breaks vec4 alignment) each member is planned as it runs, as it must be.
template <class P>
struct BatchPlan {
  P member;
  bool per_member = false;
};

template <class P, Planned<P> (*Plan)(const Context&, const OpCall&)>
Planned<BatchPlan<P>> plan_batched(const Context& ctx, const OpCall& call) {
  using R = Planned<BatchPlan<P>>;
  const int64_t n = sparse_detail::call_batch(call);
  Planned<P> last = Plan(ctx, n > 0 ? sparse_detail::call_member(call, n - 1) : call);
  if (!last.ok()) return R::no(std::move(last.reject));
  BatchPlan<P> bp{std::move(last.plan)};
  for (int64_t b : {int64_t{0}, int64_t{1}})
    if (b < n - 1) {
      const Planned<P> m = Plan(ctx, sparse_detail::call_member(call, b));
      if (!m.ok() || !(m.plan == bp.member)) bp.per_member = true;
    }
  return {std::move(bp), {}};
}

template <class P, Planned<P> (*Plan)(const Context&, const OpCall&), void (*Encode)(Context&, OpCall&, const P&)>
void encode_batched(Context& ctx, OpCall& call, const BatchPlan<P>& plan) {
  auto one = [&](OpCall& m) {
    if (!plan.per_member) return Encode(ctx, m, plan.member);
    const Planned<P> p = Plan(ctx, m);
    if (!p.ok()) throw_error(ErrorKind::Unsupported, m.name, p.reject);
    Encode(ctx, m, p.plan);
  };
  if (!sparse_detail::for_each_member(call, one)) Encode(ctx, call, plan.member);
}

template <class P, Planned<P> (*Plan)(const Context&, const OpCall&), void (*Encode)(Context&, OpCall&, const P&)>
void add_batched(KernelRegistry& r, OpKind kind) {
  r.add_planned<BatchPlan<P>, plan_batched<P, Plan>, encode_batched<P, Plan, Encode>>(kind);
}

}  // namespace

const std::string& spmm_last_plan() { return g_last_spmm; }

void register_sparse_kernels(KernelRegistry& r) {
  add_batched<SpmmPlan, plan_spmm_for, encode_spmm>(r, OpKind::SpMM);
  add_batched<SpRowsPlan, plan_rows, encode_rows>(r, OpKind::SpRowReduce);
  add_batched<SpRowsPlan, plan_rows, encode_rows>(r, OpKind::SpSoftmax);
  add_batched<SpCheckedPlan, plan_sddmm, encode_sddmm>(r, OpKind::SDDMM);
  add_batched<SpCheckedPlan, plan_add, encode_add>(r, OpKind::SpAddDense);
}

}  // namespace wgt::webgpu
