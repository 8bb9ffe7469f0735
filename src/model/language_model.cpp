// LanguageModel: GGUF weights -> resident TransformerBlocks, and the forward pass from token
// ids to logits (embedding lookup, the block stack, final RMSNorm, output projection).
#include <algorithm>
#include <string>

#include "wgt/model.hpp"
#include "wgt/runtime.hpp"

namespace wgt {

namespace {

const char* kLoad = "LanguageModel::load";

bool is_dense_type(uint32_t ggml_type) { return ggml_type == 0 || ggml_type == 1 || ggml_type == 30; }  // F32 F16 BF16

// One projection or table as stored: dense (F32/F16; BF16 widened to F32, which every backend
// computes with) or block-quantized. Exactly one of the two is defined.
struct Weight {
  Tensor dense;
  QTensor q;
};

// Reads weights from the file onto the model's device, counting bytes for the progress callback.
class WeightReader {
 public:
  WeightReader(const GgufFile& f, const ModelOptions& o) : f_(f), opt_(o) {
    for (const GgufTensorInfo& t : f.tensors()) total_ += t.nbytes;
  }

  const GgufTensorInfo& info(const std::string& name) const {
    const GgufTensorInfo* t = f_.find_tensor(name);
    if (!t) throw_error(ErrorKind::Format, kLoad, "tensor " + name + " is missing");
    return *t;
  }
  bool has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }

  // A dense tensor of exactly `shape` (row-major: GGUF's ne reversed).
  Tensor dense(const std::string& name, const Shape& shape) {
    const GgufTensorInfo& t = info(name);
    if (!is_dense_type(t.ggml_type))
      throw_error(ErrorKind::Format, kLoad, name + " must be F32, F16 or BF16 (ggml type " + std::to_string(t.ggml_type) + ")");
    Tensor x = f_.tensor(name);
    check_shape(name, x.shape(), shape);
    if (x.dtype() == DType::BF16) x = cast(x, DType::F32);
    return done(t, x.to(opt_.device));
  }

  // A [rows, cols] matrix, dense or quantized as stored.
  Weight matrix(const std::string& name, int64_t rows, int64_t cols) {
    const GgufTensorInfo& t = info(name);
    Weight w;
    if (is_dense_type(t.ggml_type)) {
      w.dense = dense(name, {rows, cols});
      return w;
    }
    w.q = f_.qtensor(name);  // Format error naming the type for formats the library lacks
    check_shape(name, w.q.shape(), {rows, cols});
    w.q = w.q.to(opt_.device);
    done(t, Tensor());
    return w;
  }

  uint64_t total() const { return total_; }

 private:
  static void check_shape(const std::string& name, const Shape& got, const Shape& want) {
    if (got != want)
      throw_error(ErrorKind::Format, kLoad, name + " has shape " + shape_str(got) + ", the configuration needs " + shape_str(want));
  }
  Tensor done(const GgufTensorInfo& t, Tensor x) {
    done_ += t.nbytes;
    if (opt_.progress) opt_.progress(std::min(done_, total_), total_);
    return x;
  }

  const GgufFile& f_;
  const ModelOptions& opt_;
  uint64_t done_ = 0, total_ = 0;
};

void set_projection(const Weight& w, Tensor& dense, QTensor& q) {
  dense = w.dense;
  q = w.q;
}

// TransformerBlock wants its dense projections in one dtype; files may mix F16 and F32.
void unify_dense_dtype(BlockWeights& w) {
  std::vector<Tensor*> ts = {&w.wq, &w.wk, &w.wv, &w.wo, &w.w_gate, &w.w_up, &w.w_down};
  bool mixed = false;
  const Tensor* first = nullptr;
  for (Tensor* t : ts)
    if (t->defined()) {
      if (first && first->dtype() != t->dtype()) mixed = true;
      first = first ? first : t;
    }
  if (!mixed) return;
  for (Tensor* t : ts)
    if (t->defined() && t->dtype() != DType::F32) *t = cast(*t, DType::F32);
}

uint64_t weight_bytes_of(const Weight& w) { return w.q.defined() ? w.q.nbytes() : w.dense.defined() ? w.dense.nbytes() : 0; }

}  // namespace

LanguageModel LanguageModel::load(const std::string& path, const ModelOptions& options) {
  return load(GgufFile::open(path), options);
}

