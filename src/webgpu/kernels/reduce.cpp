// WebGPU launchers of the reduce family: Reduce (sum/mean/max/min/prod/argmax over any axes),
// Softmax/LogSoftmax (any axis) and RMSNorm/LayerNorm (last dim). Every kernel reads strided
// views directly: the reduced axes form the inner "row", the kept axes the outer row index,
// each group coalesced on the host, so no compaction copy is needed.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/settings.hpp"
#include "webgpu/context.hpp"
#include "webgpu/kernels/ew_helpers.hpp"

namespace wgt::webgpu {
namespace {

constexpr uint32_t kWG = 256;       // invocations per workgroup of every kernel here
constexpr uint32_t kMaxCache = 16;  // vec4 per invocation in the register-cached row kernels

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

// One logical dim with its input and output strides (elements; may be negative).
struct Dim {
  int64_t size, s_in, s_out;
};

// Drops size-1 dims and merges neighbours that are contiguous with each other for both the
// input and the output, keeping row-major order (outer first).
std::vector<Dim> coalesce(const std::vector<Dim>& dims) {
  std::vector<Dim> out;
  for (const Dim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty() && out.back().s_in == d.s_in * d.size && out.back().s_out == d.s_out * d.size) {
      out.back() = {out.back().size * d.size, d.s_in, d.s_out};
    } else {
      out.push_back(d);
    }
  }
  return out;
}

// Strides and offsets travel as u32 (two's complement wraps back to the right offset).
uint32_t u32(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); }

RowParams make_params(const std::vector<Dim>& outer, const std::vector<Dim>& inner, const Tensor& x, const Tensor& y) {
  RowParams p{};
  for (int i = 0; i < 8; ++i) p.oshape[i] = p.ishape[i] = 1;
  int64_t n_out = 1, n_red = 1;
  for (size_t i = 0; i < outer.size(); ++i) {
    p.oshape[i] = u32(outer[i].size);
    p.ostride[i] = u32(outer[i].s_in);
    p.oostride[i] = u32(outer[i].s_out);
    n_out *= outer[i].size;
  }
  for (size_t i = 0; i < inner.size(); ++i) {
    p.ishape[i] = u32(inner[i].size);
    p.istride[i] = u32(inner[i].s_in);
    n_red *= inner[i].size;
  }
  p.orank = static_cast<uint32_t>(outer.size());
  p.irank = static_cast<uint32_t>(inner.size());
  p.n_out = u32(n_out);
  p.n_red = u32(n_red);
  p.in_off = u32(x.offset());
  p.out_off = u32(y.offset());
  p.pinf = std::numeric_limits<float>::infinity();
  p.qnan = std::numeric_limits<float>::quiet_NaN();
  return p;
}

const char* type_name(DType t) { return t == DType::F16 ? "f16" : "f32"; }
const char* enable_line(DType t) { return t == DType::F16 ? "enable f16;" : ""; }

Support check_bytes(const Context& ctx, uint64_t bytes, size_t elem) {
  if (bytes > ctx.limits().max_storage_buffer_binding_size)
    return Support::no("buffer of " + std::to_string(bytes) + " bytes exceeds maxStorageBufferBindingSize " +
                       std::to_string(ctx.limits().max_storage_buffer_binding_size));
  if (bytes / elem >= (uint64_t{1} << 32)) return Support::no("more than 2^32 elements in one buffer");
  return Support::yes();
}

// Common capability rules: f32 (f16 with shader-f16), rank <= 8, every bound buffer within the
// binding limit and addressable with u32 element indices. supports() runs before the outputs
// are allocated, so the output is judged by `out_bytes` (and checked again if present).
Support check_float_tensors(const Context& ctx, const OpCall& call, uint64_t out_bytes) {
  if (call.inputs.empty()) return Support::no("missing input");
  for (const auto* list : {&call.inputs, &call.outputs}) {
    for (const Tensor& t : *list) {
      if (!t.defined()) return Support::no("undefined operand");
      if (t.dim() > 8) return Support::no("rank " + std::to_string(t.dim()) + " > 8");
      if (Support s = check_bytes(ctx, t.storage()->nbytes(), dtype_size(t.dtype())); !s.ok) return s;
    }
  }
  if (Support s = check_bytes(ctx, out_bytes, 4); !s.ok) return s;
  const DType dt = call.inputs[0].dtype();
  if (dt != DType::F32 && dt != DType::F16)
    return Support::no(std::string("dtype ") + dtype_name(dt) + " not supported (f32, f16)");
  for (size_t i = 1; i < call.inputs.size(); ++i)
    if (call.inputs[i].dtype() != dt) return Support::no("weight/bias dtype differs from the input dtype");
  return Support::yes();
}

