// GGUF reader (v2/v3): parses header, metadata and tensor infos from a mapped file or a buffer,
// checking every count, length and offset against the bytes present before using it.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "model/ggml_types.hpp"
#include "model/mapped_file.hpp"
#include "wgt/error.hpp"
#include "wgt/gguf.hpp"

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");

namespace wgt {

// The bytes being parsed: a file mapping or an owned buffer. Tensors handed out keep it alive.
struct GgufFile::Mapping {
  std::shared_ptr<MappedFile> file;
  std::vector<uint8_t> owned;
  uint8_t* data = nullptr;
  size_t size = 0;
};

namespace {

constexpr const char* kOp = "gguf";
constexpr int kMaxArrayDepth = 8;          // nested arrays: bounded recursion (spec sets no limit)
constexpr uint64_t kMaxNameBytes = 65535;  // keys and tensor names
constexpr uint32_t kMaxDims = 4;
// Smallest encodings, used to reject counts that cannot fit in the bytes left before anything
// is allocated: a key/value = key length + 1 byte of key + type + 1 byte of value; a tensor
// info = name length + 1 byte + n_dims + type + offset.
constexpr uint64_t kMinKv = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfo = 8 + 1 + 4 + 4 + 8;

class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n, const std::string& file) : p_(p), n_(n), file_(file) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw_error(ErrorKind::Format, kOp, file_ + ": " + what + " (at byte offset " + std::to_string(pos_) + ")");
  }
  size_t pos() const { return pos_; }
  uint64_t left() const { return n_ - pos_; }
  void need(uint64_t bytes, const std::string& what) const {
    if (bytes > left())
      fail("truncated: " + what + " needs " + std::to_string(bytes) + " bytes, only " + std::to_string(left()) +
           " left in the file");
  }
  template <typename T>
  T get(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string bytes(uint64_t len, const std::string& what) {
    need(len, what);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }
  std::vector<uint8_t> raw(uint64_t len, const std::string& what) {
    need(len, what);
    std::vector<uint8_t> v(p_ + pos_, p_ + pos_ + len);
    pos_ += static_cast<size_t>(len);
    return v;
  }
  std::string string(const std::string& what) {
    const uint64_t len = get<uint64_t>(what + " length");
    if (len > left())
      fail(what + " has length " + std::to_string(len) + " but only " + std::to_string(left()) + " bytes are left");
    return bytes(len, what);
  }
  // A key or tensor name: non-empty and of sane length.
  std::string name(const std::string& what) {
    const uint64_t len = get<uint64_t>(what + " length");
    if (len == 0 || len > kMaxNameBytes)
      fail(what + " has length " + std::to_string(len) + " (must be 1.." + std::to_string(kMaxNameBytes) + ")");
    if (len > left())
      fail(what + " has length " + std::to_string(len) + " but only " + std::to_string(left()) + " bytes are left");
    return bytes(len, what);
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
  const std::string& file_;
};

size_t scalar_size(uint32_t t) {
  switch (static_cast<GgufType>(t)) {
    case GgufType::U8: case GgufType::I8: case GgufType::Bool: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
    default: return 0;
  }
}
bool valid_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::F64); }

