// Fast unary elementwise ops and float casts over contiguous or row-strided operands
// (f32/f64 directly, f16/bf16 converted to f32 in small chunks), plus the shared
// ElementPlan that maps an output index to operand offsets.
#include <cmath>

#include "cpu/fast/kernels.hpp"
#include "cpu/fast/simd.hpp"

namespace wgt::cpu_fast {

// ---------------------------------------------------------------- plan
void ElementPlan::row_offsets(int64_t row, int64_t* offs) const {
  for (int k = 0; k < noperands; ++k) offs[k] = base_offset[k];
  for (int d = static_cast<int>(outer_shape.size()) - 1; d >= 0 && row > 0; --d) {
    const int64_t i = row % outer_shape[d];
    row /= outer_shape[d];
    for (int k = 0; k < noperands; ++k) offs[k] += i * outer_strides[k][d];
  }
}

bool make_element_plan(const Shape& out_shape, const std::vector<const Tensor*>& operands, ElementPlan& plan) {
  const int rank = static_cast<int>(out_shape.size());
  const int nop = static_cast<int>(operands.size());
  if (nop > ElementPlan::kMaxOperands || rank > kMaxRank) return false;
  plan = ElementPlan{};
  plan.noperands = nop;
  plan.numel = 1;
  for (int64_t d : out_shape) plan.numel *= d;
  // Per-operand strides aligned to the output dims (0 where broadcast); size-1 output dims dropped.
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides(nop);
  for (int d = 0; d < rank; ++d) {
    if (out_shape[d] == 1) continue;
    sizes.push_back(out_shape[d]);
    for (int k = 0; k < nop; ++k) {
      const Tensor& t = *operands[k];
      const int td = d - (rank - t.dim());
      int64_t st = 0;
      if (td >= 0) {
        if (t.shape()[td] == out_shape[d]) st = t.strides()[td];
        else if (t.shape()[td] != 1) return false;
      }
      strides[k].push_back(st);
    }
  }
  for (int k = 0; k < nop; ++k) {
    if (operands[k]->dim() > rank) return false;
    plan.base_offset[k] = operands[k]->offset();
  }
  // Coalesce from the innermost dim outwards: dim d folds into the dim after it when every
  // operand steps by exactly (stride * size) of that dim.
  std::vector<int64_t> csize;
  std::vector<std::vector<int64_t>> cstr(nop);
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    bool merge = !csize.empty();
    for (int k = 0; k < nop && merge; ++k) merge = strides[k][d] == cstr[k].back() * csize.back();
    if (merge) {
      csize.back() *= sizes[d];
    } else {
      csize.push_back(sizes[d]);
      for (int k = 0; k < nop; ++k) cstr[k].push_back(strides[k][d]);
    }
  }
  if (csize.empty()) {  // every dim is 1: one element
    plan.inner = 1;
    return true;
  }
  plan.inner = csize[0];
  for (int k = 0; k < nop; ++k) {
    plan.inner_stride[k] = cstr[k][0];
    if (plan.inner_stride[k] != 0 && plan.inner_stride[k] != 1) return false;
  }
  // Outer dims, reversed back to row-major order.
  for (size_t i = csize.size(); i-- > 1;) {
    plan.outer_shape.push_back(csize[i]);
    for (int k = 0; k < nop; ++k) plan.outer_strides[k].push_back(cstr[k][i]);
  }
  return true;
}

