// The host caching allocator (src/core/host_allocator.hpp, wgt/host_cache.hpp): size classes,
// reuse of freed blocks, the cap with the oldest blocks released first, trimming, alignment,
// the typed error of an impossible request, and several threads at once. The thread tests
// are also built into wgt_thread_tests and run under ThreadSanitizer (scripts/test.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "core/host_allocator.hpp"
#include "runtime/settings.hpp"
#include "wgt/wgt.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define WGT_TEST_ASAN 1
#endif

using namespace wgt;
using detail::HostAllocator;

namespace {

constexpr size_t MiB = size_t{1} << 20;
constexpr size_t kMin = HostAllocator::kMinCached;

// Restores the process allocator's cap (WGT_HOST_CACHE_BYTES) when a test changed it.
struct RestoreProcessLimit {
  ~RestoreProcessLimit() { set_host_cache_limit(*settings().host_cache_bytes); }
};

TEST(HostAlloc, SizeClassesCoverRequestsWithAtMostAQuarterMore) {
  std::mt19937_64 rng(7);
  std::vector<size_t> sizes = {0, 1, 63, 64, 65, 4095, kMin - 1, kMin, kMin + 1, 5 * kMin / 4, 5 * kMin / 4 + 1,
                               2 * MiB - 1, 2 * MiB, 2 * MiB + 1, 64 * MiB, 100 * MiB + 3};
  for (int i = 0; i < 2000; ++i) sizes.push_back(rng() % (512 * MiB));
  for (size_t n : sizes) {
    const size_t b = HostAllocator::block_bytes(n);
    EXPECT_GE(b, std::max<size_t>(n, 1)) << n;
    EXPECT_EQ(b % HostAllocator::kAlign, 0u) << n;
    if (n < kMin) {
      EXPECT_LT(b - std::max<size_t>(n, 1), HostAllocator::kAlign) << n;
    } else {
      EXPECT_LE(b - n, n / 4) << n;                     // at most 25% more
      EXPECT_EQ(HostAllocator::block_bytes(b), b) << n;  // a class size is its own class
      EXPECT_EQ(b % 4096, 0u) << n;                      // whole pages
    }
  }
  // Four classes per power of two: 64 KiB, 80, 96, 112, 128, 160, ...
  std::set<size_t> classes;
  for (size_t n = kMin; n <= 4 * kMin; n += 1024) classes.insert(HostAllocator::block_bytes(n));
  EXPECT_EQ(classes, (std::set<size_t>{kMin, 5 * kMin / 4, 6 * kMin / 4, 7 * kMin / 4, 2 * kMin, 5 * kMin / 2,
                                       3 * kMin, 7 * kMin / 2, 4 * kMin}));
}

TEST(HostAlloc, FreedBlockIsReusedBySameClassOnly) {
  HostAllocator a(64 * MiB);
  uint8_t* p = a.allocate(MiB);
  std::memset(p, 0x5a, MiB);
  a.release(p, MiB);
  EXPECT_EQ(a.stats().cached_bytes, HostAllocator::block_bytes(MiB));
  EXPECT_EQ(a.stats().cached_blocks, 1u);

  // Another class (1.25 MiB) misses and leaves the cached block alone.
  uint8_t* q = a.allocate(MiB + MiB / 8);
  EXPECT_NE(q, p);
  EXPECT_EQ(a.stats().cached_blocks, 1u);

  // A smaller request of the same class gets the freed block back.
  uint8_t* r = a.allocate(MiB - 1000);
  EXPECT_EQ(r, p);
  const HostCacheStats s = a.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.cached_blocks, 0u);
  a.release(q, MiB + MiB / 8);
  a.release(r, MiB - 1000);
  EXPECT_EQ(a.stats().cached_blocks, 2u);
}

TEST(HostAlloc, SmallRequestsBypassTheCache) {
  HostAllocator a(64 * MiB);
  uint8_t* p = a.allocate(kMin - 1);
  std::memset(p, 1, kMin - 1);
  a.release(p, kMin - 1);
  const HostCacheStats s = a.stats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.hits + s.misses, 0u);
}

