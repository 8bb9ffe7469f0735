// GGUF writer (v3 by default, v2 on request): metadata, tensor infos, aligned tensor data.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "model/ggml_types.hpp"
#include "wgt/error.hpp"
#include "wgt/gguf.hpp"

namespace wgt {
namespace {

constexpr const char* kOp = "GgufWriter";
using Sink = std::function<void(const void*, size_t)>;
using Bytes = std::pair<const uint8_t*, size_t>;

template <typename T>
void put(const Sink& out, T v) {
  out(&v, sizeof(T));
}
void put_string(const Sink& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out(s.data(), s.size());
}
void put_zeros(const Sink& out, size_t n) {
  static const uint8_t zeros[256] = {};
  while (n) {
    const size_t k = n < sizeof(zeros) ? n : sizeof(zeros);
    out(zeros, k);
    n -= k;
  }
}

// The value's payload (after its type id).
void put_value(const Sink& out, const GgufValue& v) {
  switch (v.type()) {
    case GgufType::U8: put<uint8_t>(out, static_cast<uint8_t>(v.as_int())); break;
    case GgufType::I8: put<int8_t>(out, static_cast<int8_t>(v.as_int())); break;
    case GgufType::U16: put<uint16_t>(out, static_cast<uint16_t>(v.as_int())); break;
    case GgufType::I16: put<int16_t>(out, static_cast<int16_t>(v.as_int())); break;
    case GgufType::U32: put<uint32_t>(out, static_cast<uint32_t>(v.as_int())); break;
    case GgufType::I32: put<int32_t>(out, static_cast<int32_t>(v.as_int())); break;
    case GgufType::U64: put<uint64_t>(out, v.as_u64()); break;
    case GgufType::I64: put<int64_t>(out, v.as_int()); break;
    case GgufType::F32: put<float>(out, static_cast<float>(v.as_float())); break;
    case GgufType::F64: put<double>(out, v.as_float()); break;
    case GgufType::Bool: put<uint8_t>(out, v.as_bool() ? 1 : 0); break;
    case GgufType::String: put_string(out, v.as_string()); break;
    case GgufType::Array: {
      put<uint32_t>(out, static_cast<uint32_t>(v.elem_type()));
      put<uint64_t>(out, v.size());
      if (v.elem_type() == GgufType::String) {
        for (const auto& s : v.as_strings()) put_string(out, s);
      } else if (v.elem_type() == GgufType::Array) {
        for (size_t i = 0; i < v.size(); ++i) put_value(out, v.element(i));
      } else {
        out(v.raw().data(), v.raw().size());
      }
      break;
    }
  }
}

template <typename T>
std::vector<uint8_t> as_raw(const std::vector<T>& v) {
  std::vector<uint8_t> r(v.size() * sizeof(T));
  if (!r.empty()) std::memcpy(r.data(), v.data(), r.size());
  return r;
}

}  // namespace

void GgufWriter::set(const std::string& key, GgufValue v) {
  if (key.empty() || key.size() > 65535)
    throw_error(ErrorKind::InvalidArgument, kOp, "key length must be 1..65535, got " + std::to_string(key.size()));
  if (!values_.count(key)) keys_.push_back(key);
  values_.insert_or_assign(key, std::move(v));
}
void GgufWriter::set_u8(const std::string& k, uint8_t v) { set(k, GgufValue::of_int(GgufType::U8, v, k)); }
void GgufWriter::set_i8(const std::string& k, int8_t v) { set(k, GgufValue::of_int(GgufType::I8, v, k)); }
void GgufWriter::set_u16(const std::string& k, uint16_t v) { set(k, GgufValue::of_int(GgufType::U16, v, k)); }
void GgufWriter::set_i16(const std::string& k, int16_t v) { set(k, GgufValue::of_int(GgufType::I16, v, k)); }
void GgufWriter::set_u32(const std::string& k, uint32_t v) { set(k, GgufValue::of_int(GgufType::U32, v, k)); }
void GgufWriter::set_i32(const std::string& k, int32_t v) { set(k, GgufValue::of_int(GgufType::I32, v, k)); }
void GgufWriter::set_u64(const std::string& k, uint64_t v) { set(k, GgufValue::of_u64(v, k)); }
void GgufWriter::set_i64(const std::string& k, int64_t v) { set(k, GgufValue::of_int(GgufType::I64, v, k)); }
void GgufWriter::set_f32(const std::string& k, float v) { set(k, GgufValue::of_float(GgufType::F32, v, k)); }
void GgufWriter::set_f64(const std::string& k, double v) { set(k, GgufValue::of_float(GgufType::F64, v, k)); }
void GgufWriter::set_bool(const std::string& k, bool v) { set(k, GgufValue::of_bool(v, k)); }
void GgufWriter::set_string(const std::string& k, const std::string& v) { set(k, GgufValue::of_string(v, k)); }
void GgufWriter::set_strings(const std::string& k, const std::vector<std::string>& v) {
  set(k, GgufValue::of_string_array(v, k));
}
void GgufWriter::set_f32s(const std::string& k, const std::vector<float>& v) {
  set(k, GgufValue::of_scalar_array(GgufType::F32, as_raw(v), k));
}
void GgufWriter::set_i32s(const std::string& k, const std::vector<int32_t>& v) {
  set(k, GgufValue::of_scalar_array(GgufType::I32, as_raw(v), k));
}
void GgufWriter::set_i64s(const std::string& k, const std::vector<int64_t>& v) {
  set(k, GgufValue::of_scalar_array(GgufType::I64, as_raw(v), k));
}
void GgufWriter::set_u8s(const std::string& k, const std::vector<uint8_t>& v) {
  set(k, GgufValue::of_scalar_array(GgufType::U8, v, k));
}

void GgufWriter::set_alignment(uint64_t a) {
  if (a == 0 || (a & (a - 1)) != 0 || a > (uint64_t{1} << 30))
    throw_error(ErrorKind::InvalidArgument, kOp, "alignment must be a power of two in 1..2^30, got " + std::to_string(a));
  alignment_ = a;
  if (a != 32 || values_.count("general.alignment")) set_u32("general.alignment", static_cast<uint32_t>(a));
}

void GgufWriter::set_version(uint32_t v) {
  if (v != 2 && v != 3) throw_error(ErrorKind::InvalidArgument, kOp, "version must be 2 or 3, got " + std::to_string(v));
  version_ = v;
}

void GgufWriter::add_raw(const std::string& name, std::vector<int64_t> ne, uint32_t type, const void* data, size_t nbytes) {
  if (name.empty() || name.size() > 65535)
    throw_error(ErrorKind::InvalidArgument, kOp, "tensor name length must be 1..65535, got " + std::to_string(name.size()));
  for (const auto& e : tensors_)
    if (e.name == name) throw_error(ErrorKind::InvalidArgument, kOp, "tensor '" + name + "' added twice");
  if (ne.size() > 4)
    throw_error(ErrorKind::RankMismatch, kOp, "tensor '" + name + "' has " + std::to_string(ne.size()) + " dims; GGUF allows 4");
  if (nbytes > 0 && !data) throw_error(ErrorKind::InvalidArgument, kOp, "tensor '" + name + "': null data");
  Entry e{name, std::move(ne), type, {}, std::vector<uint8_t>(nbytes)};
  if (nbytes) std::memcpy(e.own.data(), data, nbytes);
  tensors_.push_back(std::move(e));
}

void GgufWriter::add_held(const std::string& name, std::vector<int64_t> ne, uint32_t type, const Tensor& bytes) {
  add_raw(name, std::move(ne), type, nullptr, 0);  // validates name and rank
  tensors_.back().held = bytes;                    // written from the tensor itself: no copy
}

void GgufWriter::add_tensor(const std::string& name, const Tensor& t) {
  if (!t.defined()) throw_error(ErrorKind::InvalidArgument, kOp, "tensor '" + name + "' is undefined");
  if (t.dim() > 4)
    throw_error(ErrorKind::RankMismatch, kOp, "tensor '" + name + "' " + t.str() + " has rank > 4; reshape it first");
  const uint32_t type = gguf_detail::ggml_id_of(t.dtype());
  std::vector<int64_t> ne(t.shape().rbegin(), t.shape().rend());
  add_held(name, std::move(ne), type, t.cpu().contiguous());
}

void GgufWriter::add_tensor(const std::string& name, const QTensor& q) {
  if (!q.defined()) throw_error(ErrorKind::InvalidArgument, kOp, "quantized tensor '" + name + "' is undefined");
  const QTensor c = q.device().is_cpu() ? q : q.to(Device::cpu());
  add_held(name, {c.cols(), c.rows()}, qtype_info(c.qtype()).ggml_type_id, c.bytes());
}

namespace {

void emit(const Sink& out, uint32_t version, uint64_t alignment, const std::vector<std::string>& keys,
          const std::map<std::string, GgufValue>& values, const std::vector<std::string>& names,
          const std::vector<std::vector<int64_t>>& nes, const std::vector<uint32_t>& types,
          const std::vector<Bytes>& datas) {
  uint64_t pos = 0;
  const Sink counted = [&](const void* p, size_t n) {
    out(p, n);
    pos += n;
  };
  counted("GGUF", 4);
  put<uint32_t>(counted, version);
  put<uint64_t>(counted, names.size());
  put<uint64_t>(counted, keys.size());
  for (const auto& k : keys) {
    const GgufValue& v = values.at(k);
    put_string(counted, k);
    put<uint32_t>(counted, static_cast<uint32_t>(v.type()));
    put_value(counted, v);
  }
  auto pad = [&](uint64_t n) { return (n + alignment - 1) / alignment * alignment; };
  uint64_t rel = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    put_string(counted, names[i]);
    put<uint32_t>(counted, static_cast<uint32_t>(nes[i].size()));
    for (int64_t d : nes[i]) put<uint64_t>(counted, static_cast<uint64_t>(d));
    put<uint32_t>(counted, types[i]);
    put<uint64_t>(counted, rel);
    rel = pad(rel + datas[i].second);
  }
  put_zeros(counted, pad(pos) - pos);
  for (size_t i = 0; i < names.size(); ++i) {
    if (datas[i].second) counted(datas[i].first, datas[i].second);
    if (i + 1 < names.size()) put_zeros(counted, pad(datas[i].second) - datas[i].second);
  }
}

}  // namespace

