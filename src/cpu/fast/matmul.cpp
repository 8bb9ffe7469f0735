// matmul / matmul_t through OpenBLAS: f32 -> cblas_sgemm, f64 -> cblas_dgemm, f16/bf16
// converted to f32, multiplied with sgemm, converted back. Batch dims broadcast; operands
// whose matrix has a unit stride on either axis go to BLAS as they are (lda/ldb/transpose),
// others are compacted first. Batches run one GEMM after another and BLAS threads each one
// (see parallel.hpp); an unbatched right operand is folded into one tall GEMM.
#include <algorithm>
#include <climits>
#include <cstring>

#include <cblas.h>

#include "core/strided.hpp"
#include "cpu/fast/kernels.hpp"
#include "cpu/reference/families.hpp"
#include "cpu/fast/simd.hpp"
#include "cpu/fast/widened_gemm.hpp"

namespace wgt::cpu_fast {
namespace {

// Row-major BLAS view of a logical R x C matrix with element strides (rs, cs).
struct BlasMat {
  bool trans = false;
  int64_t ld = 0;
};
bool blas_layout(int64_t R, int64_t C, int64_t rs, int64_t cs, BlasMat& m) {
  if (cs == 1 || C == 1) {  // row-major rows of C
    m = {false, R == 1 ? std::max<int64_t>(C, 1) : rs};
    return m.ld >= std::max<int64_t>(C, 1);
  }
  if (rs == 1 || R == 1) {  // column-major = the transpose of a row-major C x R
    m = {true, C == 1 ? std::max<int64_t>(R, 1) : cs};
    return m.ld >= std::max<int64_t>(R, 1);
  }
  return false;
}

// Fresh contiguous copy without going through the runtime (we are inside an op already).
Tensor compact(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor c = Tensor::empty(t.shape(), t.dtype());
  if (t.numel())
    detail::strided_copy_bytes(t.storage()->host_data(), t.shape(), t.strides(), t.offset(), dtype_size(t.dtype()),
                               static_cast<uint8_t*>(c.data_ptr()));
  return c;
}

Tensor to_f32(const Tensor& t) {
  Tensor c = compact(t);
  Tensor f = Tensor::empty(t.shape(), DType::F32);
  const int64_t n = t.numel();
  const uint8_t* src = n ? static_cast<const uint8_t*>(c.data_ptr()) : nullptr;
  float* dst = n ? f.data<float>() : nullptr;
  parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) { half_to_f32_row(t.dtype(), src + 2 * b, dst + b, e - b); });
  return f;
}

// Operand as op(X): R x C logical matrix per batch, with batch strides aligned to `batch`.
struct Operand {
  const uint8_t* base;
  int64_t R, C, rs, cs;
  std::vector<int64_t> bstrides;  // per output batch dim (0 = broadcast)
};
bool make_operand(const Tensor& t, bool transposed, const Shape& batch, Operand& op) {
  const int r = t.dim();
  const int64_t s0 = t.strides()[r - 2], s1 = t.strides()[r - 1];
  op.base = t.storage()->host_data() + t.offset() * dtype_size(t.dtype());
  op.R = transposed ? t.shape()[r - 1] : t.shape()[r - 2];
  op.C = transposed ? t.shape()[r - 2] : t.shape()[r - 1];
  op.rs = transposed ? s1 : s0;
  op.cs = transposed ? s0 : s1;
  const int nb = static_cast<int>(batch.size());
  op.bstrides.assign(nb, 0);
  for (int d = 0; d < r - 2; ++d) {
    const int od = nb - (r - 2) + d;
    if (od < 0) return false;
    if (t.shape()[d] == batch[od]) op.bstrides[od] = t.strides()[d];
    else if (t.shape()[d] != 1) return false;
  }
  return true;
}

template <typename T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C) {
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, TA, TB, (int)M, (int)N, (int)K, 1.0f, A, (int)lda, B, (int)ldb, 0.0f, C, (int)N);
  else
    cblas_dgemm(CblasRowMajor, TA, TB, (int)M, (int)N, (int)K, 1.0, A, (int)lda, B, (int)ldb, 0.0, C, (int)N);
}

