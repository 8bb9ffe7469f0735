// Element types of wgtensor and their properties; f16/bf16 conversion helpers.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace wgt {

enum class DType : uint8_t { F32, F16, BF16, F64, I32, I64, U8, Bool, C64 };

constexpr int kNumDTypes = 9;

// Size of one element in bytes.
constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::F64: return 8;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::U8: return 1;
    case DType::Bool: return 1;
    case DType::C64: return 8;
  }
  return 0;
}
constexpr bool is_floating(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
constexpr bool is_integral(DType t) {
  return t == DType::I32 || t == DType::I64 || t == DType::U8;
}
constexpr bool is_complex(DType t) { return t == DType::C64; }

const char* dtype_name(DType t);          // "f32", "f16", ...
DType dtype_from_name(const std::string&);  // throws InvalidArgument

// Result type of a binary arithmetic op (torch-like promotion, no scalars special case).
DType promote_types(DType a, DType b);

// IEEE binary16 and bfloat16 conversions (round to nearest even; NaN preserved).
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Storage types for the 16-bit floats (distinct types so templates can tell them apart).
struct f16_t { uint16_t bits; };
struct bf16_t { uint16_t bits; };
struct c64_t { float re, im; };

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::F64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::I32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::I64; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<f16_t> { static constexpr DType value = DType::F16; };
template <> struct dtype_of<bf16_t> { static constexpr DType value = DType::BF16; };
template <> struct dtype_of<c64_t> { static constexpr DType value = DType::C64; };

}  // namespace wgt