void GgufWriter::collect(std::vector<std::string>& names, std::vector<std::vector<int64_t>>& nes,
                         std::vector<uint32_t>& types, std::vector<std::pair<const uint8_t*, size_t>>& datas) const {
  for (const auto& e : tensors_) {
    names.push_back(e.name), nes.push_back(e.ne), types.push_back(e.type);
    if (e.held.defined())
      datas.push_back({e.held.nbytes() ? static_cast<const uint8_t*>(e.held.data_ptr()) : nullptr, e.held.nbytes()});
    else
      datas.push_back({e.own.data(), e.own.size()});
  }
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> nes;
  std::vector<uint32_t> types;
  std::vector<Bytes> datas;
  collect(names, nes, types, datas);
  std::vector<uint8_t> out;
  emit([&](const void* p, size_t n) { out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n); },
       version_, alignment_, keys_, values_, names, nes, types, datas);
  return out;
}

void GgufWriter::write(const std::string& path) const {
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> nes;
  std::vector<uint32_t> types;
  std::vector<Bytes> datas;
  collect(names, nes, types, datas);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw_error(ErrorKind::IO, kOp, tmp + ": cannot create: " + std::strerror(errno));
  bool ok = true;
  int err = 0;
  emit([&](const void* p, size_t n) {
         if (ok && n && std::fwrite(p, 1, n, f) != n) ok = false, err = errno;
       },
       version_, alignment_, keys_, values_, names, nes, types, datas);
  if (std::fflush(f) != 0 && ok) ok = false, err = errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;
  if (!ok) {
    std::remove(tmp.c_str());
    throw_error(ErrorKind::IO, kOp, tmp + ": write failed: " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(tmp.c_str());
    throw_error(ErrorKind::IO, kOp, "cannot rename " + tmp + " to " + path + ": " + std::strerror(err));
  }
}

}  // namespace wgt
