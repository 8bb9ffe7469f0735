// Launchers of the elementwise family: Copy, Unary, Binary, Where, Cast, Fill, Arange,
// RandUniform, RandNormal (shaders: copy, unary, binary, where, fill, rand, *_vec4).
// f16 operands are packed u32 words (shaders/ew_f16.wgsl), so none of these kernels needs the
// shader-f16 feature (docs/webgpu.md, "f16 without the shader-f16 feature").
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu/kernels/copy_fast.hpp"
#include "webgpu/kernels/ew_helpers.hpp"

namespace wgt::webgpu {
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

// Same key derivation as src/cpu/reference/random.hpp (the shader does the per-element part).
constexpr uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}
constexpr uint32_t rng_key(uint64_t seed) {
  return mix32(mix32(0x243F6A88u ^ static_cast<uint32_t>(seed)) ^ static_cast<uint32_t>(seed >> 32));
}

bool gpu_dtype(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::I32 || t == DType::U8 || t == DType::Bool;
}
const char* tag(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I32: return "i32";
    case DType::U8: return "u8";
    case DType::Bool: return "bool";
    default: return "?";
  }
}
uint32_t per_word(DType t) { return static_cast<uint32_t>(4 / dtype_size(t)); }
std::string pw(DType t) { return std::to_string(per_word(t)); }
// Compute type of a set of operand dtypes: f32 if any is floating, else i32.
const char* ct_of(std::initializer_list<DType> ts) {
  for (DType t : ts)
    if (is_floating(t)) return "f32";
  return "i32";
}
std::string load_fn(DType t, const char* ct) { return std::string("ld_") + tag(t) + "_" + ct; }
std::string store_fn(DType t, const char* ct) { return std::string("st_") + tag(t) + "_" + ct; }

