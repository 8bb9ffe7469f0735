// Language models from GGUF files: the architecture read from the file's metadata, weights
// resident (and pinned) on the chosen device, the layers run as TransformerBlocks with one
// preallocated KV cache each. Conventions and supported architectures: docs/model.md.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wgt/gguf.hpp"
#include "wgt/nn.hpp"
#include "wgt/tokenizer.hpp"

namespace wgt {

// Hyper-parameters of a decoder-only model, as read from GGUF metadata (`<arch>.` keys).
struct ModelConfig {
  std::string arch;          // general.architecture: "llama" (also Mistral-style GQA) or "qwen2"
  std::string name;          // general.name, if any
  int64_t n_vocab = 0;
  int64_t dim = 0;           // embedding_length
  int64_t n_layers = 0;      // block_count
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t ffn_dim = 0;       // feed_forward_length
  int64_t n_ctx_train = 0;   // context_length
  double norm_eps = 1e-5;    // attention.layer_norm_rms_epsilon
  RopeConfig rope;           // style from the architecture, base/scaling/dimension from metadata
  bool tied_output = false;  // no output.weight: the logits use token_embd
  bool qkv_bias = false;     // qwen2: Q/K/V projections carry biases
};

// Reads and checks the configuration (Format errors name the key; Unsupported for an
// architecture or RoPE scaling this runtime does not implement).
ModelConfig model_config_from_gguf(const GgufFile& f);

// The tokenizer stored in the file's tokenizer.ggml.* keys (Format errors name the key;
// Unsupported for a tokenizer model other than "llama" (SentencePiece) or "gpt2" (BPE)).
Tokenizer tokenizer_from_gguf(const GgufFile& f);

struct ModelOptions {
  Device device = Device::cpu();
  int64_t n_ctx = 0;                 // KV-cache length; 0 = min(context_length, 4096)
  DType cache_dtype = DType::F32;    // f32 or f16
  // Called while the weights load (done and total bytes), e.g. for a progress bar.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

class LanguageModel {
 public:
  // Loads every weight to options.device (pinned there) and preallocates the KV caches.
  // The GgufFile's mapping is kept alive by the host tensors that view it.
  static LanguageModel load(const GgufFile& file, const ModelOptions& options = {});
  static LanguageModel load(const std::string& path, const ModelOptions& options = {});

  // Runs `tokens` at positions pos() .. pos() + n - 1 (appending to the KV caches) and returns
  // f32 host logits: [n, n_vocab] when all_logits, else [1, n_vocab] for the last token.
  // OutOfRange (nothing run) when a token id is not in [0, n_vocab) or the context is full.
  Tensor forward(const std::vector<int32_t>& tokens, bool all_logits = false);
  void reset();  // empties the KV caches (the weights stay)
  int64_t pos() const { return stack_->pos(); }
  int64_t n_ctx() const { return n_ctx_; }
  const ModelConfig& config() const { return cfg_; }
  Device device() const { return device_; }
  uint64_t weight_bytes() const { return weight_bytes_; }  // bytes of every weight as loaded

 private:
  LanguageModel() = default;
  ModelConfig cfg_;
  Device device_ = Device::cpu();
  int64_t n_ctx_ = 0;
  uint64_t weight_bytes_ = 0;
  Tensor tok_embd_, output_norm_, output_;  // dense forms (undefined when quantized)
  QTensor tok_embd_q_, output_q_;
  std::unique_ptr<BlockStack> stack_;
};

}  // namespace wgt
