// Front-ends of the transformer ops rope, attention and silu_mul (validation -> one OpCall).
//
// Contracts with the backends:
//  - Rope: inputs = {x} or {x, positions}; x is [seq, H, D] or [B, seq, H, D] (any strides),
//    positions an I32/I64 [seq] tensor (values >= 0; when absent the position of row s is
//    attrs.pos_offset + s). attrs.n_rot (even, 2 <= n_rot <= D), attrs.rope_neox,
//    attrs.scalar0 = base (> 0), attrs.scalar1 = freq_scale. With attrs.rope_factors the last
//    input is the freq factors f_i, f32 [n_rot/2] (any strides; theta_i divided by f_i; values
//    finite and > 0 are checked only for host tensors). Output like x, contiguous; or no
//    outputs: rope_ (src/nn/rope_inplace.cpp) rotates inputs[0] in place, a non-overlapping
//    view of any strides, and only its rotated dims are written.
//  - Attention: inputs = {q [Lq, H, D], k [Lk, Hkv, D], v [Lk, Hkv, D], [mask [Lq, Lk]]}; k and
//    v share a float dtype, q (and the output) may have another; the mask is present when
//    attrs.has_mask (already expanded to [Lq, Lk], any float dtype). attrs.scalar0 = scale,
//    attrs.causal (then Lk >= Lq). H % Hkv == 0. Output [Lq, H, D] of q's dtype.
//  - SiluMul: inputs = {a, b} of one shape and float dtype; output silu(a) * b like a.
//  - KVAppend (in place, no outputs; see src/nn/kv_cache.cpp): inputs = {cache [C, Hkv, D]
//    contiguous, src [n, Hkv, D] any float dtype}, or two such pairs (K then V: one call, one
//    dispatch on WebGPU, per decode step); writes rows [pos_offset, pos_offset + n).
//    With attrs.n_rot > 0 (KVCache::append_rope): inputs = {k cache, k, v cache, v, q}, q
//    [n, Hq, D] a non-overlapping view disjoint from k and v, and Rope's attrs (n_rot,
//    rope_neox, scalar0 = base, scalar1 = freq_scale, rope_factors: then the freq factors are
//    a sixth input); row s has position pos_offset + s.
//    Exactly rope_(q) in place, then the append of rope(k) (k itself is not written) and v.
#include <cmath>

#include "ops/op_common.hpp"
#include "ops/rope_call.hpp"
#include "wgt/nn.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

std::string i2s(int64_t v) { return std::to_string(v); }

// Validates the RoPE configuration against x; returns the effective n_rot.
int64_t check_rope(const Tensor& x, const RopeConfig& cfg, const char* name) {
  require_floating(x, name);
  if (x.dim() != 3 && x.dim() != 4)
    throw_error(ErrorKind::RankMismatch, name,
                "x must be [seq, n_heads, head_dim] or [batch, seq, n_heads, head_dim], got " + x.str());
  const int64_t D = x.shape().back();
  const int64_t n_rot = cfg.n_rot == 0 ? D : cfg.n_rot;
  if (n_rot <= 0 || n_rot > D || n_rot % 2 != 0)
    throw_error(ErrorKind::InvalidArgument, name,
                "n_rot must be even and in [2, head_dim = " + i2s(D) + "], got " + i2s(n_rot) +
                    (cfg.n_rot == 0 ? " (the default n_rot = head_dim is odd; set RopeConfig::n_rot)" : ""));
  if (!(std::isfinite(cfg.base) && cfg.base > 0))
    throw_error(ErrorKind::InvalidArgument, name, "base must be finite and > 0, got " + std::to_string(cfg.base));
  if (!std::isfinite(cfg.freq_scale))
    throw_error(ErrorKind::InvalidArgument, name, "freq_scale must be finite, got " + std::to_string(cfg.freq_scale));
  return n_rot;
}

}  // namespace

// Their values are checked only on the host: a device tensor would cost a read-back (a
// pipeline stall) on every call.
void check_rope_freq_factors(const Tensor& f, int64_t n_rot, const char* name) {
  if (f.dtype() != DType::F32)
    throw_error(ErrorKind::DTypeMismatch, name, "freq_factors must be f32, got " + dt(f.dtype()) + "; cast() them");
  if (f.dim() != 1 || f.shape()[0] != n_rot / 2)
    throw_error(ErrorKind::ShapeMismatch, name,
                "freq_factors must be [n_rot / 2] = [" + i2s(n_rot / 2) + "], got " + shape_str(f.shape()));
  if (!f.device().is_cpu()) return;
  const float* base = f.data<float>();  // element 0 of the view
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const float v = base[i * f.strides()[0]];
    if (!(std::isfinite(v) && v > 0))
      throw_error(ErrorKind::InvalidArgument, name,
                  "freq_factors must be finite and > 0, got " + std::to_string(v) + " at index " + i2s(i));
  }
}

