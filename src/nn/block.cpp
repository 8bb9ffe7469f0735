// Feed-forward networks, the llama pre-norm TransformerBlock and BlockStack, composed of
// public ops (so they run on whichever backend the runtime picks for each op).
#include <cmath>

#include "ops/op_common.hpp"
#include "wgt/nn.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

std::string i2s(int64_t v) { return std::to_string(v); }

void require_weight(const Tensor& w, int64_t rows, int64_t cols, const char* op, const char* what) {
  require_defined(w, op, what);
  if (w.dim() != 2 || w.shape()[0] != rows || w.shape()[1] != cols)
    throw_error(ErrorKind::ShapeMismatch, op,
                std::string(what) + " must be [" + i2s(rows) + ", " + i2s(cols) + "], got " + shape_str(w.shape()));
  require_floating(w, op);
}

void require_vector(const Tensor& w, int64_t n, const char* op, const char* what) {
  require_defined(w, op, what);
  if (w.dim() != 1 || w.shape()[0] != n)
    throw_error(ErrorKind::ShapeMismatch, op, std::string(what) + " must be [" + i2s(n) + "], got " + shape_str(w.shape()));
  require_floating(w, op);
}

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : cast(t, d); }

// Fills the derived sizes (n_kv_heads, head_dim) and checks the configuration.
BlockConfig resolve(BlockConfig c, const char* op) {
  if (c.dim <= 0 || c.n_heads <= 0 || c.ffn_dim <= 0)
    throw_error(ErrorKind::InvalidArgument, op,
                "dim, n_heads and ffn_dim must be > 0, got " + i2s(c.dim) + ", " + i2s(c.n_heads) + ", " + i2s(c.ffn_dim));
  if (c.n_kv_heads == 0) c.n_kv_heads = c.n_heads;
  if (c.n_kv_heads < 0 || c.n_heads % c.n_kv_heads != 0)
    throw_error(ErrorKind::ShapeMismatch, op,
                "n_kv_heads (" + i2s(c.n_kv_heads) + ") must divide n_heads (" + i2s(c.n_heads) + ")");
  if (c.head_dim == 0) {
    if (c.dim % c.n_heads != 0)
      throw_error(ErrorKind::ShapeMismatch, op,
                  "dim " + i2s(c.dim) + " is not a multiple of n_heads " + i2s(c.n_heads) + "; set head_dim explicitly");
    c.head_dim = c.dim / c.n_heads;
  }
  if (c.head_dim < 0) throw_error(ErrorKind::InvalidArgument, op, "head_dim must be > 0, got " + i2s(c.head_dim));
  if (!(std::isfinite(c.norm_eps) && c.norm_eps >= 0))
    throw_error(ErrorKind::InvalidArgument, op, "norm_eps must be finite and >= 0");
  return c;
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& w) {
  const char* name = "linear";
  common_device({&x, &w}, name);
  require_floating(x, name);
  require_floating(w, name);
  if (w.dim() != 2)
    throw_error(ErrorKind::RankMismatch, name, "weight must be 2-D [out_features, in_features], got " + shape_str(w.shape()));
  if (x.dim() < 1 || x.shape().back() != w.shape()[1])
    throw_error(ErrorKind::ShapeMismatch, name,
                "x " + shape_str(x.shape()) + " has in_features " + (x.dim() ? i2s(x.shape().back()) : "?") +
                    " but the weight is " + shape_str(w.shape()) + " ([out_features, in_features])");
  return as_dtype(matmul_t(as_dtype(x, w.dtype()), w), x.dtype());
}

Tensor swiglu_ffn(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, const Tensor& w_down) {
  const char* name = "swiglu_ffn";
  require_defined(x, name, "x");
  if (x.dim() < 1) throw_error(ErrorKind::RankMismatch, name, "x must be [..., dim], got a scalar");
  const int64_t D = x.shape().back();
  require_defined(w_gate, name, "w_gate");
  const int64_t F = w_gate.dim() == 2 ? w_gate.shape()[0] : -1;
  require_weight(w_gate, F, D, name, "w_gate");
  require_weight(w_up, F, D, name, "w_up");
  require_weight(w_down, D, F, name, "w_down");
  return linear(silu_mul(linear(x, w_gate), linear(x, w_up)), w_down);
}

