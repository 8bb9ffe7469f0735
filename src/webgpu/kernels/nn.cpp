// Encoders of the transformer ops: Rope, SiluMul, KVAppend (in place into a pinned cache,
// optionally with RoPE of k and of an in-place q in the same dispatch) and Attention (a
// flash-style kernel for prefill, a split-KV kernel plus a reduction pass for decode). The
// choices are plans/nn_plan.cpp's and plans/attention_plan.cpp's; this file turns a plan and
// the call into params and dispatches.
//
// Every operand is bound as array<u32> holding f32 or packed f16 (shaders/ew_f16.wgsl), so
// f16 needs no shader-f16 feature and there is one code path on every adapter. Packed f16 is
// kept even where shader-f16 exists: these kernels are bound by memory traffic, which is the
// same two bytes per element either way, and unpack2x16float is one conversion instruction.
// The exception is the subgroup-matrix prefill kernel (native f16: its fragments are loaded
// from f16 arrays and it exists only where shader-f16 does).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu/kernels/nn.hpp"
#include "webgpu/plans/attention_plan.hpp"
#include "webgpu/plans/nn_plan.hpp"

namespace wgt::webgpu {
namespace {

constexpr uint32_t kEw = 256;  // invocations per workgroup of the elementwise-style kernels

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

const Pipeline* pipeline_of(Context& ctx, const NnPlan& plan) {
  return ctx.pipeline(plan.key(), [&] { return plan.variant(); });
}

// Records a kernel built on shaders/ew_main.wgsl: one invocation per output word covering n
// elements from element out_off (2 per word for f16 outputs, whose boundary words keep the
// neighbouring halves).
void run_words(Context& ctx, const NnPlan& plan, std::vector<Arg> args, const void* params, size_t params_size,
               uint64_t out_off, uint64_t n, DType out_dtype) {
  if (n == 0) return;
  const uint64_t pw = out_dtype == DType::F16 ? 2 : 1;
  const uint64_t words = (out_off + n + pw - 1) / pw - out_off / pw;
  auto [gx, gy] = ctx.grid((words + kEw - 1) / kEw);
  Dispatch d;
  d.pipeline = pipeline_of(ctx, plan);
  d.args = std::move(args);
  d.params = params;
  d.params_size = params_size;
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// ---------------- Rope ----------------

struct RopeParams {  // mirrors Params of rope.wgsl
  uint32_t n, seq, out_off, heads, d, n_rot, neox, pos_offset;
  float base_log2, freq_scale;
  uint32_t x_off, f_off;
};
static_assert(sizeof(RopeParams) == 48, "RopeParams must match rope.wgsl");

struct RopeInplaceParams {  // mirrors Params of rope_inplace.wgsl
  uint32_t units, upr, ppu, seq, heads, n_rot, neox, pos_offset;
  float base_log2, freq_scale;
  uint32_t off, f_off;
  uint32_t st_b, st_s, st_h, st_d;
};
static_assert(sizeof(RopeInplaceParams) == 64, "RopeInplaceParams must match rope_inplace.wgsl");

// The strides of an in-place x as [b, s, h, d] (b = 0 for a 3-D x); a dim of size 1 is never
// stepped along, so its stride is reported as 0.
std::array<int64_t, 4> rope_strides(const Tensor& x) {
  std::array<int64_t, 4> st{0, 0, 0, 0};
  for (int k = 0; k < x.dim(); ++k)
    if (x.shape()[k] > 1) st[4 - x.dim() + k] = x.strides()[k];
  return st;
}

// The rotation fields every rope kernel's params share (rope.wgsl, rope_inplace.wgsl,
// attention_kv_append_rope.wgsl): n_rot, neox, pos_offset, base_log2 (log2 of the base, in
// double on the host) and freq_scale.
template <class P>
void set_rope_fields(P& p, const OpAttrs& a) {
  p.n_rot = u32(a.n_rot);
  p.neox = a.rope_neox ? 1 : 0;
  p.pos_offset = u32(a.pos_offset);
  p.base_log2 = static_cast<float>(std::log2(a.scalar0));
  p.freq_scale = static_cast<float>(a.scalar1);
}

// The factors (the call's last input) as the kernel reads them, appended to args after the
// other arguments, their offset in p.f_off; undefined without factors. The caller keeps the
// returned tensor alive until the dispatch is recorded.
template <class P>
Tensor bind_rope_freqs(Context& ctx, const OpCall& call, std::vector<Arg>& args, P& p) {
  if (!call.attrs.rope_factors) return Tensor();
  Tensor f = ctx.dense(call.inputs.back());
  args.push_back(ctx.arg(f));
  p.f_off = u32(f.offset());
  return f;
}

void encode_rope_inplace(Context& ctx, const OpCall& call, const NnPlan& plan) {
  const Tensor& x = call.inputs[0];
  const bool has_pos = plan.shader.has_pos;
  const Tensor pos = has_pos ? ctx.compact(call.inputs[1]) : Tensor();
  const int r = x.dim();
  const int64_t half = call.attrs.n_rot / 2;
  const int64_t ppu = rope_pairs_per_unit(x.dtype(), call.attrs);
  const int64_t rows = x.numel() / x.shape()[r - 1];
  const auto st = rope_strides(x);
  RopeInplaceParams p{};
  p.upr = u32(half / ppu);
  p.units = u32(rows * (half / ppu));
  p.ppu = u32(ppu);
  p.seq = u32(x.shape()[r - 3]);
  p.heads = u32(x.shape()[r - 2]);
  set_rope_fields(p, call.attrs);
  p.off = u32(x.offset());
  p.st_b = u32(st[0]);
  p.st_s = u32(st[1]);
  p.st_h = u32(st[2]);
  p.st_d = u32(st[3]);
  if (p.units == 0) return;
  auto [gx, gy] = ctx.grid((uint64_t{p.units} + kEw - 1) / kEw);
  Dispatch d;
  d.pipeline = pipeline_of(ctx, plan);
  d.args = {ctx.arg(x, false)};
  if (has_pos) d.args.push_back(ctx.arg(pos));
  const Tensor freqs = bind_rope_freqs(ctx, call, d.args, p);
  d.params = &p;
  d.params_size = sizeof p;
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

void encode_rope(Context& ctx, const OpCall& call, const NnPlan& plan) {
  if (plan.shader.kernel == NnKernel::RopeInplace) return encode_rope_inplace(ctx, call, plan);
  const Tensor x = ctx.compact(call.inputs[0]);
  const bool has_pos = plan.shader.has_pos;
  const Tensor pos = has_pos ? ctx.compact(call.inputs[1]) : x;
  const Tensor& y = call.outputs[0];
  const int r = x.dim();
  RopeParams p{};
  p.n = u32(y.numel());
  p.seq = u32(x.shape()[r - 3]);
  p.heads = u32(x.shape()[r - 2]);
  p.d = u32(x.shape()[r - 1]);
  set_rope_fields(p, call.attrs);
  p.out_off = u32(y.offset());
  std::vector<Arg> args{ctx.arg(x), ctx.arg(pos), ctx.arg(y, false)};
  const Tensor freqs = bind_rope_freqs(ctx, call, args, p);
  run_words(ctx, plan, std::move(args), &p, sizeof p, y.offset(), y.numel(), y.dtype());
}

// ---------------- SiluMul ----------------

struct SiluParams {  // mirrors Params of silu_mul.wgsl
  uint32_t n, a_off, out_off, b_off;
};
static_assert(sizeof(SiluParams) == 16, "SiluParams must match silu_mul.wgsl");

void encode_silu_mul(Context& ctx, const OpCall& call, const NnPlan& plan) {
  // Offsets travel as params: the gate and up halves of a fused projection are read in place.
  const Tensor a = ctx.dense(call.inputs[0]), b = ctx.dense(call.inputs[1]);
  const Tensor& y = call.outputs[0];
  SiluParams p{u32(y.numel()), u32(a.offset()), u32(y.offset()), u32(b.offset())};
  run_words(ctx, plan, {ctx.arg(a), ctx.arg(b), ctx.arg(y, false)}, &p, sizeof p, y.offset(), y.numel(), y.dtype());
}

// ---------------- KVAppend ----------------

struct AppendParams {  // mirrors Params of attention_kv_append.wgsl
  uint32_t n, src_off, out_off, pad0;
};
static_assert(sizeof(AppendParams) == 16, "AppendParams must match attention_kv_append.wgsl");

struct Append2Params {  // mirrors Params of attention_kv_append2.wgsl
  uint32_t words, k_src_off, v_src_off, out_word;
};
static_assert(sizeof(Append2Params) == 16, "Append2Params must match attention_kv_append2.wgsl");

struct AppendRopeParams {  // mirrors Params of attention_kv_append_rope.wgsl
  uint32_t words, k_src_off, v_src_off, out_word;
  uint32_t q_units, upr, ppu, q_heads;
  uint32_t row, d, n_rot, neox;
  uint32_t pos_offset;
  float base_log2, freq_scale;
  uint32_t q_off;
  uint32_t st_s, st_h, st_d, f_off;
};
static_assert(sizeof(AppendRopeParams) == 80, "AppendRopeParams must match attention_kv_append_rope.wgsl");

void append_one(Context& ctx, const Tensor& cache, const Tensor& src_in, int64_t pos) {
  const Tensor src = ctx.dense(src_in);  // a slice of a fused QKV output: read in place
  const int64_t row = cache.shape()[1] * cache.shape()[2];
  const int64_t dst = pos * row;
  AppendParams p{u32(src.numel()), u32(src.offset()), u32(dst), 0};
  run_words(ctx, plan_kv_append_one(cache, src), {ctx.arg(cache, false), ctx.arg(src)}, &p, sizeof p, dst,
            src.numel(), cache.dtype());
}

void encode_kv_append(Context& ctx, OpCall& call, const NnPlan& plan);

// The rope append's composition (NnRoute::KvAppendRopeUnfused): rope_inplace on q, rope of k
// into a scratch tensor, and the plain append: the one-dispatch kernel's result in three.
void kv_append_rope_unfused(Context& ctx, const OpCall& call) {
  const Tensor &kc = call.inputs[0], &vc = call.inputs[2], &q = call.inputs[4];
  const Tensor ks = ctx.dense(call.inputs[1]), vs = ctx.dense(call.inputs[3]);
  OpCall rq{OpKind::Rope, "rope_", {q}, {}, call.attrs, 0.0, {}};
  OpCall rk{OpKind::Rope, "rope", {ks}, {ctx.scratch(ks.shape(), ks.dtype())}, call.attrs, 0.0, {}};
  if (call.attrs.rope_factors) {  // the Rope calls' last input, as this call's
    rq.inputs.push_back(call.inputs[5]);
    rk.inputs.push_back(call.inputs[5]);
  }
  encode_rope(ctx, rq, plan_rope_call(rq));
  encode_rope(ctx, rk, plan_rope_call(rk));
  OpCall ap{OpKind::KVAppend, call.name, {kc, rk.outputs[0], vc, vs}, {}, call.attrs, 0.0, {}};
  ap.attrs.n_rot = 0;
  ap.attrs.rope_factors = false;
  Planned<NnPlan> pa = plan_nn(Caps::of(ctx), ap);
  if (!pa.ok()) throw_error(ErrorKind::Unsupported, call.name, pa.reject);
  encode_kv_append(ctx, ap, pa.plan);
}

void encode_kv_append_rope(Context& ctx, const OpCall& call, const NnPlan& plan) {
  const Tensor &kc = call.inputs[0], &vc = call.inputs[2], &q = call.inputs[4];
  const Tensor ks = ctx.dense(call.inputs[1]), vs = ctx.dense(call.inputs[3]);
  const int64_t pos = call.attrs.pos_offset, n = ks.numel();
  if (n == 0) return;
  const int64_t pw = kc.dtype() == DType::F16 ? 2 : 1;
  const int64_t ppu = rope_pairs_per_unit(q.dtype(), call.attrs);
  const auto st = rope_strides(q);
  AppendRopeParams p{};
  p.words = u32(n / pw);
  p.k_src_off = u32(ks.offset());
  p.v_src_off = u32(vs.offset());
  p.out_word = u32(pos * kc.shape()[1] * kc.shape()[2] / pw);
  p.upr = u32(call.attrs.n_rot / 2 / ppu);
  p.q_units = u32(q.shape()[0] * q.shape()[1] * p.upr);
  p.ppu = u32(ppu);
  p.q_heads = u32(q.shape()[1]);
  p.row = u32(kc.shape()[1] * kc.shape()[2]);
  p.d = u32(kc.shape()[2]);
  set_rope_fields(p, call.attrs);  // pos_offset = pos
  p.q_off = u32(q.offset());
  p.st_s = u32(st[1]);
  p.st_h = u32(st[2]);
  p.st_d = u32(st[3]);
  Dispatch d;
  d.pipeline = pipeline_of(ctx, plan);
  d.args = {ctx.arg(kc, false), ctx.arg(vc, false)};
  if (plan.shader.q_shared) {
    d.args.push_back(ctx.arg(q, false));
  } else {
    d.args.insert(d.args.end(), {ctx.arg(ks), ctx.arg(vs), ctx.arg(q, false)});
  }
  const Tensor freqs = bind_rope_freqs(ctx, call, d.args, p);
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((2 * uint64_t{p.words} + p.q_units + kEw - 1) / kEw);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

void encode_kv_append(Context& ctx, OpCall& call, const NnPlan& plan) {
  if (plan.route == NnRoute::KvAppendRopeUnfused) return kv_append_rope_unfused(ctx, call);
  if (plan.shader.kernel == NnKernel::KvAppendRope) return encode_kv_append_rope(ctx, call, plan);
  const int64_t pos = call.attrs.pos_offset;
  if (call.inputs.size() == 2) return append_one(ctx, call.inputs[0], call.inputs[1], pos);
  const Tensor &kc = call.inputs[0], &vc = call.inputs[2];
  const Tensor ks = ctx.dense(call.inputs[1]), vs = ctx.dense(call.inputs[3]);
  if (plan.route == NnRoute::KvAppendEach) {
    append_one(ctx, kc, ks, pos);
    append_one(ctx, vc, vs, pos);
    return;
  }
  // Both caches in one dispatch: every written word belongs to the new rows alone.
  const int64_t row = kc.shape()[1] * kc.shape()[2];
  const int64_t pw = kc.dtype() == DType::F16 ? 2 : 1;
  const int64_t dst = pos * row, n = ks.numel();
  if (n == 0) return;
  Append2Params p{u32(n / pw), u32(ks.offset()), u32(vs.offset()), u32(dst / pw)};
  Dispatch d;
  d.pipeline = pipeline_of(ctx, plan);
  d.args = {ctx.arg(kc, false), ctx.arg(vc, false), ctx.arg(ks), ctx.arg(vs)};
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((2 * static_cast<uint64_t>(n / pw) + kEw - 1) / kEw);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

Planned<NnPlan> plan_nn_for(const Context& ctx, const OpCall& call) { return plan_nn(Caps::of(ctx), call); }

void encode_nn(Context& ctx, OpCall& call, const NnPlan& plan) {
  switch (call.kind) {
    case OpKind::Rope: return encode_rope(ctx, call, plan);
    case OpKind::SiluMul: return encode_silu_mul(ctx, call, plan);
    default: return encode_kv_append(ctx, call, plan);
  }
}

// ---------------- Attention ----------------

struct AttnParams {  // mirrors AttnParams of attention_common.wgsl
  uint32_t lq, lk, heads, kv_heads;
  uint32_t group, causal, has_mask, n_split;
  uint32_t chunk, q_off, k_off, v_off;
  uint32_t m_off;
  float scale;
  uint32_t inf_bits = 0x7f800000u;  // the shaders' inf / NaN (attention_common.wgsl)
  uint32_t pad1;
};
static_assert(sizeof(AttnParams) == 64, "AttnParams must match attention_common.wgsl");

// The plan of this thread's latest attention launch, for attention_last_shader() (its name is
// built only when asked: the launch path stays free of string work).
thread_local AttnPlan g_last_attn;
thread_local bool g_have_last_attn = false;

Planned<AttnPlan> plan_attention_for(const Context& ctx, const OpCall& call) {
  return plan_attention(Caps::of(ctx), attention_tuning(), call);
}

void encode_attention(Context& ctx, OpCall& call, const AttnPlan& plan) {
  const Tensor& o = call.outputs[0];
  if (plan.empty || o.numel() == 0) return;
  const Tensor q = ctx.compact(call.inputs[0]), k = ctx.compact(call.inputs[1]), v = ctx.compact(call.inputs[2]);
  const bool has_mask = call.attrs.has_mask;
  const Tensor m = has_mask ? ctx.compact(call.inputs[3]) : q;
  const int64_t lq = q.shape()[0], heads = q.shape()[1], d = q.shape()[2];
  const int64_t lk = k.shape()[0], kv_heads = k.shape()[1];
  AttnParams p{};
  p.lq = u32(lq);
  p.lk = u32(lk);
  p.heads = u32(heads);
  p.kv_heads = u32(kv_heads);
  p.group = u32(kv_heads ? heads / kv_heads : 0);
  p.causal = call.attrs.causal ? 1 : 0;
  p.has_mask = has_mask ? 1 : 0;
  p.scale = static_cast<float>(call.attrs.scalar0);
  const Pipeline* first = ctx.pipeline(plan.key(), [&] { return plan.variant(); });
  g_last_attn = plan;
  g_have_last_attn = true;

  if (plan.shader.kernel == AttnKernel::PrefillSg) {
    const int64_t rows = prefill_sg_rows(plan.shader);
    Dispatch dp;
    dp.pipeline = first;
    dp.args = {ctx.arg(q), ctx.arg(k), ctx.arg(v), ctx.arg(o, false)};
    dp.params = &p;
    dp.params_size = sizeof p;
    dp.groups_x = u32((lq + rows - 1) / rows);
    dp.groups_y = u32(heads / plan.shader.hpw);
    ctx.dispatch(dp);
    return;
  }
  if (plan.shader.kernel == AttnKernel::Prefill) {
    Dispatch dp;
    dp.pipeline = first;
    dp.args = {ctx.arg(q), ctx.arg(k), ctx.arg(v), ctx.arg(m), ctx.arg(o, false)};
    dp.params = &p;
    dp.params_size = sizeof p;
    dp.groups_x = u32((lq + kPrefillBQ - 1) / kPrefillBQ);
    dp.groups_y = u32(heads);
    ctx.dispatch(dp);
    return;
  }

  // Decode, pass 1: partial states per key split, in scratch tensors that die with this call
  // (the pool keeps their buffers alive until the recorded work has been submitted).
  p.n_split = plan.n_split;
  p.chunk = plan.chunk;
  Dispatch d1;
  d1.pipeline = first;
  d1.args = {ctx.arg(q), ctx.arg(k), ctx.arg(v), ctx.arg(m)};
  d1.params = &p;
  d1.params_size = sizeof p;
  d1.groups_x = plan.n_split;
  d1.groups_y = u32(kv_heads);
  d1.groups_z = u32(lq);
  if (plan.shader.direct) {  // one split: pass 1 stores O itself, no pass 2
    d1.args.push_back(ctx.arg(o, false));
    ctx.dispatch(d1);
    return;
  }
  Tensor part_acc = Tensor::empty({lq * heads * plan.n_split * d}, DType::F32, o.device());
  Tensor part_ml = Tensor::empty({lq * heads * plan.n_split * 2}, DType::F32, o.device());
  d1.args.push_back(ctx.arg(part_acc, false));
  d1.args.push_back(ctx.arg(part_ml, false));
  ctx.dispatch(d1);

  // Pass 2: one workgroup per (query * head, block of 32 head dims).
  auto [gx, gy] = ctx.grid(static_cast<uint64_t>(lq * heads));
  Dispatch d2;
  d2.pipeline = ctx.pipeline(plan.reduce_key(), [&] { return plan.reduce_variant(); });
  d2.args = {ctx.arg(part_acc), ctx.arg(part_ml), ctx.arg(o, false)};
  d2.params = &p;
  d2.params_size = sizeof p;
  d2.groups_x = gx;
  d2.groups_y = gy;
  d2.groups_z = u32((d + 31) / 32);
  ctx.dispatch(d2);
}

}  // namespace

const std::string& attention_last_shader() {
  thread_local std::string name;
  name = g_have_last_attn ? g_last_attn.variant().shader : std::string();
  return name;
}

void register_nn_kernels(KernelRegistry& r) {
  for (OpKind k : {OpKind::Rope, OpKind::SiluMul, OpKind::KVAppend}) r.add_planned<NnPlan, plan_nn_for, encode_nn>(k);
  r.add_planned<AttnPlan, plan_attention_for, encode_attention>(OpKind::Attention);
}

}  // namespace wgt::webgpu