OpCall rope_call(const Tensor& x, const Tensor* positions, int64_t offset, const RopeConfig& cfg, const char* name) {
  std::vector<const Tensor*> all{&x};
  if (positions) all.push_back(positions);
  common_device(all, name);
  const int64_t n_rot = check_rope(x, cfg, name);
  const int64_t seq = x.shape()[x.dim() - 3];
  OpCall call{OpKind::Rope, name, {x}, {}, {}, 0.0, {}};
  if (positions) {
    if (positions->dtype() != DType::I32 && positions->dtype() != DType::I64)
      throw_error(ErrorKind::DTypeMismatch, name,
                  "positions must be i32 or i64, got " + dt(positions->dtype()) + "; cast() them");
    if (positions->dim() != 1 || positions->shape()[0] != seq)
      throw_error(ErrorKind::ShapeMismatch, name,
                  "positions must be [seq] = [" + i2s(seq) + "] for x " + shape_str(x.shape()) + ", got " +
                      shape_str(positions->shape()));
    call.inputs.push_back(*positions);
  } else if (offset < 0) {
    throw_error(ErrorKind::InvalidArgument, name, "position offset must be >= 0, got " + i2s(offset));
  }
  call.attrs.n_rot = n_rot;
  call.attrs.rope_neox = cfg.style == RopeStyle::Neox;
  call.attrs.pos_offset = positions ? 0 : offset;
  call.attrs.scalar0 = cfg.base;
  call.attrs.scalar1 = cfg.freq_scale;
  if (cfg.freq_factors.defined()) {
    const Tensor& f = cfg.freq_factors;
    if (f.device() != x.device())
      throw_error(ErrorKind::InvalidArgument, name,
                  "freq_factors live on " + f.device().str() + " but x on " + x.device().str() + "; move them with .to()");
    check_rope_freq_factors(f, n_rot, name);
    call.inputs.push_back(cfg.freq_factors);  // last, after the positions
    call.attrs.rope_factors = true;
  }
  call.work = 4.0 * static_cast<double>(x.numel());
  return call;
}

Tensor rope(const Tensor& x, int64_t offset, const RopeConfig& cfg) {
  OpCall call = rope_call(x, nullptr, offset, cfg, "rope");
  return Runtime::get().run1(call, {x.shape(), x.dtype()}, x.device());
}
Tensor rope(const Tensor& x, const Tensor& positions, const RopeConfig& cfg) {
  OpCall call = rope_call(x, &positions, 0, cfg, "rope");
  return Runtime::get().run1(call, {x.shape(), x.dtype()}, x.device());
}

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttnConfig& cfg) {
  const char* name = "attention";
  std::vector<const Tensor*> all{&q, &k, &v};
  if (cfg.mask) all.push_back(&*cfg.mask);
  Device dev = common_device(all, name);
  require_floating(q, name);
  require_floating(k, name);
  require_same_dtype(k, v, name, "v");
  if (q.dim() != 3 || k.dim() != 3 || v.dim() != 3)
    throw_error(ErrorKind::RankMismatch, name,
                "q must be [q_len, n_heads, d] and k, v [kv_len, n_kv_heads, d]; got q " + shape_str(q.shape()) +
                    ", k " + shape_str(k.shape()) + ", v " + shape_str(v.shape()));
  if (k.shape() != v.shape())
    throw_error(ErrorKind::ShapeMismatch, name,
                "k and v must have one shape, got " + shape_str(k.shape()) + " and " + shape_str(v.shape()));
  const int64_t Lq = q.shape()[0], H = q.shape()[1], D = q.shape()[2];
  const int64_t Lk = k.shape()[0], Hkv = k.shape()[1];
  if (k.shape()[2] != D)
    throw_error(ErrorKind::ShapeMismatch, name,
                "head_dim of q (" + i2s(D) + ") and k/v (" + i2s(k.shape()[2]) + ") differ");
  if (Hkv == 0 || H % Hkv != 0)
    throw_error(ErrorKind::ShapeMismatch, name,
                "n_kv_heads (" + i2s(Hkv) + ") must divide n_heads (" + i2s(H) +
                    ") for grouped-query attention; check the head counts of the k/v projections");
  if (cfg.causal && Lk < Lq)
    throw_error(ErrorKind::ShapeMismatch, name,
                "causal attention aligns the " + i2s(Lq) + " queries to the end of the keys, so it needs kv_len >= q_len, got kv_len " +
                    i2s(Lk) + "; append the new keys to the cache first");
  double scale = cfg.scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(D, 1))) : cfg.scale;
  if (!std::isfinite(scale))
    throw_error(ErrorKind::InvalidArgument, name, "scale must be finite, got " + std::to_string(cfg.scale));
  OpCall call{OpKind::Attention, name, {q, k, v}, {}, {}, 0.0, {}};
  if (cfg.mask) {
    const Tensor& m = *cfg.mask;
    if (!is_floating(m.dtype()))
      throw_error(ErrorKind::DTypeMismatch, name,
                  "mask is additive and must be a float tensor (0 keeps, -inf drops), got " + dt(m.dtype()));
    if (m.dim() > 2)
      throw_error(ErrorKind::RankMismatch, name, "mask must broadcast to [q_len, kv_len], got " + shape_str(m.shape()));
    try {
      call.inputs.push_back(m.expand({Lq, Lk}));
    } catch (const Error&) {
      throw_error(ErrorKind::ShapeMismatch, name,
                  "mask " + shape_str(m.shape()) + " does not broadcast to [q_len, kv_len] = [" + i2s(Lq) + ", " +
                      i2s(Lk) + "]");
    }
  }
  call.attrs.scalar0 = scale;
  call.attrs.causal = cfg.causal;
  call.attrs.has_mask = cfg.mask.has_value();
  call.work = 4.0 * static_cast<double>(Lq) * static_cast<double>(Lk) * static_cast<double>(H) * static_cast<double>(D);
  return Runtime::get().run1(call, {q.shape(), q.dtype()}, dev);
}

Tensor silu_mul(const Tensor& a, const Tensor& b) {
  const char* name = "silu_mul";
  Device dev = common_device({&a, &b}, name);
  require_floating(a, name);
  require_same_dtype(a, b, name, "b");
  if (a.shape() != b.shape())
    throw_error(ErrorKind::ShapeMismatch, name,
                "a and b must have one shape (no broadcasting), got " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
  OpCall call{OpKind::SiluMul, name, {a, b}, {}, {}, 0.0, {}};
  call.work = 6.0 * static_cast<double>(a.numel());
  return Runtime::get().run1(call, {a.shape(), a.dtype()}, dev);
}

}  // namespace wgt
