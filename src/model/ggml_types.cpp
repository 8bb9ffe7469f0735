// The ggml type table (public GGUF/ggml format facts). Types the library cannot compute with
// are still sized here so that a file holding them parses and its byte ranges are checked;
// asking for such a tensor gives a Format error naming the type.
#include "model/ggml_types.hpp"

#include <string>

#include "wgt/error.hpp"
#include "wgt/gguf.hpp"

namespace wgt {
namespace gguf_detail {
namespace {

// Only layouts that are simple and well established; newer exotic types are left out (a file
// with one is rejected at open with the type id in the message).
constexpr GgmlTypeSize kTypes[] = {
    {0, "f32", 1, 4},       {1, "f16", 1, 2},        {2, "q4_0", 32, 18},    {3, "q4_1", 32, 20},
    {6, "q5_0", 32, 22},    {7, "q5_1", 32, 24},     {8, "q8_0", 32, 34},    {9, "q8_1", 32, 36},
    {10, "q2_k", 256, 84},  {11, "q3_k", 256, 110},  {12, "q4_k", 256, 144}, {13, "q5_k", 256, 176},
    {14, "q6_k", 256, 210}, {15, "q8_k", 256, 292},  {24, "i8", 1, 1},       {25, "i16", 1, 2},
    {26, "i32", 1, 4},      {27, "i64", 1, 8},       {28, "f64", 1, 8},      {30, "bf16", 1, 2},
};

}  // namespace

const GgmlTypeSize* ggml_type_size(uint32_t id) {
  for (const auto& t : kTypes)
    if (t.id == id) return &t;
  return nullptr;
}

std::optional<DType> ggml_dense_dtype(uint32_t id) {
  switch (id) {
    case ggml_type::F32: return DType::F32;
    case ggml_type::F16: return DType::F16;
    case ggml_type::BF16: return DType::BF16;
    case ggml_type::I32: return DType::I32;
    case ggml_type::I64: return DType::I64;
    case ggml_type::F64: return DType::F64;
    default: return std::nullopt;
  }
}

std::optional<QType> ggml_qtype(uint32_t id) {
  for (int i = 0; i < kNumQTypes; ++i)
    if (qtype_info(static_cast<QType>(i)).ggml_type_id == id) return static_cast<QType>(i);
  return std::nullopt;
}

uint32_t ggml_id_of(DType t) {
  switch (t) {
    case DType::F32: return ggml_type::F32;
    case DType::F16: return ggml_type::F16;
    case DType::BF16: return ggml_type::BF16;
    case DType::I32: return ggml_type::I32;
    case DType::I64: return ggml_type::I64;
    case DType::F64: return ggml_type::F64;
    default:
      throw_error(ErrorKind::InvalidArgument, "GgufWriter::add_tensor",
                  std::string("GGUF has no type for dtype ") + dtype_name(t) +
                      "; cast() to f32, f16, bf16, i32, i64 or f64 first");
  }
}

}  // namespace gguf_detail

std::string ggml_type_name(uint32_t id) {
  if (const auto* t = gguf_detail::ggml_type_size(id)) return t->name;
  return "type " + std::to_string(id);
}

}  // namespace wgt
