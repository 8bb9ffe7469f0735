// Storage allocation identity and aligned host bytes.
#include "wgt/storage.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#include "wgt/error.hpp"

namespace wgt {

namespace {
std::atomic<uint64_t> g_next_id{1};
}

HostBytes::HostBytes(size_t n) : size(n) {
  size_t rounded = ((n + 63) / 64) * 64;
  if (rounded == 0) rounded = 64;
  data = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
  if (!data)
    throw_error(ErrorKind::OutOfMemory, "allocate", "host allocation of " + std::to_string(n) + " bytes failed");
}
HostBytes::~HostBytes() { std::free(data); }

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

void Storage::ensure_host() {
  if (!host_) host_ = std::make_unique<HostBytes>(nbytes_);
}

}  // namespace wgt
