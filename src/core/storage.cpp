// Storage allocation identity and host bytes (from the host allocator, core/host_allocator.hpp).
#include "wgt/storage.hpp"

#include <atomic>

#include "core/host_allocator.hpp"
#include "wgt/error.hpp"

namespace wgt {

namespace {
std::atomic<uint64_t> g_next_id{1};
}

HostBytes::HostBytes(size_t n) : data(detail::HostAllocator::process().allocate(n)), size(n) {}
HostBytes::~HostBytes() { detail::HostAllocator::process().release(data, size); }

Storage::Storage(size_t nbytes, Device device) : nbytes_(nbytes), device_(device), id_(g_next_id++) {
  if (device.is_cpu()) host_ = std::make_unique<HostBytes>(nbytes);
}
Storage::~Storage() = default;

std::shared_ptr<Storage> Storage::meta(size_t nbytes, Device device) {
  auto s = std::make_shared<Storage>(0, Device::webgpu(device.index));  // allocates nothing
  s->nbytes_ = nbytes;
  s->device_ = device;
  return s;
}

std::shared_ptr<Storage> Storage::external(uint8_t* data, size_t nbytes, std::shared_ptr<const void> keep_alive) {
  if (nbytes > 0 && data == nullptr)
    throw_error(ErrorKind::InvalidArgument, "Storage::external", "null data for " + std::to_string(nbytes) + " bytes");
  auto s = std::make_shared<Storage>(0, Device::webgpu(0));  // allocates nothing
  s->nbytes_ = nbytes;
  s->device_ = Device::cpu();
  s->borrow_host(data, std::move(keep_alive));
  return s;
}

void Storage::borrow_host(uint8_t* data, std::shared_ptr<const void> keep_alive) {
  if (has_host())
    throw_error(ErrorKind::RuntimeState, "Storage::borrow_host", "the storage already has host bytes");
  // A zero-byte storage still "has" host bytes: point at a static byte so host_data() is non-null.
  static uint8_t empty_byte = 0;
  borrowed_ = data ? data : &empty_byte;
  borrowed_keep_ = std::move(keep_alive);
}

void Storage::ensure_host() {
  if (!has_host()) host_ = std::make_unique<HostBytes>(nbytes_);
}

}  // namespace wgt