void run_rows(Context& ctx, const ShaderVariant& v, std::vector<Arg> args, const RowParams& p, uint64_t groups) {
  if (groups == 0) return;
  auto [gx, gy] = ctx.grid(groups);
  Dispatch d;
  d.pipeline = ctx.pipeline(v);
  d.args = std::move(args);
  d.params = &p;
  d.params_size = sizeof p;
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// vec4 per invocation for a register-cached row of n elements, a power of two, or 0 if the
// row is too long to cache.
uint32_t cache_for(int64_t n) {
  const int64_t per = (n / 4 + kWG - 1) / kWG;
  uint32_t c = 1;
  while (c < per) c *= 2;
  return c <= kMaxCache ? c : 0;
}

bool aligned4(const std::vector<Dim>& outer, const Tensor& x, const Tensor& y) {
  if (x.offset() % 4 || y.offset() % 4) return false;
  for (const Dim& d : outer)
    if (d.s_in % 4 || d.s_out % 4) return false;
  return true;
}

// Defines of reduce_rowred.wgsl (the row reductions of the *_row_v4 kernels). Subgroup
// reductions need the feature, one fixed subgroup size (the shader derives a subgroup's index as
// lid / size) of at least 4 dividing kWG; WGT_REDUCE_SUBGROUPS=off forces the workgroup-memory
// fallback (tests compare both, benchmarks measure both).
void add_rowred_defines(const Context& ctx, ShaderVariant& v, DType dt) {
  const Limits& l = ctx.limits();
  const bool allowed = *settings().reduce_subgroups;
  const bool sg = allowed && ctx.features().subgroups && l.subgroup_min_size == l.subgroup_max_size &&
                  l.subgroup_min_size >= 4 && kWG % l.subgroup_min_size == 0;
  std::string enable = enable_line(dt);
  if (sg) enable += " enable subgroups;";
  for (auto& [k, val] : v.defines)
    if (k == "ENABLE") val = enable;
  v.defines.push_back({"SG", sg ? "true" : "false"});
  v.defines.push_back({"SG_ADD", sg ? "subgroupAdd(v)" : "v"});
  v.defines.push_back({"SG_MAX", sg ? "subgroupMax(v)" : "v"});
  v.defines.push_back({"SG_ARGS", sg ? ", @builtin(subgroup_size) sgs: u32, @builtin(subgroup_invocation_id) sgl: u32" : ""});
  v.defines.push_back({"SG_LET", sg ? "" : "let sgs = 1u; let sgl = 0u;"});
}

// ---------------- Reduce ----------------

Support check_reduce(const Context& ctx, const OpCall& call) {
  if (call.inputs.size() != 1 || call.outputs.size() > 1) return Support::no("reduce takes one input and one output");
  if (Support s = check_float_tensors(ctx, call, 0); !s.ok) return s;
  const DType want = call.attrs.reduce == ReduceOp::ArgMax ? DType::I64 : call.inputs[0].dtype();
  if (!call.outputs.empty() && call.outputs[0].dtype() != want) return Support::no("unexpected output dtype");
  return Support::yes();
}

void launch_reduce(Context& ctx, OpCall& call) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.outputs[0];
  std::vector<bool> reduced(x.dim(), call.attrs.axes.empty());
  for (int64_t a : call.attrs.axes) reduced.at(static_cast<size_t>(a)) = true;
  std::vector<Dim> outer, inner;
  int64_t out_stride = 1;  // output is contiguous over the kept dims, in their order
  for (int d = x.dim() - 1; d >= 0; --d) {
    if (reduced[d]) {
      inner.insert(inner.begin(), {x.size(d), x.strides()[d], 0});
    } else {
      outer.insert(outer.begin(), {x.size(d), x.strides()[d], out_stride});
      out_stride *= x.size(d);
    }
  }
  outer = coalesce(outer);
  inner = coalesce(inner);
  RowParams p = make_params(outer, inner, x, y);
  if (p.n_out == 0) return;
  const bool arg = call.attrs.reduce == ReduceOp::ArgMax;
  // A workgroup per output when the row is long, or contiguous enough for coalesced reads;
  // otherwise an invocation per output so that neighbours read neighbouring addresses.
  const bool inner_contig = inner.empty() || inner.back().s_in == 1;
  const bool rows = p.n_red >= 4096 || (inner_contig ? p.n_red >= 32 : p.n_out < 2048);
  // Sum / mean of one contiguous reduced dim of 4k elements, rows 16-byte aligned: the vec4
  // kernel (a workgroup per output too).
  const bool v4 = rows && inner.size() == 1 && inner_contig && p.n_red % 4 == 0 &&
                  (call.attrs.reduce == ReduceOp::Sum || call.attrs.reduce == ReduceOp::Mean) && x.offset() % 4 == 0 &&
                  std::all_of(outer.begin(), outer.end(), [](const Dim& d) { return d.s_in % 4 == 0; });
  ShaderVariant v{v4 ? "reduce_row_v4" : rows ? "reduce_rows" : "reduce_cols",
                  {{"ENABLE", enable_line(x.dtype())},
                   {"T", type_name(x.dtype())},
                   {"OUT_T", arg ? "u32" : type_name(x.dtype())},
                   {"OP", std::to_string(static_cast<int>(call.attrs.reduce))}}};
  if (v4) add_rowred_defines(ctx, v, x.dtype());
  run_rows(ctx, v, {ctx.arg(x), ctx.arg(y, false)}, p, rows ? p.n_out : (uint64_t{p.n_out} + kWG - 1) / kWG);
}

