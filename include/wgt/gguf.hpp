// GGUF model files (versions 2 and 3): a reader that maps the file and hands out tensors
// without copying them, and a writer (tests, synthetic benchmark models, the default model).
//
// The reader trusts nothing in the file: every count, length, offset and size is checked
// against the bytes that are really there before anything is allocated or read, so a corrupt,
// truncated or hostile file gives wgt::Error{Format} (or {IO} when the file cannot be opened
// or mapped) naming the file and what is wrong, never a crash or a huge allocation.
// docs/model.md ("GGUF") lists what is supported.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "wgt/quant.hpp"
#include "wgt/tensor.hpp"

namespace wgt {

// Metadata value types (GGUF's ids).
enum class GgufType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12
};
const char* gguf_type_name(GgufType t);  // "u32", "string", ...; "?" for ids outside the enum

// ggml tensor type ids the library reads and writes.
namespace ggml_type {
constexpr uint32_t F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q4_K = 12, Q5_K = 13, Q6_K = 14,
                   I32 = 26, I64 = 27, F64 = 28, BF16 = 30;
}
// Name of a ggml tensor type id ("f16", "q4_k", "q2_k", ...); "type <id>" when unknown.
std::string ggml_type_name(uint32_t ggml_type);

// A metadata value: a scalar, a string or an array (of scalars, strings or arrays).
class GgufValue {
 public:
  GgufValue() = default;
  // Scalars; `key` only names the value in error messages.
  static GgufValue of_int(GgufType t, int64_t v, std::string key = {});  // any integer type
  static GgufValue of_u64(uint64_t v, std::string key = {});
  static GgufValue of_float(GgufType t, double v, std::string key = {});  // F32 or F64
  static GgufValue of_bool(bool v, std::string key = {});
  static GgufValue of_string(std::string v, std::string key = {});
  // Arrays: of fixed-size scalars (raw little-endian elements, n * size of elem), of strings,
  // of arrays.
  static GgufValue of_scalar_array(GgufType elem, std::vector<uint8_t> raw, std::string key = {});
  static GgufValue of_string_array(std::vector<std::string> v, std::string key = {});
  static GgufValue of_array_array(std::vector<GgufValue> v, std::string key = {});

  GgufType type() const { return type_; }
  GgufType elem_type() const;  // arrays only (Format otherwise)
  size_t size() const;         // array length (Format for non-arrays)
  const std::string& key() const { return key_; }

  // Typed access; each throws Error{Format} naming the key when the type does not fit.
  int64_t as_int() const;      // any integer type, range-checked (u64 > INT64_MAX -> Format)
  uint64_t as_u64() const;     // any non-negative integer
  double as_float() const;     // F32/F64 and integers
  bool as_bool() const;
  const std::string& as_string() const;
  std::vector<std::string> as_strings() const;  // array of strings
  std::vector<float> as_floats() const;         // array of floats or integers
  std::vector<int64_t> as_ints() const;         // array of integers, range-checked
  GgufValue element(size_t i) const;            // one element of an array (OutOfRange past the end)
  const std::vector<uint8_t>& raw() const;      // the raw elements of a scalar array

  std::string str() const;  // short description for messages and tools: "u32 4096", "array<string>[800]"

 private:
  [[noreturn]] void wrong(const char* wanted) const;
  GgufType type_ = GgufType::U8;
  GgufType elem_ = GgufType::U8;
  std::string key_;
  uint64_t bits_ = 0;  // integer scalars (two's complement for signed), bool
  double f_ = 0;       // float scalars
  std::string s_;
  std::vector<uint8_t> raw_;            // scalar arrays
  std::vector<std::string> strings_;    // string arrays
  std::vector<GgufValue> arrays_;       // arrays of arrays
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // GGUF order, ne[0] fastest (columns)
  uint32_t ggml_type = 0;
  uint64_t offset = 0;      // absolute in the file
  uint64_t nbytes = 0;
};

class GgufFile {
 public:
  // Maps the file (MAP_PRIVATE, read+write: a write through a tensor is copy-on-write and
  // never reaches the file). Error{IO} when it cannot be opened, stat'ed or mapped, Error{Format}
  // for bad contents; the message names the file and the key, tensor or offset at fault.
  static GgufFile open(const std::string& path);
  // The same parser on a buffer (tests, fuzzing, embedded models). `name` is used in messages.
  static GgufFile from_memory(std::vector<uint8_t> bytes, std::string name = "<memory>");

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const;

