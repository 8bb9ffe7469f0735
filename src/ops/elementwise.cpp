// Front-ends of the elementwise ops (unary, binary, where, cast, scalars): validation, dtype
// promotion, broadcasting, then one OpCall to the runtime.
//
// Contract with the backends (what an OpCall of these kinds guarantees):
//  - Unary: inputs = {x}; output has x's shape and dtype.
//  - Binary: inputs = {a, b} with the SAME dtype (the promoted compute dtype: the front-end
//    casts the other operand); shapes broadcast to the output shape (numpy rules, the
//    backend expands); output dtype = compute dtype, or Bool for comparisons.
//  - Where: inputs = {cond (Bool), a, b}, a and b of the output dtype; all three broadcast.
//  - Cast: inputs = {x}; output dtype is the target.
//  - Fill: no inputs; attrs.scalar0 is the value (used by scalar_like and creation ops).
#include <cmath>

#include "ops/op_common.hpp"
#include "wgt/ops.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

// Which dtypes an elementwise op accepts. Transcendental ops need floats (ints would need an
// implicit promotion rule nobody can guess); relu/neg/abs are exact on signed/unsigned ints.
void check_unary_dtype(UnaryOp op, DType t, const char* name) {
  if (t == DType::Bool)
    throw_error(ErrorKind::DTypeMismatch, name, "is not defined for bool tensors; cast() to an integer or float dtype");
  const bool int_ok = op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Relu || op == UnaryOp::Conj ||
                      op == UnaryOp::Real || op == UnaryOp::Imag;
  if (is_integral(t) && !int_ok)
    throw_error(ErrorKind::DTypeMismatch, name,
                std::string("needs a floating dtype, got ") + dtype_name(t) + "; cast() the input to f32 first");
  if (is_complex(t) && op == UnaryOp::Relu)
    throw_error(ErrorKind::DTypeMismatch, name, "is not defined for complex tensors (no ordering)");
}

void check_binary_dtype(BinaryOp op, DType compute, const char* name) {
  const bool ordering = op == BinaryOp::Maximum || op == BinaryOp::Minimum || op == BinaryOp::Lt ||
                        op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge;
  if (is_complex(compute) && ordering)
    throw_error(ErrorKind::DTypeMismatch, name, "is not defined for complex tensors (no ordering)");
  // bool arithmetic: add = logical or, mul = logical and; sub/div/pow have no bool meaning.
  if (compute == DType::Bool && (op == BinaryOp::Sub || op == BinaryOp::Div || op == BinaryOp::Pow))
    throw_error(ErrorKind::DTypeMismatch, name, "is not defined for bool tensors; cast() to an integer dtype first");
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x) {
  const char* name = unary_op_name(op);
  Device dev = common_device({&x}, name);
  check_unary_dtype(op, x.dtype(), name);
  const bool complex = is_complex(x.dtype());
  if (!complex && (op == UnaryOp::Conj || op == UnaryOp::Real)) return x;  // numpy: the input itself
  if (!complex && op == UnaryOp::Imag) return zeros(x.shape(), x.dtype(), dev);
  // |z|, re z and im z of a complex tensor are real: f32 for c64.
  const bool to_real = complex && (op == UnaryOp::Abs || op == UnaryOp::Real || op == UnaryOp::Imag);
  OpCall call{OpKind::Unary, name, {x}, {}, {}};
  call.attrs.unary = op;
  call.work = static_cast<double>(x.numel());
  return Runtime::get().run1(call, {x.shape(), to_real ? DType::F32 : x.dtype()}, dev);
}