Tensor gelu_mlp(const Tensor& x, const Tensor& w1, const std::optional<Tensor>& b1, const Tensor& w2,
                const std::optional<Tensor>& b2, GeluApprox approx) {
  const char* name = "gelu_mlp";
  require_defined(x, name, "x");
  if (x.dim() < 1) throw_error(ErrorKind::RankMismatch, name, "x must be [..., dim], got a scalar");
  require_defined(w1, name, "w1");
  require_defined(w2, name, "w2");
  const int64_t D = x.shape().back();
  const int64_t Hd = w1.dim() == 2 ? w1.shape()[0] : -1;
  const int64_t O = w2.dim() == 2 ? w2.shape()[0] : -1;
  require_weight(w1, Hd, D, name, "w1");
  require_weight(w2, O, Hd, name, "w2");
  if (b1) require_vector(*b1, Hd, name, "b1");
  if (b2) require_vector(*b2, O, name, "b2");
  Tensor h = linear(x, w1);
  if (b1) h = h + as_dtype(*b1, h.dtype());
  Tensor y = linear(gelu(h, approx), w2);
  if (b2) y = y + as_dtype(*b2, y.dtype());
  return y;
}

// ---- weights ----

BlockWeights BlockWeights::random(const BlockConfig& cfg_in, uint64_t seed, DType dtype, Device device) {
  const BlockConfig c = resolve(cfg_in, "BlockWeights::random");
  if (dtype != DType::F32 && dtype != DType::F16)
    throw_error(ErrorKind::DTypeMismatch, "BlockWeights::random", std::string("weights must be f32 or f16, got ") + dtype_name(dtype));
  uint64_t s = seed * 16;
  // Generated in f32 on the host (counter-based, so identical on every backend), then
  // converted and moved: std = 1/sqrt(fan_in) keeps activations O(1) through the block.
  auto mat = [&](int64_t rows, int64_t cols) {
    Tensor t = rand_normal({rows, cols}, s++, 0.0, 1.0 / std::sqrt(static_cast<double>(cols)));
    return as_dtype(t, dtype).to(device);
  };
  auto norm = [&](int64_t n) { return as_dtype(rand_uniform({n}, s++, 0.8, 1.2), dtype).to(device); };
  const int64_t qd = c.n_heads * c.head_dim, kvd = c.n_kv_heads * c.head_dim;
  BlockWeights w;
  w.attn_norm = norm(c.dim);
  w.wq = mat(qd, c.dim);
  w.wk = mat(kvd, c.dim);
  w.wv = mat(kvd, c.dim);
  w.wo = mat(c.dim, qd);
  w.ffn_norm = norm(c.dim);
  w.w_gate = mat(c.ffn_dim, c.dim);
  w.w_up = mat(c.ffn_dim, c.dim);
  w.w_down = mat(c.dim, c.ffn_dim);
  return w;
}

// ---- block ----

TransformerBlock::TransformerBlock(const BlockConfig& cfg, BlockWeights weights)
    : cfg_(resolve(cfg, "TransformerBlock")), w_(std::move(weights)) {
  const char* name = "TransformerBlock";
  const BlockConfig& c = cfg_;
  const int64_t qd = c.n_heads * c.head_dim, kvd = c.n_kv_heads * c.head_dim;
  require_vector(w_.attn_norm, c.dim, name, "attn_norm");
  require_vector(w_.ffn_norm, c.dim, name, "ffn_norm");
  require_weight(w_.wq, qd, c.dim, name, "wq");
  require_weight(w_.wk, kvd, c.dim, name, "wk");
  require_weight(w_.wv, kvd, c.dim, name, "wv");
  require_weight(w_.wo, c.dim, qd, name, "wo");
  require_weight(w_.w_gate, c.ffn_dim, c.dim, name, "w_gate");
  require_weight(w_.w_up, c.ffn_dim, c.dim, name, "w_up");
  require_weight(w_.w_down, c.dim, c.ffn_dim, name, "w_down");
  for (const Tensor* t : {&w_.wk, &w_.wv, &w_.wo, &w_.w_gate, &w_.w_up, &w_.w_down})
    require_same_dtype(w_.wq, *t, name, "a projection weight");
  common_device({&w_.attn_norm, &w_.ffn_norm, &w_.wq, &w_.wk, &w_.wv, &w_.wo, &w_.w_gate, &w_.w_up, &w_.w_down}, name);
  // Resolving n_rot now reports a bad rope config at construction, not at the first forward.
  const int64_t n_rot = c.rope.n_rot == 0 ? c.head_dim : c.rope.n_rot;
  if (n_rot <= 0 || n_rot > c.head_dim || n_rot % 2 != 0)
    throw_error(ErrorKind::InvalidArgument, name,
                "rope n_rot must be even and <= head_dim " + i2s(c.head_dim) + ", got " + i2s(n_rot) +
                    "; set BlockConfig::rope.n_rot for an odd head_dim");
}

void TransformerBlock::pin_weights() const {
  if (!device().is_webgpu()) return;
  for (const Tensor* t : {&w_.attn_norm, &w_.ffn_norm, &w_.wq, &w_.wk, &w_.wv, &w_.wo, &w_.w_gate, &w_.w_up, &w_.w_down})
    Runtime::get().pin(*t);
}

