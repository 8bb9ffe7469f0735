// Transformer building blocks: RoPE, causal attention with GQA, a KV cache, the SwiGLU / GELU
// feed-forward networks and a llama-style pre-norm block. Exact formulas: docs/transformer.md.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "wgt/ops.hpp"
#include "wgt/quant.hpp"
#include "wgt/tensor.hpp"

namespace wgt {

// ---------------------------------------------------------------------------------------------
// RoPE. x is [seq, n_heads, head_dim] or [batch, seq, n_heads, head_dim]. For the row at
// sequence position p (offset + s, or positions[s]) and pair i in [0, n_rot/2):
//   theta_i = p * freq_scale * base^(-2i / n_rot) / f_i
//   (a, b) -> (a cos theta_i - b sin theta_i,  a sin theta_i + b cos theta_i)
// where the pair (a, b) is (x[2i], x[2i+1]) for RopeStyle::Normal (llama, interleaved) and
// (x[i], x[i + n_rot/2]) for RopeStyle::Neox (rotate halves). Dims >= n_rot pass unchanged.
// f_i are the per-frequency factors (freq_factors; 1 when undefined): llama.cpp's convention
// for GGUF's `rope_freqs.weight` (Llama 3.1+ "llama3" scaling), the frequency divided by f_i.
enum class RopeStyle { Normal, Neox };
struct RopeConfig {
  RopeStyle style = RopeStyle::Normal;
  double base = 10000.0;
  double freq_scale = 1.0;  // linear position scaling (positions are multiplied by it)
  int64_t n_rot = 0;        // 0 = head_dim (which must then be even)
  // Optional f32 [n_rot/2] on x's device (any strides). Checked on every call: dtype
  // (DTypeMismatch), shape (ShapeMismatch), device (InvalidArgument); and, only when it lives on
  // the host, every value finite and > 0 (InvalidArgument) — a device tensor is not read back
  // per call, so its values are the caller's responsibility (llama3_rope_factors gives valid ones).
  Tensor freq_factors;
};
// The llama3 RoPE factors f_i, i in [0, n_rot/2), as HF transformers' llama3 rope_scaling
// defines them (factor, low_freq_factor, high_freq_factor, original_max_position_embeddings):
// with inv_freq_i = base^(-2i / n_rot) and wavelen = 2 pi / inv_freq_i, f_i = 1 when wavelen <
// original_context / high_freq_factor, scale_factor when wavelen > original_context /
// low_freq_factor, else inv_freq_i / ((1 - s) inv_freq_i / scale_factor + s inv_freq_i) with
// s = (original_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor).
// InvalidArgument for non-finite or non-positive arguments, low_freq_factor >= high_freq_factor,
// or an odd n_rot.
std::vector<float> llama3_rope_factors(double scale_factor, double low_freq_factor, double high_freq_factor,
                                       int64_t original_context, double base, int64_t n_rot);
// Positions offset, offset+1, ... along the seq dim (offset = tokens already in the cache).
Tensor rope(const Tensor& x, int64_t offset, const RopeConfig& cfg = {});
// Explicit positions: an I32/I64 tensor [seq] (values >= 0), shared by every batch entry.
Tensor rope(const Tensor& x, const Tensor& positions, const RopeConfig& cfg = {});
// In place: the same rotation written into x's own storage (x may be a strided view, e.g. the
// Q or K part of a fused QKV projection; elements outside the view and dims >= n_rot are not
// written). Same arguments and errors as rope(), plus InvalidArgument when x's elements
// overlap (an expand() view) or positions or cfg.freq_factors share x's storage. Runs where x lives: the CPU for a
// host x; on a device the WebGPU kernel, else (policy cpu-only, or a call the kernel cannot
// run under policy auto with fallback) a host round trip counted in the stats as "host-write".
void rope_(Tensor& x, int64_t offset, const RopeConfig& cfg = {});
void rope_(Tensor& x, const Tensor& positions, const RopeConfig& cfg = {});

// ---------------------------------------------------------------------------------------------
// Attention. q [q_len, n_heads, d], k and v [kv_len, n_kv_heads, d]; n_kv_heads divides
// n_heads and query head h uses kv head h / (n_heads / n_kv_heads) (grouped-query attention).
//   out[i, h] = sum_j softmax_j(scale * q[i,h].k[j,g] + mask[i, j]) v[j, g]
// Causal: the queries are the LAST q_len positions of the kv sequence, so query i sees keys
// j <= kv_len - q_len + i (needs kv_len >= q_len). A row whose every score is -inf gives 0;
// a NaN or +inf score (NaN in q, a visible k or the mask) makes that (query, head) row NaN; a
// key of weight 0 does not read its v (docs/semantics.md, on every backend).
// q may have another float dtype than k/v (e.g. f32 queries over an f16 cache); the output
// has q's dtype and shape.
struct AttnConfig {
  double scale = 0.0;  // 0 = 1/sqrt(d)
  bool causal = true;
  std::optional<Tensor> mask;  // additive, broadcastable to [q_len, kv_len], any float dtype
};
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttnConfig& cfg = {});