// y (contiguous, dtype T) = a @ op(b) for f32/f64 operands; false when a layout or size is
// outside what BLAS takes (the caller compacts and retries, or falls back).
template <typename T>
bool run_gemm(const Tensor& a, const Tensor& b, bool transpose_b, Tensor& y) {
  const Shape batch(y.shape().begin(), y.shape().end() - 2);
  Operand A, B;
  if (!make_operand(a, false, batch, A) || !make_operand(b, transpose_b, batch, B)) return false;
  const int64_t M = A.R, K = A.C, N = B.C;
  BlasMat la, lb;
  if (!blas_layout(A.R, A.C, A.rs, A.cs, la) || !blas_layout(B.R, B.C, B.rs, B.cs, lb)) return false;
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX || la.ld > INT_MAX || lb.ld > INT_MAX) return false;
  int64_t nbatch = 1;
  for (int64_t d : batch) nbatch *= d;
  T* C = y.data<T>();
  bool b_shared = true;
  for (int64_t s : B.bstrides) b_shared &= s == 0;
  // x @ W^T with a shared W: one GEMM of (batch*M) rows when a's rows are evenly spaced.
  if (b_shared && nbatch > 1 && !la.trans && a.is_contiguous() && a.numel() == nbatch * M * K &&
      nbatch * M <= INT_MAX) {
    gemm<T>(false, lb.trans, nbatch * M, N, K, reinterpret_cast<const T*>(A.base), K,
            reinterpret_cast<const T*>(B.base), lb.ld, C);
    return true;
  }
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      oa += idx[d] * A.bstrides[d];
      ob += idx[d] * B.bstrides[d];
    }
    gemm<T>(la.trans, lb.trans, M, N, K, reinterpret_cast<const T*>(A.base) + oa, la.ld,
            reinterpret_cast<const T*>(B.base) + ob, lb.ld, C + bi * M * N);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return true;
}

template <typename T>
bool run_gemm_compacting(const Tensor& a, const Tensor& b, bool tb, Tensor& y) {
  if (run_gemm<T>(a, b, tb, y)) return true;
  return run_gemm<T>(compact(a), compact(b), tb, y);
}

}  // namespace

namespace {
bool try_matmul_plain(OpCall& call);
}

// With an addend (attrs.has_bias): the plain product, then y += c in one parallel pass (f32
// and f64; other dtypes go to the reference, which adds inside its exact sum).
// With a prologue (attrs.prologue): the fast norm (the reference one where it declines) or the
// reference silu_mul into a host temporary, then the product on it.
bool try_matmul(OpCall& call) {
  if (call.attrs.prologue != OpAttrs::Prologue::None) {
    OpCall inner = cpu_ref::split_matmul_prologue(call, [](OpCall& c) {
      if (c.kind == OpKind::SiluMul) cpu_ref::run_silu_mul(c);
      else if (!try_rms_norm(c)) cpu_ref::run_norm(c);
    });
    return try_matmul(inner);
  }
  if (!call.attrs.has_bias) return try_matmul_plain(call);
  if (call.inputs.size() != 3 || call.outputs.size() != 1) return false;
  Tensor& y = call.outputs[0];
  const Tensor& c = call.inputs[2];
  if (y.dtype() != DType::F32 && y.dtype() != DType::F64) return false;
  if (c.dtype() != y.dtype() || !c.is_contiguous() || c.shape() != y.shape() || !c.storage()->host_data()) return false;
  OpCall plain = call;
  plain.inputs.resize(2);
  plain.attrs.has_bias = false;
  if (!try_matmul_plain(plain)) return false;
  auto add = [&](auto* yp, const auto* cp) {
    parallel_for(0, y.numel(), 1 << 16, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) yp[i] += cp[i];
    });
  };
  if (y.dtype() == DType::F32) add(y.data<float>(), c.data<float>());
  else add(y.data<double>(), c.data<double>());
  return true;
}

