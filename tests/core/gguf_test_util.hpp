// Helpers of the GGUF tests: a byte builder for hand-made (often hostile) files, an expectation
// on the kind of a wgt::Error, and a small writer-made model.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "wgt/gguf.hpp"
#include "wgt/ops.hpp"

namespace wgt::test {

struct GgufBytes {
  std::vector<uint8_t> v;
  GgufBytes& raw(const void* p, size_t n) {
    v.insert(v.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    return *this;
  }
  GgufBytes& u8(uint8_t x) { return raw(&x, 1); }
  GgufBytes& u32(uint32_t x) { return raw(&x, 4); }
  GgufBytes& u64(uint64_t x) { return raw(&x, 8); }
  GgufBytes& str(const std::string& s) { return u64(s.size()).raw(s.data(), s.size()); }
  GgufBytes& zeros(size_t n) {
    v.resize(v.size() + n, 0);
    return *this;
  }
  GgufBytes& pad_to(size_t align) { return zeros((align - v.size() % align) % align); }
  // magic, version, tensor count, kv count
  static GgufBytes header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    GgufBytes b;
    b.raw("GGUF", 4).u32(version).u64(n_tensors).u64(n_kv);
    return b;
  }
  // one tensor info
  GgufBytes& tensor(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
};

// Runs f and expects a wgt::Error of `kind` whose text contains `part`.
inline void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& part = "") {
  try {
    f();
    ADD_FAILURE() << "expected a " << error_kind_name(kind) << " error containing '" << part << "', got success";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
  }
}

inline GgufFile parse_bytes(const std::vector<uint8_t>& b) { return GgufFile::from_memory(b, "test.gguf"); }

// A small model-like file: metadata of several types, dense and quantized tensors, data at the end.
inline GgufWriter small_model_writer() {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "a", "bc"});
  w.set_f32s("tokenizer.ggml.scores", {0.f, -1.f, -2.5f, 3.f});
  w.set_i32s("tokenizer.ggml.token_type", {2, 3, 1, 1});
  std::vector<float> x(64 * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.25f - 1.f;
  const Tensor t = Tensor::from_vector(x, {2, 64});
  w.add_tensor("norm.weight", Tensor::from_vector(std::vector<float>{1.f, 2.f, 3.f}, {3}));
  w.add_tensor("w.f16", cast(t, DType::F16));
  w.add_tensor("w.q8_0", quantize(t, QType::Q8_0));
  w.add_tensor("w.q4_0", quantize(t, QType::Q4_0));
  return w;
}

}  // namespace wgt::test
