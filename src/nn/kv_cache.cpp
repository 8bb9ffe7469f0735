// KVCache: preallocated K/V buffers [max_ctx, n_kv_heads, head_dim] filled row by row.
// Appends write in place (OpKind::KVAppend, declared in OpCall::mutates, so the runtime runs
// them where the cache lives and never on a moved copy): the CPU kernel for a host cache, the
// WebGPU kernel for a device cache when that backend runs it, else the runtime's host round
// trip of the written spans.
// append_rope is the same op with RoPE applied to k (and to a q rotated in place);
// rms_norm_qkv_append_rope is the q/k/v projection's MatMul (or QMatMul) with it as an epilogue.
#include <cmath>

#include "ops/op_common.hpp"
#include "ops/rope_call.hpp"
#include "wgt/nn.hpp"

namespace wgt {
using namespace ops_detail;

namespace {
std::string i2s(int64_t v) { return std::to_string(v); }

// KVAppend writes the caches (inputs 0 and 2) and, with RoPE, q (input 4) in place.
constexpr uint32_t kWritesCaches = 1u << 0 | 1u << 2, kWritesQ = 1u << 4;
}  // namespace

KVCache::KVCache(int64_t max_ctx, int64_t n_kv_heads, int64_t head_dim, DType dtype, Device device)
    : max_ctx_(max_ctx), n_kv_heads_(n_kv_heads), head_dim_(head_dim), dtype_(dtype), device_(device) {
  const char* name = "KVCache";
  if (max_ctx <= 0 || n_kv_heads <= 0 || head_dim <= 0)
    throw_error(ErrorKind::InvalidArgument, name,
                "max_ctx, n_kv_heads and head_dim must be > 0, got " + i2s(max_ctx) + ", " + i2s(n_kv_heads) + ", " +
                    i2s(head_dim));
  if (dtype != DType::F32 && dtype != DType::F16)
    throw_error(ErrorKind::DTypeMismatch, name, std::string("cache dtype must be f32 or f16, got ") + dtype_name(dtype));
  const Shape shape{max_ctx, n_kv_heads, head_dim};
  // Zero-filled so that a view never exposes uninitialized bytes, even of cleared rows.
  k_ = zeros(shape, dtype, Device::cpu());
  v_ = zeros(shape, dtype, Device::cpu());
  if (device.is_webgpu()) {
    k_ = k_.to(device);
    v_ = v_.to(device);
    Runtime::get().pin(k_);
    Runtime::get().pin(v_);
  }
}

Tensor KVCache::view_k() const {
  if (!k_.defined()) throw_error(ErrorKind::RuntimeState, "KVCache::view_k", "cache is default-constructed; construct it with its sizes");
  return k_.slice(0, 0, size_);
}
Tensor KVCache::view_v() const {
  if (!v_.defined()) throw_error(ErrorKind::RuntimeState, "KVCache::view_v", "cache is default-constructed; construct it with its sizes");
  return v_.slice(0, 0, size_);
}

// The freq factors are read while the caches (and q) are written: they must not share storage.
static void check_factors_storage(const RopeConfig& cfg, const Tensor& kc, const Tensor& vc, const Tensor* q, const char* name) {
  const Tensor& f = cfg.freq_factors;
  if (!f.defined()) return;
  if (f.storage() == kc.storage() || f.storage() == vc.storage() || (q && f.storage() == q->storage()))
    throw_error(ErrorKind::InvalidArgument, name,
                std::string("freq_factors share the storage of ") + (q && f.storage() == q->storage() ? "q" : "the cache") +
                    ", which this op writes; pass a separate tensor");
}

int64_t KVCache::check_append(const Tensor& k, const Tensor& v, const char* name) const {
  if (!k_.defined()) throw_error(ErrorKind::RuntimeState, name, "cache is default-constructed; construct it with its sizes");
  require_defined(k, name, "k");
  require_defined(v, name, "v");
  require_floating(k, name);
  require_floating(v, name);
  for (const Tensor* t : {&k, &v}) {
    if (t->dim() != 3 || t->shape()[1] != n_kv_heads_ || t->shape()[2] != head_dim_)
      throw_error(ErrorKind::ShapeMismatch, name,
                  std::string(t == &k ? "k" : "v") + " must be [n, n_kv_heads = " + i2s(n_kv_heads_) +
                      ", head_dim = " + i2s(head_dim_) + "], got " + shape_str(t->shape()));
    if (t->device() != device_)
      throw_error(ErrorKind::InvalidArgument, name,
                  std::string(t == &k ? "k" : "v") + " lives on " + t->device().str() + " but the cache on " +
                      device_.str() + "; move it with .to()");
  }
  if (k.shape()[0] != v.shape()[0])
    throw_error(ErrorKind::ShapeMismatch, name, "k and v have different row counts: " + shape_str(k.shape()) + " and " + shape_str(v.shape()));
  const int64_t n = k.shape()[0];
  if (size_ + n > max_ctx_)
    throw_error(ErrorKind::OutOfRange, name,
                "appending " + i2s(n) + " rows to a cache holding " + i2s(size_) + " of max_ctx " + i2s(max_ctx_) +
                    " overflows it; create the cache with a larger max_ctx, or clear() it");
  return n;
}

void KVCache::append(const Tensor& k, const Tensor& v) {
  const int64_t n = check_append(k, v, "KVCache::append");
  if (n == 0) return;
  write_rows(k, v);
  size_ += n;
}

void KVCache::append_rope(Tensor& q, const Tensor& k, const Tensor& v, const RopeConfig& cfg) {
  const char* name = "KVCache::append_rope";
  const int64_t n = check_append(k, v, name);
  require_defined(q, name, "q");
  if (q.dim() != 3 || q.shape()[0] != n || q.shape()[2] != head_dim_)
    throw_error(ErrorKind::ShapeMismatch, name,
                "q must be [n = " + i2s(n) + ", n_heads, head_dim = " + i2s(head_dim_) + "], got " + shape_str(q.shape()));
  if (q.device() != device_)
    throw_error(ErrorKind::InvalidArgument, name, "q lives on " + q.device().str() + " but the cache on " + device_.str() + "; move it with .to()");
  (void)rope_call(q, nullptr, size_, cfg, name);
  const OpCall rk = rope_call(k, nullptr, size_, cfg, name);  // the same checks of cfg against head_dim
  if (elements_overlap(q))
    throw_error(ErrorKind::InvalidArgument, name, "q " + q.str() + " has elements sharing memory (e.g. an expand() view)");
  if (q.storage() == k_.storage() || q.storage() == v_.storage())
    throw_error(ErrorKind::InvalidArgument, name, "q is a view of the cache itself; pass a separate tensor");
  check_factors_storage(cfg, k_, v_, &q, name);
  // q is rotated in the same dispatch that reads k and v, so they must not share elements.
  auto span = [](const Tensor& t) {
    int64_t lo = t.offset(), hi = t.offset();
    for (int d = 0; d < t.dim(); ++d) {
      const int64_t s = t.strides()[d] * (t.shape()[d] - 1);
      (s < 0 ? lo : hi) += s;
    }
    return std::pair{lo, hi};
  };
  if (n > 0)
    for (const Tensor* t : {&k, &v})
      if (t->storage() == q.storage() && span(*t).first <= span(q).second && span(q).first <= span(*t).second)
        throw_error(ErrorKind::InvalidArgument, name,
                    std::string("q and ") + (t == &k ? "k" : "v") + " span overlapping elements of one storage; q must be disjoint from k and v");
  if (n == 0) return;

  Runtime& rt = Runtime::get();
  OpCall call{OpKind::KVAppend, "kv_append_rope", {k_, k, v_, v, q}, {}, rk.attrs, 0.0, {}};
  call.mutates = kWritesCaches | kWritesQ;
  if (rk.attrs.rope_factors) call.inputs.push_back(cfg.freq_factors);  // validated by rope_call
  call.attrs.pos_offset = size_;
  call.work = static_cast<double>(k.numel() + v.numel()) + 4.0 * static_cast<double>(q.numel() + k.numel());
  // On the host, or where the device runs the fused call, one op. Otherwise the composition,
  // each op placed by the runtime on its own (a refused q goes through the host alone, k and
  // v still append on the device). The lock keeps other threads' ops from landing between.
  // (Not for a host cache: its CPU kernel runs without the lock, concurrently with other threads'.)
  std::unique_lock<std::recursive_mutex> lk;
  if (!device_.is_cpu()) lk = rt.lock();
  if (device_.is_cpu()) {
    rt.run(call, {}, device_);  // in place on the host tensors: the CPU kernel, recorded as every op
  } else if (!rt.run_on_device(call, {}, device_)) {
    rope_(q, size_, cfg);
    write_rows(rope(k, size_, cfg), v);
  }
  size_ += n;
}

Tensor KVCache::rms_norm_qkv_append_rope(const Tensor& x, const Tensor& g, const Tensor& w_qkv, double eps,
                                         int64_t n_heads, const RopeConfig& cfg) {
  const char* name = "KVCache::rms_norm_qkv_append_rope";
  require_defined(w_qkv, name, "w_qkv");
  if (w_qkv.dim() != 2)
    throw_error(ErrorKind::ShapeMismatch, name, "w_qkv must be [(n_heads + 2 n_kv_heads) * head_dim, dim], got " +
                                                   shape_str(w_qkv.shape()));
  const bool one_op = (w_qkv.dtype() == DType::F32 || w_qkv.dtype() == DType::F16) && w_qkv.device() == device_;
  return qkv_append_rope(x, g, w_qkv, -1, w_qkv.shape()[0], w_qkv.shape()[1], eps, n_heads, cfg, one_op,
                         [&] { return rms_norm_matmul_t(x, g, w_qkv, eps); }, name);
}

Tensor KVCache::rms_norm_qkv_append_rope(const Tensor& x, const Tensor& g, const QTensor& w_qkv, double eps,
                                         int64_t n_heads, const RopeConfig& cfg) {
  const char* name = "KVCache::rms_norm_qkv_append_rope";
  if (!w_qkv.defined()) throw_error(ErrorKind::InvalidArgument, name, "w_qkv is undefined");
  return qkv_append_rope(x, g, w_qkv.bytes(), static_cast<int>(w_qkv.qtype()), w_qkv.rows(), w_qkv.cols(), eps, n_heads,
                         cfg, w_qkv.device() == device_, [&] { return rms_norm_qmatmul_t(x, g, w_qkv, eps); }, name);
}

Tensor KVCache::qkv_append_rope(const Tensor& x, const Tensor& g, const Tensor& weight, int quant_type, int64_t w_rows,
                                int64_t w_cols, double eps, int64_t n_heads, const RopeConfig& cfg, bool one_op_w,
                                const std::function<Tensor()>& product, const char* name) {
  if (!k_.defined()) throw_error(ErrorKind::RuntimeState, name, "cache is default-constructed; construct it with its sizes");
  require_defined(x, name, "x");
  require_defined(g, name, "g");
  if (n_heads <= 0) throw_error(ErrorKind::InvalidArgument, name, "n_heads must be > 0, got " + i2s(n_heads));
  const int64_t D = head_dim_, qd = n_heads * D, kvd = n_kv_heads_ * D;
  if (x.dim() != 2)
    throw_error(ErrorKind::ShapeMismatch, name, "x must be [n, dim], got " + shape_str(x.shape()));
  if (w_rows != qd + 2 * kvd)
    throw_error(ErrorKind::ShapeMismatch, name,
                "w_qkv must be [(n_heads + 2 n_kv_heads) * head_dim = " + i2s(qd + 2 * kvd) + ", dim], got [" +
                    i2s(w_rows) + ", " + i2s(w_cols) + "]");
  const int64_t n = x.shape()[0];
  if (size_ + n > max_ctx_)
    throw_error(ErrorKind::OutOfRange, name,
                "appending " + i2s(n) + " rows to a cache holding " + i2s(size_) + " of max_ctx " + i2s(max_ctx_) +
                    " overflows it; create the cache with a larger max_ctx, or clear() it");
  // cfg against head_dim (checked on a cache row, of k's shape [1, Hkv, D]), before any op runs.
  const OpAttrs rope_attrs = rope_call(k_.slice(0, 0, 1), nullptr, size_, cfg, name).attrs;
  check_factors_storage(cfg, k_, v_, nullptr, name);
  Runtime& rt = Runtime::get();
  std::unique_lock<std::recursive_mutex> lk;  // as append_rope: a device cache's steps under one hold
  if (device_.is_webgpu()) lk = rt.lock();
  // One op for a decode step on a device cache when the device runs it (its check,
  // kernels/matmul.cpp or kernels/quant.cpp, sees the rest); these conditions are the fused
  // call's contract.
  const bool one_op = one_op_w && device_.is_webgpu() && n == 1 && x.dtype() == DType::F32 && g.dtype() == DType::F32 &&
                      x.device() == device_ && g.device() == device_ && g.dim() == 1 && g.shape()[0] == x.shape()[1] &&
                      w_cols == x.shape()[1] && std::isfinite(eps) && eps >= 0;
  if (one_op) {
    const bool quantized = quant_type >= 0;
    OpCall call{quantized ? OpKind::QMatMul : OpKind::MatMul, "rms_norm_qkv_append_rope", {x, weight, k_, v_}, {},
                rope_attrs, 0.0, {}};
    if (quantized) call.attrs.qtype = static_cast<uint8_t>(quant_type);
    else call.attrs.transpose_b = true;
    if (rope_attrs.rope_factors) call.inputs.push_back(cfg.freq_factors);  // before the prologue operand, which is last
    call.inputs.push_back(g);
    call.mutates = 1u << 2 | 1u << 3;  // the caches
    call.attrs.prologue = OpAttrs::Prologue::RmsNorm;
    call.attrs.eps = eps;
    call.work = 2.0 * static_cast<double>(w_rows) * static_cast<double>(w_cols) + 4.0 * static_cast<double>(qd + kvd);
    if (auto r = rt.run_on_device(call, {{Shape{1, qd + 2 * kvd}, DType::F32}}, device_)) {
      size_ += 1;
      return (*r)[0].slice(1, 0, qd).view({1, n_heads, D});
    }
  }
  const Tensor qkv = product();
  Tensor q = qkv.slice(1, 0, qd);
  if (n > 1) q = q.contiguous();  // rows interleave with k and v, which q must be disjoint from
  q = q.view({n, n_heads, D});
  append_rope(q, qkv.slice(1, qd, qd + kvd).view({n, n_kv_heads_, D}),
              qkv.slice(1, qd + kvd, qd + 2 * kvd).view({n, n_kv_heads_, D}), cfg);
  return q;
}

void KVCache::write_rows(const Tensor& k, const Tensor& v) {
  Runtime& rt = Runtime::get();
  // One call for both caches: one dispatch per decode step on WebGPU.
  OpCall call{OpKind::KVAppend, "kv_append", {k_, k, v_, v}, {}, {}, 0.0, {}};
  call.mutates = kWritesCaches;
  call.attrs.pos_offset = size_;
  call.work = static_cast<double>(k.numel() + v.numel());
  // The runtime runs it where the caches live: the kernel, or (policy cpu-only, a refusal with
  // fallback) the CPU on host copies of the caches' spans, written back.
  rt.run(call, {}, device_);
}

}  // namespace wgt