// ---------------------------------------------------------------- unary
namespace {

constexpr int64_t kChunk = 256;  // f16/bf16 staging chunk and transcendental batch size

template <typename T>
inline T sigmoid_scalar(T x) { return T(1) / (T(1) + std::exp(-x)); }

// y[i] = op(x[i]) for contiguous float/double arrays (y may alias x).
template <typename T>
void unary_kernel(UnaryOp op, const T* x, T* y, int64_t n) {
  switch (op) {
    case UnaryOp::Neg: for (int64_t i = 0; i < n; ++i) y[i] = -x[i]; return;
    case UnaryOp::Abs: for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(x[i]); return;
    case UnaryOp::Log: for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]); return;
    case UnaryOp::Sqrt: for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]); return;
    case UnaryOp::Rsqrt: for (int64_t i = 0; i < n; ++i) y[i] = T(1) / std::sqrt(x[i]); return;
    case UnaryOp::Sin: for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]); return;
    case UnaryOp::Cos: for (int64_t i = 0; i < n; ++i) y[i] = std::cos(x[i]); return;
    case UnaryOp::Tanh: for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]); return;
    // std::max semantics: NaN stays NaN, -0 stays -0.
    case UnaryOp::Relu: for (int64_t i = 0; i < n; ++i) y[i] = x[i] < T(0) ? T(0) : x[i]; return;
    case UnaryOp::GeluErf:
      for (int64_t i = 0; i < n; ++i) y[i] = T(0.5) * x[i] * (T(1) + std::erf(x[i] * T(0.70710678118654752440)));
      return;
    case UnaryOp::GeluTanh:
      for (int64_t i = 0; i < n; ++i) {
        const T v = x[i];
        y[i] = T(0.5) * v * (T(1) + std::tanh(T(0.79788456080286535588) * (v + T(0.044715) * v * v * v)));
      }
      return;
    case UnaryOp::Exp:
      if constexpr (std::is_same_v<T, float>) exp_row(x, y, n);
      else for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
      return;
    case UnaryOp::Sigmoid:
    case UnaryOp::Silu:
      if constexpr (std::is_same_v<T, float>) {
        float t[kChunk];
        for (int64_t b = 0; b < n; b += kChunk) {
          const int64_t m = std::min(kChunk, n - b);
          for (int64_t i = 0; i < m; ++i) t[i] = -x[b + i];
          exp_row(t, t, m);
          if (op == UnaryOp::Sigmoid) for (int64_t i = 0; i < m; ++i) y[b + i] = 1.0f / (1.0f + t[i]);
          else for (int64_t i = 0; i < m; ++i) y[b + i] = x[b + i] / (1.0f + t[i]);
        }
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = op == UnaryOp::Sigmoid ? sigmoid_scalar(x[i]) : x[i] * sigmoid_scalar(x[i]);
      }
      return;
    case UnaryOp::Conj:  // the parts of a real value (the front-end does not send these)
    case UnaryOp::Real: for (int64_t i = 0; i < n; ++i) y[i] = x[i]; return;
    case UnaryOp::Imag: for (int64_t i = 0; i < n; ++i) y[i] = T(0); return;
  }
}

// Runs a float-domain kernel `k(const float* in, float* out, n)` over a segment whose input
// lives in dtype `dt` at `src` (stride 1) and output at `dst` (stride 1).
template <typename K>
void staged_f32(DType dt, const uint8_t* src, uint8_t* dst, int64_t n, K&& k) {
  if (dt == DType::F32) {
    k(reinterpret_cast<const float*>(src), reinterpret_cast<float*>(dst), n);
    return;
  }
  float buf[kChunk];
  for (int64_t b = 0; b < n; b += kChunk) {
    const int64_t m = std::min(kChunk, n - b);
    half_to_f32_row(dt, src + 2 * b, buf, m);
    k(buf, buf, m);
    f32_to_half_row(dt, buf, dst + 2 * b, m);
  }
}

}  // namespace