TEST(HostAlloc, CapReleasesOldestBlocksFirst) {
  HostAllocator a(3 * MiB);
  std::vector<uint8_t*> ps;
  for (int i = 0; i < 4; ++i) ps.push_back(a.allocate(MiB));
  for (uint8_t* p : ps) a.release(p, MiB);  // ps[0] is the oldest
  HostCacheStats s = a.stats();
  EXPECT_EQ(s.cached_bytes, 3 * MiB);
  EXPECT_EQ(s.cached_blocks, 3u);
  EXPECT_EQ(s.released, 1u);
  // The three kept are the three released last, served newest first.
  EXPECT_EQ(a.allocate(MiB), ps[3]);
  EXPECT_EQ(a.allocate(MiB), ps[2]);
  EXPECT_EQ(a.allocate(MiB), ps[1]);
  EXPECT_EQ(a.stats().hits, 3u);
  for (int i = 1; i < 4; ++i) a.release(ps[i], MiB);

  // A block larger than the cap is given back at once.
  uint8_t* big = a.allocate(4 * MiB);
  a.release(big, 4 * MiB);
  s = a.stats();
  EXPECT_EQ(s.cached_bytes, 3 * MiB);
  EXPECT_EQ(s.released, 2u);
  EXPECT_LE(s.cached_bytes, s.limit);
}

TEST(HostAlloc, TrimAndLimitReleaseOldestFirst) {
  HostAllocator a(64 * MiB);
  uint8_t* p1 = a.allocate(MiB);
  uint8_t* p2 = a.allocate(2 * MiB);
  uint8_t* p3 = a.allocate(MiB);
  a.release(p1, MiB);
  a.release(p2, 2 * MiB);
  a.release(p3, MiB);
  EXPECT_EQ(a.stats().cached_bytes, 4 * MiB);

  // Keeping 2.5 MiB drops p1 (1 MiB, oldest) and p2 (2 MiB): 1 MiB remains.
  EXPECT_EQ(a.trim(5 * MiB / 2), 3 * MiB);
  EXPECT_EQ(a.stats().cached_bytes, MiB);
  EXPECT_EQ(a.allocate(MiB), p3);  // the survivor is the newest
  a.release(p3, MiB);

  // Lowering the limit trims at once; the limit then bounds what is cached.
  a.set_limit(0);
  EXPECT_EQ(a.stats().cached_bytes, 0u);
  EXPECT_EQ(a.stats().limit, 0u);
  uint8_t* p4 = a.allocate(MiB);
  a.release(p4, MiB);
  EXPECT_EQ(a.stats().cached_bytes, 0u);
  EXPECT_EQ(a.trim(0), 0u);
}

TEST(HostAlloc, BlocksAreAlignedAndWritable) {
  HostAllocator a(256 * MiB);
  const std::vector<size_t> sizes = {0, 1, 3, 63, 64, 65, 1000, kMin - 1, kMin, kMin + 7, 3 * MiB / 2,
                                     2 * MiB, 5 * MiB + 3, 9 * MiB};
  for (int round = 0; round < 2; ++round) {  // the second round is served from the cache
    for (size_t n : sizes) {
      uint8_t* p = a.allocate(n);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
      // Blocks of a huge page and more start on one, so the kernel can back them with huge pages.
      if (HostAllocator::block_bytes(n) >= HostAllocator::kHugePage) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % HostAllocator::kHugePage, 0u) << n;
      }
      std::memset(p, 0xa5, HostAllocator::block_bytes(n));
      a.release(p, n);
    }
  }
  EXPECT_GT(a.stats().hits, 0u);
}

TEST(HostAlloc, ImpossibleRequestIsTypedOutOfMemory) {
  HostAllocator a(MiB);
  try {
    (void)a.allocate(~size_t{0});
    ADD_FAILURE() << "allocate(SIZE_MAX) did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << e.what();
  }
  try {
    (void)a.allocate(HostAllocator::kMaxRequest);  // within the classes, beyond any machine's memory
    ADD_FAILURE() << "allocate(2^62) did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << e.what();
  }
}

#ifdef WGT_TEST_ASAN
// A cached block is poisoned, so a tensor's use after free is still reported by ASan.
TEST(HostAlloc, CachedBlocksArePoisonedUnderAsan) {
  HostAllocator a(64 * MiB);
  uint8_t* p = a.allocate(MiB);
  EXPECT_FALSE(__asan_address_is_poisoned(p + 100));
  a.release(p, MiB);
  EXPECT_TRUE(__asan_address_is_poisoned(p + 100));
  EXPECT_EQ(a.allocate(MiB), p);
  EXPECT_FALSE(__asan_address_is_poisoned(p + MiB - 1));
  a.release(p, MiB);
}
#endif