KVCache TransformerBlock::make_cache(int64_t max_ctx, DType dtype) const {
  return KVCache(max_ctx, cfg_.n_kv_heads, cfg_.head_dim, dtype, device());
}

Tensor TransformerBlock::forward(const Tensor& x, KVCache& cache, int64_t pos) const {
  const char* name = "TransformerBlock::forward";
  const BlockConfig& c = cfg_;
  require_defined(x, name, "x");
  require_floating(x, name);
  if (x.dim() != 2 || x.shape()[1] != c.dim || x.shape()[0] < 1)
    throw_error(ErrorKind::ShapeMismatch, name, "x must be [seq >= 1, dim = " + i2s(c.dim) + "], got " + shape_str(x.shape()));
  if (x.device() != device())
    throw_error(ErrorKind::InvalidArgument, name,
                "x lives on " + x.device().str() + ", the block's weights on " + device().str() + "; move x with .to()");
  if (cache.n_kv_heads() != c.n_kv_heads || cache.head_dim() != c.head_dim)
    throw_error(ErrorKind::ShapeMismatch, name,
                "cache is [*, " + i2s(cache.n_kv_heads()) + ", " + i2s(cache.head_dim()) + "] but the block needs [*, " +
                    i2s(c.n_kv_heads) + ", " + i2s(c.head_dim) + "]; create it with make_cache()");
  if (pos != cache.size())
    throw_error(ErrorKind::InvalidArgument, name,
                "pos " + i2s(pos) + " must equal the number of cached positions " + i2s(cache.size()) +
                    " (rows are appended in order); clear() the cache to restart");
  const int64_t seq = x.shape()[0];

  // Attention sub-block.                                  // shapes:
  Tensor xn = rms_norm(x, as_dtype(w_.attn_norm, x.dtype()), c.norm_eps);  // (seq, dim)
  Tensor q = linear(xn, w_.wq).view({seq, c.n_heads, c.head_dim});       // (seq, H, hd)
  Tensor k = linear(xn, w_.wk).view({seq, c.n_kv_heads, c.head_dim});    // (seq, Hkv, hd)
  Tensor v = linear(xn, w_.wv).view({seq, c.n_kv_heads, c.head_dim});    // (seq, Hkv, hd)
  q = rope(q, pos, c.rope);
  k = rope(k, pos, c.rope);
  cache.append(k, v);                                                      // cache: (pos + seq, Hkv, hd)
  AttnConfig ac;
  ac.scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  ac.causal = true;
  Tensor a = attention(q, cache.view_k(), cache.view_v(), ac);            // (seq, H, hd)
  Tensor h = x + linear(a.view({seq, c.n_heads * c.head_dim}), w_.wo);    // (seq, dim)

  // Feed-forward sub-block.
  Tensor hn = rms_norm(h, as_dtype(w_.ffn_norm, h.dtype()), c.norm_eps);
  return h + swiglu_ffn(hn, w_.w_gate, w_.w_up, w_.w_down);               // (seq, dim)
}

// ---- stack ----

BlockStack::BlockStack(std::vector<TransformerBlock> blocks, int64_t max_ctx, DType cache_dtype)
    : blocks_(std::move(blocks)) {
  if (blocks_.empty()) throw_error(ErrorKind::InvalidArgument, "BlockStack", "needs at least one block");
  for (const auto& b : blocks_) {
    if (b.config().dim != blocks_.front().config().dim)
      throw_error(ErrorKind::ShapeMismatch, "BlockStack",
                  "blocks have different widths (" + i2s(blocks_.front().config().dim) + " and " + i2s(b.config().dim) + ")");
    caches_.push_back(b.make_cache(max_ctx, cache_dtype));
  }
}

Tensor BlockStack::forward(const Tensor& x) {
  Tensor h = x;
  const int64_t pos = this->pos();
  // Checked up front so that an overflow leaves every cache untouched, not half the stack.
  const int64_t seq = x.defined() && x.dim() >= 1 ? x.shape()[0] : 0;
  if (pos + seq > caches_.front().max_ctx())
    throw_error(ErrorKind::OutOfRange, "BlockStack::forward",
                i2s(pos) + " cached + " + i2s(seq) + " new positions exceed max_ctx " + i2s(caches_.front().max_ctx()) +
                    "; reset() or build the stack with a larger max_ctx");
  for (size_t i = 0; i < blocks_.size(); ++i) h = blocks_[i].forward(h, caches_[i], pos);
  return h;
}

void BlockStack::reset() {
  for (auto& c : caches_) c.clear();
}

}  // namespace wgt
