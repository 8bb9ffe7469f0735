// Host mapping (wgt/mapping.hpp): the span checks, the zero-copy view of host storage, the
// staging copy of device storage and its write-back, and the storage's mapping marks that the
// runtime's op checks and eviction honour (runtime.cpp, residency.cpp).
#include "wgt/mapping.hpp"

#include <cstdio>
#include <cstring>

#include "wgt/runtime.hpp"

namespace wgt {

namespace {

struct Checked {
  uint64_t offset;  // bytes into the storage
  size_t size;
};

Checked check_span(const Tensor& t, MapSpan span, const char* op) {
  if (!t.defined()) throw_error(ErrorKind::InvalidArgument, op, "the tensor is undefined");
  if (!t.is_contiguous())
    throw_error(ErrorKind::InvalidArgument, op,
                t.str() + " is a strided view: its elements are no single byte range; map t.contiguous()");
  const uint64_t es = dtype_size(t.dtype());
  const uint64_t total = t.nbytes();
  const uint64_t size = span.nbytes == MapSpan::kToEnd ? (span.offset <= total ? total - span.offset : 0) : span.nbytes;
  if (span.offset % es || size % es)
    throw_error(ErrorKind::InvalidArgument, op,
                "span [" + std::to_string(span.offset) + ", +" + std::to_string(size) + ") does not start and end on " +
                    std::to_string(es) + "-byte element boundaries of " + t.str());
  // Overflow-safe: offset and size are compared with the room left, never added.
  if (span.offset > total || size > total - span.offset)
    throw_error(ErrorKind::OutOfRange, op,
                "span [" + std::to_string(span.offset) + ", +" + std::to_string(size) + ") exceeds the " +
                    std::to_string(total) + " bytes of " + t.str());
  // The view's first byte within its storage: a contiguous view lies inside its allocation.
  const uint64_t first = static_cast<uint64_t>(t.offset()) * es;
  if (first > t.storage()->nbytes() || total > t.storage()->nbytes() - first)
    throw_error(ErrorKind::OutOfRange, op, t.str() + " lies outside its storage");
  return {first + span.offset, static_cast<size_t>(size)};
}

const char* mode_name(bool write) { return write ? "writing" : "reading"; }

}  // namespace

Mapping map_read(const Tensor& t, MapSpan span) {
  const Checked c = check_span(t, span, "map_read");
  Runtime& rt = Runtime::get();
  auto lk = rt.lock();
  Storage& s = *t.storage();
  if (s.map_writer())
    throw_error(ErrorKind::RuntimeState, "map_read",
                t.str() + " is mapped for writing; unmap() that mapping first");
  Mapping m;
  m.storage_ = t.storage();
  m.offset_ = c.offset;
  m.size_ = c.size;
  m.dtype_ = t.dtype();
  m.mode_ = MapMode::Read;
  if (t.device().is_cpu()) {
    m.zero_copy_ = true;
    m.ptr_ = s.host_data() + c.offset;
  } else if (c.size) {  // an empty span moves no byte
    m.staging_ = std::make_shared<HostBytes>(c.size);
    m.ptr_ = m.staging_->data;
    rt.read_bytes(s, c.offset, m.ptr_, c.size);  // waits for the ops that write it
  }
  s.add_map(false);
  m.mapped_ = true;
  return m;
}

Mapping map_write(const Tensor& t, MapSpan span) {
  const Checked c = check_span(t, span, "map_write");
  Runtime& rt = Runtime::get();
  auto lk = rt.lock();
  Storage& s = *t.storage();
  if (s.mapped())
    throw_error(ErrorKind::RuntimeState, "map_write",
                t.str() + " is already mapped for " + mode_name(s.map_writer()) +
                    "; a write mapping is exclusive: unmap() the other mapping first");
  Mapping m;
  m.storage_ = t.storage();
  m.offset_ = c.offset;
  m.size_ = c.size;
  m.dtype_ = t.dtype();
  m.mode_ = MapMode::Write;
  if (t.device().is_cpu()) {
    m.zero_copy_ = true;
    m.ptr_ = s.host_data() + c.offset;
  } else if (c.size) {
    // The view starts from the current bytes, so that what the caller does not write keeps its
    // value when the whole span goes back.
    m.staging_ = std::make_shared<HostBytes>(c.size);
    m.ptr_ = m.staging_->data;
    rt.read_bytes(s, c.offset, m.ptr_, c.size);
  }
  s.add_map(true);
  m.mapped_ = true;
  return m;
}

Mapping::Mapping(Mapping&& o) noexcept
    : storage_(std::move(o.storage_)),
      offset_(o.offset_),
      size_(o.size_),
      ptr_(o.ptr_),
      staging_(std::move(o.staging_)),
      dtype_(o.dtype_),
      mode_(o.mode_),
      zero_copy_(o.zero_copy_),
      mapped_(o.mapped_) {
  o.mapped_ = false;
  o.ptr_ = nullptr;
  o.size_ = 0;
}

Mapping& Mapping::operator=(Mapping&& o) {
  if (this == &o) return *this;
  if (mapped_) unmap();
  storage_ = std::move(o.storage_);
  offset_ = o.offset_;
  size_ = o.size_;
  ptr_ = o.ptr_;
  staging_ = std::move(o.staging_);
  dtype_ = o.dtype_;
  mode_ = o.mode_;
  zero_copy_ = o.zero_copy_;
  mapped_ = o.mapped_;
  o.mapped_ = false;
  o.ptr_ = nullptr;
  o.size_ = 0;
  return *this;
}

Mapping::~Mapping() {
  if (!mapped_) return;
  try {
    unmap();
  } catch (const std::exception& e) {
    // A destructor cannot throw: say that the written bytes were lost, then drop the mapping.
    std::fprintf(stderr, "wgtensor: writing back a mapping of %zu bytes failed, the bytes are lost: %s\n", size_,
                 e.what());
    auto lk = Runtime::get().lock();
    release();
  }
}

const uint8_t* Mapping::data() const {
  if (!mapped_) throw_error(ErrorKind::RuntimeState, "Mapping::data", "the mapping is not mapped (unmapped or moved from)");
  return ptr_;
}

uint8_t* Mapping::mutable_data() {
  if (!mapped_)
    throw_error(ErrorKind::RuntimeState, "Mapping::mutable_data", "the mapping is not mapped (unmapped or moved from)");
  if (mode_ != MapMode::Write)
    throw_error(ErrorKind::RuntimeState, "Mapping::mutable_data", "a read mapping is read-only; use map_write");
  return ptr_;
}

std::shared_ptr<const void> Mapping::memory() const {
  if (!mapped_) throw_error(ErrorKind::RuntimeState, "Mapping::memory", "the mapping is not mapped (unmapped or moved from)");
  if (staging_ || !zero_copy_) return staging_;  // (null for an empty device span)
  return storage_;
}

void Mapping::check_dtype(DType want) const {
  if (want != dtype_)
    throw_error(ErrorKind::DTypeMismatch, "Mapping::as",
                std::string("the mapped tensor has dtype ") + dtype_name(dtype_) + ", requested " + dtype_name(want) +
                    " (std::byte views any dtype)");
}

void Mapping::unmap() {
  if (!mapped_) throw_error(ErrorKind::RuntimeState, "Mapping::unmap", "the mapping is not mapped (unmapped or moved from)");
  auto lk = Runtime::get().lock();
  // The write-back first: when it throws, the mapping (and its mark, which keeps ops off the
  // stale device bytes) stays, so that the caller may retry.
  if (mode_ == MapMode::Write && !zero_copy_ && size_) Runtime::get().write_bytes(*storage_, offset_, ptr_, size_);
  release();
}

void Mapping::release() {
  storage_->drop_map(mode_ == MapMode::Write);
  storage_.reset();
  staging_.reset();
  ptr_ = nullptr;
  mapped_ = false;
}

}  // namespace wgt