namespace {
// Rows of x at most this many: W's rows widened and dotted one by one, else sgemm on panels.
constexpr int64_t kSmallM = 8;

// y = x W^T for a 2-D f16/bf16 W [N, K] with contiguous rows (a model's projections with
// 16-bit weights) through widened_gemm.hpp: a few rows of x (decode) against W's rows widened
// in an L1 buffer, more rows through sgemm on panels of W widened to f32, never a whole f32
// copy of W per call (for the logits of every position through llama3.2-1b's tied 128256 x
// 2048 output projection, as `wgt logits` computes them, that copy was 1 GiB). x and y are
// f32, or the half dtype of W (converted once: they are small next to W).
bool try_half_weight(const Tensor& a_in, const Tensor& b, Tensor& y) {
  const int64_t K = a_in.shape().back(), N = b.shape()[0];
  const int64_t M = a_in.numel() / K;
  if (b.dim() != 2 || b.strides()[1] != 1 || M > INT_MAX || N > INT_MAX || K > INT_MAX) return false;
  const DType wt = b.dtype();
  const Tensor a = a_in.dtype() == DType::F32 ? compact(a_in) : to_f32(a_in);
  Tensor yf = y.dtype() == DType::F32 ? y : Tensor::empty(y.shape(), DType::F32);
  const uint8_t* w = static_cast<const uint8_t*>(b.data_ptr());
  const size_t row_bytes = static_cast<size_t>(b.strides()[0]) * 2;
  if (M <= kSmallM)
    gemm_t_by_rows(a.data<float>(), M, K, N, yf.data<float>(), [&](int64_t n, int64_t e0, int64_t len, float* dst) {
      half_to_f32_row(wt, w + static_cast<size_t>(n) * row_bytes + 2 * e0, dst, len);
    });
  else
    gemm_t_by_panels(a.data<float>(), M, K, N, yf.data<float>(), widened_panel_rows(K), [&](int64_t n, float* dst) {
      half_to_f32_row(wt, w + static_cast<size_t>(n) * row_bytes, dst, K);
    });
  if (y.dtype() != DType::F32) f32_to_half_row(y.dtype(), yf.data<float>(), static_cast<uint8_t*>(y.data_ptr()), y.numel());
  return true;
}

bool try_matmul_plain(OpCall& call) {
  if (call.inputs.size() != 2 || call.outputs.size() != 1) return false;
  const Tensor& a = call.inputs[0];
  const Tensor& b = call.inputs[1];
  Tensor& y = call.outputs[0];
  const bool tb = call.attrs.transpose_b;
  const DType dt = a.dtype();
  // f32 x half -> f32 (mixed precision): b converted exactly, then the f32 GEMM.
  const bool mixed = dt == DType::F32 && is_half(b.dtype()) && y.dtype() == DType::F32;
  if (!mixed && (b.dtype() != dt || y.dtype() != dt)) return false;
  if (dt != DType::F32 && dt != DType::F64 && !is_half(dt)) return false;
  // 1-D operands (numpy promotion) are left to the reference.
  if (a.dim() < 2 || b.dim() < 2 || y.dim() < 2 || !y.is_contiguous()) return false;
  const int64_t M = a.shape()[a.dim() - 2], K = a.shape().back();
  const int64_t N = tb ? b.shape()[b.dim() - 2] : b.shape().back();
  const int64_t Kb = tb ? b.shape().back() : b.shape()[b.dim() - 2];
  if (Kb != K || y.shape()[y.dim() - 2] != M || y.shape().back() != N) return false;
  if (std::max(a.dim(), b.dim()) != y.dim()) return false;
  if (y.numel() == 0) return true;
  if (K == 0) {  // empty sum: zeros (BLAS behaviour for K = 0 is not something to rely on)
    std::memset(y.data_ptr(), 0, y.nbytes());
    return true;
  }
  if (!a.storage()->host_data() || !b.storage()->host_data()) return false;
  // A 16-bit right operand in matmul_t form (W [N, K], shared by every batch).
  if (tb && is_half(b.dtype()) && b.dim() == 2 && (mixed || is_half(dt)) && try_half_weight(a, b, y)) return true;
  if (mixed) return run_gemm_compacting<float>(a, to_f32(b), tb, y);
  if (dt == DType::F32) return run_gemm_compacting<float>(a, b, tb, y);
  if (dt == DType::F64) return run_gemm_compacting<double>(a, b, tb, y);
  // f16/bf16: one conversion pass each way around an f32 GEMM.
  Tensor yf = Tensor::empty(y.shape(), DType::F32);
  if (!run_gemm_compacting<float>(to_f32(a), to_f32(b), tb, yf)) return false;
  const float* src = yf.data<float>();
  uint8_t* dst = static_cast<uint8_t*>(y.data_ptr());
  parallel_for(0, y.numel(), 1 << 16, [&](int64_t s, int64_t e) { f32_to_half_row(dt, src + s, dst + 2 * s, e - s); });
  return true;
}
}  // namespace

}  // namespace wgt::cpu_fast
