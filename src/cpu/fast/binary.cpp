// Fast binary elementwise ops (arithmetic and comparisons, with row/scalar broadcast) and
// where(), for operands whose innermost stride is 0 or 1. Arithmetic runs in the operand
// dtype (f32/f64) or in f32 for f16/bf16; comparisons write Bool (0/1 bytes).
#include <cmath>

#include "cpu/fast/kernels.hpp"
#include "cpu/fast/simd.hpp"

namespace wgt::cpu_fast {
namespace {

constexpr int64_t kChunk = 256;

template <typename T>
inline T apply(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Pow: return std::pow(a, b);
    // NaN in either operand gives NaN (torch.maximum semantics).
    case BinaryOp::Maximum: return (a > b || a != a) ? a : b;
    case BinaryOp::Minimum: return (a < b || a != a) ? a : b;
    default: return T(0);
  }
}
inline bool compare(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    default: return false;
  }
}

// The op is a template parameter and the strides (0 or 1) are compile-time so each loop
// body is branch-free and vectorizes.
template <BinaryOp OP, int SA, int SB, typename T, typename R>
void loop(const T* a, const T* b, R* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T av = a[i * SA], bv = b[i * SB];
    if constexpr (OP >= BinaryOp::Eq) y[i] = static_cast<R>(compare(OP, av, bv));
    else y[i] = apply<T>(OP, av, bv);
  }
}
template <BinaryOp OP, typename T, typename R>
void strided(const T* a, int64_t sa, const T* b, int64_t sb, R* y, int64_t n) {
  if (sa && sb) loop<OP, 1, 1>(a, b, y, n);
  else if (sa) loop<OP, 1, 0>(a, b, y, n);
  else if (sb) loop<OP, 0, 1>(a, b, y, n);
  else loop<OP, 0, 0>(a, b, y, n);
}
template <typename T, typename R>
void binary_kernel(BinaryOp op, const T* a, int64_t sa, const T* b, int64_t sb, R* y, int64_t n) {
  switch (op) {
#define WGT_CASE(X) case BinaryOp::X: strided<BinaryOp::X>(a, sa, b, sb, y, n); return;
    WGT_CASE(Add) WGT_CASE(Sub) WGT_CASE(Mul) WGT_CASE(Div) WGT_CASE(Pow) WGT_CASE(Maximum)
    WGT_CASE(Minimum) WGT_CASE(Eq) WGT_CASE(Ne) WGT_CASE(Lt) WGT_CASE(Le) WGT_CASE(Gt) WGT_CASE(Ge)
#undef WGT_CASE
  }
}

// Loads n elements of a (stride 0 or 1) 16-bit operand into f32.
inline void stage(DType dt, const uint8_t* src, int64_t stride, float* dst, int64_t n) {
  if (stride) {
    half_to_f32_row(dt, src, dst, n);
  } else {
    float v;
    half_to_f32_row(dt, src, &v, 1);
    dst[0] = v;
  }
}

}  // namespace

