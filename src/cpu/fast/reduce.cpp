// Fast sum/mean/max/min over the trailing axes (last axis, or all axes) of a contiguous
// f32/f64/f16/bf16 tensor. f32 data is summed in 8 f32 lanes flushed into a double every
// 1024 elements (error ~ 1e-7 relative per block, not growing with n); f64 in double.
// max/min propagate NaN like the reference (any NaN in the span gives NaN).
#include <cmath>
#include <limits>

#include "cpu/fast/kernels.hpp"
#include "cpu/fast/simd.hpp"

namespace wgt::cpu_fast {
namespace {

constexpr int64_t kChunk = 256;

struct Partial {
  double v;
  bool nan;
};

Partial identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max: return {-std::numeric_limits<double>::infinity(), false};
    case ReduceOp::Min: return {std::numeric_limits<double>::infinity(), false};
    default: return {0.0, false};
  }
}
Partial combine(ReduceOp op, Partial a, Partial b) {
  Partial r{0.0, a.nan || b.nan};
  if (op == ReduceOp::Max) r.v = std::max(a.v, b.v);
  else if (op == ReduceOp::Min) r.v = std::min(a.v, b.v);
  else r.v = a.v + b.v;
  return r;
}

Partial reduce_f32(ReduceOp op, const float* x, int64_t n) {
  int64_t i = 0;
  if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
    double total = 0.0;
#ifdef WGT_FAST_AVX2
    while (i + 8 <= n) {
      __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
      const int64_t stop = std::min(n, i + 1024);
      for (; i + 16 <= stop; i += 16) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
      }
      for (; i + 8 <= stop; i += 8) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
      alignas(32) float t[8];
      _mm256_store_ps(t, _mm256_add_ps(a0, a1));
      for (float v : t) total += v;
    }
#endif
    for (; i < n; ++i) total += x[i];
    return {total, false};
  }
  const bool is_max = op == ReduceOp::Max;
  float m = is_max ? -INFINITY : INFINITY;
  bool nan = false;
#ifdef WGT_FAST_AVX2
  if (n >= 8) {
    __m256 vm = _mm256_set1_ps(m), vnan = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      vnan = _mm256_or_ps(vnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      vm = is_max ? _mm256_max_ps(vm, v) : _mm256_min_ps(vm, v);
    }
    alignas(32) float t[8];
    _mm256_store_ps(t, vm);
    for (float v : t) m = is_max ? std::max(m, v) : std::min(m, v);
    nan = _mm256_movemask_ps(vnan) != 0;
  }
#endif
  for (; i < n; ++i) {
    nan |= std::isnan(x[i]);
    m = is_max ? std::max(m, x[i]) : std::min(m, x[i]);
  }
  return {static_cast<double>(m), nan};
}

Partial reduce_f64(ReduceOp op, const double* x, int64_t n) {
  if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
    double s[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int j = 0; j < 4; ++j) s[j] += x[i + j];
    for (; i < n; ++i) s[0] += x[i];
    return {(s[0] + s[1]) + (s[2] + s[3]), false};
  }
  Partial p = identity(op);
  for (int64_t i = 0; i < n; ++i) {
    p.nan |= std::isnan(x[i]);
    p.v = op == ReduceOp::Max ? std::max(p.v, x[i]) : std::min(p.v, x[i]);
  }
  return p;
}

Partial reduce_span(ReduceOp op, DType dt, const uint8_t* p, int64_t n) {
  if (dt == DType::F32) return reduce_f32(op, reinterpret_cast<const float*>(p), n);
  if (dt == DType::F64) return reduce_f64(op, reinterpret_cast<const double*>(p), n);
  Partial acc = identity(op);
  float buf[kChunk];
  for (int64_t b = 0; b < n; b += kChunk) {
    const int64_t m = std::min(kChunk, n - b);
    half_to_f32_row(dt, p + 2 * b, buf, m);
    acc = combine(op, acc, reduce_f32(op, buf, m));
  }
  return acc;
}

void store(DType dt, uint8_t* out, int64_t i, double v) {
  switch (dt) {
    case DType::F32: reinterpret_cast<float*>(out)[i] = static_cast<float>(v); return;
    case DType::F64: reinterpret_cast<double*>(out)[i] = v; return;
    case DType::F16: reinterpret_cast<uint16_t*>(out)[i] = f32_to_f16(static_cast<float>(v)); return;
    default: reinterpret_cast<uint16_t*>(out)[i] = f32_to_bf16(static_cast<float>(v)); return;
  }
}

}  // namespace

bool try_reduce(OpCall& call) {
  if (call.inputs.size() != 1 || call.outputs.size() != 1) return false;
  const Tensor& x = call.inputs[0];
  Tensor& y = call.outputs[0];
  const ReduceOp op = call.attrs.reduce;
  const DType dt = x.dtype();
  if (op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Max && op != ReduceOp::Min) return false;
  if ((dt != DType::F32 && dt != DType::F64 && !is_half(dt)) || y.dtype() != dt) return false;
  if (!x.is_contiguous() || !y.is_contiguous()) return false;
  // The reduced axes must be the trailing ones (this covers "last axis" and "all axes").
  const int rank = x.dim();
  std::vector<int64_t> axes = call.attrs.axes;
  if (axes.empty())
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return false;
  int64_t len = 1;
  for (int64_t a : axes) len *= x.shape()[a];
  const int64_t rows = len ? x.numel() / len : 0;
  // Empty reductions (identity values, mean of nothing, max of nothing) are the reference's call.
  if (len == 0 || y.numel() != rows) return false;
  if (rows == 0) return true;
  const uint8_t* xb = x.storage()->host_data();
  if (!xb) return false;
  xb += x.offset() * dtype_size(dt);
  uint8_t* yb = static_cast<uint8_t*>(y.data_ptr());
  const size_t es = dtype_size(dt);
  auto finish = [&](Partial p) {
    if (p.nan && (op == ReduceOp::Max || op == ReduceOp::Min)) return std::numeric_limits<double>::quiet_NaN();
    return op == ReduceOp::Mean ? p.v / static_cast<double>(len) : p.v;
  };
  const int nt = num_threads();
  if (rows >= 2 * nt || len < (1 << 16)) {
    parallel_for(0, rows, std::max<int64_t>(1, 16384 / len), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) store(dt, yb, r, finish(reduce_span(op, dt, xb + r * len * es, len)));
    });
    return true;
  }
  // Few long rows: split each row into fixed blocks reduced in parallel, then combined in
  // block order (so the result does not depend on the thread count).
  constexpr int64_t kBlock = 1 << 15;
  const int64_t nblocks = (len + kBlock - 1) / kBlock;
  std::vector<Partial> parts(nblocks);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = xb + r * len * es;
    parallel_for(0, nblocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        parts[b] = reduce_span(op, dt, row + b * kBlock * es, std::min(kBlock, len - b * kBlock));
    });
    Partial acc = identity(op);
    for (const Partial& p : parts) acc = combine(op, acc, p);
    store(dt, yb, r, finish(acc));
  }
  return true;
}

}  // namespace wgt::cpu_fast
