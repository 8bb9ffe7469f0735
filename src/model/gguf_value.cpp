// GgufValue: GGUF metadata values and their typed, checked accessors.
#include <cstring>
#include <limits>

#include "wgt/error.hpp"
#include "wgt/gguf.hpp"

namespace wgt {
namespace {

constexpr const char* kOp = "gguf";

bool is_integer(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: case GgufType::U16: case GgufType::I16:
    case GgufType::U32: case GgufType::I32: case GgufType::U64: case GgufType::I64: return true;
    default: return false;
  }
}
bool is_signed(GgufType t) {
  return t == GgufType::I8 || t == GgufType::I16 || t == GgufType::I32 || t == GgufType::I64;
}
bool is_float(GgufType t) { return t == GgufType::F32 || t == GgufType::F64; }

size_t scalar_size(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: case GgufType::Bool: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
    default: return 0;
  }
}

// Integer element i of a raw little-endian array, sign-extended into 64 bits.
uint64_t raw_int(GgufType t, const uint8_t* p) {
  switch (t) {
    case GgufType::U8: return p[0];
    case GgufType::I8: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(p[0])));
    case GgufType::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case GgufType::I16: { int16_t v; std::memcpy(&v, p, 2); return static_cast<uint64_t>(static_cast<int64_t>(v)); }
    case GgufType::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case GgufType::I32: { int32_t v; std::memcpy(&v, p, 4); return static_cast<uint64_t>(static_cast<int64_t>(v)); }
    default: { uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}
double raw_float(GgufType t, const uint8_t* p) {
  if (t == GgufType::F32) { float v; std::memcpy(&v, p, 4); return v; }
  double v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::U8: return "u8";
    case GgufType::I8: return "i8";
    case GgufType::U16: return "u16";
    case GgufType::I16: return "i16";
    case GgufType::U32: return "u32";
    case GgufType::I32: return "i32";
    case GgufType::F32: return "f32";
    case GgufType::Bool: return "bool";
    case GgufType::String: return "string";
    case GgufType::Array: return "array";
    case GgufType::U64: return "u64";
    case GgufType::I64: return "i64";
    case GgufType::F64: return "f64";
  }
  return "?";
}

GgufValue GgufValue::of_int(GgufType t, int64_t v, std::string key) {
  if (!is_integer(t))
    throw_error(ErrorKind::InvalidArgument, kOp, std::string("of_int: ") + gguf_type_name(t) + " is not an integer type");
  const int64_t lo[] = {0, -128, 0, -32768, 0, INT32_MIN}, hi[] = {255, 127, 65535, 32767, UINT32_MAX, INT32_MAX};
  const auto ti = static_cast<uint32_t>(t);
  if ((ti <= 5 && (v < lo[ti] || v > hi[ti])) || (t == GgufType::U64 && v < 0))
    throw_error(ErrorKind::InvalidArgument, kOp,
                "key '" + key + "': " + std::to_string(v) + " does not fit in " + gguf_type_name(t));
  GgufValue r;
  r.type_ = t, r.key_ = std::move(key), r.bits_ = static_cast<uint64_t>(v);
  return r;
}
GgufValue GgufValue::of_u64(uint64_t v, std::string key) {
  GgufValue r;
  r.type_ = GgufType::U64, r.key_ = std::move(key), r.bits_ = v;
  return r;
}
GgufValue GgufValue::of_float(GgufType t, double v, std::string key) {
  if (!is_float(t))
    throw_error(ErrorKind::InvalidArgument, kOp, std::string("of_float: ") + gguf_type_name(t) + " is not a float type");
  GgufValue r;
  r.type_ = t, r.key_ = std::move(key), r.f_ = t == GgufType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
  return r;
}
GgufValue GgufValue::of_bool(bool v, std::string key) {
  GgufValue r;
  r.type_ = GgufType::Bool, r.key_ = std::move(key), r.bits_ = v ? 1 : 0;
  return r;
}
GgufValue GgufValue::of_string(std::string v, std::string key) {
  GgufValue r;
  r.type_ = GgufType::String, r.key_ = std::move(key), r.s_ = std::move(v);
  return r;
}
GgufValue GgufValue::of_scalar_array(GgufType elem, std::vector<uint8_t> raw, std::string key) {
  const size_t es = scalar_size(elem);
  if (es == 0)
    throw_error(ErrorKind::InvalidArgument, kOp,
                std::string("of_scalar_array: ") + gguf_type_name(elem) + " is not a fixed-size scalar type");
  if (raw.size() % es != 0)
    throw_error(ErrorKind::InvalidArgument, kOp, "of_scalar_array: " + std::to_string(raw.size()) +
                                                     " bytes is not a whole number of " + gguf_type_name(elem));
  GgufValue r;
  r.type_ = GgufType::Array, r.elem_ = elem, r.key_ = std::move(key), r.raw_ = std::move(raw);
  return r;
}
GgufValue GgufValue::of_string_array(std::vector<std::string> v, std::string key) {
  GgufValue r;
  r.type_ = GgufType::Array, r.elem_ = GgufType::String, r.key_ = std::move(key), r.strings_ = std::move(v);
  return r;
}
GgufValue GgufValue::of_array_array(std::vector<GgufValue> v, std::string key) {
  GgufValue r;
  r.type_ = GgufType::Array, r.elem_ = GgufType::Array, r.key_ = std::move(key), r.arrays_ = std::move(v);
  return r;
}

