// WebGPU launchers of the transformer ops: Rope, SiluMul, KVAppend (in place into a pinned
// cache, optionally with RoPE of k and of an in-place q in the same dispatch) and Attention — a flash-style kernel for prefill (attention_prefill.wgsl) and a
// split-KV kernel plus a reduction pass for decode (attention_decode*.wgsl).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "runtime/settings.hpp"
#include "webgpu/context.hpp"

namespace wgt::webgpu {
namespace {

constexpr uint32_t kEw = 256;  // invocations per workgroup of the elementwise-style kernels

// Every operand is bound as array<u32> holding f32 or packed f16 (shaders/ew_f16.wgsl), so
// f16 needs no shader-f16 feature and there is one code path on every adapter. Packed f16 is
// kept even where shader-f16 exists: these kernels are bound by memory traffic, which is the
// same two bytes per element either way, and unpack2x16float is one conversion instruction.
const char* f16_flag(DType t) { return t == DType::F16 ? "true" : "false"; }
uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

Support float_dtype(DType t, const char* what) {
  if (t != DType::F32 && t != DType::F16)
    return Support::no(std::string(what) + " dtype " + dtype_name(t) + " not supported (f32, f16)");
  return Support::yes();
}

// Element indices travel as u32.
Support small_enough(const OpCall& call) {
  for (const auto* list : {&call.inputs, &call.outputs})
    for (const Tensor& t : *list)
      if (t.defined() && t.storage()->nbytes() / dtype_size(t.dtype()) >= (uint64_t{1} << 31))
        return Support::no("more than 2^31 elements in one buffer");
  return Support::yes();
}

// Records a kernel built on shaders/ew_main.wgsl: one invocation per output word covering n
// elements from element out_off (2 per word for f16 outputs, whose boundary words keep the
// neighbouring halves).
void run_words(Context& ctx, ShaderVariant v, std::vector<Arg> args, const void* params, size_t params_size,
               uint64_t out_off, uint64_t n, DType out_dtype) {
  if (n == 0) return;
  const uint64_t pw = out_dtype == DType::F16 ? 2 : 1;
  v.defines.emplace_back("OUT_PW", std::to_string(pw));
  const uint64_t words = (out_off + n + pw - 1) / pw - out_off / pw;
  auto [gx, gy] = ctx.grid((words + kEw - 1) / kEw);
  Dispatch d;
  d.pipeline = ctx.pipeline(v);
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

// The strides of an in-place x as [b, s, h, d] (b = 0 for a 3-D x). A dim of size 1 is never
// stepped along, so its stride is reported as 0 (it may be anything, even negative).
struct RopeStrides {
  int64_t v[4] = {0, 0, 0, 0};
  int64_t operator[](int k) const { return v[k]; }
};
RopeStrides rope_strides(const Tensor& x) {
  RopeStrides st;
  for (int k = 0; k < x.dim(); ++k)
    if (x.shape()[k] > 1) st.v[4 - x.dim() + k] = x.strides()[k];
  return st;
}

// Why rope_inplace.wgsl cannot write x in place, or "" when it can.
std::string rope_inplace_blocker(const Tensor& x) {
  const auto st = rope_strides(x);
  for (int64_t v : st.v)
    if (v < 0) return "in-place rope needs non-negative strides";
  if (x.dtype() != DType::F16) return "";
  // Packed f16: an invocation owns whole words only if every row starts at an even element
  // and its pairs are word pairs (unit stride along head_dim).
  if (st[3] != 1) return "in-place f16 rope needs unit stride along head_dim";
  if (x.offset() % 2 != 0 || st[0] % 2 != 0 || st[1] % 2 != 0 || st[2] % 2 != 0)
    return "in-place f16 rope needs rows starting at even elements (each row must own whole 32-bit words)";
  return "";
}

// The positions tensor of a Rope call, or null (the freq factors, when present, are last).
const Tensor* rope_positions(const OpCall& call) {
  return call.inputs.size() > (call.attrs.rope_factors ? 2u : 1u) ? &call.inputs[1] : nullptr;
}

Support check_rope(const Context&, const OpCall& call) {
  if (Support s = float_dtype(call.inputs[0].dtype(), "x"); !s.ok) return s;
  if (const Tensor* pos = rope_positions(call); pos && pos->dtype() != DType::I32)
    return Support::no("positions must be i32 on WebGPU (no 64-bit integers in WGSL)");
  if (call.attrs.pos_offset >= (int64_t{1} << 24))
    return Support::no("positions above 2^24 are not exact in f32");
  if (call.outputs.empty())
    if (std::string why = rope_inplace_blocker(call.inputs[0]); !why.empty()) return Support::no(why);
  return small_enough(call);
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

// The freq factors of a rope kernel (attrs.rope_factors; rope_common's ROPE_FREQS): the
// variant with their binding after the kernel's n_storage other storage buffers, and the
// params after them; without factors the variant has neither the binding nor a division, so
// it is the kernel as it was. f is the factors tensor (read in place when contiguous).
void rope_freq_variant(ShaderVariant& v, const OpAttrs& a, size_t n_storage) {
  v.defines.push_back({"ROPE_FREQS", a.rope_factors ? "rope_freq_buffer" : "rope_freq_none"});
  if (a.rope_factors) {
    v.defines.push_back({"FREQ_BIND", std::to_string(n_storage)});
    v.defines.push_back({"FREQ_OFF", "params.f_off"});
  }
  v.defines.push_back({"P_BIND", std::to_string(n_storage + (a.rope_factors ? 1 : 0))});
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

// In place (no outputs): rotation units of one row, see rope_inplace.wgsl. f32: one pair per
// unit. f16: a unit must own whole words: normal pairs (2i, 2i+1) are one word; neox pairs
// (i, i + n_rot/2) take two adjacent pairs per unit when n_rot/2 is even, else the whole row.
int64_t rope_pairs_per_unit(DType t, const OpAttrs& a) {
  const int64_t half = a.n_rot / 2;
  if (t == DType::F16 && a.rope_neox) return half % 2 == 0 ? 2 : half;
  return 1;
}

void launch_rope_inplace(Context& ctx, OpCall& call) {
  const Tensor& x = call.inputs[0];
  const bool has_pos = rope_positions(call) != nullptr;
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
  ShaderVariant v{"rope_inplace",
                  {{"F16", f16_flag(x.dtype())}, {"POSITIONS", has_pos ? "rope_pos_buffer" : "rope_pos_offset"}}};
  rope_freq_variant(v, call.attrs, has_pos ? 2 : 1);
  auto [gx, gy] = ctx.grid((uint64_t{p.units} + kEw - 1) / kEw);
  Dispatch d;
  d.pipeline = ctx.pipeline(v);
  d.args = {ctx.arg(x, false)};
  if (has_pos) d.args.push_back(ctx.arg(pos));
  const Tensor freqs = bind_rope_freqs(ctx, call, d.args, p);
  d.params = &p;
  d.params_size = sizeof p;
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

void launch_rope(Context& ctx, OpCall& call) {
  if (call.outputs.empty()) return launch_rope_inplace(ctx, call);
  const Tensor x = ctx.compact(call.inputs[0]);
  const bool has_pos = rope_positions(call) != nullptr;
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
  ShaderVariant v{"rope", {{"F16", f16_flag(x.dtype())}, {"HAS_POS", has_pos ? "true" : "false"}}};
  rope_freq_variant(v, call.attrs, 3);
  std::vector<Arg> args{ctx.arg(x), ctx.arg(pos), ctx.arg(y, false)};
  const Tensor freqs = bind_rope_freqs(ctx, call, args, p);
  run_words(ctx, v, std::move(args), &p, sizeof p, y.offset(), y.numel(), y.dtype());
}

// ---------------- SiluMul ----------------

struct SiluParams {  // mirrors Params of silu_mul.wgsl
  uint32_t n, a_off, out_off, b_off;
};
static_assert(sizeof(SiluParams) == 16, "SiluParams must match silu_mul.wgsl");

Support check_silu_mul(const Context&, const OpCall& call) {
  if (call.inputs.size() != 2) return Support::no("silu_mul takes {a, b}");
  if (Support s = float_dtype(call.inputs[0].dtype(), "input"); !s.ok) return s;
  if (call.inputs[1].dtype() != call.inputs[0].dtype()) return Support::no("a and b differ in dtype");
  return small_enough(call);
}

void launch_silu_mul(Context& ctx, OpCall& call) {
  // Offsets travel as params: the gate and up halves of a fused projection are read in place.
  const Tensor a = ctx.dense(call.inputs[0]), b = ctx.dense(call.inputs[1]);
  const Tensor& y = call.outputs[0];
  SiluParams p{u32(y.numel()), u32(a.offset()), u32(y.offset()), u32(b.offset())};
  ShaderVariant v{"silu_mul", {{"F16", f16_flag(y.dtype())}}};
  run_words(ctx, v, {ctx.arg(a), ctx.arg(b), ctx.arg(y, false)}, &p, sizeof p, y.offset(), y.numel(), y.dtype());
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

// inputs {cache, src} or {k cache, k src, v cache, v src} (both caches of a decode step); with
// attrs.n_rot > 0 also q, {k cache, k src, v cache, v src, q} (KVCache::append_rope).
Support check_kv_append(const Context&, const OpCall& call) {
  const bool rope = call.attrs.n_rot > 0;
  const size_t n_rope = 5 + (call.attrs.rope_factors ? 1 : 0);
  if (rope ? call.inputs.size() != n_rope : call.inputs.size() != 2 && call.inputs.size() != 4)
    return Support::no("kv_append takes {cache, src}[, {cache, src}], or {k cache, k, v cache, v, q[, freq factors]} with rope");
  for (size_t i = 0; i + 1 < std::min<size_t>(call.inputs.size(), 4); i += 2) {
    const Tensor& cache = call.inputs[i];
    if (!cache.is_contiguous() || cache.offset() != 0) return Support::no("cache buffer must be contiguous from offset 0");
    if (Support s = float_dtype(cache.dtype(), "cache"); !s.ok) return s;
    if (Support s = float_dtype(call.inputs[i + 1].dtype(), "source"); !s.ok) return s;
  }
  if (rope) {
    const Tensor& q = call.inputs[4];
    if (Support s = float_dtype(q.dtype(), "q"); !s.ok) return s;
    if (call.attrs.pos_offset + call.inputs[1].shape()[0] > (int64_t{1} << 24))
      return Support::no("positions above 2^24 are not exact in f32");
    if (std::string why = rope_inplace_blocker(q); !why.empty()) return Support::no(why);
    if (q.storage() == call.inputs[0].storage() || q.storage() == call.inputs[2].storage())
      return Support::no("q shares a cache's buffer");
  }
  return small_enough(call);
}

void append_one(Context& ctx, const Tensor& cache, const Tensor& src_in, int64_t pos) {
  const Tensor src = ctx.dense(src_in);  // a slice of a fused QKV output: read in place
  const int64_t row = cache.shape()[1] * cache.shape()[2];
  const int64_t dst = pos * row;
  AppendParams p{u32(src.numel()), u32(src.offset()), u32(dst), 0};
  ShaderVariant v{"attention_kv_append", {{"CACHE_F16", f16_flag(cache.dtype())}, {"SRC_F16", f16_flag(src.dtype())}}};
  run_words(ctx, v, {ctx.arg(cache, false), ctx.arg(src)}, &p, sizeof p, dst, src.numel(), cache.dtype());
}

// Whether one dispatch can write the new rows of both caches: one dtype and shape for the
// caches and for the sources, and every written cache word belongs to the new rows alone (the
// usual case: an even row size).
bool whole_word_rows(const Tensor& kc, const Tensor& ks, const Tensor& vc, const Tensor& vs, int64_t pos) {
  const int64_t pw = kc.dtype() == DType::F16 ? 2 : 1;
  const int64_t dst = pos * kc.shape()[1] * kc.shape()[2], n = ks.numel();
  return kc.dtype() == vc.dtype() && ks.dtype() == vs.dtype() && vs.numel() == n && kc.shape() == vc.shape() &&
         dst % pw == 0 && n % pw == 0;
}

void launch_kv_append(Context& ctx, OpCall& call);

// RoPE + append (attrs.n_rot > 0): attention_kv_append_rope.wgsl, one dispatch, when the rows
// are whole words (whole_word_rows) and q either shares one buffer with k and v (bound once,
// read_write) or shares none with them. Otherwise three dispatches of the same result:
// rope_inplace on q, rope of k into a scratch tensor, and the plain append.
void launch_kv_append_rope(Context& ctx, OpCall& call) {
  const Tensor &kc = call.inputs[0], &vc = call.inputs[2], &q = call.inputs[4];
  const Tensor ks = ctx.dense(call.inputs[1]), vs = ctx.dense(call.inputs[3]);
  const int64_t pos = call.attrs.pos_offset, n = ks.numel();
  const bool one = q.storage() == ks.storage() && q.storage() == vs.storage();
  const bool three = q.storage() != ks.storage() && q.storage() != vs.storage();
  // Storage buffers of the one-dispatch kernel: caches, sources (q, k, v in one or three), factors.
  const size_t n_storage = (one ? 3 : 5) + (call.attrs.rope_factors ? 1 : 0);
  if (!whole_word_rows(kc, ks, vc, vs, pos) || !(one || three) ||
      n_storage > ctx.limits().max_storage_buffers_per_shader_stage) {
    OpCall rq{OpKind::Rope, "rope_", {q}, {}, call.attrs, 0.0, {}};
    OpCall rk{OpKind::Rope, "rope", {ks}, {ctx.scratch(ks.shape(), ks.dtype())}, call.attrs, 0.0, {}};
    if (call.attrs.rope_factors) {  // the Rope calls' last input, as this call's
      rq.inputs.push_back(call.inputs[5]);
      rk.inputs.push_back(call.inputs[5]);
    }
    launch_rope_inplace(ctx, rq);
    launch_rope(ctx, rk);
    OpCall ap{OpKind::KVAppend, call.name, {kc, rk.outputs[0], vc, vs}, {}, call.attrs, 0.0, {}};
    ap.attrs.n_rot = 0;
    ap.attrs.rope_factors = false;
    return launch_kv_append(ctx, ap);
  }
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
  ShaderVariant v{"attention_kv_append_rope",
                  {{"CACHE_F16", f16_flag(kc.dtype())},
                   {"SRC_F16", f16_flag(ks.dtype())},
                   {"Q_F16", f16_flag(q.dtype())},
                   {"OUT_PW", std::to_string(pw)},
                   {"SOURCES", one ? "attention_kv_rope_one" : "attention_kv_rope_three"}}};
  rope_freq_variant(v, call.attrs, one ? 3 : 5);
  Dispatch d;
  d.pipeline = ctx.pipeline(v);
  d.args = {ctx.arg(kc, false), ctx.arg(vc, false)};
  if (one) {
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

void launch_kv_append(Context& ctx, OpCall& call) {
  if (call.attrs.n_rot > 0) return launch_kv_append_rope(ctx, call);
  const int64_t pos = call.attrs.pos_offset;
  if (call.inputs.size() == 2) return append_one(ctx, call.inputs[0], call.inputs[1], pos);
  const Tensor &kc = call.inputs[0], &vc = call.inputs[2];
  const Tensor ks = ctx.dense(call.inputs[1]), vs = ctx.dense(call.inputs[3]);
  const int64_t row = kc.shape()[1] * kc.shape()[2];
  const int64_t pw = kc.dtype() == DType::F16 ? 2 : 1;
  const int64_t dst = pos * row, n = ks.numel();
  // One dispatch for both caches where every written word belongs to the new rows alone;
  // else one dispatch per cache, each keeping its neighbours' bits.
  if (whole_word_rows(kc, ks, vc, vs, pos)) {
    if (n == 0) return;
    Append2Params p{u32(n / pw), u32(ks.offset()), u32(vs.offset()), u32(dst / pw)};
    Dispatch d;
    d.pipeline = ctx.pipeline(ShaderVariant{"attention_kv_append2", {{"CACHE_F16", f16_flag(kc.dtype())},
                                                                      {"SRC_F16", f16_flag(ks.dtype())},
                                                                      {"OUT_PW", std::to_string(pw)}}});
    d.args = {ctx.arg(kc, false), ctx.arg(vc, false), ctx.arg(ks), ctx.arg(vs)};
    d.params = &p;
    d.params_size = sizeof p;
    auto [gx, gy] = ctx.grid((2 * static_cast<uint64_t>(n / pw) + kEw - 1) / kEw);
    d.groups_x = gx;
    d.groups_y = gy;
    ctx.dispatch(d);
    return;
  }
  append_one(ctx, kc, ks, pos);
  append_one(ctx, vc, vs, pos);
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

constexpr int64_t kPrefillBQ = 16, kPrefillBK = 16, kPrefillTPR = 8;
constexpr int64_t kDecodeMaxQueries = 4;  // above this the prefill kernel reads K/V fewer times
constexpr int64_t kDecodeTargetGroups = 256;

// Workgroup bytes of the shaders' arrays (staged rows are padded to d + 1 words).
int64_t prefill_smem(int64_t d) { return 4 * ((kPrefillBQ + 2 * kPrefillBK) * (d + 1) + kPrefillBQ * kPrefillBK); }
int64_t decode_smem(int64_t d, int64_t g, int64_t t) { return 4 * (g * (d + 1) + g * d + 2 * t * (d + 1) + g * t + 3 * g); }

// Largest key tile of the decode kernel that fits the workgroup memory, 0 if none does.
int64_t decode_tile(const Context& ctx, int64_t d, int64_t g) {
  for (int64_t t : {32, 16, 8, 4})
    if (decode_smem(d, g, t) <= ctx.limits().max_compute_workgroup_storage_size) return t;
  return 0;
}

struct AttnShape {
  int64_t lq, heads, d, lk, kv_heads, group;
};
AttnShape attn_shape(const OpCall& call) {
  const Tensor &q = call.inputs[0], &k = call.inputs[1];
  AttnShape s{q.shape()[0], q.shape()[1], q.shape()[2], k.shape()[0], k.shape()[1], 0};
  s.group = s.kv_heads ? s.heads / s.kv_heads : 0;
  return s;
}

// ---- decode, subgroup kernel (attention_decode_sg.wgsl) ----
//
// Knobs (runtime/settings.hpp), read by every launch; a benchmark sweeps them in one process
// with settings_reload() after each change:
//   WGT_ATTN_DECODE_KERNEL = sg | split   default sg where it applies (see decode_sg_config);
//                                         split forces the staged kernel; sg on a shape or
//                                         device it does not fit still runs split
//   WGT_ATTN_DECODE_CHUNK  = keys per workgroup (rounded up to a whole loop trip)
//   WGT_ATTN_DECODE_LANES  = 4 | 8 | 16 | 32   invocations per key (must fit the head dim)
//   WGT_ATTN_DECODE_WARPS  = 1 | 2 | 4 | 8     workgroup size in units of 32 invocations
//   WGT_ATTN_DECODE_UNROLL = 1 | 2 | 4         keys per lane group per loop trip
// Unroll 4 (keys per lane group per loop trip), measured on the H200 (BENCHMARKS.md run 9,
// batch GPU time): 17.0 us against 18.1 with 2 at KV 4096 (8 K/V copies) and a block decode
// step of 158.6 against 163.1 us; wall 33.8 against 37.6 us at KV 16384 (before the
// split-lane reduce).
constexpr int64_t kDecodeSgWarps = 4, kDecodeSgUnroll = 4;
// Workgroups the default chunk aims at: about two per SM of a large GPU (an H200 has 132) so
// that enough loads are in flight, and not many more, since every workgroup pays a merge of
// its lane groups' states and writes one partial per head for the reduction pass. Measured on
// the H200 (BENCHMARKS.md run 7; KV 4096, 8 KV heads, 8 lanes): 512 groups (chunk 64) 22.1 us,
// 256 (chunk 128) 16.3 us, 128 (chunk 256) 17.0 us.
constexpr int64_t kDecodeSgTargetGroups = 256;
// Most per-lane floats of q and acc (2 G D / L): with the K/V words of U keys also live, more
// would spill registers on NVIDIA (255 per invocation), and lavapipe's LLVM takes ~30 s to
// compile a 256-float variant.
constexpr int64_t kDecodeSgMaxRegs = 128;

struct DecodeSg {
  int64_t lanes = 0, wg = 0, unroll = 0;  // lanes == 0: the kernel does not apply
};

// A WGT_ATTN_DECODE_* knob (runtime/settings.hpp), 0 when unset.
int64_t knob(const Setting<std::optional<uint32_t>>& s) { return s->value_or(0); }

bool decode_sg_wanted() { return !*settings().attn_decode_split; }

// Lanes per key and workgroup size of the subgroup kernel for this shape, or lanes 0. A lane
// reads whole vec4<u32> words of each K/V row (D a multiple of 8 L for f16, 4 L for f32); the
// L lanes of a key must share a subgroup and the workgroup must hold whole subgroups. Among
// the lane counts that fit, the smallest (fewest shuffles per key) whose registers stay under
// kDecodeSgMaxRegs.
DecodeSg decode_sg_config(const Context& ctx, const AttnShape& s, DType kv) {
  DecodeSg c;
  if (!decode_sg_wanted() || !ctx.features().subgroups) return c;
  const int64_t sg_min = ctx.limits().subgroup_min_size, sg_max = ctx.limits().subgroup_max_size;
  const int64_t warps = knob(settings().attn_decode_warps);
  c.wg = 32 * (warps ? warps : kDecodeSgWarps);
  if (sg_min < 4 || sg_max == 0 || c.wg % sg_max != 0 || c.wg > ctx.limits().max_compute_invocations_per_workgroup)
    return c;
  const int64_t epv = kv == DType::F16 ? 8 : 4;
  auto fits = [&](int64_t l) { return l <= sg_min && l <= c.wg && s.d % (l * epv) == 0; };
  auto fits_regs = [&](int64_t l) { return fits(l) && 2 * s.group * s.d / l <= kDecodeSgMaxRegs; };
  if (const int64_t forced = knob(settings().attn_decode_lanes)) {
    if (fits_regs(forced)) c.lanes = forced;
  } else {
    for (int64_t l : {32, 16, 8, 4})
      if (fits_regs(l)) c.lanes = l;  // the smallest that fits: fewest shuffles per key
  }
  const int64_t unroll = knob(settings().attn_decode_unroll);
  c.unroll = unroll ? unroll : kDecodeSgUnroll;
  const int64_t smem = 4 * (c.wg / std::max<int64_t>(sg_min, 1) * s.group + s.group * s.d + s.group);
  if (smem > ctx.limits().max_compute_workgroup_storage_size) c.lanes = 0;
  return c;
}

// Keys per workgroup of the subgroup kernel: enough splits of the keys for about
// kDecodeSgTargetGroups workgroups over (splits, kv heads, queries), WGT_ATTN_DECODE_CHUNK to
// override; a whole number of loop trips (WG / L * U keys), and few enough splits for the grid.
int64_t decode_sg_chunk(const Context& ctx, const AttnShape& s, const DecodeSg& c) {
  const int64_t trip = c.wg / c.lanes * c.unroll;
  int64_t chunk = knob(settings().attn_decode_chunk);
  if (chunk == 0) {
    const int64_t splits = std::max<int64_t>(1, kDecodeSgTargetGroups / std::max<int64_t>(1, s.kv_heads * s.lq));
    chunk = (s.lk + splits - 1) / splits;
  }
  chunk = std::max(trip, (chunk + trip - 1) / trip * trip);
  const int64_t max_groups = ctx.limits().max_compute_workgroups_per_dimension;
  while ((s.lk + chunk - 1) / chunk > max_groups) chunk *= 2;
  return chunk;
}

bool use_decode(const Context& ctx, const AttnShape& s, DType kv) {
  return s.lq <= kDecodeMaxQueries && (decode_tile(ctx, s.d, s.group) > 0 || decode_sg_config(ctx, s, kv).lanes > 0);
}

Support check_attention(const Context& ctx, const OpCall& call) {
  if (call.inputs.size() != (call.attrs.has_mask ? 4u : 3u)) return Support::no("attention takes {q, k, v[, mask]}");
  if (Support s = float_dtype(call.inputs[0].dtype(), "q"); !s.ok) return s;
  if (Support s = float_dtype(call.inputs[1].dtype(), "k/v"); !s.ok) return s;
  if (call.inputs[2].dtype() != call.inputs[1].dtype()) return Support::no("k and v differ in dtype");
  if (!call.outputs.empty() && call.outputs[0].dtype() != call.inputs[0].dtype())
    return Support::no("output dtype differs from q");
  if (call.attrs.has_mask)
    if (Support s = float_dtype(call.inputs[3].dtype(), "mask"); !s.ok) return s;
  const AttnShape s = attn_shape(call);
  if (s.d == 0 || s.heads == 0) return Support::yes();  // nothing to compute; launch writes nothing
  if (!use_decode(ctx, s, call.inputs[1].dtype()) && prefill_smem(s.d) > ctx.limits().max_compute_workgroup_storage_size)
    return Support::no("head_dim " + std::to_string(s.d) + " needs " + std::to_string(prefill_smem(s.d)) +
                       " bytes of workgroup memory, the adapter allows " +
                       std::to_string(ctx.limits().max_compute_workgroup_storage_size));
  if (s.heads > ctx.limits().max_compute_workgroups_per_dimension ||
      (s.lq + kPrefillBQ - 1) / kPrefillBQ > ctx.limits().max_compute_workgroups_per_dimension)
    return Support::no("too many heads or queries for one dispatch grid");
  return small_enough(call);
}

void launch_attention(Context& ctx, OpCall& call) {
  const AttnShape s = attn_shape(call);
  const Tensor& o = call.outputs[0];
  if (o.numel() == 0) return;
  const Tensor q = ctx.compact(call.inputs[0]), k = ctx.compact(call.inputs[1]), v = ctx.compact(call.inputs[2]);
  const bool has_mask = call.attrs.has_mask;
  const Tensor m = has_mask ? ctx.compact(call.inputs[3]) : q;
  const DType mt = has_mask ? m.dtype() : DType::F32;
  AttnParams p{};
  p.lq = u32(s.lq);
  p.lk = u32(s.lk);
  p.heads = u32(s.heads);
  p.kv_heads = u32(s.kv_heads);
  p.group = u32(s.group);
  p.causal = call.attrs.causal ? 1 : 0;
  p.has_mask = has_mask ? 1 : 0;
  p.scale = static_cast<float>(call.attrs.scalar0);
  // The defines common to every pass-1 variant; built only when a pipeline is first made
  // (the per-call path looks pipelines up by a VariantId of the same parameters).
  const uint64_t dtypes = uint64_t{q.dtype() == DType::F16} | uint64_t{k.dtype() == DType::F16} << 1 |
                          uint64_t{mt == DType::F16} << 2;
  auto base_defs = [&] {
    return std::vector<std::pair<std::string, std::string>>{
        {"Q_F16", f16_flag(q.dtype())}, {"K_F16", f16_flag(k.dtype())}, {"M_F16", f16_flag(mt)}, {"D", std::to_string(s.d)}};
  };

  if (!use_decode(ctx, s, k.dtype())) {
    Dispatch d;
    static const char prefill_family = 0;
    d.pipeline = ctx.pipeline(VariantId{&prefill_family, dtypes | static_cast<uint64_t>(s.d) << 8, 0}, [&] {
      auto defs = base_defs();
      defs.push_back({"DPT", std::to_string((s.d + kPrefillTPR - 1) / kPrefillTPR)});
      return ShaderVariant{"attention_prefill", defs};
    });
    d.args = {ctx.arg(q), ctx.arg(k), ctx.arg(v), ctx.arg(m), ctx.arg(o, false)};
    d.params = &p;
    d.params_size = sizeof p;
    d.groups_x = u32((s.lq + kPrefillBQ - 1) / kPrefillBQ);
    d.groups_y = u32(s.heads);
    ctx.dispatch(d);
    return;
  }

  // Decode, pass 1: the subgroup kernel where it applies, else the staged split-KV kernel.
  const DecodeSg sg = decode_sg_config(ctx, s, k.dtype());
  int64_t n_split = 0, chunk = 0, tile = 0;
  if (sg.lanes > 0) {
    chunk = decode_sg_chunk(ctx, s, sg);
    n_split = std::max<int64_t>(1, (s.lk + chunk - 1) / chunk);
  } else {
    // Enough splits of the keys to give the GPU ~kDecodeTargetGroups workgroups.
    tile = decode_tile(ctx, s.d, s.group);
    const int64_t max_split = std::max<int64_t>(1, (s.lk + tile - 1) / tile);
    n_split = std::clamp<int64_t>(kDecodeTargetGroups / (s.kv_heads * s.lq), 1, max_split);
    chunk = (s.lk + n_split - 1) / n_split;
    chunk = std::max<int64_t>(tile, (chunk + tile - 1) / tile * tile);
    n_split = std::max<int64_t>(1, (s.lk + chunk - 1) / chunk);
  }
  p.n_split = u32(n_split);
  p.chunk = u32(chunk);
  // Partial states live in scratch tensors that die with this call; the pool keeps their
  // buffers alive until the recorded work has been submitted (as for compact()).
  Tensor part_acc = Tensor::empty({s.lq * s.heads * n_split * s.d}, DType::F32, o.device());
  Tensor part_ml = Tensor::empty({s.lq * s.heads * n_split * 2}, DType::F32, o.device());
  Dispatch d1;
  static const char pass1_family = 0;
  // a: dtypes, d, G; b: lanes (0: the staged kernel), workgroup, unroll, tile.
  const VariantId id1{&pass1_family, dtypes | static_cast<uint64_t>(s.d) << 8 | static_cast<uint64_t>(s.group) << 32,
                      static_cast<uint64_t>(sg.lanes) | static_cast<uint64_t>(sg.wg) << 8 |
                          static_cast<uint64_t>(sg.unroll) << 24 | static_cast<uint64_t>(tile) << 32};
  d1.pipeline = ctx.pipeline(id1, [&] {
    auto defs = base_defs();
    defs.push_back({"G", std::to_string(s.group)});
    if (sg.lanes > 0) {
      defs.push_back({"L", std::to_string(sg.lanes)});
      defs.push_back({"WG", std::to_string(sg.wg)});
      defs.push_back({"U", std::to_string(sg.unroll)});
      defs.push_back({"SG_MIN", std::to_string(ctx.limits().subgroup_min_size)});
    } else {
      defs.push_back({"T", std::to_string(tile)});
    }
    return ShaderVariant{sg.lanes > 0 ? "attention_decode_sg" : "attention_decode", defs};
  });
  d1.args = {ctx.arg(q), ctx.arg(k), ctx.arg(v), ctx.arg(m), ctx.arg(part_acc, false), ctx.arg(part_ml, false)};
  d1.params = &p;
  d1.params_size = sizeof p;
  d1.groups_x = u32(n_split);
  d1.groups_y = u32(s.kv_heads);
  d1.groups_z = u32(s.lq);
  ctx.dispatch(d1);

  // Pass 2: one workgroup per (query * head, block of 32 head dims).
  auto [gx, gy] = ctx.grid(static_cast<uint64_t>(s.lq * s.heads));
  Dispatch d2;
  static const char reduce_family = 0;
  d2.pipeline = ctx.pipeline(VariantId{&reduce_family, uint64_t{o.dtype() == DType::F16} | static_cast<uint64_t>(s.d) << 8, 0}, [&] {
    return ShaderVariant{"attention_decode_reduce", {{"O_F16", f16_flag(o.dtype())}, {"D", std::to_string(s.d)}}};
  });
  d2.args = {ctx.arg(part_acc), ctx.arg(part_ml), ctx.arg(o, false)};
  d2.params = &p;
  d2.params_size = sizeof p;
  d2.groups_x = gx;
  d2.groups_y = gy;
  d2.groups_z = u32((s.d + 31) / 32);
  ctx.dispatch(d2);
}

}  // namespace

void register_nn_kernels(KernelRegistry& r) {
  r.add(OpKind::Rope, check_rope, launch_rope);
  r.add(OpKind::SiluMul, check_silu_mul, launch_silu_mul);
  r.add(OpKind::KVAppend, check_kv_append, launch_kv_append);
  r.add(OpKind::Attention, check_attention, launch_attention);
}

}  // namespace wgt::webgpu
