// Device-buffer pool with size classes: freed buffers are kept per class and reused, so a
// steady-state program allocates nothing from the driver. Bytes are accounted for the
// memory budget and `wgt info`.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "webgpu/device.hpp"
#include "wgt/storage.hpp"

namespace wgt::webgpu {

class BufferPool;

// A pooled device buffer handed to a Storage. Returns itself to the pool when dropped.
class WebGPUBuffer final : public DeviceBuffer {
 public:
  WebGPUBuffer(std::shared_ptr<BufferPool> pool, api::Buffer buf, size_t nbytes, size_t capacity, uint64_t domain)
      : pool_(std::move(pool)), buf_(buf), nbytes_(nbytes), capacity_(capacity), domain_(domain) {}
  ~WebGPUBuffer() override;
  uint64_t domain() const override { return domain_; }
  size_t nbytes() const override { return nbytes_; }
  size_t capacity() const { return capacity_; }
  api::Buffer handle() const { return buf_; }
  // Size bound to shaders: the requested bytes rounded up to 4 (at least 4).
  uint64_t bound_size() const { return nbytes_ < 4 ? 4 : (nbytes_ + 3) & ~size_t{3}; }

 private:
  std::shared_ptr<BufferPool> pool_;
  api::Buffer buf_;
  size_t nbytes_, capacity_;
  uint64_t domain_;
};

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  BufferPool(const DawnDevice& dev, uint64_t domain, uint64_t limit) : dev_(&dev), domain_(domain), limit_(limit) {}
  // Size class of a request: 256 B granularity up to 4 KiB, then 8 classes per power of two
  // (waste <= 12.5%), always a multiple of 4.
  static size_t size_class(size_t nbytes);
  std::shared_ptr<WebGPUBuffer> acquire(size_t nbytes);  // throws OutOfMemory
  // From ~WebGPUBuffer, on whichever thread drops the last tensor: never calls Dawn while
  // the device exists (buffers beyond the pool limit wait in doomed_ for acquire/clear).
  void release(api::Buffer buf, size_t capacity);
  // acquire() and clear() call Dawn: only the holder of the runtime lock calls them.
  void clear();                                            // frees all pooled buffers
  void detach();  // the device is going away: later releases just drop the handle
  // (under mu_: release() runs on any thread)
  uint64_t allocated() const { std::lock_guard<std::mutex> l(mu_); return allocated_; }
  uint64_t in_use() const { std::lock_guard<std::mutex> l(mu_); return in_use_; }
  uint64_t pooled() const { std::lock_guard<std::mutex> l(mu_); return allocated_ - in_use_; }
  uint64_t created() const { std::lock_guard<std::mutex> l(mu_); return created_; }
  uint64_t reuses() const { std::lock_guard<std::mutex> l(mu_); return reuses_; }
  // Bumped whenever a buffer is really released to Dawn: caches that reference buffers
  // (the backend's bind groups) drop their entries when it changes.
  uint64_t generation() const { return generation_.load(std::memory_order_relaxed); }

 private:
  const DawnDevice* dev_;
  uint64_t domain_;
  uint64_t limit_;  // pooled bytes above this are freed instead of kept
  mutable std::mutex mu_;
  std::map<size_t, std::vector<api::Buffer>> free_;
  std::vector<std::pair<api::Buffer, size_t>> doomed_;  // beyond the limit, not yet released
  void release_doomed();  // mu_ held
  uint64_t allocated_ = 0, in_use_ = 0, created_ = 0, reuses_ = 0;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace wgt::webgpu
