// The host caching allocator behind every CPU tensor's bytes: its statistics and controls.
// Freed blocks of 64 KiB and more are kept in size classes and handed to the next request
// of the same class, so a program that allocates the same shapes again and again (every op
// makes a fresh output) stops paying the kernel for new pages. Cached bytes are capped
// (WGT_HOST_CACHE_BYTES, set_host_cache_limit); past the cap the oldest blocks go back to
// the system. Thread-safe.
#pragma once
#include <cstdint>

namespace wgt {

struct HostCacheStats {
  uint64_t limit = 0;          // cap on cached (free) bytes
  uint64_t cached_bytes = 0;   // free blocks kept for reuse
  uint64_t cached_blocks = 0;
  uint64_t hits = 0;           // requests served from the cache
  uint64_t misses = 0;         // requests of a cached size that took new memory
  uint64_t released = 0;       // freed blocks given back to the system (over the cap, trimmed)
};

HostCacheStats host_cache_stats();
// Gives cached blocks back to the system, oldest first, until at most `keep_bytes` remain
// cached; returns the bytes released. Blocks in use are never touched.
uint64_t host_cache_trim(uint64_t keep_bytes = 0);
// Sets the cap on cached bytes (trims to it at once). The initial cap is WGT_HOST_CACHE_BYTES.
void set_host_cache_limit(uint64_t bytes);

}  // namespace wgt
