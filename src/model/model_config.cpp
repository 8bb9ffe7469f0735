// ModelConfig from GGUF metadata: the `<arch>.*` keys of llama.cpp's convention, checked for
// consistency before any weight is touched.
#include <cmath>
#include <string>

#include "wgt/model.hpp"

namespace wgt {

namespace {

const char* kOp = "model_config_from_gguf";

// An integer hyper-parameter that may be stored per layer (an array): all entries must agree.
int64_t layer_uniform_int(const GgufFile& f, const std::string& key) {
  const GgufValue& v = f.at(key);
  if (v.type() != GgufType::Array) return v.as_int();
  std::vector<int64_t> xs = v.as_ints();
  if (xs.empty()) throw_error(ErrorKind::Format, kOp, key + " is an empty array");
  for (int64_t x : xs)
    if (x != xs.front())
      throw_error(ErrorKind::Unsupported, kOp, key + " differs between layers; per-layer head counts are not supported");
  return xs.front();
}

void require_positive(int64_t v, const std::string& key) {
  if (v <= 0 || v > (int64_t{1} << 31)) throw_error(ErrorKind::Format, kOp, key + " = " + std::to_string(v) + " is out of range");
}

}  // namespace

ModelConfig model_config_from_gguf(const GgufFile& f) {
  ModelConfig c;
  c.arch = f.get_string("general.architecture", "");
  if (c.arch.empty()) throw_error(ErrorKind::Format, kOp, "general.architecture is missing: not a model file?");
  // Mistral and Llama 1/2/3 share the llama graph; qwen2 adds q/k/v biases and uses the NEOX
  // (rotate-halves) RoPE on unpermuted rows, while llama.cpp's converter permutes llama's Q/K
  // rows so that the adjacent-pair rotation applies.
  if (c.arch == "llama" || c.arch == "mistral") {
    c.rope.style = RopeStyle::Normal;
  } else if (c.arch == "qwen2") {
    c.rope.style = RopeStyle::Neox;
    c.qkv_bias = true;
  } else {
    throw_error(ErrorKind::Unsupported, kOp,
                "architecture '" + c.arch + "' is not supported (supported: llama, mistral, qwen2)");
  }
  c.name = f.get_string("general.name", "");
  const std::string a = c.arch + ".";
  c.dim = f.at(a + "embedding_length").as_int();
  c.n_layers = f.at(a + "block_count").as_int();
  c.ffn_dim = layer_uniform_int(f, a + "feed_forward_length");
  c.n_heads = layer_uniform_int(f, a + "attention.head_count");
  c.n_kv_heads = f.find(a + "attention.head_count_kv") ? layer_uniform_int(f, a + "attention.head_count_kv") : c.n_heads;
  c.n_ctx_train = f.get_int(a + "context_length", 2048);
  require_positive(c.dim, a + "embedding_length");
  require_positive(c.n_layers, a + "block_count");
  require_positive(c.ffn_dim, a + "feed_forward_length");
  require_positive(c.n_heads, a + "attention.head_count");
  require_positive(c.n_kv_heads, a + "attention.head_count_kv");
  require_positive(c.n_ctx_train, a + "context_length");
  if (c.n_heads % c.n_kv_heads != 0)
    throw_error(ErrorKind::Format, kOp,
                "head_count " + std::to_string(c.n_heads) + " is not a multiple of head_count_kv " + std::to_string(c.n_kv_heads));
  c.head_dim = f.get_int(a + "attention.key_length", c.dim % c.n_heads == 0 ? c.dim / c.n_heads : 0);
  require_positive(c.head_dim, a + "attention.key_length (or embedding_length / head_count)");
  if (f.get_int(a + "attention.value_length", c.head_dim) != c.head_dim)
    throw_error(ErrorKind::Unsupported, kOp, "attention.value_length differs from key_length");
  c.norm_eps = f.get_float(a + "attention.layer_norm_rms_epsilon", 1e-5);
  if (!(std::isfinite(c.norm_eps) && c.norm_eps >= 0 && c.norm_eps < 1))
    throw_error(ErrorKind::Format, kOp, "attention.layer_norm_rms_epsilon is out of range");

  c.rope.base = f.get_float(a + "rope.freq_base", 10000.0);
  if (!(std::isfinite(c.rope.base) && c.rope.base > 1))
    throw_error(ErrorKind::Format, kOp, "rope.freq_base must be finite and > 1");
  c.rope.n_rot = f.get_int(a + "rope.dimension_count", c.head_dim);
  if (c.rope.n_rot <= 0 || c.rope.n_rot > c.head_dim || c.rope.n_rot % 2)
    throw_error(ErrorKind::Format, kOp,
                "rope.dimension_count " + std::to_string(c.rope.n_rot) + " must be even and <= head_dim " +
                    std::to_string(c.head_dim));
  // Position scaling: "linear" divides positions by the factor (freq_scale = 1 / factor);
  // Llama 3.1+ stores its per-frequency factors as the tensor rope_freqs.weight (read by the
  // loader), with no scaling type or "none".
  const std::string scaling = f.get_string(a + "rope.scaling.type", "none");
  double factor = f.get_float(a + "rope.scaling.factor", 0.0);
  if (factor == 0.0) factor = f.get_float(a + "rope.scale_linear", 0.0);  // older files
  if (scaling == "linear" || (scaling == "none" && factor > 0 && f.find(a + "rope.scale_linear"))) {
    if (!(std::isfinite(factor) && factor >= 1))
      throw_error(ErrorKind::Format, kOp, "rope.scaling.factor must be finite and >= 1 for linear scaling");
    c.rope.freq_scale = 1.0 / factor;
  } else if (scaling != "none" && scaling != "llama3") {
    throw_error(ErrorKind::Unsupported, kOp, "rope.scaling.type '" + scaling + "' is not supported (none, linear, llama3)");
  }

  const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd || embd->ne.size() < 2) throw_error(ErrorKind::Format, kOp, "token_embd.weight is missing or not 2-D");
  if (embd->ne[0] != c.dim)
    throw_error(ErrorKind::Format, kOp,
                "token_embd.weight has rows of " + std::to_string(embd->ne[0]) + ", embedding_length is " + std::to_string(c.dim));
  c.n_vocab = embd->ne[1];
  if (const GgufValue* v = f.find(a + "vocab_size"); v && v->as_int() != c.n_vocab)
    throw_error(ErrorKind::Format, kOp,
                "vocab_size " + std::to_string(v->as_int()) + " disagrees with token_embd.weight's " + std::to_string(c.n_vocab) + " rows");
  c.tied_output = f.find_tensor("output.weight") == nullptr;
  return c;
}

}  // namespace wgt