  const std::vector<std::string>& keys() const { return keys_; }  // in file order
  const GgufValue* find(const std::string& key) const;          // nullptr if absent
  const GgufValue& at(const std::string& key) const;            // Error{Format} "missing key ..."
  int64_t get_int(const std::string& key, int64_t dflt) const;
  double get_float(const std::string& key, double dflt) const;
  std::string get_string(const std::string& key, const std::string& dflt) const;
  bool get_bool(const std::string& key, bool dflt) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }  // in file order
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  const GgufTensorInfo& tensor_info(const std::string& name) const;  // Error{Format} when absent
  const uint8_t* data(const GgufTensorInfo& t) const;                // into the mapping

  // Dense tensor (F32/F16/BF16, also I32/I64/F64) with shape = reversed ne, viewing the mapping
  // without a copy (the tensor keeps the mapping alive), or a copy when the bytes are not
  // aligned for the element type. Error{Format} naming the tensor and type for other types.
  Tensor tensor(const std::string& name) const;
  // Quantized 2-D tensor (Q8_0/Q4_0/Q4_1/Q5_0/Q5_1/Q4_K/Q5_K/Q6_K) as QTensor [ne1 rows, ne0 cols],
  // zero-copy like tensor(). A 1-D tensor is one row; trailing ne of 1 are ignored.
  // Error{Format} for other types or more than 2 dims.
  QTensor qtensor(const std::string& name) const;

 private:
  struct Mapping;
  static GgufFile parse(std::shared_ptr<Mapping> m, std::string name);
  std::shared_ptr<Mapping> map_;
  std::string name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::string> keys_;
  std::map<std::string, GgufValue> values_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

class GgufWriter {
 public:
  // Metadata; setting a key again replaces its value (keeping its first position).
  void set(const std::string& key, GgufValue v);
  void set_u8(const std::string& key, uint8_t v);
  void set_i8(const std::string& key, int8_t v);
  void set_u16(const std::string& key, uint16_t v);
  void set_i16(const std::string& key, int16_t v);
  void set_u32(const std::string& key, uint32_t v);
  void set_i32(const std::string& key, int32_t v);
  void set_u64(const std::string& key, uint64_t v);
  void set_i64(const std::string& key, int64_t v);
  void set_f32(const std::string& key, float v);
  void set_f64(const std::string& key, double v);
  void set_bool(const std::string& key, bool v);
  void set_string(const std::string& key, const std::string& v);
  void set_strings(const std::string& key, const std::vector<std::string>& v);
  void set_f32s(const std::string& key, const std::vector<float>& v);
  void set_i32s(const std::string& key, const std::vector<int32_t>& v);
  void set_i64s(const std::string& key, const std::vector<int64_t>& v);
  void set_u8s(const std::string& key, const std::vector<uint8_t>& v);

  // Tensors, in the order added. Dense: F32/F16/BF16/I32/I64/F64, rank <= 4, any layout
  // (written contiguous); shape reversed into ne. Names must be unique (InvalidArgument).
  void add_tensor(const std::string& name, const Tensor& t);
  void add_tensor(const std::string& name, const QTensor& q);  // ne = [cols, rows]
  // Any bytes under any type id (tests of the reader): nbytes is written as given.
  void add_raw(const std::string& name, std::vector<int64_t> ne, uint32_t ggml_type, const void* data, size_t nbytes);

  void set_alignment(uint64_t a);  // power of two; also written as general.alignment unless 32
  void set_version(uint32_t v);    // 2 or 3 (default 3; the layouts are the same)

  void write(const std::string& path) const;  // Error{IO} on failure; writes path.tmp then renames
  std::vector<uint8_t> to_bytes() const;

 private:
  struct Entry {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t type;
    Tensor held;                // contiguous CPU bytes of an added tensor (kept, not copied)
    std::vector<uint8_t> own;   // bytes given to add_raw (copied)
  };
  void add_held(const std::string& name, std::vector<int64_t> ne, uint32_t type, const Tensor& bytes);
  void collect(std::vector<std::string>& names, std::vector<std::vector<int64_t>>& nes, std::vector<uint32_t>& types,
               std::vector<std::pair<const uint8_t*, size_t>>& datas) const;
  std::vector<std::string> keys_;
  std::map<std::string, GgufValue> values_;
  std::vector<Entry> tensors_;
  uint64_t alignment_ = 32;
  uint32_t version_ = 3;
};

}  // namespace wgt
