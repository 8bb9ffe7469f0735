// Feed-forward networks, the llama pre-norm TransformerBlock (dense or block-quantized
// projections) and BlockStack, composed of public ops (so they run on whichever backend the
// runtime picks for each op).
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/op_common.hpp"
#include "ops/rope_call.hpp"
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
  // f32 activations with half weights: one mixed-precision matmul (no casts of x or of the
  // result, so a decode step records no conversion kernels around its projections).
  if (x.dtype() == DType::F32 && (w.dtype() == DType::F16 || w.dtype() == DType::BF16)) return matmul_t(x, w);
  return as_dtype(matmul_t(as_dtype(x, w.dtype()), w), x.dtype());
}

Tensor linear(const Tensor& x, const QTensor& w) {
  const char* name = "linear";
  require_defined(x, name, "x");
  require_floating(x, name);
  if (!w.defined()) throw_error(ErrorKind::InvalidArgument, name, "the quantized weight is undefined");
  if (x.device() != w.device())
    throw_error(ErrorKind::InvalidArgument, name,
                "x lives on " + x.device().str() + " but the weight " + w.str() + "; move them to one device first");
  if (x.dim() < 1 || x.shape().back() != w.cols())
    throw_error(ErrorKind::ShapeMismatch, name,
                "x " + shape_str(x.shape()) + " has in_features " + (x.dim() ? i2s(x.shape().back()) : "?") +
                    " but the weight is " + w.str() + " ([out_features, in_features])");
  return as_dtype(qmatmul_t(x, w), x.dtype());  // qmatmul_t computes in f32
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

BlockWeights BlockWeights::quantized(QType type) const {
  BlockWeights out = *this;
  auto conv = [type](Tensor& dense, QTensor& q) {
    if (q.defined() || !dense.defined()) return;
    q = quantize(dense.cpu(), type).to(dense.device());
    dense = Tensor();
  };
  conv(out.wq, out.quant.wq);
  conv(out.wk, out.quant.wk);
  conv(out.wv, out.quant.wv);
  conv(out.wo, out.quant.wo);
  conv(out.w_gate, out.quant.w_gate);
  conv(out.w_up, out.quant.w_up);
  conv(out.w_down, out.quant.w_down);
  return out;
}

BlockWeights BlockWeights::to(Device device) const {
  BlockWeights out = *this;
  for (Tensor* t : {&out.attn_norm, &out.wq, &out.wk, &out.wv, &out.wo, &out.ffn_norm, &out.w_gate, &out.w_up,
                    &out.w_down, &out.bq, &out.bk, &out.bv})
    if (t->defined()) *t = t->to(device);
  for (QTensor* q : {&out.quant.wq, &out.quant.wk, &out.quant.wv, &out.quant.wo, &out.quant.w_gate, &out.quant.w_up,
                     &out.quant.w_down})
    if (q->defined()) *q = q->to(device);
  return out;
}

// ---- block ----

namespace {

// x W^T for a projection that is either dense or quantized (validated at construction).
Tensor project(const Tensor& x, const Tensor& dense, const QTensor& q) {
  return q.defined() ? linear(x, q) : linear(x, dense);
}

// Whether x W^T is one matmul_t of x's dtype: W dense of x's dtype, or f32 x half W.
bool direct_product(const Tensor& x, const Tensor& dense, const QTensor& q) {
  const bool half_w = !q.defined() && (dense.dtype() == DType::F16 || dense.dtype() == DType::BF16);
  return !q.defined() && (dense.dtype() == x.dtype() || (x.dtype() == DType::F32 && half_w));
}

// c + x W^T, as one fused op when the product is direct or W is quantized (f32 c and x): the
// residual add then costs no kernel of its own on the GPU.
Tensor project_add(const Tensor& c, const Tensor& x, const Tensor& dense, const QTensor& q) {
  if (direct_product(x, dense, q) && c.dtype() == x.dtype() && c.shape().size() == 2) return addmm_t(c, x, dense);
  if (q.defined() && c.dtype() == DType::F32 && x.dtype() == DType::F32 && c.dim() == 2 && x.dim() == 2)
    return addqmm_t(c, x, q);
  return c + project(x, dense, q);
}

// rms_norm(x, g) W^T, as one fused op when the product is direct or W is quantized and x f32
// (the WebGPU decode matvecs then normalize x on the way in: no norm kernel of its own); g
// has x's dtype.
Tensor norm_project(const Tensor& x, const Tensor& g, double eps, const Tensor& dense, const QTensor& q) {
  if (direct_product(x, dense, q) && x.dim() == 2) return rms_norm_matmul_t(x, g, dense, eps);
  if (q.defined() && x.dtype() == DType::F32 && x.dim() == 2) return rms_norm_qmatmul_t(x, g, q, eps);
  return project(rms_norm(x, g, eps), dense, q);
}

// Rows [r0, r1) of a quantized matrix as a view of its packed bytes (blocks never straddle rows).
QTensor q_rows(const QTensor& q, int64_t r0, int64_t r1) {
  const int64_t rb = static_cast<int64_t>(q.row_bytes());
  return QTensor::from_tensor(q.qtype(), r1 - r0, q.cols(), q.bytes().slice(0, r0 * rb, r1 * rb));
}

// One projection slot of BlockWeights with its expected shape.
struct ProjSlot {
  const char* what;
  const Tensor* dense;
  const QTensor* q;
  int64_t rows, cols;
};

std::vector<ProjSlot> proj_slots(const BlockWeights& w, const BlockConfig& c) {
  const int64_t qd = c.n_heads * c.head_dim, kvd = c.n_kv_heads * c.head_dim;
  return {{"wq", &w.wq, &w.quant.wq, qd, c.dim},           {"wk", &w.wk, &w.quant.wk, kvd, c.dim},
          {"wv", &w.wv, &w.quant.wv, kvd, c.dim},          {"wo", &w.wo, &w.quant.wo, c.dim, qd},
          {"w_gate", &w.w_gate, &w.quant.w_gate, c.ffn_dim, c.dim},
          {"w_up", &w.w_up, &w.quant.w_up, c.ffn_dim, c.dim},
          {"w_down", &w.w_down, &w.quant.w_down, c.dim, c.ffn_dim}};
}

}  // namespace

TransformerBlock::TransformerBlock(const BlockConfig& cfg, BlockWeights weights)
    : cfg_(resolve(cfg, "TransformerBlock")), w_(std::move(weights)) {
  const char* name = "TransformerBlock";
  const BlockConfig& c = cfg_;
  require_vector(w_.attn_norm, c.dim, name, "attn_norm");
  require_vector(w_.ffn_norm, c.dim, name, "ffn_norm");
  std::vector<const Tensor*> dense = {&w_.attn_norm, &w_.ffn_norm};
  const Tensor* first_dense = nullptr;
  for (const ProjSlot& p : proj_slots(w_, c)) {
    if (!p.q->defined()) {
      require_weight(*p.dense, p.rows, p.cols, name, p.what);
      if (first_dense) require_same_dtype(*first_dense, *p.dense, name, "a projection weight");
      first_dense = first_dense ? first_dense : p.dense;
      dense.push_back(p.dense);
      continue;
    }
    if (p.dense->defined())
      throw_error(ErrorKind::InvalidArgument, name,
                  std::string("both a dense and a quantized ") + p.what + " are set; leave the dense one undefined");
    if (p.q->rows() != p.rows || p.q->cols() != p.cols)
      throw_error(ErrorKind::ShapeMismatch, name,
                  std::string("quantized ") + p.what + " must be [" + i2s(p.rows) + ", " + i2s(p.cols) + "], got " +
                      p.q->str());
    if (p.q->device() != w_.attn_norm.device())
      throw_error(ErrorKind::InvalidArgument, name,
                  std::string("quantized ") + p.what + " lives on " + p.q->device().str() + ", the norms on " +
                      w_.attn_norm.device().str() + "; move every weight to one device (QTensor::to)");
  }
  const int64_t qd = c.n_heads * c.head_dim, kvd = c.n_kv_heads * c.head_dim;
  const int n_bias = w_.bq.defined() + w_.bk.defined() + w_.bv.defined();
  if (n_bias != 0 && n_bias != 3)
    throw_error(ErrorKind::InvalidArgument, name, "set all three of bq, bk, bv or none");
  if (n_bias == 3) {
    require_vector(w_.bq, qd, name, "bq");
    require_vector(w_.bk, kvd, name, "bk");
    require_vector(w_.bv, kvd, name, "bv");
    dense.insert(dense.end(), {&w_.bq, &w_.bk, &w_.bv});
  }
  common_device(dense, name);
  fuse_projections();
  // One f32 bias over the fused q/k/v output (added to the f32 activations of a forward).
  if (n_bias == 3) qkv_bias_ = concat({as_dtype(w_.bq, DType::F32), as_dtype(w_.bk, DType::F32), as_dtype(w_.bv, DType::F32)}, 0);
  if (w_.attn_norm.dtype() != DType::F32) attn_norm_f32_ = cast(w_.attn_norm, DType::F32);
  if (w_.ffn_norm.dtype() != DType::F32) ffn_norm_f32_ = cast(w_.ffn_norm, DType::F32);
  // Resolving n_rot now reports a bad rope config at construction, not at the first forward.
  const int64_t n_rot = c.rope.n_rot == 0 ? c.head_dim : c.rope.n_rot;
  if (n_rot <= 0 || n_rot > c.head_dim || n_rot % 2 != 0)
    throw_error(ErrorKind::InvalidArgument, name,
                "rope n_rot must be even and <= head_dim " + i2s(c.head_dim) + ", got " + i2s(n_rot) +
                    "; set BlockConfig::rope.n_rot for an odd head_dim");
  // The freq factors are part of the config, not of an activation: checked once here (values
  // too, when given on the host) and kept on the weights' device, so no call moves them.
  if (Tensor& f = cfg_.rope.freq_factors; f.defined()) {
    check_rope_freq_factors(f, n_rot, name);
    f = f.to(w_.device()).contiguous();
  }
}

void TransformerBlock::fuse_projections() {
  // Concatenates the group's weights by rows (on their device; quantized rows are whole
  // blocks, so packed bytes concatenate too) and points the members at row ranges of the result.
  auto fuse = [](std::vector<std::pair<Tensor*, QTensor*>> members, Fused& out) {
    const bool all_dense = std::all_of(members.begin(), members.end(), [](auto& m) { return !m.second->defined(); });
    const bool all_q = std::all_of(members.begin(), members.end(), [&](auto& m) {
      return m.second->defined() && m.second->qtype() == members.front().second->qtype();
    });
    if (all_dense) {
      std::vector<Tensor> parts;
      for (auto& m : members) parts.push_back(*m.first);
      out.dense = concat(parts, 0);
      int64_t r = 0;
      for (auto& m : members) {
        const int64_t n = m.first->shape()[0];
        *m.first = out.dense.slice(0, r, r + n);
        r += n;
      }
    } else if (all_q) {
      std::vector<Tensor> parts;
      int64_t rows = 0;
      for (auto& m : members) parts.push_back(m.second->bytes()), rows += m.second->rows();
      const QTensor& q0 = *members.front().second;
      out.q = QTensor::from_tensor(q0.qtype(), rows, q0.cols(), concat(parts, 0));
      int64_t r = 0;
      for (auto& m : members) {
        const int64_t n = m.second->rows();
        *m.second = q_rows(out.q, r, r + n);
        r += n;
      }
    }
  };
  fuse({{&w_.wq, &w_.quant.wq}, {&w_.wk, &w_.quant.wk}, {&w_.wv, &w_.quant.wv}}, qkv_);
  fuse({{&w_.w_gate, &w_.quant.w_gate}, {&w_.w_up, &w_.quant.w_up}}, gate_up_);
}

void TransformerBlock::pin_weights() const {
  if (!device().is_webgpu()) return;
  for (const Tensor* t : {&w_.attn_norm, &w_.ffn_norm, &attn_norm_f32_, &ffn_norm_f32_, &qkv_bias_, &cfg_.rope.freq_factors})
    if (t->defined()) Runtime::get().pin(*t);
  for (const Fused* f : {&qkv_, &gate_up_})
    if (f->defined()) Runtime::get().pin(f->q.defined() ? f->q.bytes() : f->dense);
  for (const ProjSlot& p : proj_slots(w_, cfg_)) Runtime::get().pin(p.q->defined() ? p.q->bytes() : *p.dense);
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
  auto norm_w = [&](const Tensor& w, const Tensor& w32) {
    return x.dtype() == DType::F32 && w32.defined() ? w32 : as_dtype(w, x.dtype());
  };
  const Tensor attn_g = norm_w(w_.attn_norm, attn_norm_f32_);
  const int64_t qd = c.n_heads * c.head_dim, kvd = c.n_kv_heads * c.head_dim;
  Tensor q, k, v;
  // The q/k/v bias (when the block has one) in x's dtype, broadcast over the rows.
  auto add_bias = [&](const Tensor& t, int64_t from, int64_t to) {
    return t + as_dtype(qkv_bias_.slice(0, from, to), t.dtype());
  };
  if (qkv_.defined() && seq == 1 && !qkv_bias_.defined() && direct_product(x, qkv_.dense, qkv_.q)) {
    // A decode step with dense weights: the fused-norm q/k/v matvec with RoPE and the append in
    // its epilogue (one dispatch on WebGPU where its conditions hold; else the two ops below).
    q = cache.rms_norm_qkv_append_rope(x, attn_g, qkv_.dense, c.norm_eps, c.n_heads, c.rope);  // (1, H, hd)
  } else if (qkv_.defined() && seq == 1 && !qkv_bias_.defined() && qkv_.q.defined() && x.dtype() == DType::F32) {
    // The same with quantized weights: the fused-norm quantized matvec stores the rotated q and
    // writes rope(k) and v into the cache as it stores its rows.
    q = cache.rms_norm_qkv_append_rope(x, attn_g, qkv_.q, c.norm_eps, c.n_heads, c.rope);  // (1, H, hd)
  } else if (qkv_.defined()) {
    // One matvec for q, k and v, then one append_rope: q rotated in place, k rotated on its way
    // into the cache, v copied (one dispatch on WebGPU). At seq 1 the three slices are
    // contiguous and the kernels read them in place; at seq > 1 their rows interleave, so q
    // (which must be disjoint from k and v) is compacted first, and k and v by the append.
    Tensor qkv = norm_project(x, attn_g, c.norm_eps, qkv_.dense, qkv_.q);  // (seq, qd + 2 kvd)
    if (qkv_bias_.defined()) qkv = add_bias(qkv, 0, qd + 2 * kvd);
    q = qkv.slice(1, 0, qd);
    if (seq > 1) q = q.contiguous();
    q = q.view({seq, c.n_heads, c.head_dim});
    k = qkv.slice(1, qd, qd + kvd).view({seq, c.n_kv_heads, c.head_dim});
    v = qkv.slice(1, qd + kvd, qd + 2 * kvd).view({seq, c.n_kv_heads, c.head_dim});
    cache.append_rope(q, k, v, c.rope);                                    // cache: (pos + seq, Hkv, hd)
  } else {
    const Tensor xn = rms_norm(x, attn_g, c.norm_eps);  // (seq, dim)
    q = project(xn, w_.wq, w_.quant.wq);
    k = project(xn, w_.wk, w_.quant.wk);
    v = project(xn, w_.wv, w_.quant.wv);
    if (qkv_bias_.defined()) q = add_bias(q, 0, qd), k = add_bias(k, qd, qd + kvd), v = add_bias(v, qd + kvd, qd + 2 * kvd);
    q = q.view({seq, c.n_heads, c.head_dim});
    k = k.view({seq, c.n_kv_heads, c.head_dim});
    v = v.view({seq, c.n_kv_heads, c.head_dim});
    rope_(q, pos, c.rope);  // in place: fresh projection outputs, owned here
    rope_(k, pos, c.rope);
    cache.append(k, v);                                                    // cache: (pos + seq, Hkv, hd)
  }
  // q (seq, H, hd)
  AttnConfig ac;
  ac.scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  ac.causal = true;
  Tensor a = attention(q, cache.view_k(), cache.view_v(), ac);            // (seq, H, hd)
  Tensor h = project_add(x, a.view({seq, c.n_heads * c.head_dim}), w_.wo, w_.quant.wo);  // (seq, dim)

  // Feed-forward sub-block (swiglu_ffn, spelled out for quantized weights).
  const Tensor ffn_g = norm_w(w_.ffn_norm, ffn_norm_f32_);
  Tensor g;  // (seq, ffn)
  if (gate_up_.defined()) {
    const Tensor gu = norm_project(h, ffn_g, c.norm_eps, gate_up_.dense, gate_up_.q);  // (seq, 2 ffn)
    Tensor gate = gu.slice(1, 0, c.ffn_dim), up = gu.slice(1, c.ffn_dim, 2 * c.ffn_dim);
    // silu(gate) * up computed while the down projection stages its input, residual added in
    // its epilogue (where the product is direct): one kernel for the rest of the block.
    if (direct_product(gate, w_.w_down, w_.quant.w_down) && h.dtype() == gate.dtype())
      return silu_mul_matmul_t(gate, up, w_.w_down, h);                                                // (seq, dim)
    // Likewise with a quantized down projection (f32 activations): silu(gate) * up computed as
    // the matvec loads x, the residual added as it stores y.
    if (w_.quant.w_down.defined() && gate.dtype() == DType::F32 && h.dtype() == DType::F32)
      return silu_mul_qmatmul_t(gate, up, w_.quant.w_down, h);                                         // (seq, dim)
    if (seq > 1) gate = gate.contiguous(), up = up.contiguous();
    g = silu_mul(gate, up);
  } else {
    const Tensor hn = rms_norm(h, ffn_g, c.norm_eps);
    g = silu_mul(project(hn, w_.w_gate, w_.quant.w_gate), project(hn, w_.w_up, w_.quant.w_up));
  }
  return project_add(h, g, w_.w_down, w_.quant.w_down);                                                // (seq, dim)
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
