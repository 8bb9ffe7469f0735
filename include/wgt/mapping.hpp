// Host mapping: a host view of a byte range of a tensor, valid until unmapped.
//
//   {
//     wgt::Mapping m = wgt::map_read(t, {0, 64 * sizeof(float)});
//     std::span<const float> v = m.as<const float>();       // t's first 64 elements
//   }
//   {
//     wgt::Mapping m = wgt::map_write(t);                   // the whole tensor
//     for (float& x : m.as<float>()) x = 0;                 // written back at unmap / end of scope
//   }
//
// Rules (docs/architecture.md, "Host mapping"):
// - The span is in bytes from the tensor's first element; it must lie within the tensor (and
//   so within its allocation), start and end on element boundaries, and its arithmetic is
//   overflow-checked. `MapSpan{}` is the whole tensor; an empty span is a valid, empty mapping
//   that moves no byte. The tensor must be contiguous (a contiguous view maps its own bytes;
//   a strided one is no single byte range: map t.contiguous()).
// - Host tensors map zero-copy: the view is the storage's own memory. Device tensors map
//   through a staging copy: map_read copies the span to the host (a read: it waits for the
//   work that produces the tensor, and inside a Session it submits what was recorded);
//   map_write starts from the span's current bytes and writes them back to the device at
//   unmap() or destruction (an upload, ordered after the ops issued before). zero_copy() says
//   which. (Mappable storage buffers need Dawn's BufferMapExtendedUsages feature, which only
//   some unified-memory adapters offer; the backend does not use it yet.)
// - While mapped: a storage may have several read mappings or one write mapping. An op that
//   reads a write-mapped tensor, an op that writes a mapped tensor in place, a read of a
//   write-mapped device tensor (item(), to_vector(), cpu()) and a second mapping against those
//   rules are refused with ErrorKind::RuntimeState (never a wait: the mapping's owner may be
//   the thread that would wait). A mapped device tensor is never evicted; pin()/unpin() are
//   independent of mapping.
// - A write-back that fails in unmap() throws and leaves the mapping mapped (retry, e.g. once
//   another thread's Session has ended); the destructor cannot throw, so it reports such a
//   failure on stderr and drops the mapping. Call unmap() to see the error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

#include "wgt/tensor.hpp"

namespace wgt {

struct MapSpan {
  static constexpr uint64_t kToEnd = UINT64_MAX;
  uint64_t offset = 0;       // bytes from the tensor's first element
  uint64_t nbytes = kToEnd;  // kToEnd: to the end of the tensor
};

enum class MapMode : uint8_t { Read, Write };

class Mapping {
 public:
  Mapping() = default;  // maps nothing (mapped() is false)
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o);  // unmaps what this mapped first (may throw, as unmap())
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();

  bool mapped() const { return mapped_; }
  MapMode mode() const { return mode_; }
  bool zero_copy() const { return zero_copy_; }
  DType dtype() const { return dtype_; }
  size_t size() const { return size_; }  // bytes
  // The bytes; RuntimeState once unmapped. mutable_data(): write mappings only.
  const uint8_t* data() const;
  uint8_t* mutable_data();
  // The bytes as elements: T is the tensor's element type (DTypeMismatch otherwise) or
  // std::byte for any dtype; const T for read mappings (a non-const T is RuntimeState there).
  template <typename T>
  std::span<T> as() {
    using E = std::remove_const_t<T>;
    if constexpr (!std::is_same_v<E, std::byte>) check_dtype(dtype_of<E>::value);
    uint8_t* p = std::is_const_v<T> ? const_cast<uint8_t*>(data()) : mutable_data();
    return {reinterpret_cast<T*>(p), size_ / sizeof(E)};
  }
  // Keeps the mapped bytes' memory (the storage, or the staging copy) alive past unmap(), for
  // bindings whose views may outlive the mapping (NumPy arrays): such a view then shows the
  // bytes as they were, and what is written to it after unmap() goes nowhere.
  std::shared_ptr<const void> memory() const;
  // Ends the mapping: a write mapping's bytes go back to the tensor first. RuntimeState when
  // not mapped.
  void unmap();

 private:
  friend Mapping map_read(const Tensor& t, MapSpan span);
  friend Mapping map_write(const Tensor& t, MapSpan span);
  void check_dtype(DType want) const;
  void release();  // drops the storage's mark and the staging bytes
  std::shared_ptr<Storage> storage_;
  uint64_t offset_ = 0;  // bytes into the storage
  size_t size_ = 0;
  uint8_t* ptr_ = nullptr;
  std::shared_ptr<HostBytes> staging_;
  DType dtype_ = DType::U8;
  MapMode mode_ = MapMode::Read;
  bool zero_copy_ = false;
  bool mapped_ = false;
};

Mapping map_read(const Tensor& t, MapSpan span = {});
Mapping map_write(const Tensor& t, MapSpan span = {});

}  // namespace wgt
