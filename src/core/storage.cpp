// Storage allocation identity and aligned host bytes.
#include "wgt/storage.hpp"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>

#include "runtime/settings.hpp"
#include "wgt/error.hpp"

namespace wgt {

namespace {
std::atomic<uint64_t> g_next_id{1};
}

namespace {

// Large host blocks are kept after release and reused: a fresh multi-MiB allocation costs a
// page fault per 4 KiB page on first touch (expensive under virtualization), which made
// large CPU ops several times slower than their kernels. Blocks of >= 1 MiB are cached up to
// WGT_HOST_CACHE_BYTES (default 1 GiB); a cached block is reused for a request of at least
// 3/4 of its size.
class HostBlockCache {
 public:
  static HostBlockCache& get() {
    static HostBlockCache* c = new HostBlockCache();  // never destroyed: blocks may outlive statics
    return *c;
  }
  static constexpr size_t kMinCached = size_t{1} << 20;

  uint8_t* take(size_t rounded) {
    if (rounded < kMinCached) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.lower_bound(rounded);
    if (it == free_.end() || it->first / 4 * 3 > rounded) return nullptr;
    uint8_t* p = it->second;
    cached_ -= it->first;
    sizes_[p] = it->first;
    free_.erase(it);
    return p;
  }
  // Returns true when the block was kept.
  bool give(uint8_t* p, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    auto s = sizes_.find(p);
    size_t cap = s != sizes_.end() ? s->second : rounded;
    if (s != sizes_.end()) sizes_.erase(s);
    if (cap < kMinCached || cached_ + cap > limit_) return false;
    free_.emplace(cap, p);
    cached_ += cap;
    return true;
  }


 private:
  HostBlockCache() {
    limit_ = static_cast<size_t>(*settings().host_cache_bytes);
  }
  std::mutex mu_;
  std::multimap<size_t, uint8_t*> free_;  // capacity -> block
  std::unordered_map<uint8_t*, size_t> sizes_;  // capacity of reused blocks now in use
  size_t cached_ = 0;
  size_t limit_ = 0;
};

size_t round_host(size_t n) {
  if (n >= HostBlockCache::kMinCached) return (n + 4095) / 4096 * 4096;
  size_t r = ((n + 63) / 64) * 64;
  return r == 0 ? 64 : r;
}

}  // namespace

HostBytes::HostBytes(size_t n) : size(n) {
  const size_t rounded = round_host(n);
  data = HostBlockCache::get().take(rounded);
  if (!data) data = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
  if (!data)
    throw_error(ErrorKind::OutOfMemory, "allocate", "host allocation of " + std::to_string(n) + " bytes failed");
}
HostBytes::~HostBytes() {
  if (!HostBlockCache::get().give(data, round_host(size))) std::free(data);
}

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