// ---------------------------------------------------------------------------------------------
// Feed-forward networks (weights in the x @ W^T layout: W is [out_features, in_features]).
// silu(a) * b, fused (a and b of one shape and dtype).
Tensor silu_mul(const Tensor& a, const Tensor& b);
// (silu(x W_g^T) * (x W_u^T)) W_d^T. When x and the weights have different float dtypes, the
// matmuls run in the weight dtype and the result is cast back to x's dtype.
Tensor swiglu_ffn(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, const Tensor& w_down);
// gelu(x W1^T + b1) W2^T + b2 (biases optional, shapes [hidden] and [out]).
Tensor gelu_mlp(const Tensor& x, const Tensor& w1, const std::optional<Tensor>& b1, const Tensor& w2,
                const std::optional<Tensor>& b2, GeluApprox approx = GeluApprox::Erf);
// x W^T in W's dtype, result in x's dtype (the helper the FFNs and the block use).
Tensor linear(const Tensor& x, const Tensor& w);
// x W^T with a block-quantized W [out_features, in_features] (qmatmul_t, computed in f32),
// result in x's dtype.
Tensor linear(const Tensor& x, const QTensor& w);

// ---------------------------------------------------------------------------------------------
// KV cache: two buffers [max_ctx, n_kv_heads, head_dim] (f32 or f16) on the CPU or a WebGPU
// device. On a device the buffers are pinned (Runtime::pin) so they are never evicted.
class KVCache {
 public:
  KVCache() = default;
  KVCache(int64_t max_ctx, int64_t n_kv_heads, int64_t head_dim, DType dtype = DType::F32,
          Device device = Device::cpu());
  // Appends k, v [n, n_kv_heads, head_dim] (any float dtype; converted to the cache dtype).
  // Throws OutOfRange when size() + n > max_ctx(); nothing is written then.
  void append(const Tensor& k, const Tensor& v);
  // RoPE and append in one op (one dispatch per decode step on WebGPU): rotates q
  // [n, n_heads, head_dim] in place and appends rope(k) and v, where row s of q and k has
  // position size() + s (the cache row it lands in); k itself is not written. Exactly
  // rope_(q, size(), cfg) then append(rope(k, size(), cfg), v), with their errors, plus
  // InvalidArgument when q's elements overlap, or q shares memory with k, v (overlapping
  // element spans of one storage) or the cache, or cfg.freq_factors share q's or the cache's
  // storage (read while those are written). Nothing is written when it throws. On a
  // device it runs the WebGPU kernel when the backend supports the call; otherwise (policy
  // cpu-only, or a q that rope_'s kernel cannot rotate in place) it runs as those three ops.
  void append_rope(Tensor& q, const Tensor& k, const Tensor& v, const RopeConfig& cfg);
  // The decode step's q/k/v projection with RoPE and append: qkv = rms_norm_matmul_t(x, g,
  // w_qkv, eps), x [n, dim], w_qkv [(n_heads + 2 n_kv_heads) * head_dim, dim] whose output
  // columns are q [n, n_heads, head_dim], then k and v [n, n_kv_heads, head_dim]; then
  // append_rope(q, k, v, cfg). Returns the rotated q (a view of qkv, compacted when n > 1).
  // Exactly those two ops, with their errors (a cache overflow and cfg checked first, under
  // this op's name, so that nothing runs then; freq_factors in the cache's storage are an
  // InvalidArgument). On WebGPU one op (for n == 1, f32 x and g,
  // dense f32 or f16 weights on the cache's device): one dispatch of the fused-norm matvec
  // with the rotation and the cache writes in its epilogue where kernels/matmul.cpp's
  // conditions hold (normal RoPE layout, even head_dim, ...), else the two ops' kernels.
  Tensor rms_norm_qkv_append_rope(const Tensor& x, const Tensor& g, const Tensor& w_qkv, double eps, int64_t n_heads,
                                  const RopeConfig& cfg);
  // The same with a quantized w_qkv: rms_norm_qmatmul_t(x, g, w_qkv, eps), then append_rope.
  // On WebGPU one op for n == 1 and f32 x and g on the cache's device: the decode matvec with
  // the rotation and the cache writes as it stores its rows where kernels/quant.cpp's
  // conditions hold (the subgroup matvec, normal RoPE layout, ...), else its two kernels.
  Tensor rms_norm_qkv_append_rope(const Tensor& x, const Tensor& g, const QTensor& w_qkv, double eps, int64_t n_heads,
                                  const RopeConfig& cfg);
  Tensor view_k() const;  // [size(), n_kv_heads, head_dim], a view of the filled part
  Tensor view_v() const;
  int64_t size() const { return size_; }
  int64_t max_ctx() const { return max_ctx_; }
  int64_t n_kv_heads() const { return n_kv_heads_; }
  int64_t head_dim() const { return head_dim_; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  void clear() { size_ = 0; }  // keeps the buffers; later appends overwrite from row 0

 private:
  int64_t check_append(const Tensor& k, const Tensor& v, const char* name) const;  // validates; returns n
  void write_rows(const Tensor& k, const Tensor& v);  // rows [size_, size_ + n) of both caches
  // Both rms_norm_qkv_append_rope forms: the weight as the one-op call binds it (dense, or the
  // packed bytes with quant_type a wgt::QType value; -1 for dense), its [rows, cols], whether
  // the one-op path may take it, and qkv = rms_norm(x, g) W^T for the two-op path.
  Tensor qkv_append_rope(const Tensor& x, const Tensor& g, const Tensor& weight, int quant_type, int64_t w_rows,
                         int64_t w_cols, double eps, int64_t n_heads, const RopeConfig& cfg, bool one_op,
                         const std::function<Tensor()>& product, const char* name);
  Tensor k_, v_;
  int64_t max_ctx_ = 0, n_kv_heads_ = 0, head_dim_ = 0, size_ = 0;
  DType dtype_ = DType::F32;
  Device device_ = Device::cpu();
};

// ---------------------------------------------------------------------------------------------
// Llama pre-norm block:
//   h   = x + attention(rope(rmsnorm(x) Wq^T), rope(rmsnorm(x) Wk^T), rmsnorm(x) Wv^T) Wo^T
//   out = h + swiglu_ffn(rmsnorm(h), W_gate, W_up, W_down)
struct BlockConfig {
  int64_t dim = 0;         // model width
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;  // 0 = n_heads
  int64_t head_dim = 0;    // 0 = dim / n_heads
  int64_t ffn_dim = 0;
  double norm_eps = 1e-5;
  RopeConfig rope;         // freq_factors may live anywhere: the block keeps a copy on its device
};
// Weights. Shapes: attn_norm, ffn_norm [dim]; wq [n_heads*head_dim, dim];
// wk, wv [n_kv_heads*head_dim, dim]; wo [dim, n_heads*head_dim]; w_gate, w_up [ffn_dim, dim];
// w_down [dim, ffn_dim]. Each projection is either dense (f32 or f16, the dense ones all of
// one dtype) or block-quantized: a defined entry of `quant` replaces the dense tensor of the
// same name, which must then stay undefined. Any mix per tensor (and of formats) is allowed;
// quantized weights stay packed and run through qmatmul_t. All weights live on one device.
struct BlockQuantWeights {
  QTensor wq, wk, wv, wo, w_gate, w_up, w_down;
};
struct BlockWeights {
  Tensor attn_norm, wq, wk, wv, wo;
  Tensor ffn_norm, w_gate, w_up, w_down;
  BlockQuantWeights quant;
  // Optional biases of the q/k/v projections ([n_heads*head_dim], [n_kv_heads*head_dim] x 2;
  // Qwen2 has them): all three or none, added before RoPE.
  Tensor bq, bk, bv;
  // Random weights (scaled like a trained model's, ~1/sqrt(fan_in)) for tests and benchmarks.
  static BlockWeights random(const BlockConfig& cfg, uint64_t seed, DType dtype = DType::F32,
                             Device device = Device::cpu());
  // A copy with every dense projection quantized to `type` (quantized on the host, then
  // moved back to its device); the norms stay dense. Already quantized ones are kept.
  BlockWeights quantized(QType type) const;
  // A copy with every defined weight (dense or packed) moved to `device`.
  BlockWeights to(Device device) const;
  Device device() const { return attn_norm.device(); }
};

class TransformerBlock {
 public:
  // Validates every weight shape/dtype/device against cfg (ShapeMismatch / DTypeMismatch).
  TransformerBlock(const BlockConfig& cfg, BlockWeights weights);
  // x [seq, dim] (f32, or f16): seq > 1 is a prefill, seq == 1 a decode step. pos is the
  // position of x's first row and must equal cache.size() (the cache holds positions < pos).
  Tensor forward(const Tensor& x, KVCache& cache, int64_t pos) const;
  KVCache make_cache(int64_t max_ctx, DType dtype = DType::F32) const;
  const BlockConfig& config() const { return cfg_; }
  const BlockWeights& weights() const { return w_; }
  Device device() const { return w_.device(); }
  // Pins every weight (dense tensors and packed quantized bytes) on its device (no-op on the CPU).
  void pin_weights() const;