bool try_binary(OpCall& call) {
  if (call.inputs.size() != 2 || call.outputs.size() != 1) return false;
  const Tensor& a = call.inputs[0];
  const Tensor& b = call.inputs[1];
  Tensor& y = call.outputs[0];
  const DType dt = a.dtype();
  const BinaryOp op = call.attrs.binary;
  const bool cmp = is_comparison(op);
  if (b.dtype() != dt || (dt != DType::F32 && dt != DType::F64 && !is_half(dt))) return false;
  if (y.dtype() != (cmp ? DType::Bool : dt) || !y.is_contiguous()) return false;
  ElementPlan plan;
  if (!make_element_plan(y.shape(), {&a, &b}, plan)) return false;
  if (plan.numel == 0) return true;
  const uint8_t* ab = a.storage()->host_data();
  const uint8_t* bb = b.storage()->host_data();
  if (!ab || !bb) return false;
  uint8_t* yb = static_cast<uint8_t*>(y.data_ptr());
  const size_t es = dtype_size(dt), oes = dtype_size(y.dtype());
  const int64_t sa = plan.inner_stride[0], sb = plan.inner_stride[1];
  const int64_t grain = op == BinaryOp::Pow ? 4096 : 32768;
  for_each_segment(plan, grain, [&](const int64_t* offs, int64_t c0, int64_t c1, int64_t flat) {
    const uint8_t* pa = ab + offs[0] * es;
    const uint8_t* pb = bb + offs[1] * es;
    uint8_t* py = yb + flat * oes;
    const int64_t n = c1 - c0;
    if (dt == DType::F32 || dt == DType::F64) {
      auto run = [&](auto* ta) {
        using T = std::remove_const_t<std::remove_pointer_t<decltype(ta)>>;
        const T* xa = reinterpret_cast<const T*>(pa);
        const T* xb = reinterpret_cast<const T*>(pb);
        if (cmp) binary_kernel<T, uint8_t>(op, xa, sa, xb, sb, py, n);
        else binary_kernel<T, T>(op, xa, sa, xb, sb, reinterpret_cast<T*>(py), n);
      };
      if (dt == DType::F32) run(static_cast<const float*>(nullptr));
      else run(static_cast<const double*>(nullptr));
      return;
    }
    float fa[kChunk], fb[kChunk], fy[kChunk];
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t m = std::min(kChunk, n - s);
      stage(dt, pa + s * sa * es, sa, fa, m);
      stage(dt, pb + s * sb * es, sb, fb, m);
      if (cmp) {
        binary_kernel<float, uint8_t>(op, fa, sa, fb, sb, py + s, m);
      } else {
        binary_kernel<float, float>(op, fa, sa, fb, sb, fy, m);
        f32_to_half_row(dt, fy, py + s * es, m);
      }
    }
  });
  return true;
}

// where(cond, a, b): a select, so any dtype works by element size.
bool try_where(OpCall& call) {
  if (call.inputs.size() != 3 || call.outputs.size() != 1) return false;
  const Tensor& c = call.inputs[0];
  const Tensor& a = call.inputs[1];
  const Tensor& b = call.inputs[2];
  Tensor& y = call.outputs[0];
  if (c.dtype() != DType::Bool || a.dtype() != y.dtype() || b.dtype() != y.dtype() || !y.is_contiguous()) return false;
  ElementPlan plan;
  if (!make_element_plan(y.shape(), {&c, &a, &b}, plan)) return false;
  if (plan.numel == 0) return true;
  const uint8_t* cb = c.storage()->host_data();
  const uint8_t* ab = a.storage()->host_data();
  const uint8_t* bb = b.storage()->host_data();
  if (!cb || !ab || !bb) return false;
  uint8_t* yb = static_cast<uint8_t*>(y.data_ptr());
  const size_t es = dtype_size(y.dtype());
  const int64_t sc = plan.inner_stride[0], sa = plan.inner_stride[1], sb = plan.inner_stride[2];
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    for_each_segment(plan, 32768, [&](const int64_t* offs, int64_t c0, int64_t c1, int64_t flat) {
      const uint8_t* pc = cb + offs[0];
      const T* pa = reinterpret_cast<const T*>(ab) + offs[1];
      const T* pb = reinterpret_cast<const T*>(bb) + offs[2];
      T* py = reinterpret_cast<T*>(yb) + flat;
      const int64_t n = c1 - c0;
      if (sc && sa && sb) {
        for (int64_t i = 0; i < n; ++i) py[i] = pc[i] ? pa[i] : pb[i];
      } else {
        for (int64_t i = 0; i < n; ++i) py[i] = pc[i * sc] ? pa[i * sa] : pb[i * sb];
      }
    });
  };
  switch (es) {
    case 1: typed(uint8_t{}); return true;
    case 2: typed(uint16_t{}); return true;
    case 4: typed(uint32_t{}); return true;
    case 8: typed(uint64_t{}); return true;
    default: return false;
  }
}

}  // namespace wgt::cpu_fast
