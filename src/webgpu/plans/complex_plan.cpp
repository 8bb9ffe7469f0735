// The complex64 family's plans (see complex_plan.hpp): which calls on c64 data the WebGPU
// kernels run, through which kernel variant, and why not where they cannot. Pure: reads
// shapes, strides, dtypes, the adapter's limits and the tuning.
#include "webgpu/plans/complex_plan.hpp"

#include <algorithm>
#include <limits>

#include "webgpu/plans/matmul_plan.hpp"
#include "wgt/error.hpp"

namespace wgt::webgpu {
namespace {

constexpr uint64_t kU32Max = std::numeric_limits<uint32_t>::max();

bool any_c64(const OpCall& call) {
  for (const Tensor& t : call.inputs)
    if (t.defined() && t.dtype() == DType::C64) return true;
  for (const Tensor& t : call.outputs)
    if (t.defined() && t.dtype() == DType::C64) return true;
  for (const auto& [shape, dt] : call.out_specs)
    if (dt == DType::C64) return true;
  return false;
}

// The output's dtype, shape and element count: from the allocated output when execute()
// checks, from out_specs when supports() runs before allocation.
struct Out {
  bool known = false;
  DType dtype = DType::F32;
  Shape shape;
  uint64_t numel = 0;
  bool contiguous = true;
};
Out out_of(const OpCall& c) {
  Out o;
  if (c.outputs.size() == 1) {
    o = {true, c.outputs[0].dtype(), c.outputs[0].shape(), static_cast<uint64_t>(c.outputs[0].numel()),
         c.outputs[0].is_contiguous()};
  } else if (c.outputs.empty() && c.out_specs.size() == 1) {
    o.known = true;
    o.dtype = c.out_specs[0].second;
    o.shape = c.out_specs[0].first;
    o.numel = 1;
    for (int64_t d : o.shape) o.numel *= static_cast<uint64_t>(d);
  }
  return o;
}

uint64_t max_index(const Tensor& t) {
  uint64_t m = static_cast<uint64_t>(t.offset());
  for (int d = 0; d < t.dim(); ++d)
    if (t.shape()[d] > 0) m += static_cast<uint64_t>(t.shape()[d] - 1) * static_cast<uint64_t>(t.strides()[d]);
  return m;
}

// Layout checks every c64 kernel shares: non-negative strides, u32 element indices.
std::string check_view(const Tensor& t) {
  for (int64_t s : t.strides())
    if (s < 0) return "negative strides are not supported on WebGPU";
  if (t.numel() > 0 && max_index(t) > kU32Max) return "tensor too large for 32-bit element indexing";
  return {};
}

// Real dtypes the existing cast kernels convert to and from f32 on the device.
bool castable_real(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::I32 || t == DType::U8 || t == DType::Bool;
}

const char* ew_op_name(ComplexEwOp op) {
  static const char* names[] = {"add", "sub",  "mul",  "div",  "eq",       "ne",    "neg",   "conj", "exp",
                                "copy", "abs", "real", "imag", "nonzero", "from_real", "where", "fill"};
  return names[static_cast<int>(op)];
}

uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

}  // namespace

bool is_complex_call(const OpCall& call) {
  switch (call.kind) {
    case OpKind::Unary:
      if (call.attrs.unary == UnaryOp::Conj || call.attrs.unary == UnaryOp::Real || call.attrs.unary == UnaryOp::Imag)
        return true;
      return any_c64(call);
    case OpKind::Binary: case OpKind::Cast: case OpKind::Where: case OpKind::Fill:
    case OpKind::Reduce: case OpKind::MatMul:
      return any_c64(call);
    default:
      return false;
  }
}

// ---- elementwise ----

Planned<ComplexEwPlan> plan_complex_ew(const Caps& caps, const OpCall& c) {
  using P = Planned<ComplexEwPlan>;
  const Out out = out_of(c);
  if (!out.known || c.outputs.size() > 1) return P::no(c.name + ": expects one output");
  if (!out.contiguous) return P::no("the output must be contiguous");
  if (out.numel > kU32Max) return P::no("more than 2^32 elements");
  if (out.shape.size() > 8) return P::no("rank above 8");
  for (const Tensor& t : c.inputs) {
    if (!t.defined()) return P::no("undefined input");
    if (std::string why = check_view(t); !why.empty()) return P::no(why);
    if (t.dim() > static_cast<int>(out.shape.size())) return P::no("input rank above output rank");
  }
  ComplexEwPlan plan;
  ComplexEwShader& s = plan.shader;
  s.n_in = static_cast<uint8_t>(c.inputs.size());
  auto all_c64_in = [&] {
    for (const Tensor& t : c.inputs)
      if (t.dtype() != DType::C64) return false;
    return true;
  };
  auto c64_to_real = [&](ComplexEwOp op) -> P {
    // A real result: f32 directly, other castable dtypes through an f32 scratch.
    s.op = op;
    s.out = ComplexSlot::F32;
    if (out.dtype == DType::F32) return {plan, {}};
    if (castable_real(out.dtype)) {
      plan.post_cast = true;
      return {plan, {}};
    }
    return P::no(std::string("no WebGPU representation for ") + dtype_name(out.dtype));
  };
  switch (c.kind) {
    case OpKind::Binary: {
      if (c.inputs.size() != 2 || !all_c64_in()) return P::no("c64 binary ops take two c64 operands");
      s.in[0] = s.in[1] = ComplexSlot::C64;
      switch (c.attrs.binary) {
        case BinaryOp::Add: s.op = ComplexEwOp::Add; break;
        case BinaryOp::Sub: s.op = ComplexEwOp::Sub; break;
        case BinaryOp::Mul: s.op = ComplexEwOp::Mul; break;
        case BinaryOp::Div: s.op = ComplexEwOp::Div; break;
        case BinaryOp::Eq: return c64_to_real(ComplexEwOp::Eq);
        case BinaryOp::Ne: return c64_to_real(ComplexEwOp::Ne);
        default: return P::no(std::string(binary_op_name(c.attrs.binary)) + " is not defined for c64");
      }
      if (out.dtype != DType::C64) return P::no("c64 arithmetic gives c64");
      return {plan, {}};
    }
    case OpKind::Unary: {
      if (c.inputs.size() != 1 || c.inputs[0].dtype() != DType::C64)
        return P::no(std::string(unary_op_name(c.attrs.unary)) + " of a real dtype is not a c64 kernel");
      s.in[0] = ComplexSlot::C64;
      switch (c.attrs.unary) {
        case UnaryOp::Neg: s.op = ComplexEwOp::Neg; break;
        case UnaryOp::Conj: s.op = ComplexEwOp::Conj; break;
        case UnaryOp::Exp: s.op = ComplexEwOp::Exp; break;
        case UnaryOp::Abs: return c64_to_real(ComplexEwOp::Abs);
        case UnaryOp::Real: return c64_to_real(ComplexEwOp::Real);
        case UnaryOp::Imag: return c64_to_real(ComplexEwOp::Imag);
        default: return P::no(std::string(unary_op_name(c.attrs.unary)) + " is not implemented for c64");
      }
      if (out.dtype != DType::C64) return P::no("the output must be c64");
      return {plan, {}};
    }
    case OpKind::Cast: {
      if (c.inputs.size() != 1) return P::no("cast takes one input");
      const DType from = c.inputs[0].dtype();
      if (from == DType::C64) {
        s.in[0] = ComplexSlot::C64;
        if (out.dtype == DType::C64) {
          s.op = ComplexEwOp::Copy;
          return {plan, {}};
        }
        // complex -> real keeps the real part; -> bool is "either part nonzero".
        return c64_to_real(out.dtype == DType::Bool ? ComplexEwOp::Nonzero : ComplexEwOp::Real);
      }
      if (out.dtype != DType::C64) return P::no("not a c64 cast");
      s.op = ComplexEwOp::FromReal;
      s.in[0] = ComplexSlot::F32;
      if (from == DType::F32) return {plan, {}};
      if (castable_real(from)) {
        plan.pre_cast = true;
        return {plan, {}};
      }
      return P::no(std::string("dtype ") + dtype_name(from) + " has no WebGPU (WGSL) representation");
    }
    case OpKind::Where: {
      if (c.inputs.size() != 3 || c.inputs[0].dtype() != DType::Bool || c.inputs[1].dtype() != DType::C64 ||
          c.inputs[2].dtype() != DType::C64 || out.dtype != DType::C64)
        return P::no("c64 where takes a bool condition and two c64 operands");
      s.op = ComplexEwOp::Where;
      s.in[0] = ComplexSlot::Bool;
      s.in[1] = s.in[2] = ComplexSlot::C64;
      return {plan, {}};
    }
    case OpKind::Fill: {
      if (!c.inputs.empty() || out.dtype != DType::C64) return P::no("c64 fill takes no input");
      s.op = ComplexEwOp::Fill;
      return {plan, {}};
    }
    default: break;
  }
  (void)caps;
  return P::no(std::string("no c64 elementwise kernel for ") + op_kind_name(c.kind));
}

PipelineKey ComplexEwPlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant ComplexEwPlan::variant() const {
  auto ty = [](ComplexSlot t) -> std::string {
    switch (t) {
      case ComplexSlot::C64: return "vec2<f32>";
      case ComplexSlot::F32: return "f32";
      default: return "u32";
    }
  };
  ShaderVariant v{"complex_ew", {}};
  v.defines.emplace_back("OP", std::to_string(static_cast<int>(shader.op)));
  v.defines.emplace_back("N_IN", std::to_string(shader.n_in));
  for (int i = 0; i < 3; ++i) {
    v.defines.emplace_back("S" + std::to_string(i), std::to_string(static_cast<int>(shader.in[i])));
    v.defines.emplace_back("T" + std::to_string(i), ty(shader.in[i]));
  }
  v.defines.emplace_back("TO", ty(shader.out));
  v.defines.emplace_back("O_BIND", std::to_string(shader.n_in));
  v.defines.emplace_back("P_BIND", std::to_string(shader.n_in + 1));
  return v;
}

std::string ComplexEwPlan::name() const {
  std::string n = std::string("c64 ") + ew_op_name(shader.op);
  if (pre_cast) n += " cast+";
  if (post_cast) n += " +cast";
  return n;
}

// ---- reductions ----

Planned<ComplexReducePlan> plan_complex_reduce(const Caps& caps, const OpCall& c) {
  using P = Planned<ComplexReducePlan>;
  const Out out = out_of(c);
  if (c.inputs.size() != 1 || !out.known) return P::no("reduce takes one input and one output");
  const Tensor& x = c.inputs[0];
  if (x.dtype() != DType::C64 || out.dtype != DType::C64) return P::no("c64 reductions give c64");
  if (!out.contiguous) return P::no("the output must be contiguous");
  if (std::string why = check_view(x); !why.empty()) return P::no(why);
  if (x.dim() > 8) return P::no("rank above 8");
  ComplexReducePlan plan;
  switch (c.attrs.reduce) {
    case ReduceOp::Sum: plan.shader.op = ComplexReduceOp::Sum; break;
    case ReduceOp::Mean: plan.shader.op = ComplexReduceOp::Mean; break;
    case ReduceOp::Prod: plan.shader.op = ComplexReduceOp::Prod; break;
    default: return P::no(std::string(reduce_op_name(c.attrs.reduce)) + " is not defined for c64");
  }
  uint64_t n_red = 1;
  for (int64_t a : c.attrs.axes) {
    if (a < 0 || a >= x.dim()) return P::no("reduce axis out of range");
    n_red *= static_cast<uint64_t>(x.shape()[a]);
  }
  if (out.numel > kU32Max || n_red > kU32Max) return P::no("more than 2^32 elements");
  // One workgroup per output pays off once its 256 invocations have enough to add; a few
  // elements per output are summed faster by one invocation each.
  plan.shader.kernel = n_red >= kComplexSerialReduce ? ComplexReduceKernel::Workgroup : ComplexReduceKernel::Serial;
  if (plan.shader.kernel == ComplexReduceKernel::Workgroup && caps.limits.max_compute_invocations_per_workgroup < 256)
    plan.shader.kernel = ComplexReduceKernel::Serial;
  return {plan, {}};
}

PipelineKey ComplexReducePlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant ComplexReducePlan::variant() const {
  return {"complex_reduce",
          {{"OP", std::to_string(static_cast<int>(shader.op))}, {"WG", std::to_string(static_cast<int>(shader.kernel))}}};
}

std::string ComplexReducePlan::name() const {
  static const char* ops[] = {"sum", "mean", "prod"};
  return std::string("c64 ") + ops[static_cast<int>(shader.op)] +
         (shader.kernel == ComplexReduceKernel::Workgroup ? " wg" : " serial");
}

// ---- matmul ----

uint32_t complex_tile_smem_bytes(uint32_t bm, uint32_t bn, uint32_t bk, bool three) {
  // Two buffers x (re, im [, re + im]) x both operands, each BK rows of (B/4 + 1) vec4.
  return 2 * (three ? 3 : 2) * bk * (bm / 4 + 1 + bn / 4 + 1) * 16;
}

namespace {

struct Tile {
  uint32_t bm, bn, bk, tm, tn;
};

std::string tile_problem(const Limits& l, const Tile& t, bool three) {
  if (t.tm == 0 || t.tn == 0 || t.bk == 0 || t.tm % 4 || t.tn % 4) return "TM and TN must be positive multiples of 4";
  if (t.bm % t.tm || t.bn % t.tn) return "BM must be a multiple of TM and BN of TN";
  const uint32_t nt = (t.bm / t.tm) * (t.bn / t.tn);
  if ((t.bm * t.bk) % nt || (t.bn * t.bk) % nt) return "BM*BK and BN*BK must be multiples of the invocation count";
  if (nt > l.max_compute_invocations_per_workgroup || nt > l.max_compute_workgroup_size_x)
    return std::to_string(nt) + " invocations exceed the device limit";
  if (complex_tile_smem_bytes(t.bm, t.bn, t.bk, three) > l.max_compute_workgroup_storage_size)
    return "needs " + std::to_string(complex_tile_smem_bytes(t.bm, t.bn, t.bk, three)) +
           " bytes of workgroup storage, device has " + std::to_string(l.max_compute_workgroup_storage_size);
  return {};
}

}  // namespace

Planned<ComplexMatmulPlan> plan_complex_matmul(const Caps& caps, const MatmulTuning& tu, const OpCall& c) {
  using P = Planned<ComplexMatmulPlan>;
  if (c.attrs.prologue != OpAttrs::Prologue::None || c.attrs.n_rot > 0)
    return P::no("fused prologues and the rope_append epilogue are not defined for c64");
  const size_t n_in = 2 + (c.attrs.has_bias ? 1 : 0);
  if (c.inputs.size() != n_in || c.outputs.size() > 1) return P::no("matmul takes two inputs (plus an addend) and one output");
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  const Out out = out_of(c);
  if (!out.known) return P::no("matmul expects one output");
  if (a.dtype() != DType::C64 || b.dtype() != DType::C64 || out.dtype != DType::C64)
    return P::no("c64 matmul needs c64 operands and output; cast() first");
  if (c.attrs.has_bias && (c.inputs[2].dtype() != DType::C64 || c.inputs[2].shape() != out.shape))
    return P::no("the addend must have the output's shape and dtype");
  if (a.dim() < 2 || b.dim() < 2 || out.shape.size() < 2) return P::no("operands must be at least 2-D");
  if (!out.contiguous) return P::no("the output must be contiguous");
  const size_t r = out.shape.size();
  const uint64_t M = static_cast<uint64_t>(a.shape()[a.dim() - 2]), K = static_cast<uint64_t>(a.shape()[a.dim() - 1]);
  const bool tb = c.attrs.transpose_b;
  const uint64_t N = static_cast<uint64_t>(tb ? b.shape()[b.dim() - 2] : b.shape()[b.dim() - 1]);
  const uint64_t Kb = static_cast<uint64_t>(tb ? b.shape()[b.dim() - 1] : b.shape()[b.dim() - 2]);
  if (Kb != K || static_cast<uint64_t>(out.shape[r - 2]) != M || static_cast<uint64_t>(out.shape[r - 1]) != N ||
      static_cast<int>(r) < std::max(a.dim(), b.dim()))
    return P::no("output shape does not match the operands");
  for (size_t d = 0; d + 2 < r; ++d) {
    const int da = static_cast<int>(d) - static_cast<int>(r) + a.dim(), db = static_cast<int>(d) - static_cast<int>(r) + b.dim();
    const int64_t n = out.shape[d];
    if ((da >= 0 && a.shape()[da] != 1 && a.shape()[da] != n) || (db >= 0 && b.shape()[db] != 1 && b.shape()[db] != n))
      return P::no("batch dims of the operands do not broadcast to the output's");
  }
  for (const Tensor* t : {&a, &b})
    if (std::string why = check_view(*t); !why.empty()) return P::no(why);
  if (out.numel > kU32Max) return P::no("output too large for 32-bit element indexing");
  if (caps.limits.max_storage_buffers_per_shader_stage < 3) return P::no("needs 3 storage buffers per stage");

  ComplexMatmulPlan plan;
  ComplexMatmulShader& s = plan.shader;
  const MatmulOperand ad = matmul_operand(a, false), bd = matmul_operand(b, tb);
  plan.compact_a = ad.compact;
  plan.compact_b = bd.compact;
  plan.add_after = c.attrs.has_bias;
  s.a_kfast = ad.cs == 1 && K > 1;
  s.b_kfast = bd.rs == 1 && K > 1;
  uint64_t batch = 1;
  for (size_t d = 0; d + 2 < r; ++d) batch *= static_cast<uint64_t>(out.shape[d]);
  // Four products by default: on the H200 the four-product kernel ran at 95-100% of the f32
  // matmul's rate and the three-product one at 62-67% at every measured size, 1024^3 to
  // 4096^3 (BENCHMARKS.md); Gauss's form saves a multiply but its extra adds and operand
  // sums cost more in this tiled kernel. It stays selectable (tuning) for adapters where
  // multiplies are the scarcer resource.
  const bool three = tu.c64 == ComplexAlgo::ThreeMult;
  s.three = three;
  Tile t{};
  if (tu.c64_tile) {
    const auto& f = *tu.c64_tile;
    t = {f[0], f[1], f[2], f[3], f[4]};
    if (std::string why = tile_problem(caps.limits, t, three); !why.empty())
      throw_error(ErrorKind::InvalidArgument, "matmul", "c64 tile " + std::to_string(t.bm) + "x" + std::to_string(t.bn) +
                                                             "x" + std::to_string(t.bk) + "x" + std::to_string(t.tm) +
                                                             "x" + std::to_string(t.tn) + ": " + why);
  } else {
    // A 64x64 complex tile moves as many bytes per multiply-add as the f32 kernel's 128x128
    // one; it needs enough tiles to fill the GPU, below that the 32x32 tile. BK = 4 where
    // the device's workgroup memory is too small for BK = 8.
    const uint64_t big_tiles = uint64_t{ceil_div(M, 64)} * ceil_div(N, 64) * batch;
    const Tile cands[] = {{64, 64, 8, 4, 4}, {64, 64, 4, 4, 4}, {32, 32, 8, 4, 4}, {32, 32, 4, 4, 4}};
    bool found = false;
    for (const Tile& cand : cands) {
      if (cand.bm == 64 && big_tiles < 128) continue;
      if (tile_problem(caps.limits, cand, three).empty()) {
        t = cand;
        found = true;
        break;
      }
    }
    if (!found) return P::no("no c64 matmul tile fits the device's workgroup limits");
  }
  s.bm = static_cast<uint16_t>(t.bm), s.bn = static_cast<uint16_t>(t.bn), s.bk = static_cast<uint16_t>(t.bk);
  s.tm = static_cast<uint16_t>(t.tm), s.tn = static_cast<uint16_t>(t.tn);
  return {plan, {}};
}

PipelineKey ComplexMatmulPlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant ComplexMatmulPlan::variant() const {
  const ComplexMatmulShader& s = shader;
  auto b = [](uint8_t v) { return std::string(v ? "true" : "false"); };
  return {"complex_matmul",
          {{"THREE", std::to_string(s.three)}, {"BM", std::to_string(s.bm)}, {"BN", std::to_string(s.bn)},
           {"BK", std::to_string(s.bk)}, {"TM", std::to_string(s.tm)}, {"TN", std::to_string(s.tn)},
           {"A_KFAST", b(s.a_kfast)}, {"B_KFAST", b(s.b_kfast)}}};
}

std::string ComplexMatmulPlan::name() const {
  const ComplexMatmulShader& s = shader;
  return std::string("c64 ") + (s.three ? "mm3 " : "mm4 ") + std::to_string(s.bm) + "x" + std::to_string(s.bn) + "x" +
         std::to_string(s.bk) + " " + std::to_string(s.tm) + "x" + std::to_string(s.tn) + (s.a_kfast ? " a:k" : " a:m") +
         (s.b_kfast ? " b:k" : " b:n");
}

}  // namespace wgt::webgpu
