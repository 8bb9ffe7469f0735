// Reference kernels of the elementwise family: unary, binary, where, cast, copy, fill,
// arange and the counter-based random numbers.
#include <cmath>

#include "cpu/reference/families.hpp"
#include "cpu/reference/random.hpp"
#include "cpu/reference/ref_common.hpp"

namespace wgt::cpu_ref {

namespace {

double unary_real(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::Neg: return -x;
    case UnaryOp::Abs: return std::fabs(x);
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Log: return std::log(x);
    case UnaryOp::Sqrt: return std::sqrt(x);
    case UnaryOp::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOp::Sin: return std::sin(x);
    case UnaryOp::Cos: return std::cos(x);
    case UnaryOp::Tanh: return std::tanh(x);
    case UnaryOp::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::Relu: return std::isnan(x) ? x : (x > 0 ? x : 0.0);  // NaN propagates
    case UnaryOp::GeluErf: return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
    case UnaryOp::GeluTanh: {
      // 0.7978845608 = sqrt(2/pi); the tanh approximation of GPT-2 / BERT.
      const double k = 0.7978845608028654;
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case UnaryOp::Silu: return x / (1.0 + std::exp(-x));
    case UnaryOp::Conj: case UnaryOp::Real: return x;
    case UnaryOp::Imag: return 0.0;
  }
  return x;
}

// Complex unary ops (supports(): neg, conj, exp, abs, real, imag). std::abs is hypot (no
// overflow of the squares) and std::exp the C99 cexp with its Annex G special values
// (docs/semantics.md); real-valued results come back with a zero imaginary part, which the
// f32 store drops.
cplx unary_cplx(UnaryOp op, cplx z) {
  switch (op) {
    case UnaryOp::Neg: return -z;
    case UnaryOp::Conj: return std::conj(z);
    case UnaryOp::Exp: return std::exp(z);
    case UnaryOp::Abs: return std::abs(z);
    case UnaryOp::Real: return z.real();
    case UnaryOp::Imag: return z.imag();
    default: return z;  // not reachable: supports() rejects other ops for c64
  }
}

int64_t unary_int(UnaryOp op, int64_t x) {
  switch (op) {
    case UnaryOp::Neg: return wsub(0, x);
    case UnaryOp::Abs: return x < 0 ? wsub(0, x) : x;  // abs(INT_MIN) wraps to INT_MIN
    case UnaryOp::Relu: return x > 0 ? x : 0;
    case UnaryOp::Imag: return 0;
    default: return x;  // not reachable: the front-end rejects other ops for integers
  }
}

int64_t ipow(int64_t base, int64_t e, const std::string& op) {
  if (e < 0) {
    // Integer result of base^-n truncated toward zero: only |base| == 1 gives a non-zero.
    if (base == 0) throw_error(ErrorKind::InvalidArgument, op, "integer 0 raised to a negative power (division by zero)");
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  int64_t r = 1;
  while (e) {
    if (e & 1) r = wmul(r, base);
    base = wmul(base, base);
    e >>= 1;
  }
  return r;
}

}  // namespace

void run_unary(OpCall& call) {
  const Tensor& x = call.inputs[0];
  Tensor& out = call.outputs[0];
  const UnaryOp op = call.attrs.unary;
  const uint8_t* xb = base_of(x);
  uint8_t* ob = mut_base_of(out);
  const DType xt = x.dtype(), ot = out.dtype();
  const Domain dom = domain_of(xt);  // abs, real, imag of c64 have a real output
  walk<1>(x.shape(), {x.strides().data()}, {x.offset()}, [&](int64_t e, const std::array<int64_t, 1>& o) {
    if (dom == Domain::Real) store_real(ob, ot, e, unary_real(op, load_real(xb, xt, o[0])));
    else if (dom == Domain::Int) store_int(ob, ot, e, unary_int(op, load_int(xb, xt, o[0])));
    else store_cplx(ob, ot, e, unary_cplx(op, load_cplx(xb, xt, o[0])));
  });
}

void run_binary(OpCall& call) {
  Tensor& out = call.outputs[0];
  const Tensor a = call.inputs[0].expand(out.shape()), b = call.inputs[1].expand(out.shape());
  const BinaryOp op = call.attrs.binary;
  const uint8_t *ab = base_of(a), *bb = base_of(b);
  uint8_t* ob = mut_base_of(out);
  const DType at = a.dtype(), bt = b.dtype(), ot = out.dtype();
  const Domain dom = domain_of(promote_types(at, bt));
  walk<2>(out.shape(), {a.strides().data(), b.strides().data()}, {a.offset(), b.offset()},
          [&](int64_t e, const std::array<int64_t, 2>& o) {
    if (dom == Domain::Real) {
      const double x = load_real(ab, at, o[0]), y = load_real(bb, bt, o[1]);
      double r = 0;
      switch (op) {
        case BinaryOp::Add: r = x + y; break;
        case BinaryOp::Sub: r = x - y; break;
        case BinaryOp::Mul: r = x * y; break;
        case BinaryOp::Div: r = x / y; break;
        case BinaryOp::Pow: r = std::pow(x, y); break;
        // NaN propagates through maximum/minimum (torch semantics), unlike std::fmax.
        case BinaryOp::Maximum: r = (std::isnan(x) || std::isnan(y)) ? NAN : (x > y ? x : y); break;
        case BinaryOp::Minimum: r = (std::isnan(x) || std::isnan(y)) ? NAN : (x < y ? x : y); break;
        case BinaryOp::Eq: r = x == y; break;
        case BinaryOp::Ne: r = x != y; break;
        case BinaryOp::Lt: r = x < y; break;
        case BinaryOp::Le: r = x <= y; break;
        case BinaryOp::Gt: r = x > y; break;
        case BinaryOp::Ge: r = x >= y; break;
      }
      store_real(ob, ot, e, r);
    } else if (dom == Domain::Int) {
      const int64_t x = load_int(ab, at, o[0]), y = load_int(bb, bt, o[1]);
      int64_t r = 0;
      switch (op) {
        case BinaryOp::Add: r = wadd(x, y); break;
        case BinaryOp::Sub: r = wsub(x, y); break;
        case BinaryOp::Mul: r = wmul(x, y); break;
        case BinaryOp::Div:
          // Integer division truncates toward zero (C, WGSL); INT_MIN / -1 wraps to INT_MIN.
          if (y == 0) throw_error(ErrorKind::InvalidArgument, call.name, "integer division by zero");
          r = (y == -1) ? wsub(0, x) : x / y;
          break;
        case BinaryOp::Pow: r = ipow(x, y, call.name); break;
        case BinaryOp::Maximum: r = x > y ? x : y; break;
        case BinaryOp::Minimum: r = x < y ? x : y; break;
        case BinaryOp::Eq: r = x == y; break;
        case BinaryOp::Ne: r = x != y; break;
        case BinaryOp::Lt: r = x < y; break;
        case BinaryOp::Le: r = x <= y; break;
        case BinaryOp::Gt: r = x > y; break;
        case BinaryOp::Ge: r = x >= y; break;
      }
      store_int(ob, ot, e, r);
    } else {
      const cplx x = load_cplx(ab, at, o[0]), y = load_cplx(bb, bt, o[1]);
      switch (op) {  // supports(): add, sub, mul, div, eq, ne only
        case BinaryOp::Add: store_cplx(ob, ot, e, x + y); break;
        case BinaryOp::Sub: store_cplx(ob, ot, e, x - y); break;
        case BinaryOp::Mul: store_cplx(ob, ot, e, x * y); break;
        case BinaryOp::Div: store_cplx(ob, ot, e, x / y); break;
        case BinaryOp::Eq: store_int(ob, ot, e, x == y); break;
        case BinaryOp::Ne: store_int(ob, ot, e, x != y); break;
        default: break;
      }
    }
  });
}

void run_where(OpCall& call) {
  Tensor& out = call.outputs[0];
  const Tensor c = call.inputs[0].expand(out.shape()), a = call.inputs[1].expand(out.shape()),
               b = call.inputs[2].expand(out.shape());
  const uint8_t *cb = base_of(c), *ab = base_of(a), *bb = base_of(b);
  uint8_t* ob = mut_base_of(out);
  walk<3>(out.shape(), {c.strides().data(), a.strides().data(), b.strides().data()},
          {c.offset(), a.offset(), b.offset()}, [&](int64_t e, const std::array<int64_t, 3>& o) {
    const bool pick_a = load_int(cb, c.dtype(), o[0]) != 0;
    const uint8_t* src = pick_a ? ab : bb;
    const DType st_ = pick_a ? a.dtype() : b.dtype();
    const int64_t off = pick_a ? o[1] : o[2];
    switch (domain_of(out.dtype())) {  // exact copy through the widest representation
      case Domain::Real: store_real(ob, out.dtype(), e, load_real(src, st_, off)); break;
      case Domain::Int: store_int(ob, out.dtype(), e, load_int(src, st_, off)); break;
      case Domain::Complex: store_cplx(ob, out.dtype(), e, load_cplx(src, st_, off)); break;
    }
  });
}

// Cast rules: float->int NaN->0, truncate, saturate; int->int wraps; ->bool is x != 0;
// complex->real keeps the real part; real->complex has a zero imaginary part.
void run_cast(OpCall& call) {
  const Tensor& x = call.inputs[0];
  Tensor& out = call.outputs[0];
  const uint8_t* xb = base_of(x);
  uint8_t* ob = mut_base_of(out);
  const DType xt = x.dtype(), ot = out.dtype();
  walk<1>(x.shape(), {x.strides().data()}, {x.offset()}, [&](int64_t e, const std::array<int64_t, 1>& o) {
    if (is_complex(xt)) store_cplx(ob, ot, e, load_cplx(xb, xt, o[0]));
    else if (is_floating(xt)) {
      if (is_complex(ot)) store_cplx(ob, ot, e, {load_real(xb, xt, o[0]), 0.0});
      else store_real(ob, ot, e, load_real(xb, xt, o[0]));
    } else store_int(ob, ot, e, load_int(xb, xt, o[0]));
  });
}

void run_copy(OpCall& call) {
  const Tensor& x = call.inputs[0];
  const size_t es = dtype_size(x.dtype());
  const uint8_t* xb = base_of(x);
  uint8_t* ob = mut_base_of(call.outputs[0]);
  walk<1>(x.shape(), {x.strides().data()}, {x.offset()}, [&](int64_t e, const std::array<int64_t, 1>& o) {
    std::memcpy(ob + e * static_cast<int64_t>(es), xb + o[0] * static_cast<int64_t>(es), es);
  });
}

void run_creation(OpCall& call) {
  Tensor& out = call.outputs[0];
  uint8_t* ob = mut_base_of(out);
  const DType ot = out.dtype();
  const int64_t n = out.numel();
  const uint32_t key = rng_key(call.attrs.seed);
  const double s0 = call.attrs.scalar0, s1 = call.attrs.scalar1;
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    switch (call.kind) {
      case OpKind::Fill: v = s0; break;
      case OpKind::Arange: v = s0 + static_cast<double>(i) * s1; break;
      case OpKind::RandUniform: v = s0 + (s1 - s0) * rng_uniform01(key, static_cast<uint64_t>(i)); break;
      case OpKind::RandNormal: v = s0 + s1 * rng_normal01(key, static_cast<uint64_t>(i)); break;
      default: break;
    }
    store_real(ob, ot, i, v);
  }
}

}  // namespace wgt::cpu_ref
