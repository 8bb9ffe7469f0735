// plan_elementwise: the capability rules of the elementwise kernels and the choice between the
// vec4 fast paths and the word kernels; EwPlan::variant names the shader and its defines.
#include "webgpu/plans/elementwise_plan.hpp"

#include <string>

namespace wgt::webgpu {
namespace {

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
std::string pw(DType t) { return std::to_string(4 / dtype_size(t)); }
// Compute type of a set of operand dtypes: f32 if any is floating, else i32.
bool ct_i32(std::initializer_list<DType> ts) {
  for (DType t : ts)
    if (is_floating(t)) return false;
  return true;
}
const char* ct_name(bool i32) { return i32 ? "i32" : "f32"; }
std::string load_fn(DType t, bool i32) { return std::string("ld_") + tag(t) + "_" + ct_name(i32); }
std::string store_fn(DType t, bool i32) { return std::string("st_") + tag(t) + "_" + ct_name(i32); }

// Ops with an i32 form (shaders/ew_ops.wgsl has the rest in f32 only).
bool unary_has_i32(UnaryOp op) { return op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Relu; }
bool binary_has_i32(BinaryOp op) { return op != BinaryOp::Div && op != BinaryOp::Pow; }

// The output's dtype and element count: from the allocated (or placeholder) output, else from
// the call's out_specs.
struct OutInfo {
  bool known = false;
  DType dtype = DType::F32;
  int64_t numel = 0;
  int64_t offset = 0;
  bool contiguous = true;
  int dim = 0;
};
OutInfo out_info(const OpCall& c) {
  if (c.outputs.size() == 1) {
    const Tensor& o = c.outputs[0];
    return {true, o.dtype(), o.numel(), o.offset(), o.is_contiguous(), o.dim()};
  }
  if (c.out_specs.size() == 1) {
    int64_t n = 1;
    for (int64_t d : c.out_specs[0].first) n *= d;
    return {true, c.out_specs[0].second, n, 0, true, static_cast<int>(c.out_specs[0].first.size())};
  }
  return {};
}

Planned<EwPlan> common_check(const OpCall& c, size_t n_in) {
  const OutInfo oi = out_info(c);
  using P = Planned<EwPlan>;
  if (c.inputs.size() != n_in || !oi.known || c.outputs.size() > 1)
    return P::no(c.name + " expects " + std::to_string(n_in) + " input(s) and 1 output");
  if (!oi.contiguous) return P::no("output must be contiguous");
  if (!gpu_dtype(oi.dtype)) return P::no(std::string("dtype ") + dtype_name(oi.dtype) + " unsupported");
  for (const auto& t : c.inputs) {
    if (!gpu_dtype(t.dtype())) return P::no(std::string("dtype ") + dtype_name(t.dtype()) + " unsupported");
    for (int64_t s : t.strides())
      if (s < 0) return P::no("negative strides are not supported on WebGPU");
  }
  if (c.outputs.size() == 1)
    for (const auto& t : c.inputs)
      if (t.dim() > oi.dim) return P::no("input rank above output rank");
  if (oi.numel > 0xffffffffll) return P::no("more than 2^32 elements");
  return {};
}

bool is_f32_contig(const Tensor& t, int64_t n) {
  return t.dtype() == DType::F32 && t.is_contiguous() && t.numel() == n && t.offset() % 4 == 0;
}

// Unary and Cast: the vec4 kernel for contiguous, 16-byte aligned f32 operands of n % 4 == 0.
EwShader unary_like(const Tensor& x, DType out, int64_t n, int64_t out_off, uint8_t op) {
  EwShader s;
  s.op = op;
  s.ct_i32 = ct_i32({x.dtype()});
  s.a = x.dtype();
  s.out = out;
  const bool vec4 = !s.ct_i32 && out == DType::F32 && is_f32_contig(x, n) && n % 4 == 0 && out_off % 4 == 0;
  s.kernel = vec4 ? EwKernel::UnaryVec4 : EwKernel::Unary;
  if (vec4) s.a = DType::F32;  // only OP selects the vec4 kernel's variant
  return s;
}

Planned<EwPlan> plan_copy(const OpCall& c) {
  using P = Planned<EwPlan>;
  const OutInfo oi = out_info(c);
  if (c.inputs.size() != 1 || !oi.known) return P::no("copy expects 1 input and 1 output");
  if (c.inputs[0].dtype() != oi.dtype) return P::no("copy needs equal dtypes (use cast)");
  if (c.outputs.size() == 1 && (!c.outputs[0].is_contiguous() || c.inputs[0].shape() != c.outputs[0].shape()))
    return P::no("copy needs a contiguous output of the input's shape");
  for (int64_t s : c.inputs[0].strides())
    if (s < 0) return P::no("negative strides are not supported on WebGPU");
  P p;
  p.plan.shader.kernel = EwKernel::Copy;
  p.plan.shader.esize = static_cast<uint8_t>(dtype_size(c.inputs[0].dtype()));
  p.plan.try_vec4_copy = true;
  return p;
}

}  // namespace

EwPlan plan_cast(const Tensor& src, const Tensor& dst) {
  EwPlan p;
  p.shader = unary_like(src, dst.dtype(), dst.numel(), dst.offset(), kEwIdentity);
  return p;
}

Planned<EwPlan> plan_elementwise(const Caps&, const OpCall& c) {
  using P = Planned<EwPlan>;
  if (c.kind == OpKind::Copy) return plan_copy(c);
  const size_t n_in = c.kind == OpKind::Unary || c.kind == OpKind::Cast ? 1
                      : c.kind == OpKind::Binary                        ? 2
                      : c.kind == OpKind::Where                         ? 3
                                                                        : 0;
  if (P chk = common_check(c, n_in); !chk.ok()) return chk;
  const OutInfo oi = out_info(c);
  P p;
  EwShader& s = p.plan.shader;
  switch (c.kind) {
    case OpKind::Unary:
      if (ct_i32({c.inputs[0].dtype()}) && !unary_has_i32(c.attrs.unary))
        return P::no(std::string("integer ") + unary_op_name(c.attrs.unary) + " is not implemented on WebGPU");
      s = unary_like(c.inputs[0], oi.dtype, oi.numel, oi.offset, static_cast<uint8_t>(c.attrs.unary));
      break;
    case OpKind::Cast:
      s = unary_like(c.inputs[0], oi.dtype, oi.numel, oi.offset, kEwIdentity);
      break;
    case OpKind::Binary: {
      const Tensor &a = c.inputs[0], &b = c.inputs[1];
      const BinaryOp op = c.attrs.binary;
      s.ct_i32 = ct_i32({a.dtype(), b.dtype()});
      if (s.ct_i32 && !binary_has_i32(op))
        return P::no(std::string("integer ") + binary_op_name(op) + " is not implemented on WebGPU");
      s.op = static_cast<uint8_t>(op);
      const bool vec_op = op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div;
      if (vec_op && oi.dtype == DType::F32 && is_f32_contig(a, oi.numel) && is_f32_contig(b, oi.numel) &&
          oi.numel % 4 == 0 && oi.offset % 4 == 0) {
        s.kernel = EwKernel::BinaryVec4;  // only OP selects the variant
      } else {
        s.kernel = EwKernel::Binary;
        s.a = a.dtype();
        s.b = b.dtype();
        s.out = oi.dtype;
      }
      break;
    }
    case OpKind::Where:
      s.kernel = EwKernel::Where;
      s.ct_i32 = ct_i32({c.inputs[1].dtype(), c.inputs[2].dtype()});
      s.cond_i32 = !is_floating(c.inputs[0].dtype());
      s.a = c.inputs[0].dtype();
      s.b = c.inputs[1].dtype();
      s.c = c.inputs[2].dtype();
      s.out = oi.dtype;
      break;
    case OpKind::Fill:
    case OpKind::Arange:
    case OpKind::RandUniform:
    case OpKind::RandNormal: {
      const DType t = oi.dtype;
      const bool rand = c.kind == OpKind::RandUniform || c.kind == OpKind::RandNormal;
      if (rand && !is_floating(t)) return P::no("random numbers need a floating dtype");
      if (c.kind == OpKind::Arange && !is_floating(t) &&
          (c.attrs.scalar0 != static_cast<int32_t>(c.attrs.scalar0) ||
           c.attrs.scalar1 != static_cast<int32_t>(c.attrs.scalar1)))
        return P::no("integer arange needs integral start and step within i32");
      if (oi.numel > (1ll << 31) && c.kind == OpKind::RandNormal)
        return P::no("rand_normal uses two counters per element: at most 2^31 elements");
      s.kernel = rand ? EwKernel::Rand : c.kind == OpKind::Arange ? EwKernel::Arange : EwKernel::Fill;
      s.ct_i32 = !is_floating(t);
      s.normal = c.kind == OpKind::RandNormal;
      s.out = t;
      break;
    }
    default: return P::no(std::string("no elementwise kernel for ") + op_kind_name(c.kind));
  }
  return p;
}

PipelineKey EwPlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant EwPlan::variant() const {
  const EwShader& s = shader;
  const bool i = s.ct_i32;
  const std::string op = std::to_string(s.op);
  const std::string out_pw = pw(s.out);
  switch (s.kernel) {
    case EwKernel::Copy: {
      const uint32_t es = s.esize;
      return {"copy", {{"ESIZE", std::to_string(es)}, {"OUT_PW", std::to_string(es >= 4 ? 1 : 4 / es)}}};
    }
    case EwKernel::UnaryVec4: return {"unary_vec4", {{"OP", op}, {"CT_I32", "false"}, {"BINARY", "false"}}};
    case EwKernel::BinaryVec4: return {"binary_vec4", {{"OP", op}}};
    case EwKernel::Unary:
      return {"unary",
              {{"CT", ct_name(i)}, {"CT_I32", i ? "true" : "false"}, {"LOAD_A", load_fn(s.a, i)}, {"A_PW", pw(s.a)},
               {"STORE", store_fn(s.out, i)}, {"OP", op}, {"BINARY", "false"}, {"OUT_PW", out_pw}}};
    case EwKernel::Binary:
      return {"binary",
              {{"CT", ct_name(i)}, {"CT_I32", i ? "true" : "false"}, {"LOAD_A", load_fn(s.a, i)}, {"A_PW", pw(s.a)},
               {"LOAD_B", load_fn(s.b, i)}, {"B_PW", pw(s.b)}, {"STORE", store_fn(s.out, i)}, {"OP", op},
               {"BINARY", "true"}, {"OUT_PW", out_pw}}};
    case EwKernel::Where:
      return {"where",
              {{"CT", ct_name(i)}, {"LOAD_C", load_fn(s.a, s.cond_i32)}, {"C_PW", pw(s.a)},
               {"LOAD_A", load_fn(s.b, i)}, {"A_PW", pw(s.b)}, {"LOAD_B", load_fn(s.c, i)}, {"B_PW", pw(s.c)},
               {"STORE", store_fn(s.out, i)}, {"OUT_PW", out_pw}}};
    case EwKernel::Fill:
    case EwKernel::Arange:
      return {"fill",
              {{"CT", ct_name(i)}, {"CT_I32", i ? "true" : "false"},
               {"ARANGE", s.kernel == EwKernel::Arange ? "true" : "false"}, {"STORE", store_fn(s.out, i)},
               {"OUT_PW", out_pw}}};
    case EwKernel::Rand:
      return {"rand", {{"NORMAL", s.normal ? "true" : "false"}, {"STORE", store_fn(s.out, false)}, {"OUT_PW", out_pw}}};
  }
  return {};
}

}  // namespace wgt::webgpu
