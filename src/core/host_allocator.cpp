// Host block allocator: size classes, a capped cache of freed blocks, huge-page hints.
#include "core/host_allocator.hpp"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <string>

#include "runtime/settings.hpp"
#include "wgt/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define WGT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WGT_ASAN 1
#endif
#endif
#ifdef WGT_ASAN
#include <sanitizer/asan_interface.h>
// A cached block is poisoned so that a use after free of its tensor is still reported.
#define WGT_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define WGT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define WGT_POISON(p, n) ((void)(p), (void)(n))
#define WGT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace wgt::detail {

namespace {

// Maps `bytes` (a multiple of the page size) of zeroed private memory; nullptr on failure.
// Blocks of kHugePage and more start on a huge-page boundary and ask for huge pages (a hint:
// without transparent huge pages they get small ones).
uint8_t* map_block(size_t bytes) {
  const bool huge = bytes >= HostAllocator::kHugePage;
  const size_t slack = huge ? HostAllocator::kHugePage : 0;
  void* raw = mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t p = start;
  if (huge) {
    p = (start + HostAllocator::kHugePage - 1) & ~uintptr_t{HostAllocator::kHugePage - 1};
    if (p > start) munmap(raw, p - start);
    const size_t tail = start + bytes + slack - (p + bytes);
    if (tail > 0) munmap(reinterpret_cast<void*>(p + bytes), tail);
#ifdef MADV_HUGEPAGE
    madvise(reinterpret_cast<void*>(p), bytes, MADV_HUGEPAGE);
#endif
  }
  return reinterpret_cast<uint8_t*>(p);
}

}  // namespace

HostAllocator& HostAllocator::process() {
  static HostAllocator* a = new HostAllocator(*settings().host_cache_bytes);
  return *a;
}

HostAllocator::~HostAllocator() { unmap_all(evict_locked(0)); }

size_t HostAllocator::block_bytes(size_t n) {
  if (n < kMinCached) return n == 0 ? kAlign : (n + kAlign - 1) / kAlign * kAlign;
  const int k = std::bit_width(n) - 1;   // 2^k <= n < 2^(k+1)
  const size_t step = size_t{1} << (k - 2);  // a quarter of 2^k
  return (n + step - 1) & ~(step - 1);
}

size_t HostAllocator::bin_of(size_t block) {
  const int k = std::bit_width(block) - 1;
  return static_cast<size_t>(k - 16) * 4 + ((block >> (k - 2)) - 4);
}

uint8_t* HostAllocator::allocate(size_t n) {
  if (n > kMaxRequest)
    throw_error(ErrorKind::OutOfMemory, "allocate", "host allocation of " + std::to_string(n) + " bytes is too large");
  const size_t bytes = block_bytes(n);
  if (n < kMinCached) {
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(kAlign, bytes));
    if (!p)
      throw_error(ErrorKind::OutOfMemory, "allocate", "host allocation of " + std::to_string(n) + " bytes failed");
    return p;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& bin = bins_[bin_of(bytes)];
    if (!bin.empty()) {
      auto it = bin.back();
      bin.pop_back();
      uint8_t* p = it->p;
      by_age_.erase(it);
      cached_ -= bytes;
      ++hits_;
      WGT_UNPOISON(p, bytes);
      return p;
    }
    ++misses_;
  }
  uint8_t* p = map_block(bytes);
  if (!p && trim(0) > 0) p = map_block(bytes);  // what the cache held may make room
  if (!p)
    throw_error(ErrorKind::OutOfMemory, "allocate",
                "host allocation of " + std::to_string(n) + " bytes failed (the host cache is empty)");
  return p;
}

void HostAllocator::release(uint8_t* p, size_t n) noexcept {
  if (!p) return;
  if (n < kMinCached) {
    std::free(p);
    return;
  }
  const size_t bytes = block_bytes(n);
  std::deque<Cached> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes > limit_) {
      victims.push_back({p, bytes, 0});
      ++released_;
    } else {
      const size_t bin = bin_of(bytes);
      WGT_POISON(p, bytes);
      by_age_.push_back({p, bytes, bin});
      bins_[bin].push_back(std::prev(by_age_.end()));
      cached_ += bytes;
      victims = evict_locked(limit_);
    }
  }
  unmap_all(victims);  // outside the lock: unmapping a large block takes a while
}

std::deque<HostAllocator::Cached> HostAllocator::evict_locked(uint64_t keep) {
  std::deque<Cached> out;
  while (cached_ > keep) {
    const Cached c = by_age_.front();
    // The globally oldest block is the oldest of its class.
    bins_[c.bin].pop_front();
    by_age_.pop_front();
    cached_ -= c.bytes;
    ++released_;
    out.push_back(c);
  }
  return out;
}

void HostAllocator::unmap_all(const std::deque<Cached>& blocks) noexcept {
  for (const Cached& c : blocks) {
    WGT_UNPOISON(c.p, c.bytes);
    munmap(c.p, c.bytes);
  }
}

HostCacheStats HostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {limit_, cached_, by_age_.size(), hits_, misses_, released_};
}

uint64_t HostAllocator::trim(uint64_t keep_bytes) {
  std::deque<Cached> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    victims = evict_locked(keep_bytes);
  }
  uint64_t freed = 0;
  for (const Cached& c : victims) freed += c.bytes;
  unmap_all(victims);
  return freed;
}

void HostAllocator::set_limit(uint64_t bytes) {
  std::deque<Cached> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = bytes;
    victims = evict_locked(limit_);
  }
  unmap_all(victims);
}

}  // namespace wgt::detail

namespace wgt {

HostCacheStats host_cache_stats() { return detail::HostAllocator::process().stats(); }
uint64_t host_cache_trim(uint64_t keep_bytes) { return detail::HostAllocator::process().trim(keep_bytes); }
void set_host_cache_limit(uint64_t bytes) { detail::HostAllocator::process().set_limit(bytes); }

}  // namespace wgt