GgufValue read_value(Cursor& c, uint32_t type, const std::string& key, int depth) {
  if (!valid_type(type)) c.fail("key '" + key + "' has unknown value type " + std::to_string(type));
  const auto t = static_cast<GgufType>(type);
  switch (t) {
    case GgufType::U8: return GgufValue::of_int(t, c.get<uint8_t>(key), key);
    case GgufType::I8: return GgufValue::of_int(t, c.get<int8_t>(key), key);
    case GgufType::U16: return GgufValue::of_int(t, c.get<uint16_t>(key), key);
    case GgufType::I16: return GgufValue::of_int(t, c.get<int16_t>(key), key);
    case GgufType::U32: return GgufValue::of_int(t, c.get<uint32_t>(key), key);
    case GgufType::I32: return GgufValue::of_int(t, c.get<int32_t>(key), key);
    case GgufType::I64: return GgufValue::of_int(t, c.get<int64_t>(key), key);
    case GgufType::U64: return GgufValue::of_u64(c.get<uint64_t>(key), key);
    case GgufType::F32: return GgufValue::of_float(t, c.get<float>(key), key);
    case GgufType::F64: return GgufValue::of_float(t, c.get<double>(key), key);
    case GgufType::Bool: {
      const uint8_t b = c.get<uint8_t>(key);
      if (b > 1) c.fail("key '" + key + "': bool byte is " + std::to_string(b) + " (must be 0 or 1)");
      return GgufValue::of_bool(b != 0, key);
    }
    case GgufType::String: return GgufValue::of_string(c.string("string value of key '" + key + "'"), key);
    case GgufType::Array: break;
  }
  const uint32_t elem = c.get<uint32_t>("array element type of key '" + key + "'");
  const uint64_t n = c.get<uint64_t>("array length of key '" + key + "'");
  if (!valid_type(elem)) c.fail("key '" + key + "' is an array of unknown value type " + std::to_string(elem));
  const auto et = static_cast<GgufType>(elem);
  if (et == GgufType::Array && depth + 1 >= kMaxArrayDepth)
    c.fail("key '" + key + "' nests arrays deeper than " + std::to_string(kMaxArrayDepth) + " levels");
  const uint64_t min_elem = et == GgufType::String ? 8 : et == GgufType::Array ? 12 : scalar_size(elem);
  if (n > c.left() / min_elem)
    c.fail("key '" + key + "' claims " + std::to_string(n) + " elements of " + gguf_type_name(et) + ", which cannot fit in the " +
           std::to_string(c.left()) + " bytes left");
  if (et == GgufType::String) {
    std::vector<std::string> v;
    v.reserve(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i) v.push_back(c.string("element " + std::to_string(i) + " of key '" + key + "'"));
    return GgufValue::of_string_array(std::move(v), key);
  }
  if (et == GgufType::Array) {
    std::vector<GgufValue> v;
    v.reserve(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i)
      v.push_back(read_value(c, static_cast<uint32_t>(GgufType::Array), key + "[" + std::to_string(i) + "]", depth + 1));
    return GgufValue::of_array_array(std::move(v), key);
  }
  std::vector<uint8_t> raw = c.raw(n * min_elem, "elements of key '" + key + "'");
  if (et == GgufType::Bool)
    for (size_t i = 0; i < raw.size(); ++i)
      if (raw[i] > 1)
        c.fail("key '" + key + "'[" + std::to_string(i) + "]: bool byte is " + std::to_string(raw[i]) + " (must be 0 or 1)");
  return GgufValue::of_scalar_array(et, std::move(raw), key);
}

std::string ne_str(const std::vector<int64_t>& ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

// Bytes of a tensor; Format naming the tensor on overflow or a row that is not whole blocks.
uint64_t tensor_nbytes(const Cursor& c, const std::string& name, const std::vector<int64_t>& ne,
                       const gguf_detail::GgmlTypeSize& ts) {
  const std::string what = "tensor '" + name + "' (" + ts.name + ", ne " + ne_str(ne) + ")";
  const uint64_t ne0 = ne.empty() ? 1 : static_cast<uint64_t>(ne[0]);
  if (ne0 % ts.block_elems != 0)
    c.fail(what + ": ne[0] = " + std::to_string(ne0) + " is not a multiple of the block size " + std::to_string(ts.block_elems));
  // The shape must be one a Tensor accepts (shape = reversed ne), even when the byte size is 0.
  try {
    checked_numel(Shape(ne.rbegin(), ne.rend()), "gguf");
  } catch (const Error& e) {
    c.fail(what + ": element count overflows (" + e.message() + ")");
  }
  uint64_t total = 0;
  bool over = __builtin_mul_overflow(ne0 / ts.block_elems, static_cast<uint64_t>(ts.block_bytes), &total);
  for (size_t i = 1; i < ne.size() && !over; ++i) over = __builtin_mul_overflow(total, static_cast<uint64_t>(ne[i]), &total);
  if (over) c.fail(what + ": byte size overflows 64 bits");
  return total;
}

}  // namespace

GgufFile GgufFile::open(const std::string& path) {
  auto m = std::make_shared<Mapping>();
  m->file = MappedFile::open(path);
  m->data = m->file->data();
  m->size = m->file->size();
  return parse(std::move(m), path);
}

GgufFile GgufFile::from_memory(std::vector<uint8_t> bytes, std::string name) {
  auto m = std::make_shared<Mapping>();
  m->owned = std::move(bytes);
  m->data = m->owned.data();
  m->size = m->owned.size();
  return parse(std::move(m), std::move(name));
}

