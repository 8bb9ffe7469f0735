// Front-ends of matmul and matmul_t (x @ W^T).
// Contract with the backends (OpKind::MatMul): inputs = {a, b} of one dtype (or a f32 and b
// f16/bf16: mixed precision, f32 output, b converted exactly), both of rank
// >= 2 and with the SAME batch shape (the front-end broadcasts batch dims with stride-0
// expand views, so kernels never broadcast). a: [..., M, K]; b: [..., K, N], or [..., N, K]
// when attrs.transpose_b. Output [..., M, N] contiguous. With attrs.has_bias, inputs[2] is an
// addend laid out like the output (contiguous, same shape and dtype): out = a @ b + c. With
// attrs.prologue, a is transformed first by an op whose second operand is the last input:
// RmsNorm (rms_norm_matmul_t): g [K] of a's dtype, out = rms_norm(a, g, attrs.eps) @ b (+ c);
// SiluMul (silu_mul_matmul_t): up of a's shape and dtype, out = silu_mul(a, up) @ b (+ c).
// a has no broadcast batch dims then. With attrs.n_rot > 0 (the rope_append epilogue,
// KVCache::rms_norm_qkv_append_rope): prologue RmsNorm, transpose_b, no addend, inputs =
// {x [1, K], w [(H + 2 Hkv) D, K], k cache, v cache [C, Hkv, D] contiguous[, freq factors], g},
// Rope's attrs (n_rot, rope_neox, scalar0 = base, scalar1 = freq_scale, rope_factors: then the
// f32 [n_rot/2] factors are inputs[4], before the prologue operand) and pos_offset (< C, the cache row
// and position): out = rms_norm_matmul_t(x, g, w), then exactly kv_append_rope (src/ops/nn.cpp)
// with q, k, v its first H D, next Hkv D and last Hkv D columns: q rotated in place in out,
// rope(k) and v written to cache row pos_offset; out's k and v columns stay unrotated. 1-D operands are handled here by
// unsqueezing (numpy.matmul rules) and squeezing the result, so kernels never see them.
#include <cmath>

#include "ops/op_common.hpp"
#include "wgt/ops.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

struct Prologue {
  OpAttrs::Prologue kind = OpAttrs::Prologue::None;
  const Tensor* operand = nullptr;  // the norm weight or `up`
  double eps = 0;
};