// ---------------- Softmax / LogSoftmax ----------------

Support check_softmax(const Context& ctx, const OpCall& call) {
  if (call.inputs.size() != 1 || call.outputs.size() > 1) return Support::no("softmax takes one input and one output");
  if (Support s = check_float_tensors(ctx, call, call.inputs[0].nbytes()); !s.ok) return s;
  if (call.inputs[0].dim() == 0) return Support::no("softmax of a 0-d tensor");
  if (!call.outputs.empty() && call.outputs[0].dtype() != call.inputs[0].dtype())
    return Support::no("output dtype differs from input");
  return Support::yes();
}

void launch_softmax(Context& ctx, OpCall& call) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.outputs[0];
  const int axis = static_cast<int>(call.attrs.axis);
  const Strides ys = contiguous_strides(x.shape());
  std::vector<Dim> outer;
  for (int d = 0; d < x.dim(); ++d)
    if (d != axis) outer.push_back({x.size(d), x.strides()[d], ys[d]});
  outer = coalesce(outer);
  const int64_t n = x.size(axis);
  RowParams p = make_params(outer, {{n, x.strides()[axis], 0}}, x, y);
  p.out_istride = u32(ys[axis]);
  if (p.n_out == 0 || n == 0) return;
  const bool log = call.kind == OpKind::LogSoftmax;
  const uint32_t cache = cache_for(n);
  const bool fast = cache && n % 4 == 0 && (n == 1 || (x.strides()[axis] == 1 && ys[axis] == 1)) && aligned4(outer, x, y);
  ShaderVariant v{fast ? "softmax_row_v4" : "softmax",
                  {{"ENABLE", enable_line(x.dtype())}, {"T", type_name(x.dtype())}, {"LOG", log ? "true" : "false"}}};
  if (fast) {
    v.defines.push_back({"CACHE", std::to_string(cache)});
    add_rowred_defines(ctx, v, x.dtype());
  }
  run_rows(ctx, v, {ctx.arg(x), ctx.arg(y, false)}, p, p.n_out);
}

// ---------------- RMSNorm / LayerNorm ----------------

Support check_norm(const Context& ctx, const OpCall& call) {
  const size_t want = 1 + (call.attrs.has_weight ? 1 : 0) + (call.attrs.has_bias ? 1 : 0);
  if (call.kind == OpKind::RMSNorm && call.attrs.has_bias) return Support::no("rms_norm has no bias");
  if (call.inputs.size() != want || call.outputs.size() > 1)
    return Support::no("expected " + std::to_string(want) + " inputs and one output");
  if (Support s = check_float_tensors(ctx, call, call.inputs[0].nbytes()); !s.ok) return s;
  const Tensor& x = call.inputs[0];
  if (x.dim() == 0) return Support::no("normalization of a 0-d tensor");
  for (size_t i = 1; i < call.inputs.size(); ++i)
    if (call.inputs[i].dim() != 1 || call.inputs[i].size(0) != x.size(-1))
      return Support::no("weight/bias must have shape [" + std::to_string(x.size(-1)) + "]");
  if (!call.outputs.empty() && call.outputs[0].dtype() != x.dtype()) return Support::no("output dtype differs from input");
  return Support::yes();
}