GgufFile GgufFile::parse(std::shared_ptr<Mapping> m, std::string name) {
  GgufFile f;
  f.map_ = m;
  f.name_ = std::move(name);
  Cursor c(m->data, m->size, f.name_);

  if (m->size < 4 || std::memcmp(m->data, "GGUF", 4) != 0)
    c.fail(m->size == 0 ? "empty file, not a GGUF file" : "not a GGUF file (the first 4 bytes are not \"GGUF\")");
  c.get<uint32_t>("magic");
  f.version_ = c.get<uint32_t>("version");
  if (f.version_ == 1)
    c.fail("GGUF version 1 is not supported (it used 32-bit counts); only versions 2 and 3 are read: re-convert the model");
  if (f.version_ != 2 && f.version_ != 3) {
    const uint32_t swapped = __builtin_bswap32(f.version_);
    if (swapped >= 1 && swapped <= 3) c.fail("big-endian GGUF file (version " + std::to_string(swapped) + "); only little-endian files are read");
    c.fail("unsupported GGUF version " + std::to_string(f.version_) + " (versions 2 and 3 are read)");
  }
  const uint64_t n_tensors = c.get<uint64_t>("tensor count");
  const uint64_t n_kv = c.get<uint64_t>("metadata key/value count");
  if (n_kv > c.left() / kMinKv)
    c.fail("metadata count " + std::to_string(n_kv) + " cannot fit in the " + std::to_string(c.left()) + " bytes left");
  if (n_tensors > c.left() / kMinTensorInfo)
    c.fail("tensor count " + std::to_string(n_tensors) + " cannot fit in the " + std::to_string(c.left()) + " bytes left");

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.name("key of metadata entry " + std::to_string(i));
    if (f.values_.count(key)) c.fail("duplicate metadata key '" + key + "'");
    const uint32_t type = c.get<uint32_t>("value type of key '" + key + "'");
    GgufValue v = read_value(c, type, key, 0);
    f.keys_.push_back(key);
    f.values_.emplace(std::move(key), std::move(v));
  }

  if (const GgufValue* a = f.find("general.alignment")) {
    if (a->type() == GgufType::Array || a->type() == GgufType::String || a->type() == GgufType::Bool ||
        a->type() == GgufType::F32 || a->type() == GgufType::F64)
      c.fail("general.alignment holds " + a->str() + ", expected an unsigned integer");
    const int64_t al = a->as_int();
    if (al <= 0 || (al & (al - 1)) != 0 || al > (int64_t{1} << 30))
      c.fail("general.alignment is " + std::to_string(al) + ", not a power of two in 1..2^30");
    f.alignment_ = static_cast<uint64_t>(al);
  }

  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = c.name("name of tensor " + std::to_string(i));
    if (f.tensor_index_.count(t.name)) c.fail("duplicate tensor name '" + t.name + "'");
    const uint32_t n_dims = c.get<uint32_t>("n_dims of tensor '" + t.name + "'");
    if (n_dims > kMaxDims) c.fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dims (at most 4)");
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t v = c.get<uint64_t>("dims of tensor '" + t.name + "'");
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        c.fail("tensor '" + t.name + "': ne[" + std::to_string(d) + "] = " + std::to_string(v) + " exceeds the int64 range");
      t.ne.push_back(static_cast<int64_t>(v));
    }
    t.ggml_type = c.get<uint32_t>("type of tensor '" + t.name + "'");
    const auto* ts = gguf_detail::ggml_type_size(t.ggml_type);
    if (!ts)
      c.fail("tensor '" + t.name + "' has ggml type " + std::to_string(t.ggml_type) +
             ", whose layout this reader does not know (computable: f32, f16, bf16, " + qtype_names() + ")");
    t.nbytes = tensor_nbytes(c, t.name, t.ne, *ts);
    t.offset = c.get<uint64_t>("offset of tensor '" + t.name + "'");  // relative until the data offset is known
    if (t.offset % f.alignment_ != 0)
      c.fail("tensor '" + t.name + "': offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
             std::to_string(f.alignment_));
    f.tensor_index_.emplace(t.name, f.tensors_.size());
    f.tensors_.push_back(std::move(t));
  }

  // The data section starts at the first multiple of the alignment after the tensor infos.
  f.data_offset_ = (static_cast<uint64_t>(c.pos()) + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  const uint64_t size = m->size;
  if (!f.tensors_.empty() && f.data_offset_ > size)
    c.fail("the data section would start at " + std::to_string(f.data_offset_) + ", past the end of the file (" +
           std::to_string(size) + " bytes)");
  for (auto& t : f.tensors_) {
    const uint64_t rel = t.offset;
    if (rel > size || t.nbytes > size || f.data_offset_ + rel > size - t.nbytes)
      c.fail("tensor '" + t.name + "' (" + ggml_type_name(t.ggml_type) + ", ne " + ne_str(t.ne) + ", " +
             std::to_string(t.nbytes) + " bytes at data offset " + std::to_string(rel) + ") extends past the end of the file (" +
             std::to_string(size) + " bytes)");
    t.offset = f.data_offset_ + rel;
  }
  // Overlapping tensors mean a corrupt file (a writer never shares bytes between tensors).
  std::vector<const GgufTensorInfo*> order;
  for (const auto& t : f.tensors_)
    if (t.nbytes > 0) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->offset + order[i - 1]->nbytes > order[i]->offset)
      c.fail("tensors '" + order[i - 1]->name + "' and '" + order[i]->name + "' overlap (bytes " +
             std::to_string(order[i]->offset) + ".." + std::to_string(order[i - 1]->offset + order[i - 1]->nbytes) + ")");
  return f;
}

