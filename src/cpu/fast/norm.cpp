// Fast softmax / log_softmax over the last axis and rms_norm / layer_norm over the last dim,
// for contiguous f32 (and f16/bf16 staged through an f32 row buffer). Row statistics are
// accumulated in 8 f32 lanes flushed into a double per block of 1024 elements; the
// per-element work is in f32. exp is the vectorized exp256 (about 2 ulp).
#include <cmath>

#include "cpu/fast/kernels.hpp"
#include "cpu/fast/simd.hpp"

namespace wgt::cpu_fast {
namespace {

// sum((x[i] - c)^2) (c = 0 gives the sum of squares) and sum(x[i]), blocked as above.
void row_moments(const float* x, int64_t n, float c, double* sum, double* sumsq) {
  double s = 0.0, q = 0.0;
  int64_t i = 0;
#ifdef WGT_FAST_AVX2
  const __m256 vc = _mm256_set1_ps(c);
  while (i + 8 <= n) {
    __m256 as = _mm256_setzero_ps(), aq = _mm256_setzero_ps();
    const int64_t stop = std::min(n, i + 1024);
    for (; i + 8 <= stop; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      const __m256 d = _mm256_sub_ps(v, vc);
      as = _mm256_add_ps(as, v);
      aq = _mm256_fmadd_ps(d, d, aq);
    }
    alignas(32) float ts[8], tq[8];
    _mm256_store_ps(ts, as);
    _mm256_store_ps(tq, aq);
    for (int j = 0; j < 8; ++j) { s += ts[j]; q += tq[j]; }
  }
#endif
  for (; i < n; ++i) {
    s += x[i];
    const double d = static_cast<double>(x[i]) - c;
    q += d * d;
  }
  *sum = s;
  *sumsq = q;
}

float row_max(const float* x, int64_t n) {
  float m = -INFINITY;
  int64_t i = 0;
#ifdef WGT_FAST_AVX2
  if (n >= 8) {
    __m256 vm = _mm256_set1_ps(-INFINITY);
    for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + i));
    alignas(32) float t[8];
    _mm256_store_ps(t, vm);
    for (float v : t) m = std::max(m, v);
  }
#endif
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;  // NaN entries are skipped here; they still poison the row through exp/sum.
}

// The row's mean and sum of squares around it (centered: layer_norm; else around 0), in
// double as the reference computes them. row_moments' f32 lanes overflow for |x| above ~1e19
// (squares) or ~1e38 (sums): a row whose blocked moments are not finite (that, or an inf /
// NaN element) is redone here, so finite huge rows give the reference's answer
// (docs/semantics.md) while ordinary rows keep the vectorized pass.
void row_stats(const float* x, int64_t n, bool centered, double* mean, double* sumsq) {
  double s, q;
  row_moments(x, n, 0.0f, &s, &q);
  if (std::isfinite(s) && std::isfinite(q)) {
    *mean = s / static_cast<double>(n);
    if (centered) row_moments(x, n, static_cast<float>(*mean), &s, &q);  // no cancellation
    if (std::isfinite(q)) { *sumsq = q; return; }
  }
  s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  const double mu = centered ? s / static_cast<double>(n) : 0.0;
  q = 0.0;
  for (int64_t i = 0; i < n; ++i) q += (x[i] - mu) * (x[i] - mu);
  *mean = s / static_cast<double>(n);
  *sumsq = q;
}

// Processes each row in f32: for f32 the kernel reads x and writes y directly; for 16-bit
// dtypes the row is staged in per-thread buffers.
template <typename RowFn>
void for_each_row(const Tensor& x, Tensor& y, int64_t D, int64_t grain_elems, RowFn&& fn) {
  const DType dt = x.dtype();
  const int64_t rows = x.numel() / D;
  const uint8_t* xb = x.storage()->host_data() + x.offset() * dtype_size(dt);
  uint8_t* yb = static_cast<uint8_t*>(y.data_ptr());
  parallel_for(0, rows, std::max<int64_t>(1, grain_elems / D), [&](int64_t r0, int64_t r1) {
    // Separate staging rows: log_softmax uses `out` as scratch while still reading `in`.
    std::vector<float> bin(dt == DType::F32 ? 0 : D), bout(dt == DType::F32 ? 0 : D);
    for (int64_t r = r0; r < r1; ++r) {
      if (dt == DType::F32) {
        fn(reinterpret_cast<const float*>(xb) + r * D, reinterpret_cast<float*>(yb) + r * D);
      } else {
        half_to_f32_row(dt, xb + r * D * 2, bin.data(), D);
        fn(bin.data(), bout.data());
        f32_to_half_row(dt, bout.data(), yb + r * D * 2, D);
      }
    }
  });
}

// Common checks: float x (f32/f16/bf16), contiguous, rank >= 1, output like x.
bool rowwise_ok(const Tensor& x, const Tensor& y) {
  const DType dt = x.dtype();
  if (dt != DType::F32 && !is_half(dt)) return false;
  if (x.dim() < 1 || !x.is_contiguous() || !y.is_contiguous()) return false;
  if (y.dtype() != dt || y.shape() != x.shape()) return false;
  return x.numel() == 0 || x.storage()->host_data() != nullptr;
}