// Output shape + per-input strides broadcast to it, with size-1 dims dropped and dims that
// are contiguous in every input merged (fewer divisions per element in the shader).
struct Layout {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides;
};
Layout collapse(const Shape& out, const std::vector<const Tensor*>& ins) {
  const int rank = static_cast<int>(out.size());
  Layout l;
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

EwParams make_params(const Tensor& out, const std::vector<const Tensor*>& ins) {
  EwParams p;
  std::memset(&p, 0, sizeof p);
  p.n = static_cast<uint32_t>(out.numel());
  p.out_off = static_cast<uint32_t>(out.offset());
  Layout l = collapse(out.shape(), ins);
  p.rank = static_cast<uint32_t>(l.shape.size());
  for (size_t d = 0; d < l.shape.size(); ++d) p.shape[d] = static_cast<uint32_t>(l.shape[d]);
  for (size_t k = 0; k < ins.size(); ++k) {
    p.off[k] = static_cast<uint32_t>(ins[k]->offset());
    for (size_t d = 0; d < l.shape.size(); ++d) p.strides[k][d] = static_cast<uint32_t>(l.strides[k][d]);
  }
  return p;
}

// Records one dispatch of an ew_main-style kernel (one invocation per output word).
void launch_words(Context& ctx, ShaderVariant v, const std::vector<const Tensor*>& ins, const Tensor& out,
                  const EwParams& p, uint32_t out_pw) {
  if (p.n == 0) return;
  v.defines.emplace_back("OUT_PW", std::to_string(out_pw));
  Dispatch d;
  d.pipeline = ctx.pipeline(v);
  for (const Tensor* t : ins) d.args.push_back(ctx.arg(*t, true));
  d.args.push_back(ctx.arg(out, false));
  d.params = &p;
  d.params_size = sizeof p;
  const uint64_t first = p.out_off / out_pw;
  const uint64_t words = (uint64_t{p.out_off} + p.n + out_pw - 1) / out_pw - first;
  auto [gx, gy] = ctx.grid((words + 255) / 256);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// ---- capability helpers ----
// The output's dtype and element count: from the allocated output when execute() checks,
// from the runtime's out_specs when supports() runs before allocation.
struct OutInfo {
  bool known = false;
  DType dtype = DType::F32;
  int64_t numel = 0;
};
OutInfo out_info(const OpCall& c) {
  if (c.outputs.size() == 1) return {true, c.outputs[0].dtype(), c.outputs[0].numel()};
  if (c.out_specs.size() == 1) {
    int64_t n = 1;
    for (int64_t d : c.out_specs[0].first) n *= d;
    return {true, c.out_specs[0].second, n};
  }
  return {};
}
Support common_check(const OpCall& c, size_t n_in) {
  const OutInfo oi = out_info(c);
  if (c.inputs.size() != n_in || !oi.known || c.outputs.size() > 1)
    return Support::no(c.name + " expects " + std::to_string(n_in) + " input(s) and 1 output");
  if (c.outputs.size() == 1 && !c.outputs[0].is_contiguous()) return Support::no("output must be contiguous");
  if (!gpu_dtype(oi.dtype)) return Support::no(std::string("dtype ") + dtype_name(oi.dtype) + " unsupported");
  for (const auto& t : c.inputs) {
    if (!gpu_dtype(t.dtype())) return Support::no(std::string("dtype ") + dtype_name(t.dtype()) + " unsupported");
    for (int64_t s : t.strides())
      if (s < 0) return Support::no("negative strides are not supported on WebGPU");
  }
  if (c.outputs.size() == 1)
    for (const auto& t : c.inputs)
      if (t.dim() > c.outputs[0].dim()) return Support::no("input rank above output rank");
  if (oi.numel > 0xffffffffll) return Support::no("more than 2^32 elements");
  return Support::yes();
}

bool is_f32_contig(const Tensor& t, int64_t n) {
  return t.dtype() == DType::F32 && t.is_contiguous() && t.numel() == n && t.offset() % 4 == 0;
}

// ---- Copy ----
Support check_copy(const Context&, const OpCall& c) {
  const OutInfo oi = out_info(c);
  if (c.inputs.size() != 1 || !oi.known) return Support::no("copy expects 1 input and 1 output");
  if (c.inputs[0].dtype() != oi.dtype) return Support::no("copy needs equal dtypes (use cast)");
  if (c.outputs.size() == 1 && (!c.outputs[0].is_contiguous() || c.inputs[0].shape() != c.outputs[0].shape()))
    return Support::no("copy needs a contiguous output of the input's shape");
  for (int64_t s : c.inputs[0].strides())
    if (s < 0) return Support::no("negative strides are not supported on WebGPU");
  return Support::yes();
}
void launch_copy(Context& ctx, OpCall& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& o = c.outputs[0];
  if (copy_contiguous_vec4(ctx, x, o)) return;  // contiguous, 16-byte aligned: kernels/copy_fast.cpp
  const size_t es = dtype_size(x.dtype());
  EwParams p = make_params(o, {&x});
  uint32_t out_pw = static_cast<uint32_t>(es >= 4 ? 1 : 4 / es);
  if (es == 8) {  // counted in words: two per element
    p.n *= 2;
    p.out_off *= 2;
  }
  launch_words(ctx, {"copy", {{"ESIZE", std::to_string(es)}}}, {&x}, o, p, out_pw);
}

// ---- Unary / Cast ----
const char* unary_f32(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-x";
    case UnaryOp::Abs: return "abs(x)";
    case UnaryOp::Exp: return "exp(x)";
    case UnaryOp::Log: return "select(log(x), nan_f32(), x < 0.0)";
    case UnaryOp::Sqrt: return "select(sqrt(x), nan_f32(), x < 0.0)";
    case UnaryOp::Rsqrt: return "select(inverseSqrt(x), nan_f32(), x < 0.0)";
    case UnaryOp::Sin: return "sin(reduce_2pi(x))";  // exact reduction first (angle_reduce.wgsl)
    case UnaryOp::Cos: return "cos(reduce_2pi(x))";
    case UnaryOp::Tanh: return "tanh_f32(x)";
    case UnaryOp::Sigmoid: return "sigmoid_f32(x)";
    case UnaryOp::Relu: return "relu_f32(x)";
    case UnaryOp::GeluErf: return "0.5 * x * (1.0 + erf_f32(x * 0.7071067811865476))";
    case UnaryOp::GeluTanh: return "0.5 * x * (1.0 + tanh_f32(0.7978845608028654 * (x + 0.044715 * x * x * x)))";
    case UnaryOp::Silu: return "x * sigmoid_f32(x)";
    case UnaryOp::Conj: case UnaryOp::Real: return "x";  // real dtypes (c64: kernels/complex.cpp)
    case UnaryOp::Imag: return "0.0";
  }
  return nullptr;
}
const char* unary_i32(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-x";
    case UnaryOp::Abs: return "abs(x)";
    case UnaryOp::Relu: return "max(x, 0)";
    default: return nullptr;
  }
}
Support check_unary(const Context&, const OpCall& c) {
  if (Support s = common_check(c, 1); !s.ok) return s;
  const char* ct = ct_of({c.inputs[0].dtype()});
  if (std::strcmp(ct, "i32") == 0 && !unary_i32(c.attrs.unary))
    return Support::no(std::string("integer ") + unary_op_name(c.attrs.unary) + " is not implemented on WebGPU");
  return Support::yes();
}
void launch_unary_like(Context& ctx, const Tensor& x, const Tensor& o, const char* op, const char* ct) {
  EwParams p = make_params(o, {&x});
  const int64_t n = o.numel();
  if (std::strcmp(ct, "f32") == 0 && o.dtype() == DType::F32 && is_f32_contig(x, n) && n % 4 == 0 &&
      o.offset() % 4 == 0) {
    p.n = static_cast<uint32_t>(n / 4);
    p.off[0] = static_cast<uint32_t>(x.offset() / 4);
    p.out_off = static_cast<uint32_t>(o.offset() / 4);
    Dispatch d;
    d.pipeline = ctx.pipeline({"unary_vec4", {{"OP", op}}});
    d.args = {ctx.arg(x, true), ctx.arg(o, false)};
    d.params = &p;
    d.params_size = sizeof p;
    auto [gx, gy] = ctx.grid((p.n + 255) / 256);
    d.groups_x = gx;
    d.groups_y = gy;
    if (p.n) ctx.dispatch(d);
    return;
  }
  ShaderVariant v{"unary",
                  {{"CT", ct}, {"LOAD_A", load_fn(x.dtype(), ct)}, {"A_PW", pw(x.dtype())},
                   {"STORE", store_fn(o.dtype(), ct)}, {"OP", op}}};
  launch_words(ctx, v, {&x}, o, p, per_word(o.dtype()));
}
void launch_unary(Context& ctx, OpCall& c) {
  const char* ct = ct_of({c.inputs[0].dtype()});
  const char* op = std::strcmp(ct, "f32") == 0 ? unary_f32(c.attrs.unary) : unary_i32(c.attrs.unary);
  launch_unary_like(ctx, c.inputs[0], c.outputs[0], op, ct);
}
Support check_cast(const Context&, const OpCall& c) { return common_check(c, 1); }
void launch_cast(Context& ctx, OpCall& c) {
  launch_unary_like(ctx, c.inputs[0], c.outputs[0], "x", ct_of({c.inputs[0].dtype()}));
}