Tensor neg(const Tensor& x) { return unary(UnaryOp::Neg, x); }
Tensor abs(const Tensor& x) { return unary(UnaryOp::Abs, x); }
Tensor exp(const Tensor& x) { return unary(UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary(UnaryOp::Log, x); }
Tensor sqrt(const Tensor& x) { return unary(UnaryOp::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary(UnaryOp::Rsqrt, x); }
Tensor sin(const Tensor& x) { return unary(UnaryOp::Sin, x); }
Tensor cos(const Tensor& x) { return unary(UnaryOp::Cos, x); }
Tensor tanh(const Tensor& x) { return unary(UnaryOp::Tanh, x); }
Tensor sigmoid(const Tensor& x) { return unary(UnaryOp::Sigmoid, x); }
Tensor relu(const Tensor& x) { return unary(UnaryOp::Relu, x); }
Tensor gelu(const Tensor& x, GeluApprox approx) {
  return unary(approx == GeluApprox::Erf ? UnaryOp::GeluErf : UnaryOp::GeluTanh, x);
}
Tensor silu(const Tensor& x) { return unary(UnaryOp::Silu, x); }
Tensor conj(const Tensor& x) { return unary(UnaryOp::Conj, x); }
Tensor real(const Tensor& x) { return unary(UnaryOp::Real, x); }
Tensor imag(const Tensor& x) { return unary(UnaryOp::Imag, x); }

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = binary_op_name(op);
  Device dev = common_device({&a, &b}, name);
  const DType compute = promote_types(a.dtype(), b.dtype());
  check_binary_dtype(op, compute, name);
  Shape out = broadcast_shapes(a.shape(), b.shape(), name);
  validate_shape(out, name);
  // Backends see one dtype per call; the (rare) mixed-dtype case pays one cast.
  Tensor ca = a.dtype() == compute ? a : cast(a, compute);
  Tensor cb = b.dtype() == compute ? b : cast(b, compute);
  OpCall call{OpKind::Binary, name, {ca, cb}, {}, {}};
  call.attrs.binary = op;
  call.work = numel_d(out);
  return Runtime::get().run1(call, {out, is_comparison(op) ? DType::Bool : compute}, dev);
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Pow, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Minimum, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ge, a, b); }

// The scalar takes a's dtype (an integer tensor plus 2.5 adds 2: cast() truncates).
Tensor add(const Tensor& a, double b) {
  require_defined(a, "add");
  return add(a, scalar_like(a, b));
}
Tensor mul(const Tensor& a, double b) {
  require_defined(a, "mul");
  return mul(a, scalar_like(a, b));
}

Tensor scalar_like(const Tensor& like, double value) {
  require_defined(like, "scalar_like", "like");
  OpCall call{OpKind::Fill, "scalar_like", {}, {}, {}};
  call.attrs.scalar0 = value;
  call.work = 1;
  return Runtime::get().run1(call, {Shape{}, like.dtype()}, like.device());
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Device dev = common_device({&cond, &a, &b}, "where");
  if (cond.dtype() != DType::Bool)
    throw_error(ErrorKind::DTypeMismatch, "where",
                "condition must be bool, got " + dt(cond.dtype()) + "; build it with a comparison or cast(x, DType::Bool)");
  Shape out = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  validate_shape(out, "where");
  const DType t = promote_types(a.dtype(), b.dtype());
  Tensor ca = a.dtype() == t ? a : cast(a, t);
  Tensor cb = b.dtype() == t ? b : cast(b, t);
  OpCall call{OpKind::Where, "where", {cond, ca, cb}, {}, {}};
  call.work = numel_d(out);
  return Runtime::get().run1(call, {out, t}, dev);
}

Tensor cast(const Tensor& x, DType dtype) {
  Device dev = common_device({&x}, "cast");
  if (static_cast<int>(dtype) >= kNumDTypes)
    throw_error(ErrorKind::InvalidArgument, "cast", "unknown target dtype value " + std::to_string(static_cast<int>(dtype)));
  OpCall call{OpKind::Cast, "cast", {x}, {}, {}};
  call.work = static_cast<double>(x.numel());
  return Runtime::get().run1(call, {x.shape(), dtype}, dev);
}

}  // namespace wgt