Tensor matmul_impl(const Tensor& a_in, const Tensor& b_in, bool transpose_b, const char* name,
                   const Tensor* addend = nullptr, Prologue pro = {}) {
  Device dev = common_device({&a_in, &b_in}, name);
  if (a_in.dim() == 0 || b_in.dim() == 0)
    throw_error(ErrorKind::RankMismatch, name,
                "operands must have rank >= 1, got " + a_in.str() + " and " + b_in.str() + "; use mul() for scalars");
  // Mixed precision: f32 activations times f16/bf16 weights give f32, the weights converted
  // exactly (no rounding of the activations or the result to half precision).
  const bool mixed = a_in.dtype() == DType::F32 && (b_in.dtype() == DType::F16 || b_in.dtype() == DType::BF16);
  if (!mixed) require_same_dtype(a_in, b_in, name, "the second operand");
  if (a_in.dtype() == DType::Bool)
    throw_error(ErrorKind::DTypeMismatch, name, "is not defined for bool tensors; cast() to a numeric dtype");
  // numpy rules: a 1-D left operand is a row vector, a 1-D right operand a column vector;
  // the added dim is removed from the result.
  const bool a_vec = a_in.dim() == 1, b_vec = b_in.dim() == 1;
  Tensor a = a_vec ? a_in.unsqueeze(0) : a_in;
  Tensor b = b_vec ? (transpose_b ? b_in.unsqueeze(0) : b_in.unsqueeze(1)) : b_in;
  const int64_t M = a.shape()[a.dim() - 2], K = a.shape()[a.dim() - 1];
  const int64_t Kb = transpose_b ? b.shape()[b.dim() - 1] : b.shape()[b.dim() - 2];
  const int64_t N = transpose_b ? b.shape()[b.dim() - 2] : b.shape()[b.dim() - 1];
  if (K != Kb)
    throw_error(ErrorKind::ShapeMismatch, name,
                "inner dimensions differ: " + shape_str(a_in.shape()) + (transpose_b ? " @ T" : " @ ") +
                    shape_str(b_in.shape()) + " (K = " + std::to_string(K) + " vs " + std::to_string(Kb) + ")");
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, name);
  Shape a_full = batch, b_full = batch, out = batch;
  a_full.insert(a_full.end(), {M, K});
  b_full.insert(b_full.end(), b.shape().end() - 2, b.shape().end());
  out.insert(out.end(), {M, N});
  validate_shape(out, name);
  OpCall call{OpKind::MatMul, name, {a.expand(a_full), b.expand(b_full)}, {}, {}};
  call.attrs.transpose_b = transpose_b;
  if (addend) {
    // The addend rides as inputs[2] (attrs.has_bias) laid out exactly like the output:
    // contiguous, same shape and dtype (compacted here if it is a broadcast view).
    require_addend(*addend, out, a.dtype(), name, !a_vec && !b_vec);
    call.inputs.push_back(addend->is_contiguous() ? *addend : addend->contiguous());
    call.attrs.has_bias = true;
  }
  if (pro.kind != OpAttrs::Prologue::None) {
    const Tensor& t = *pro.operand;
    require_floating(a_in, name);
    if (a_full != a.shape() || a_vec)
      throw_error(ErrorKind::ShapeMismatch, name,
                  "x must be at least 2-D with the product's batch dims (no broadcasting), got " + shape_str(a_in.shape()));
    if (pro.kind == OpAttrs::Prologue::RmsNorm) {
      if (t.dim() != 1 || t.shape()[0] != K)
        throw_error(ErrorKind::ShapeMismatch, name,
                    "the norm weight must have shape [" + std::to_string(K) + "] (the last dim of x), got " + shape_str(t.shape()));
      require_same_dtype(a_in, t, name, "the norm weight");
      if (!std::isfinite(pro.eps) || pro.eps < 0)
        throw_error(ErrorKind::InvalidArgument, name, "eps must be finite and >= 0, got " + std::to_string(pro.eps));
      call.attrs.eps = pro.eps;
    } else {
      if (t.shape() != a_in.shape())
        throw_error(ErrorKind::ShapeMismatch, name,
                    "gate " + shape_str(a_in.shape()) + " and up " + shape_str(t.shape()) + " must have one shape");
      require_same_dtype(a_in, t, name, "up");
    }
    call.inputs.push_back(t);
    call.attrs.prologue = pro.kind;
  }
  call.work = 2.0 * numel_d(batch) * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  Tensor r = Runtime::get().run1(call, {out, a.dtype()}, dev);
  if (b_vec) r = r.squeeze(-1);
  if (a_vec) r = r.squeeze(b_vec ? -1 : -2);
  return r;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul_impl(a, b, false, "matmul"); }
Tensor matmul_t(const Tensor& a, const Tensor& b) { return matmul_impl(a, b, true, "matmul_t"); }
Tensor addmm_t(const Tensor& c, const Tensor& a, const Tensor& b) {
  require_defined(c, "addmm_t", "c");
  common_device({&c, &a, &b}, "addmm_t");
  return matmul_impl(a, b, true, "addmm_t", &c);
}
Tensor rms_norm_matmul_t(const Tensor& x, const Tensor& weight, const Tensor& w, double eps) {
  require_defined(weight, "rms_norm_matmul_t", "weight");
  common_device({&x, &weight, &w}, "rms_norm_matmul_t");
  return matmul_impl(x, w, true, "rms_norm_matmul_t", nullptr, Prologue{OpAttrs::Prologue::RmsNorm, &weight, eps});
}
Tensor silu_mul_matmul_t(const Tensor& gate, const Tensor& up, const Tensor& w, const std::optional<Tensor>& c) {
  const char* name = c ? "silu_mul_addmm_t" : "silu_mul_matmul_t";
  require_defined(up, name, "up");
  if (c) {
    require_defined(*c, name, "c");
    common_device({&gate, &up, &w, &*c}, name);
  } else {
    common_device({&gate, &up, &w}, name);
  }
  return matmul_impl(gate, w, true, name, c ? &*c : nullptr, Prologue{OpAttrs::Prologue::SiluMul, &up, 0.0});
}

}  // namespace wgt
