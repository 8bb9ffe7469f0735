// Fast attention (OpKind::Attention; semantics: cpu/reference/nn.cpp run_attention): q
// [Lq, H, D], k and v [Lk, Hkv, D] of f32, f16 or bf16, an optional additive mask broadcast to
// [Lq, Lk], queries aligned to the end of the keys when causal. Parallel over (query, head);
// each pair scores its visible keys in f32 (AVX2 dots over D; 16-bit K rows widened into a
// buffer first), takes the max, then exp (exp256), the sum in double, and the weighted sum of
// V rows in f32 lanes. Why: the reference converts the whole K and V to double on every call
// and loops on one thread; a CPU model's decode at 1k tokens of context spent ~40% of its time
// there.
// Special values as the reference: a row whose keys are all masked is zeros; a NaN or +inf
// score makes the row NaN; a key whose weight underflows to 0 in f32 is skipped, V included,
// as the WebGPU kernels skip it.
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/fast/kernels.hpp"
#include "cpu/fast/simd.hpp"

namespace wgt::cpu_fast {
namespace {

bool float_storage(DType t) { return t == DType::F32 || is_half(t); }

// Row r (D elements from element `at`) of a contiguous tensor as f32: the row itself for f32,
// else widened into buf.
const float* row_f32(const Tensor& t, int64_t at, int64_t D, float* buf) {
  if (t.dtype() == DType::F32) return t.data<float>() + at;
  half_to_f32_row(t.dtype(), static_cast<const uint8_t*>(t.data_ptr()) + 2 * at, buf, D);
  return buf;
}

// y += p * x over n floats.
inline void axpy(float p, const float* x, float* y, int64_t n) {
  int64_t d = 0;
#ifdef WGT_FAST_AVX2
  const __m256 vp = _mm256_set1_ps(p);
  for (; d + 8 <= n; d += 8) _mm256_storeu_ps(y + d, _mm256_fmadd_ps(vp, _mm256_loadu_ps(x + d), _mm256_loadu_ps(y + d)));
#endif
  for (; d < n; ++d) y[d] += p * x[d];
}

}  // namespace

bool try_attention(OpCall& call) {
  const Tensor &q = call.inputs[0], &k = call.inputs[1], &v = call.inputs[2];
  Tensor& out = call.outputs[0];
  if (!float_storage(q.dtype()) || !float_storage(k.dtype()) || !float_storage(out.dtype()) || k.dtype() != v.dtype())
    return false;
  if (!q.is_contiguous() || !k.is_contiguous() || !v.is_contiguous() || !out.is_contiguous()) return false;
  const Tensor* mask = call.attrs.has_mask ? &call.inputs[3] : nullptr;
  if (mask && !float_storage(mask->dtype())) return false;
  const int64_t Lq = q.shape()[0], H = q.shape()[1], D = q.shape()[2];
  const int64_t Lk = k.shape()[0], Hkv = k.shape()[1];
  if (out.numel() == 0) return true;
  const int64_t group = H / Hkv;
  const float scale = static_cast<float>(call.attrs.scalar0);
  const bool causal = call.attrs.causal;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto mask_at = [&](int64_t i, int64_t j) -> float {
    const int64_t e = mask->offset() + i * mask->strides()[0] + j * mask->strides()[1];
    const uint8_t* b = static_cast<const uint8_t*>(mask->storage()->host_data());
    if (mask->dtype() == DType::F32) return reinterpret_cast<const float*>(b)[e];
    float f;
    half_to_f32_row(mask->dtype(), b + 2 * e, &f, 1);
    return f;
  };
  const int64_t pairs = Lq * H;
  const int64_t per_pair = std::max<int64_t>(1, 2 * Lk * D);
  parallel_for(0, pairs, std::max<int64_t>(1, (int64_t{1} << 16) / per_pair), [&](int64_t p0, int64_t p1) {
    std::vector<float> score(static_cast<size_t>(Lk)), qbuf(static_cast<size_t>(D)), kbuf(static_cast<size_t>(D)),
        acc(static_cast<size_t>(D));
    for (int64_t pr = p0; pr < p1; ++pr) {
      const int64_t i = pr / H, h = pr % H, g = h / group;
      // Query i is position Lk - Lq + i and sees keys up to it when causal.
      const int64_t visible = causal ? Lk - Lq + i + 1 : Lk;
      const float* qv = row_f32(q, pr * D, D, qbuf.data());
      float mx = -INFINITY;
      bool poisoned = false;
      for (int64_t j = 0; j < visible; ++j) {
        const float* kv = row_f32(k, (j * Hkv + g) * D, D, kbuf.data());
        const float s = scale * dot_row(qv, kv, D) + (mask ? mask_at(i, j) : 0.f);
        score[static_cast<size_t>(j)] = s;
        poisoned |= std::isnan(s);
        mx = std::max(mx, s);
      }
      std::fill(acc.begin(), acc.end(), 0.f);
      if (poisoned || mx == INFINITY) {
        std::fill(acc.begin(), acc.end(), nan);
      } else if (mx != -INFINITY) {  // else every key is masked: a zero row
        const double denom = exp_shift_sum_row(score.data(), mx, score.data(), visible);
        const float inv = static_cast<float>(1.0 / denom);
        for (int64_t j = 0; j < visible; ++j) {
          const float w = score[static_cast<size_t>(j)];
          if (w == 0.f) continue;
          axpy(w * inv, row_f32(v, (j * Hkv + g) * D, D, kbuf.data()), acc.data(), D);
        }
      }
      if (out.dtype() == DType::F32) std::copy(acc.begin(), acc.end(), out.data<float>() + pr * D);
      else f32_to_half_row(out.dtype(), acc.data(), static_cast<uint8_t*>(out.data_ptr()) + 2 * pr * D, D);
    }
  });
  return true;
}

}  // namespace wgt::cpu_fast
