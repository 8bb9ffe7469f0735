// Sizes of ggml tensor types, as GGUF tensor infos name them: what the reader needs to check
// a tensor's byte range even for types the library cannot compute with.
#pragma once
#include <cstdint>
#include <optional>

#include "wgt/dtype.hpp"
#include "wgt/quant.hpp"

namespace wgt::gguf_detail {

struct GgmlTypeSize {
  uint32_t id;
  const char* name;
  uint32_t block_elems;  // elements per block (1 for plain element types)
  uint32_t block_bytes;  // bytes per block
};

// nullptr for ids whose layout is not known here (the reader rejects such files).
const GgmlTypeSize* ggml_type_size(uint32_t id);
// The dense dtype / block format the library computes with for a type id, if any.
std::optional<DType> ggml_dense_dtype(uint32_t id);
std::optional<QType> ggml_qtype(uint32_t id);
uint32_t ggml_id_of(DType t);  // throws InvalidArgument for dtypes GGUF cannot store

}  // namespace wgt::gguf_detail