LanguageModel LanguageModel::load(const GgufFile& f, const ModelOptions& options) {
  // A model on the CPU is built and run there (KeepHostOpsOnCpu): never its ops offloaded one
  // at a time with their weights uploaded for each.
  const KeepHostOpsOnCpu on_cpu(options.device.is_cpu());
  LanguageModel m;
  m.cfg_ = model_config_from_gguf(f);
  const ModelConfig& c = m.cfg_;
  m.device_ = options.device;
  if (options.cache_dtype != DType::F32 && options.cache_dtype != DType::F16)
    throw_error(ErrorKind::DTypeMismatch, kLoad, "the KV cache must be f32 or f16");
  if (options.n_ctx < 0) throw_error(ErrorKind::InvalidArgument, kLoad, "n_ctx must be >= 0");
  m.n_ctx_ = options.n_ctx > 0 ? options.n_ctx : std::min<int64_t>(c.n_ctx_train, 4096);
  WeightReader rd(f, options);
  Weight embd = rd.matrix("token_embd.weight", c.n_vocab, c.dim);
  m.tok_embd_ = embd.dense, m.tok_embd_q_ = embd.q;
  m.weight_bytes_ += weight_bytes_of(embd);

  BlockConfig bc;
  bc.dim = c.dim;
  bc.n_heads = c.n_heads;
  bc.n_kv_heads = c.n_kv_heads;
  bc.head_dim = c.head_dim;
  bc.ffn_dim = c.ffn_dim;
  bc.norm_eps = c.norm_eps;
  bc.rope = c.rope;
  // Llama 3.1+ RoPE scaling: per-frequency factors (theta_i / f_i), stored by the converter.
  if (rd.has("rope_freqs.weight")) bc.rope.freq_factors = cast(rd.dense("rope_freqs.weight", {c.rope.n_rot / 2}), DType::F32);
  const int64_t qd = c.n_heads * c.head_dim, kvd = c.n_kv_heads * c.head_dim;
  std::vector<TransformerBlock> blocks;
  blocks.reserve(static_cast<size_t>(c.n_layers));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    BlockWeights w;
    w.attn_norm = rd.dense(p + "attn_norm.weight", {c.dim});
    w.ffn_norm = rd.dense(p + "ffn_norm.weight", {c.dim});
    struct Proj {
      const char* name;
      Tensor* dense;
      QTensor* q;
      int64_t rows, cols;
    } projs[] = {{"attn_q", &w.wq, &w.quant.wq, qd, c.dim},          {"attn_k", &w.wk, &w.quant.wk, kvd, c.dim},
                 {"attn_v", &w.wv, &w.quant.wv, kvd, c.dim},         {"attn_output", &w.wo, &w.quant.wo, c.dim, qd},
                 {"ffn_gate", &w.w_gate, &w.quant.w_gate, c.ffn_dim, c.dim},
                 {"ffn_up", &w.w_up, &w.quant.w_up, c.ffn_dim, c.dim},
                 {"ffn_down", &w.w_down, &w.quant.w_down, c.dim, c.ffn_dim}};
    for (const Proj& pr : projs) {
      Weight wt = rd.matrix(p + pr.name + ".weight", pr.rows, pr.cols);
      m.weight_bytes_ += weight_bytes_of(wt);
      set_projection(wt, *pr.dense, *pr.q);
    }
    if (c.qkv_bias) {
      w.bq = rd.dense(p + "attn_q.bias", {qd});
      w.bk = rd.dense(p + "attn_k.bias", {kvd});
      w.bv = rd.dense(p + "attn_v.bias", {kvd});
    }
    unify_dense_dtype(w);
    blocks.emplace_back(bc, std::move(w));
    blocks.back().pin_weights();
  }
  m.output_norm_ = cast(rd.dense("output_norm.weight", {c.dim}), DType::F32);
  if (c.tied_output) {
    m.output_ = m.tok_embd_, m.output_q_ = m.tok_embd_q_;
  } else {
    Weight out = rd.matrix("output.weight", c.n_vocab, c.dim);
    m.output_ = out.dense, m.output_q_ = out.q;
    m.weight_bytes_ += weight_bytes_of(out);
  }
  if (m.device_.is_webgpu()) {
    Runtime& rt = Runtime::get();
    for (const Tensor* t : {&m.tok_embd_, &m.output_, &m.output_norm_})
      if (t->defined()) rt.pin(*t);
    for (const QTensor* q : {&m.tok_embd_q_, &m.output_q_})
      if (q->defined()) rt.pin(q->bytes());
  }
  m.stack_ = std::make_unique<BlockStack>(std::move(blocks), m.n_ctx_, options.cache_dtype);
  return m;
}

void LanguageModel::reset() { stack_->reset(); }

Tensor LanguageModel::forward(const std::vector<int32_t>& tokens, bool all_logits) {
  const char* name = "LanguageModel::forward";
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) throw_error(ErrorKind::InvalidArgument, name, "no tokens");
  for (int32_t t : tokens)
    if (t < 0 || t >= cfg_.n_vocab)
      throw_error(ErrorKind::OutOfRange, name, "token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                                                   std::to_string(cfg_.n_vocab) + ")");
  if (pos() + n > n_ctx_)
    throw_error(ErrorKind::OutOfRange, name,
                std::to_string(pos()) + " tokens in the context + " + std::to_string(n) + " new exceed its length " +
                    std::to_string(n_ctx_) + " (raise --ctx / ModelOptions::n_ctx, or reset())");
  const KeepHostOpsOnCpu on_cpu(device_.is_cpu());
  const Tensor ids = Tensor::from_vector<int32_t>(tokens, {n}).to(device_);
  Tensor x = tok_embd_q_.defined() ? get_rows(tok_embd_q_, ids) : index_select(tok_embd_, 0, ids);
  if (x.dtype() != DType::F32) x = cast(x, DType::F32);
  Tensor h = stack_->forward(x);
  if (!all_logits && n > 1) h = h.slice(0, n - 1, n);
  // The final norm fused into the output projection where the backend can.
  Tensor logits = output_q_.defined() ? rms_norm_qmatmul_t(h, output_norm_, output_q_, cfg_.norm_eps)
                                      : rms_norm_matmul_t(h, output_norm_, output_, cfg_.norm_eps);
  if (logits.dtype() != DType::F32) logits = cast(logits, DType::F32);
  return logits.cpu();
}

}  // namespace wgt