void GgufValue::wrong(const char* wanted) const {
  throw_error(ErrorKind::Format, kOp,
              "key '" + key_ + "' holds " + str() + ", expected " + wanted + "; the file does not follow the "
                                                                            "convention for this key");
}

GgufType GgufValue::elem_type() const {
  if (type_ != GgufType::Array) wrong("an array");
  return elem_;
}

size_t GgufValue::size() const {
  if (type_ != GgufType::Array) wrong("an array");
  if (elem_ == GgufType::String) return strings_.size();
  if (elem_ == GgufType::Array) return arrays_.size();
  return raw_.size() / scalar_size(elem_);
}

int64_t GgufValue::as_int() const {
  if (!is_integer(type_)) wrong("an integer");
  if (type_ == GgufType::U64 && bits_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw_error(ErrorKind::Format, kOp, "key '" + key_ + "': u64 value " + std::to_string(bits_) + " exceeds the int64 range");
  return static_cast<int64_t>(bits_);
}

uint64_t GgufValue::as_u64() const {
  if (!is_integer(type_)) wrong("an integer");
  if (is_signed(type_) && static_cast<int64_t>(bits_) < 0)
    throw_error(ErrorKind::Format, kOp,
                "key '" + key_ + "': value " + std::to_string(static_cast<int64_t>(bits_)) + " is negative");
  return bits_;
}

double GgufValue::as_float() const {
  if (is_float(type_)) return f_;
  if (type_ == GgufType::U64) return static_cast<double>(bits_);
  if (is_integer(type_)) return static_cast<double>(static_cast<int64_t>(bits_));
  wrong("a number");
}

bool GgufValue::as_bool() const {
  if (type_ != GgufType::Bool) wrong("a bool");
  return bits_ != 0;
}

const std::string& GgufValue::as_string() const {
  if (type_ != GgufType::String) wrong("a string");
  return s_;
}

std::vector<std::string> GgufValue::as_strings() const {
  if (type_ != GgufType::Array || elem_ != GgufType::String) wrong("an array of strings");
  return strings_;
}

std::vector<float> GgufValue::as_floats() const {
  if (type_ != GgufType::Array || !(is_float(elem_) || is_integer(elem_))) wrong("an array of numbers");
  const size_t es = scalar_size(elem_), n = raw_.size() / es;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = raw_.data() + i * es;
    if (is_float(elem_)) out[i] = static_cast<float>(raw_float(elem_, p));
    else if (elem_ == GgufType::U64) out[i] = static_cast<float>(raw_int(elem_, p));
    else out[i] = static_cast<float>(static_cast<int64_t>(raw_int(elem_, p)));
  }
  return out;
}

std::vector<int64_t> GgufValue::as_ints() const {
  if (type_ != GgufType::Array || !is_integer(elem_)) wrong("an array of integers");
  const size_t es = scalar_size(elem_), n = raw_.size() / es;
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t b = raw_int(elem_, raw_.data() + i * es);
    if (elem_ == GgufType::U64 && b > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw_error(ErrorKind::Format, kOp,
                  "key '" + key_ + "'[" + std::to_string(i) + "]: u64 value " + std::to_string(b) + " exceeds the int64 range");
    out[i] = static_cast<int64_t>(b);
  }
  return out;
}

GgufValue GgufValue::element(size_t i) const {
  const size_t n = size();  // Format for non-arrays
  std::string k = key_ + "[" + std::to_string(i) + "]";
  if (i >= n)
    throw_error(ErrorKind::OutOfRange, kOp, "element " + std::to_string(i) + " of key '" + key_ + "' which has " +
                                                std::to_string(n) + " elements");
  if (elem_ == GgufType::String) return of_string(strings_[i], std::move(k));
  if (elem_ == GgufType::Array) {
    GgufValue v = arrays_[i];
    v.key_ = std::move(k);
    return v;
  }
  const uint8_t* p = raw_.data() + i * scalar_size(elem_);
  if (is_float(elem_)) return of_float(elem_, raw_float(elem_, p), std::move(k));
  if (elem_ == GgufType::Bool) return of_bool(p[0] != 0, std::move(k));
  GgufValue v;
  v.type_ = elem_, v.key_ = std::move(k), v.bits_ = raw_int(elem_, p);
  return v;
}

const std::vector<uint8_t>& GgufValue::raw() const {
  if (type_ != GgufType::Array || scalar_size(elem_) == 0) wrong("an array of fixed-size scalars");
  return raw_;
}

std::string GgufValue::str() const {
  switch (type_) {
    case GgufType::Array: {
      std::string s = std::string("array<") + gguf_type_name(elem_) + ">[";
      const size_t n = elem_ == GgufType::String ? strings_.size()
                       : elem_ == GgufType::Array ? arrays_.size()
                       : scalar_size(elem_) ? raw_.size() / scalar_size(elem_) : 0;
      return s + std::to_string(n) + "]";
    }
    case GgufType::String: {
      std::string s = s_.size() > 40 ? s_.substr(0, 40) + "..." : s_;
      return "string \"" + s + "\"";
    }
    case GgufType::Bool: return bits_ ? "bool true" : "bool false";
    case GgufType::F32: case GgufType::F64: return std::string(gguf_type_name(type_)) + " " + std::to_string(f_);
    case GgufType::U64: return "u64 " + std::to_string(bits_);
    default: return std::string(gguf_type_name(type_)) + " " + std::to_string(static_cast<int64_t>(bits_));
  }
}

}  // namespace wgt