bool try_unary(OpCall& call) {
  if (call.inputs.size() != 1 || call.outputs.size() != 1) return false;
  const Tensor& x = call.inputs[0];
  Tensor& y = call.outputs[0];
  const DType dt = x.dtype();
  if (y.dtype() != dt || y.shape() != x.shape() || !y.is_contiguous()) return false;
  if (dt != DType::F32 && dt != DType::F64 && !is_half(dt)) return false;
  if (!x.storage()->host_data() && x.numel() > 0) return false;
  ElementPlan plan;
  if (!make_element_plan(y.shape(), {&x}, plan) || plan.inner_stride[0] != 1) {
    // A broadcast (stride-0) input is rare for unary ops; the reference handles it.
    if (plan.numel != 0) return false;
  }
  const size_t es = dtype_size(dt);
  const uint8_t* xb = x.numel() ? x.storage()->host_data() : nullptr;
  uint8_t* yb = static_cast<uint8_t*>(y.numel() ? y.data_ptr() : nullptr);
  const UnaryOp op = call.attrs.unary;
  const bool heavy = op != UnaryOp::Neg && op != UnaryOp::Abs && op != UnaryOp::Relu;
  for_each_segment(plan, heavy ? 4096 : 32768, [&](const int64_t* offs, int64_t c0, int64_t c1, int64_t flat) {
    const uint8_t* src = xb + offs[0] * es;
    uint8_t* dst = yb + flat * es;
    const int64_t n = c1 - c0;
    if (dt == DType::F64)
      unary_kernel<double>(op, reinterpret_cast<const double*>(src), reinterpret_cast<double*>(dst), n);
    else
      staged_f32(dt, src, dst, n, [&](const float* in, float* out, int64_t m) { unary_kernel<float>(op, in, out, m); });
  });
  return true;
}

// ---------------------------------------------------------------- cast
namespace {
bool cast_pair_supported(DType from, DType to) {
  auto fl = [](DType t) { return t == DType::F32 || is_half(t); };
  if (from == to) return true;
  if (fl(from) && fl(to)) return true;  // via f32: f16/bf16 -> f32 is exact, so one rounding
  return (from == DType::F32 && to == DType::F64) || (from == DType::F64 && to == DType::F32);
}
}  // namespace

bool try_cast(OpCall& call) {
  if (call.inputs.size() != 1 || call.outputs.size() != 1) return false;
  const Tensor& x = call.inputs[0];
  Tensor& y = call.outputs[0];
  if (y.shape() != x.shape() || !y.is_contiguous() || !cast_pair_supported(x.dtype(), y.dtype())) return false;
  ElementPlan plan;
  if (!make_element_plan(y.shape(), {&x}, plan) || plan.inner_stride[0] != 1) {
    if (plan.numel != 0) return false;
  }
  if (plan.numel == 0) return true;
  const DType from = x.dtype(), to = y.dtype();
  const size_t ies = dtype_size(from), oes = dtype_size(to);
  const uint8_t* xb = x.storage()->host_data();
  uint8_t* yb = static_cast<uint8_t*>(y.data_ptr());
  if (!xb) return false;
  for_each_segment(plan, 32768, [&](const int64_t* offs, int64_t c0, int64_t c1, int64_t flat) {
    const uint8_t* src = xb + offs[0] * ies;
    uint8_t* dst = yb + flat * oes;
    const int64_t n = c1 - c0;
    if (from == to) {
      std::memcpy(dst, src, n * ies);
    } else if (from == DType::F32 && to == DType::F64) {
      auto* s = reinterpret_cast<const float*>(src);
      auto* d = reinterpret_cast<double*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = s[i];
    } else if (from == DType::F64 && to == DType::F32) {
      auto* s = reinterpret_cast<const double*>(src);
      auto* d = reinterpret_cast<float*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);
    } else if (from == DType::F32) {
      f32_to_half_row(to, reinterpret_cast<const float*>(src), dst, n);
    } else if (to == DType::F32) {
      half_to_f32_row(from, src, reinterpret_cast<float*>(dst), n);
    } else {  // f16 <-> bf16 through f32
      float buf[kChunk];
      for (int64_t b = 0; b < n; b += kChunk) {
        const int64_t m = std::min(kChunk, n - b);
        half_to_f32_row(from, src + 2 * b, buf, m);
        f32_to_half_row(to, buf, dst + 2 * b, m);
      }
    }
  });
  return true;
}

}  // namespace wgt::cpu_fast
