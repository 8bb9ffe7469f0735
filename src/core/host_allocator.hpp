// The host block allocator behind Storage's host bytes (public face: wgt/host_cache.hpp).
// Requests below kMinCached go to the C allocator, whose arenas reuse small blocks without
// new pages. Larger ones are rounded up to a size class (four classes per power of two, so at
// most 25% is wasted), mapped from the system and, when freed, kept in their class's bin for
// the next request of that class; the cap on cached bytes gives the oldest blocks back first.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>

#include "wgt/host_cache.hpp"

namespace wgt::detail {

class HostAllocator {
 public:
  static constexpr size_t kAlign = 64;                   // every block, small or large
  static constexpr size_t kMinCached = size_t{1} << 16;  // smallest cached request (64 KiB)
  // Blocks of this size and more are aligned to it and marked for transparent huge pages:
  // a fresh block then takes one page fault per 2 MiB instead of one per 4 KiB.
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kMaxRequest = size_t{1} << 62;  // larger requests fail as OutOfMemory

  explicit HostAllocator(uint64_t limit) : limit_(limit) {}
  ~HostAllocator();  // gives every cached block back
  HostAllocator(const HostAllocator&) = delete;
  HostAllocator& operator=(const HostAllocator&) = delete;

  // The allocator of every Storage (cap from WGT_HOST_CACHE_BYTES); never destroyed, since
  // tensors may die during static destruction.
  static HostAllocator& process();

  // The bytes a block for an n-byte request spans: its size class (n >= kMinCached), else n
  // rounded up to kAlign (at least kAlign).
  static size_t block_bytes(size_t n);

  // At least n bytes (n may be 0), kAlign-aligned, uninitialized. Throws OutOfMemory.
  uint8_t* allocate(size_t n);
  // Frees a block from allocate(n) (the same n): cached when the cap allows.
  void release(uint8_t* p, size_t n) noexcept;

  HostCacheStats stats() const;
  uint64_t trim(uint64_t keep_bytes);
  void set_limit(uint64_t bytes);

 private:
  struct Cached {
    uint8_t* p;
    size_t bytes;
    size_t bin;
  };
  // Four classes per power of two from kMinCached up to kMaxRequest.
  static constexpr size_t kBins = 4 * (62 - 16 + 1) + 1;
  static size_t bin_of(size_t block);
  // Unlinks the oldest cached blocks until at most `keep` bytes remain; the caller unmaps
  // the returned blocks after dropping the lock.
  std::deque<Cached> evict_locked(uint64_t keep);
  static void unmap_all(const std::deque<Cached>& blocks) noexcept;

  mutable std::mutex mu_;
  uint64_t limit_;
  uint64_t cached_ = 0;
  uint64_t hits_ = 0, misses_ = 0, released_ = 0;
  std::list<Cached> by_age_;  // cached blocks, oldest first
  // Per class, the blocks of that class in by_age_, oldest first: a request takes the newest
  // (its pages are the likeliest to be in cache), eviction takes the oldest.
  std::array<std::deque<std::list<Cached>::iterator>, kBins> bins_;
};

}  // namespace wgt::detail