uint64_t GgufFile::file_size() const { return map_ ? map_->size : 0; }

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

const GgufValue& GgufFile::at(const std::string& key) const {
  if (const GgufValue* v = find(key)) return *v;
  throw_error(ErrorKind::Format, kOp, name_ + ": missing key '" + key + "'");
}

int64_t GgufFile::get_int(const std::string& key, int64_t dflt) const {
  const GgufValue* v = find(key);
  return v ? v->as_int() : dflt;
}
double GgufFile::get_float(const std::string& key, double dflt) const {
  const GgufValue* v = find(key);
  return v ? v->as_float() : dflt;
}
std::string GgufFile::get_string(const std::string& key, const std::string& dflt) const {
  const GgufValue* v = find(key);
  return v ? v->as_string() : dflt;
}
bool GgufFile::get_bool(const std::string& key, bool dflt) const {
  const GgufValue* v = find(key);
  return v ? v->as_bool() : dflt;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor_info(const std::string& name) const {
  if (const GgufTensorInfo* t = find_tensor(name)) return *t;
  throw_error(ErrorKind::Format, kOp, name_ + ": missing tensor '" + name + "'");
}

const uint8_t* GgufFile::data(const GgufTensorInfo& t) const {
  if (!map_ || t.offset > map_->size || t.nbytes > map_->size - t.offset)
    throw_error(ErrorKind::InvalidArgument, kOp, name_ + ": tensor info '" + t.name + "' does not belong to this file");
  return map_->data + t.offset;
}

namespace {
// Storage for a tensor's bytes: a view of the mapping when its address suits `align`, else a copy.
std::shared_ptr<Storage> tensor_storage(const std::shared_ptr<const void>& keep, uint8_t* p, size_t n, size_t align) {
  if (reinterpret_cast<uintptr_t>(p) % align == 0) return Storage::external(p, n, keep);
  auto st = std::make_shared<Storage>(n, Device::cpu());
  if (n) std::memcpy(st->host_data(), p, n);
  return st;
}
}  // namespace

Tensor GgufFile::tensor(const std::string& name) const {
  const GgufTensorInfo& t = tensor_info(name);
  const auto dt = gguf_detail::ggml_dense_dtype(t.ggml_type);
  if (!dt)
    throw_error(ErrorKind::Format, kOp,
                name_ + ": tensor '" + name + "' has type " + ggml_type_name(t.ggml_type) +
                    (gguf_detail::ggml_qtype(t.ggml_type) ? ", a block-quantized type: read it with qtensor()"
                                                          : ", which wgtensor cannot compute with (dense: f32, f16, bf16, i32, i64, f64)"));
  Shape shape(t.ne.rbegin(), t.ne.rend());
  validate_shape(shape, "gguf");  // numel fits int64: the byte size was checked against the file
  auto st = tensor_storage(map_, map_->data + t.offset, static_cast<size_t>(t.nbytes), dtype_size(*dt));
  return Tensor(std::move(st), shape, contiguous_strides(shape), 0, *dt);
}

QTensor GgufFile::qtensor(const std::string& name) const {
  const GgufTensorInfo& t = tensor_info(name);
  const auto qt = gguf_detail::ggml_qtype(t.ggml_type);
  if (!qt)
    throw_error(ErrorKind::Format, kOp,
                name_ + ": tensor '" + name + "' has type " + ggml_type_name(t.ggml_type) +
                    (gguf_detail::ggml_dense_dtype(t.ggml_type) ? ", a dense type: read it with tensor()"
                                                                : ", which wgtensor cannot compute with (quantized: " + qtype_names() + ")"));
  size_t nd = t.ne.size();
  while (nd > 2 && t.ne[nd - 1] == 1) --nd;
  if (nd > 2)
    throw_error(ErrorKind::Format, kOp, name_ + ": quantized tensor '" + name + "' has ne " + ne_str(t.ne) +
                                            "; only 2-D quantized tensors are supported");
  const int64_t cols = nd >= 1 ? t.ne[0] : 1, rows = nd >= 2 ? t.ne[1] : 1;
  // Blocks hold 2-byte fp16 fields: the kernels read them in place, so the address must be even.
  auto st = tensor_storage(map_, map_->data + t.offset, static_cast<size_t>(t.nbytes), 2);
  Tensor bytes(std::move(st), {static_cast<int64_t>(t.nbytes)}, {1}, 0, DType::U8);
  return QTensor::from_tensor(*qt, rows, cols, bytes);
}

}  // namespace wgt
