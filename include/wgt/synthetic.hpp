// Models of real shapes with random weights, written through the GGUF writer: benchmarks and
// the built-in default model need no downloaded weights.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wgt {

struct SyntheticShape {
  std::string name;  // "llama2-7b", ...
  std::string arch;  // "llama" or "qwen2"
  int64_t dim, n_layers, n_heads, n_kv_heads, ffn_dim, n_vocab, n_ctx;
  double rope_base;
  bool tied;
  double llama3_rope_scale = 0;  // > 0: Llama 3.1+ RoPE factors (rope_freqs.weight) with this factor
};

const std::vector<SyntheticShape>& synthetic_shapes();  // every named shape
const SyntheticShape& synthetic_shape(const std::string& name);  // InvalidArgument listing the names

// Writes a GGUF model of `shape` with weights of `type` ("f32", "f16", "q8_0", "q4_0", "q4_1",
// "q5_0", "q5_1", "q4_k", "q5_k", "q6_k"; norms stay f32; the output matrix is q6_k for the 4-6 bit types, as
// llama.cpp's quantizer does, or q8_0 where its rows are not whole 256-element blocks). Weights are N(0, 1/fan_in) and, to keep generation fast, one
// random matrix per distinct role is written for every layer. The vocabulary is
// SentencePiece-style: <unk> <s> </s>, the 256 byte tokens, then pieces. Returns the bytes written.
uint64_t write_synthetic_model(const std::string& path, const SyntheticShape& shape, const std::string& type,
                               uint64_t seed = 1, const std::function<void(const std::string&)>& status = {});

}  // namespace wgt