// Tensors take their bytes from the process allocator: an output freed by one op is the
// output of the next op of the same size, and its values are the new op's.
TEST(HostAlloc, TensorsReuseFreedBlocks) {
  RestoreProcessLimit restore;
  set_host_cache_limit(256 * MiB);
  const int64_t n = 50000;  // 200 KB: a cached size
  std::vector<float> va(n), vb(n);
  for (int64_t i = 0; i < n; ++i) {
    va[i] = static_cast<float>(i % 97);
    vb[i] = static_cast<float>(i % 13) - 6.0f;
  }
  Tensor a = Tensor::from_vector(va, {n}), b = Tensor::from_vector(vb, {n});
  void* first = nullptr;
  {
    Tensor c = add(a, b);
    first = c.data_ptr();
  }
  const HostCacheStats before = host_cache_stats();
  Tensor d = mul(a, b);
  EXPECT_EQ(d.data_ptr(), first);
  EXPECT_EQ(host_cache_stats().hits, before.hits + 1);
  const std::vector<float> got = d.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], va[i] * vb[i]) << i;

  // Trimming gives every cached block back; tensors in use keep their bytes.
  host_cache_trim(0);
  EXPECT_EQ(host_cache_stats().cached_bytes, 0u);
  EXPECT_EQ(d.to_vector<float>(), got);
  EXPECT_EQ(a.to_vector<float>(), va);
}

// Several threads allocate, fill, check and free blocks of a few classes through one
// allocator with a cap smaller than what they hold together: no block is handed to two
// owners at once, and the counts add up.
TEST(HostAllocThreads, ConcurrentBlocksAreExclusive) {
  HostAllocator a(MiB);
  constexpr int kThreads = 6, kRounds = 200;
  const size_t sizes[] = {kMin, kMin + 5, 3 * kMin, 5 * kMin};
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      struct Held {
        uint8_t* p;
        size_t n;
        uint8_t tag;
      };
      std::vector<Held> held;
      for (int r = 0; r < kRounds; ++r) {
        const size_t n = sizes[rng() % std::size(sizes)];
        uint8_t* p = a.allocate(n);
        const auto tag = static_cast<uint8_t>(t * 31 + r);
        std::memset(p, tag, n);
        held.push_back({p, n, tag});
        if (held.size() > 3 || rng() % 2) {  // free the oldest held block after checking it
          const Held h = held.front();
          held.erase(held.begin());
          if (h.p[0] != h.tag || h.p[h.n / 2] != h.tag || h.p[h.n - 1] != h.tag) bad.fetch_add(1);
          a.release(h.p, h.n);
        }
      }
      for (const Held& h : held) a.release(h.p, h.n);
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(bad.load(), 0);
  const HostCacheStats s = a.stats();
  EXPECT_EQ(s.hits + s.misses, uint64_t{kThreads} * kRounds);
  EXPECT_GT(s.hits, 0u);
  EXPECT_LE(s.cached_bytes, s.limit);
}

// Ops on several threads, each making and dropping 128 KiB outputs through the process
// allocator: every result is exact and trims from another thread do not disturb them.
TEST(HostAllocThreads, OpsOnThreadsWithConcurrentTrim) {
  RestoreProcessLimit restore;
  set_host_cache_limit(32 * MiB);
  const int64_t n = 1 << 15;  // 128 KiB of f32: a cached size
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 251);
  const Tensor x = Tensor::from_vector(v, {n});
  std::atomic<int> bad{0};
  std::atomic<bool> stop{false};
  std::thread trimmer([&] {
    while (!stop.load()) {
      host_cache_trim(4 * MiB);
      (void)host_cache_stats();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < 8; ++r) {
        Tensor y = add(x, static_cast<double>(t + r));
        const std::vector<float> got = y.to_vector<float>();
        for (int64_t i = 0; i < n; i += 509)
          if (got[i] != v[i] + static_cast<float>(t + r)) bad.fetch_add(1);
      }
    });
  for (auto& th : ts) th.join();
  stop.store(true);
  trimmer.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_LE(host_cache_stats().cached_bytes, 32 * MiB);
}

}  // namespace