// ---- Binary ----
std::string binary_expr(BinaryOp op, bool f) {
  auto cmp = [&](const char* o) {
    return f ? std::string("cmp_f32(x, y, x ") + o + " y)" : "select(0, 1, x " + std::string(o) + " y)";
  };
  switch (op) {
    case BinaryOp::Add: return "x + y";
    case BinaryOp::Sub: return "x - y";
    case BinaryOp::Mul: return "x * y";
    case BinaryOp::Div: return f ? "x / y" : "";
    case BinaryOp::Pow: return f ? "pow_f32(x, y)" : "";
    case BinaryOp::Maximum: return f ? "max_f32(x, y)" : "max(x, y)";
    case BinaryOp::Minimum: return f ? "min_f32(x, y)" : "min(x, y)";
    case BinaryOp::Eq: return cmp("==");
    case BinaryOp::Ne: return f ? "ne_f32(x, y)" : cmp("!=");
    case BinaryOp::Lt: return cmp("<");
    case BinaryOp::Le: return cmp("<=");
    case BinaryOp::Gt: return cmp(">");
    case BinaryOp::Ge: return cmp(">=");
  }
  return "";
}
Support check_binary(const Context&, const OpCall& c) {
  if (Support s = common_check(c, 2); !s.ok) return s;
  const bool f = std::strcmp(ct_of({c.inputs[0].dtype(), c.inputs[1].dtype()}), "f32") == 0;
  if (binary_expr(c.attrs.binary, f).empty())
    return Support::no(std::string("integer ") + binary_op_name(c.attrs.binary) + " is not implemented on WebGPU");
  return Support::yes();
}
void launch_binary(Context& ctx, OpCall& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1], &o = c.outputs[0];
  const char* ct = ct_of({a.dtype(), b.dtype()});
  const bool f = std::strcmp(ct, "f32") == 0;
  const int64_t n = o.numel();
  const BinaryOp bop = c.attrs.binary;
  const bool vec_op = bop == BinaryOp::Add || bop == BinaryOp::Sub || bop == BinaryOp::Mul || bop == BinaryOp::Div;
  if (vec_op && o.dtype() == DType::F32 && is_f32_contig(a, n) && is_f32_contig(b, n) && n % 4 == 0 &&
      o.offset() % 4 == 0) {
    EwParams p;
    std::memset(&p, 0, sizeof p);
    p.n = static_cast<uint32_t>(n / 4);
    p.off[0] = static_cast<uint32_t>(a.offset() / 4);
    p.off[1] = static_cast<uint32_t>(b.offset() / 4);
    p.out_off = static_cast<uint32_t>(o.offset() / 4);
    Dispatch d;
    static const char family = 0;  // the vec4 kernel of each op: built once, then looked up by id
    d.pipeline = ctx.pipeline(VariantId{&family, static_cast<uint64_t>(bop), f},
                              [&] { return ShaderVariant{"binary_vec4", {{"OP", binary_expr(bop, f)}}}; });
    d.args = {ctx.arg(a, true), ctx.arg(b, true), ctx.arg(o, false)};
    d.params = &p;
    d.params_size = sizeof p;
    auto [gx, gy] = ctx.grid((p.n + 255) / 256);
    d.groups_x = gx;
    d.groups_y = gy;
    if (p.n) ctx.dispatch(d);
    return;
  }
  ShaderVariant v{"binary",
                  {{"CT", ct}, {"LOAD_A", load_fn(a.dtype(), ct)}, {"A_PW", pw(a.dtype())},
                   {"LOAD_B", load_fn(b.dtype(), ct)}, {"B_PW", pw(b.dtype())},
                   {"STORE", store_fn(o.dtype(), ct)}, {"OP", binary_expr(bop, f)}}};
  launch_words(ctx, v, {&a, &b}, o, make_params(o, {&a, &b}), per_word(o.dtype()));
}