void launch_norm(Context& ctx, OpCall& call) {
  const Tensor& x = call.inputs[0];
  const Tensor& y = call.outputs[0];
  const bool layer = call.kind == OpKind::LayerNorm;
  const bool hw = call.attrs.has_weight, hb = call.attrs.has_bias;
  const Tensor* w = hw ? &call.inputs[1] : nullptr;
  const Tensor* b = hb ? &call.inputs[hw ? 2 : 1] : nullptr;
  const int last = x.dim() - 1;
  const Strides ys = contiguous_strides(x.shape());
  std::vector<Dim> outer;
  for (int d = 0; d < last; ++d) outer.push_back({x.size(d), x.strides()[d], ys[d]});
  outer = coalesce(outer);
  const int64_t n = x.size(last);
  RowParams p = make_params(outer, {{n, x.strides()[last], 0}}, x, y);
  p.out_istride = 1;
  p.eps = static_cast<float>(call.attrs.eps);
  if (w) { p.w_off = u32(w->offset()); p.w_stride = u32(w->strides()[0]); }
  if (b) { p.b_off = u32(b->offset()); p.b_stride = u32(b->strides()[0]); }
  if (p.n_out == 0 || n == 0) return;
  // The cached kernel reads weight/bias as vec4: they must be unit-stride and 16-byte aligned.
  auto vec_ok = [&](const Tensor* t) { return !t || ((t->strides()[0] == 1 || n == 1) && t->offset() % 4 == 0); };
  const uint32_t cache = cache_for(n);
  const bool fast = cache && n % 4 == 0 && x.strides()[last] == 1 && aligned4(outer, x, y) && vec_ok(w) && vec_ok(b);
  std::string name = layer ? "layernorm" : "rmsnorm";
  ShaderVariant v{fast ? name + "_row_v4" : name,
                  {{"ENABLE", enable_line(x.dtype())}, {"T", type_name(x.dtype())}, {"HAS_W", hw ? "true" : "false"}}};
  if (layer) v.defines.push_back({"HAS_B", hb ? "true" : "false"});
  if (fast) {
    v.defines.push_back({"CACHE", std::to_string(cache)});
    add_rowred_defines(ctx, v, x.dtype());
  }
  // Absent operands are bound to x: the layout stays fixed and the shader never reads them.
  std::vector<Arg> args{ctx.arg(x), ctx.arg(w ? *w : x)};
  if (layer) args.push_back(ctx.arg(b ? *b : x));
  args.push_back(ctx.arg(y, false));
  run_rows(ctx, v, std::move(args), p, p.n_out);
}

}  // namespace

// f16 without the shader-f16 feature (the H200 with this Dawn build): the f32 kernel runs
// between casts on the device (the cast kernel reads and writes packed f16), so the op stays on
// the GPU at the cost of two extra passes over the f16 data.
template <KernelLaunch Launch>
void launch_f16_via_f32(Context& ctx, OpCall& call) {
  bool has_f16 = false;
  for (const Tensor& t : call.inputs) has_f16 |= t.defined() && t.dtype() == DType::F16;
  if (!has_f16 || ctx.features().shader_f16) return Launch(ctx, call);
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
  Launch(ctx, c32);
  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (call.outputs[i].dtype() == DType::F16) cast_on_device(ctx, c32.outputs[i], call.outputs[i]);
}

void register_reduce_kernels(KernelRegistry& r) {
  r.add(OpKind::Reduce, check_reduce, launch_f16_via_f32<launch_reduce>);
  r.add(OpKind::Softmax, check_softmax, launch_f16_via_f32<launch_softmax>);
  r.add(OpKind::LogSoftmax, check_softmax, launch_f16_via_f32<launch_softmax>);
  r.add(OpKind::RMSNorm, check_norm, launch_f16_via_f32<launch_norm>);
  r.add(OpKind::LayerNorm, check_norm, launch_f16_via_f32<launch_norm>);
}

}  // namespace wgt::webgpu