 private:
  // One matrix per group of projections that read the same input (q/k/v of the normed x,
  // gate/up of the normed h): one matvec streams the group's weights instead of two or three,
  // and the kernels read q, k, v and the gate/up halves from the fused output in place.
  // w_'s members become views into these (no second copy). Set when every member of a group
  // is dense with one dtype, or quantized with one format; undefined otherwise.
  struct Fused {
    Tensor dense;
    QTensor q;
    bool defined() const { return dense.defined() || q.defined(); }
  };
  void fuse_projections();

  BlockConfig cfg_;
  BlockWeights w_;
  Fused qkv_, gate_up_;
  // f32 copies of f16 norm weights (tiny), so an f32 forward does not cast them every step.
  Tensor attn_norm_f32_, ffn_norm_f32_;
  Tensor qkv_bias_;  // f32 [qd + 2 kvd] = concat(bq, bk, bv), when the block has biases
};

// N blocks with one KV cache each; forward() runs them in order at the caches' position.
class BlockStack {
 public:
  BlockStack(std::vector<TransformerBlock> blocks, int64_t max_ctx, DType cache_dtype = DType::F32);
  Tensor forward(const Tensor& x);  // x [seq, dim]; positions continue from pos()
  int64_t pos() const { return caches_.empty() ? 0 : caches_.front().size(); }
  void reset();
  size_t size() const { return blocks_.size(); }
  const KVCache& cache(size_t i) const { return caches_.at(i); }

 private:
  std::vector<TransformerBlock> blocks_;
  std::vector<KVCache> caches_;
};

}  // namespace wgt