// ---- Where ----
Support check_where(const Context&, const OpCall& c) { return common_check(c, 3); }
void launch_where(Context& ctx, OpCall& c) {
  const Tensor &cond = c.inputs[0], &a = c.inputs[1], &b = c.inputs[2], &o = c.outputs[0];
  const char* ct = ct_of({a.dtype(), b.dtype()});
  const char* cct = is_floating(cond.dtype()) ? "f32" : "i32";
  ShaderVariant v{"where",
                  {{"CT", ct}, {"LOAD_C", load_fn(cond.dtype(), cct)}, {"C_PW", pw(cond.dtype())},
                   {"LOAD_A", load_fn(a.dtype(), ct)}, {"A_PW", pw(a.dtype())},
                   {"LOAD_B", load_fn(b.dtype(), ct)}, {"B_PW", pw(b.dtype())},
                   {"STORE", store_fn(o.dtype(), ct)}}};
  launch_words(ctx, v, {&cond, &a, &b}, o, make_params(o, {&cond, &a, &b}), per_word(o.dtype()));
}

// ---- Fill / Arange / Rand ----
Support check_creation(const Context&, const OpCall& c) {
  if (Support s = common_check(c, 0); !s.ok) return s;
  const DType t = out_info(c).dtype;
  if ((c.kind == OpKind::RandUniform || c.kind == OpKind::RandNormal) && !is_floating(t))
    return Support::no("random numbers need a floating dtype");
  if (c.kind == OpKind::Arange && !is_floating(t) &&
      (c.attrs.scalar0 != static_cast<int32_t>(c.attrs.scalar0) || c.attrs.scalar1 != static_cast<int32_t>(c.attrs.scalar1)))
    return Support::no("integer arange needs integral start and step within i32");
  if (out_info(c).numel > (1ll << 31) && c.kind == OpKind::RandNormal)
    return Support::no("rand_normal uses two counters per element: at most 2^31 elements");
  return Support::yes();
}
void launch_creation(Context& ctx, OpCall& c) {
  const Tensor& o = c.outputs[0];
  EwParams p = make_params(o, {});
  p.f0 = static_cast<float>(c.attrs.scalar0);
  p.f1 = static_cast<float>(c.attrs.scalar1);
  const bool f = is_floating(o.dtype());
  const char* ct = f ? "f32" : "i32";
  if (!f) {  // saturate to i32 for integer fills (u8/bool take the low bits / != 0)
    auto sat = [](double v) { return static_cast<int32_t>(std::clamp(v, -2147483648.0, 2147483647.0)); };
    p.i0 = sat(c.attrs.scalar0);
    p.i1 = sat(c.attrs.scalar1);
    if (o.dtype() == DType::Bool) p.i0 = c.attrs.scalar0 != 0.0;
  }
  ShaderVariant v;
  if (c.kind == OpKind::Fill) {
    v = {"fill", {{"CT", ct}, {"VALUE", f ? "params.f0" : "params.i0"}, {"STORE", store_fn(o.dtype(), ct)}}};
  } else if (c.kind == OpKind::Arange) {
    v = {"fill",
         {{"CT", ct}, {"VALUE", f ? "params.f0 + f32(e) * params.f1" : "params.i0 + i32(e) * params.i1"},
          {"STORE", store_fn(o.dtype(), ct)}}};
  } else {
    p.u0 = rng_key(c.attrs.seed);
    v = {"rand", {{"NORMAL", c.kind == OpKind::RandNormal ? "true" : "false"}, {"STORE", store_fn(o.dtype(), "f32")}}};
  }
  launch_words(ctx, v, {}, o, p, per_word(o.dtype()));
}

}  // namespace

void cast_on_device(Context& ctx, const Tensor& src, const Tensor& dst) {
  launch_unary_like(ctx, src, dst, "x", ct_of({src.dtype()}));
}

void register_elementwise_kernels(KernelRegistry& r) {
  r.add(OpKind::Copy, check_copy, launch_copy);
  r.add(OpKind::Unary, check_unary, launch_unary);
  r.add(OpKind::Cast, check_cast, launch_cast);
  r.add(OpKind::Binary, check_binary, launch_binary);
  r.add(OpKind::Where, check_where, launch_where);
  r.add(OpKind::Fill, check_creation, launch_creation);
  r.add(OpKind::Arange, check_creation, launch_creation);
  r.add(OpKind::RandUniform, check_creation, launch_creation);
  r.add(OpKind::RandNormal, check_creation, launch_creation);
}

}  // namespace wgt::webgpu
