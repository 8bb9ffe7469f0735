// Synthetic models: named real shapes, random weights, a SentencePiece-style vocabulary.
#include "wgt/synthetic.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "wgt/gguf.hpp"
#include "wgt/nn.hpp"
#include "wgt/ops.hpp"
#include "wgt/quant.hpp"

namespace wgt {

const std::vector<SyntheticShape>& synthetic_shapes() {
  // Published hyper-parameters of each model family (vocab, widths, heads, context, RoPE base).
  static const std::vector<SyntheticShape> shapes = {
      {"tiny", "llama", 128, 4, 4, 2, 384, 512, 512, 10000.0, false},
      {"tiny-llama3", "llama", 128, 2, 4, 2, 256, 512, 512, 500000.0, false, 8.0},
      {"tiny-qwen2", "qwen2", 128, 2, 4, 2, 256, 512, 512, 1000000.0, true},
      {"llama3.2-1b", "llama", 2048, 16, 32, 8, 8192, 128256, 8192, 500000.0, true, 32.0},
      {"llama2-7b", "llama", 4096, 32, 32, 32, 11008, 32000, 4096, 10000.0, false},
      {"llama3-8b", "llama", 4096, 32, 32, 8, 14336, 128256, 8192, 500000.0, false},
      {"qwen2-0.5b", "qwen2", 896, 24, 14, 2, 4864, 151936, 32768, 1000000.0, true},
  };
  return shapes;
}

const SyntheticShape& synthetic_shape(const std::string& name) {
  std::string names;
  for (const SyntheticShape& s : synthetic_shapes()) {
    if (s.name == name) return s;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  throw_error(ErrorKind::InvalidArgument, "synthetic_shape", "unknown shape '" + name + "'; known: " + names);
}

namespace {

// SentencePiece-style vocabulary: control tokens, byte fallback tokens, lower-case letters and
// frequent short words as pieces, then numbered filler pieces up to n_vocab.
void write_vocab(GgufWriter& w, int64_t n_vocab) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    tokens.push_back(buf);
    types.push_back(6);
  }
  const std::string sp = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  const char* words[] = {"the", "of", "and", "to", "in", "is", "that", "it", "was", "for", "on", "are", "with", "as",
                         "be", "at", "this", "have", "from", "or", "by", "one", "had", "not", "but", "what", "all",
                         "were", "when", "we", "there", "can", "an", "your", "which", "their", "said", "if", "do"};
  tokens.push_back(sp);
  types.push_back(1);
  for (char ch = 'a'; ch <= 'z'; ++ch) tokens.push_back(std::string(1, ch)), types.push_back(1);
  for (char ch = 'a'; ch <= 'z'; ++ch) tokens.push_back(sp + std::string(1, ch)), types.push_back(1);
  for (const char* wd : words) tokens.push_back(sp + wd), types.push_back(1);
  for (int64_t i = static_cast<int64_t>(tokens.size()); i < n_vocab; ++i)
    tokens.push_back(sp + "w" + std::to_string(i)), types.push_back(1);
  tokens.resize(static_cast<size_t>(n_vocab));
  types.resize(static_cast<size_t>(n_vocab));
  std::vector<float> scores(tokens.size(), 0.0f);
  for (size_t i = 259; i < scores.size(); ++i) scores[i] = -static_cast<float>(i - 259) * 0.01f - (tokens[i].size() < 4 ? 0.0f : 1.0f);
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_strings("tokenizer.ggml.tokens", tokens);
  w.set_f32s("tokenizer.ggml.scores", scores);
  w.set_i32s("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
}

}  // namespace

uint64_t write_synthetic_model(const std::string& path, const SyntheticShape& s, const std::string& type, uint64_t seed,
                               const std::function<void(const std::string&)>& status) {
  const char* name = "write_synthetic_model";
  const bool dense = type == "f32" || type == "f16";
  QType qt = QType::Q8_0;
  if (!dense) qt = qtype_from_name(type);  // InvalidArgument for unknown names
  const int64_t hd = s.dim / s.n_heads, qd = s.n_heads * hd, kvd = s.n_kv_heads * hd;
  if (s.dim % s.n_heads || s.n_heads % s.n_kv_heads)
    throw_error(ErrorKind::InvalidArgument, name, "inconsistent shape " + s.name);
  const bool low_bit = !dense && qt != QType::Q8_0;
  GgufWriter w;
  const std::string a = s.arch + ".";
  w.set_string("general.architecture", s.arch);
  w.set_string("general.name", "synthetic " + s.name + " " + type + " (random weights)");
  w.set_u32(a + "context_length", static_cast<uint32_t>(s.n_ctx));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(s.dim));
  w.set_u32(a + "block_count", static_cast<uint32_t>(s.n_layers));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(s.ffn_dim));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(s.n_heads));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_kv_heads));
  w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(hd));
  w.set_f32(a + "rope.freq_base", static_cast<float>(s.rope_base));
  w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32(a + "vocab_size", static_cast<uint32_t>(s.n_vocab));
  write_vocab(w, s.n_vocab);

  uint64_t next_seed = seed * 1000003;
  // One random matrix per role (generated in f32, then converted or quantized once).
  std::map<std::string, std::pair<Tensor, QTensor>> cache;
  auto matrix = [&](const std::string& role, int64_t rows, int64_t cols, bool as_output) {
    auto it = cache.find(role);
    if (it == cache.end()) {
      if (status) status("generating " + role + " [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
      Tensor f = rand_normal({rows, cols}, next_seed++, 0.0, 1.0 / std::sqrt(static_cast<double>(cols)));
      std::pair<Tensor, QTensor> v;
      if (dense) v.first = type == "f16" ? cast(f, DType::F16) : f;
      // llama.cpp's choice for the output of the 4-6 bit types: Q6_K, or Q8_0 where rows are
      // not whole 256-element blocks.
      else v.second = quantize(f, as_output && low_bit ? (cols % 256 == 0 ? QType::Q6_K : QType::Q8_0) : qt);
      it = cache.emplace(role, std::move(v)).first;
    }
    return it->second;
  };
  auto add = [&](const std::string& tname, const std::pair<Tensor, QTensor>& m) {
    if (m.second.defined()) w.add_tensor(tname, m.second);
    else w.add_tensor(tname, m.first);
  };
  auto norm = [&](int64_t n) { return rand_uniform({n}, next_seed++, 0.8, 1.2); };
  add("token_embd.weight", matrix("token_embd", s.n_vocab, s.dim, false));
  const Tensor attn_norm = norm(s.dim), ffn_norm = norm(s.dim);
  const Tensor bq = rand_normal({qd}, next_seed++, 0.0, 0.1), bk = rand_normal({kvd}, next_seed++, 0.0, 0.1),
               bv = rand_normal({kvd}, next_seed++, 0.0, 0.1);
  for (int64_t l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    w.add_tensor(p + "attn_norm.weight", attn_norm);
    add(p + "attn_q.weight", matrix("attn_q", qd, s.dim, false));
    add(p + "attn_k.weight", matrix("attn_k", kvd, s.dim, false));
    add(p + "attn_v.weight", matrix("attn_v", kvd, s.dim, false));
    if (s.arch == "qwen2") {
      w.add_tensor(p + "attn_q.bias", bq);
      w.add_tensor(p + "attn_k.bias", bk);
      w.add_tensor(p + "attn_v.bias", bv);
    }
    add(p + "attn_output.weight", matrix("attn_output", s.dim, qd, false));
    w.add_tensor(p + "ffn_norm.weight", ffn_norm);
    add(p + "ffn_gate.weight", matrix("ffn_gate", s.ffn_dim, s.dim, false));
    add(p + "ffn_up.weight", matrix("ffn_up", s.ffn_dim, s.dim, false));
    add(p + "ffn_down.weight", matrix("ffn_down", s.dim, s.ffn_dim, false));
  }
  w.add_tensor("output_norm.weight", norm(s.dim));
  if (s.llama3_rope_scale > 0) {
    // Llama 3.1/3.2's published scaling: low/high frequency factors 1 and 4, original context 8192.
    const std::vector<float> f = llama3_rope_factors(s.llama3_rope_scale, 1.0, 4.0, 8192, s.rope_base, hd);
    w.add_tensor("rope_freqs.weight", Tensor::from_vector<float>(f, {static_cast<int64_t>(f.size())}));
  }
  if (!s.tied) add("output.weight", matrix("output", s.n_vocab, s.dim, true));
  if (status) status("writing " + path);
  w.write(path);
  return std::filesystem::file_size(path);
}

}  // namespace wgt