// Optional per-feature parameter (weight or bias) as f32, or empty when not usable.
bool load_param(const Tensor& p, DType dt, int64_t D, std::vector<float>& out) {
  if (p.dim() != 1 || p.shape()[0] != D || (p.dtype() != dt && p.dtype() != DType::F32)) return false;
  if (D > 0 && !p.storage()->host_data()) return false;
  const Tensor c = p.contiguous();
  out.resize(D);
  if (D == 0) return true;
  if (c.dtype() == DType::F32) std::memcpy(out.data(), c.data_ptr(), D * sizeof(float));
  else half_to_f32_row(c.dtype(), c.data_ptr(), out.data(), D);
  return true;
}

}  // namespace

bool try_softmax(OpCall& call, bool log) {
  if (call.inputs.size() != 1 || call.outputs.size() != 1) return false;
  const Tensor& x = call.inputs[0];
  Tensor& y = call.outputs[0];
  if (!rowwise_ok(x, y) || call.attrs.axis != x.dim() - 1) return false;
  const int64_t D = x.shape().back();
  if (x.numel() == 0) return true;
  for_each_row(x, y, D, 16384, [&](const float* in, float* out) {
    const float m = row_max(in, D);
    // An all -inf row has m = -inf and x - m = NaN: the row becomes NaN, as in the reference.
    if (!log) {
      const double s = exp_shift_sum_row(in, m, out, D);
      const float inv = static_cast<float>(1.0 / s);
      for (int64_t i = 0; i < D; ++i) out[i] *= inv;
    } else {
      // The exps go to `out` as scratch, then out = x - m - log(sum).
      const double s = exp_shift_sum_row(in, m, out, D);
      const float shift = m + static_cast<float>(std::log(s));
      for (int64_t i = 0; i < D; ++i) out[i] = in[i] - shift;
    }
  });
  return true;
}

bool try_rms_norm(OpCall& call) {
  const OpAttrs& at = call.attrs;
  if (call.inputs.size() != (at.has_weight ? 2u : 1u) || call.outputs.size() != 1) return false;
  const Tensor& x = call.inputs[0];
  Tensor& y = call.outputs[0];
  if (!rowwise_ok(x, y)) return false;
  const int64_t D = x.shape().back();
  std::vector<float> w;
  if (at.has_weight && !load_param(call.inputs[1], x.dtype(), D, w)) return false;
  if (x.numel() == 0) return true;
  const double eps = at.eps;
  for_each_row(x, y, D, 16384, [&](const float* in, float* out) {
    double mean, q;
    row_stats(in, D, false, &mean, &q);
    const double inv = 1.0 / std::sqrt(q / static_cast<double>(D) + eps);
    const float r = static_cast<float>(inv);
    if (!(q < 1e70)) {  // r below the f32 normal range (|x| near 1e38): scale in double
      for (int64_t i = 0; i < D; ++i) out[i] = static_cast<float>(in[i] * inv * (w.empty() ? 1.0f : w[i]));
    } else if (w.empty()) for (int64_t i = 0; i < D; ++i) out[i] = in[i] * r;
    else for (int64_t i = 0; i < D; ++i) out[i] = in[i] * r * w[i];
  });
  return true;
}

bool try_layer_norm(OpCall& call) {
  const OpAttrs& at = call.attrs;
  const size_t nin = 1 + (at.has_weight ? 1 : 0) + (at.has_bias ? 1 : 0);
  if (call.inputs.size() != nin || call.outputs.size() != 1) return false;
  const Tensor& x = call.inputs[0];
  Tensor& y = call.outputs[0];
  if (!rowwise_ok(x, y)) return false;
  const int64_t D = x.shape().back();
  std::vector<float> w, b;
  if (at.has_weight && !load_param(call.inputs[1], x.dtype(), D, w)) return false;
  if (at.has_bias && !load_param(call.inputs[at.has_weight ? 2 : 1], x.dtype(), D, b)) return false;
  if (x.numel() == 0) return true;
  const double eps = at.eps;
  for_each_row(x, y, D, 16384, [&](const float* in, float* out) {
    double mean_d, q;
    row_stats(in, D, true, &mean_d, &q);
    const float mean = static_cast<float>(mean_d);
    const double inv = 1.0 / std::sqrt(q / static_cast<double>(D) + eps);
    const float r = static_cast<float>(inv);
    // |x - mean| <= sqrt(q): below 1e35 neither x - mean nor r leaves the f32 normal range;
    // wider rows (|x| near 1e38 of both signs, where x - mean overflows f32) go in double.
    const bool wide = !(q < 1e70);
    for (int64_t i = 0; i < D; ++i) {
      float v = wide ? static_cast<float>((in[i] - mean_d) * inv) : (in[i] - mean) * r;
      if (!w.empty()) v *= w[i];
      if (!b.empty()) v += b[i];
      out[i] = v;
    }
  });
  return true;
}

}  // namespace wgt::cpu_fast
