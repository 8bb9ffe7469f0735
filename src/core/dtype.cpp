// DType names, promotion and IEEE half conversions.
#include "wgt/dtype.hpp"

#include "wgt/error.hpp"

namespace wgt {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F64: return "f64";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::U8: return "u8";
    case DType::Bool: return "bool";
    case DType::C64: return "c64";
  }
  return "?";
}

DType dtype_from_name(const std::string& s) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  if (s == "float32") return DType::F32;
  if (s == "float16") return DType::F16;
  if (s == "bfloat16") return DType::BF16;
  if (s == "float64") return DType::F64;
  if (s == "int32") return DType::I32;
  if (s == "int64") return DType::I64;
  if (s == "uint8") return DType::U8;
  if (s == "complex64") return DType::C64;
  throw_error(ErrorKind::InvalidArgument, "dtype_from_name",
              "unknown dtype '" + s + "'; use one of f32 f16 bf16 f64 i32 i64 u8 bool c64");
}

namespace {
int rank_of(DType t) {  // promotion lattice
  switch (t) {
    case DType::Bool: return 0;
    case DType::U8: return 1;
    case DType::I32: return 2;
    case DType::I64: return 3;
    case DType::BF16: return 4;
    case DType::F16: return 4;
    case DType::F32: return 6;
    case DType::F64: return 7;
    case DType::C64: return 8;
  }
  return 0;
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // f16 with bf16 has no common 16-bit type: use f32.
  if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16)) return DType::F32;
  return rank_of(a) >= rank_of(b) ? a : b;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (absx >= 0x477ff000u) {  // rounds to >= 65520 -> inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (absx < 0x38800000u) {  // subnormal or zero in f16
    // value = absx as float; f16 subnormal unit = 2^-24
    float af;
    std::memcpy(&af, &absx, 4);
    float scaled = af * 16777216.0f;  // / 2^-24, exact in f32 for this range
    // round to nearest even
    uint32_t m = static_cast<uint32_t>(scaled);
    float rem = scaled - static_cast<float>(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t exp = ((absx >> 23) - 127 + 15);
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into exponent: fine
  return static_cast<uint16_t>(sign | h);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {
      float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
      std::memcpy(&out, &v, 4);
      out |= sign;
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

}  // namespace wgt
