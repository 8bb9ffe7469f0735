// Size-class buffer pool (see buffer_pool.hpp).
#include "webgpu/buffer_pool.hpp"

#include <bit>

namespace wgt::webgpu {

using namespace api;

WebGPUBuffer::~WebGPUBuffer() { pool_->release(buf_, capacity_); }

size_t BufferPool::size_class(size_t n) {
  if (n <= 256) return 256;
  if (n <= 4096) return (n + 255) & ~size_t{255};
  const size_t top = std::bit_floor(n);  // n in [top, 2*top)
  const size_t step = top / 8;
  return (n + step - 1) / step * step;
}

std::shared_ptr<WebGPUBuffer> BufferPool::acquire(size_t nbytes) {
  const size_t cap = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    release_doomed();
    auto it = free_.find(cap);
    if (it != free_.end() && !it->second.empty()) {
      Buffer b = it->second.back();
      it->second.pop_back();
      in_use_ += cap;
      ++reuses_;
      return std::make_shared<WebGPUBuffer>(shared_from_this(), b, nbytes, cap, domain_);
    }
  }
  const auto& lim = dev_->limits();
  if (cap > lim.max_buffer_size)
    throw_error(ErrorKind::OutOfMemory, "allocate",
                std::to_string(nbytes) + " bytes exceed the adapter's maxBufferSize of " +
                    std::to_string(lim.max_buffer_size) + "; split the tensor or run it on cpu");
  BufferDescriptor desc;
  desc.usage = usage::Storage | usage::CopySrc | usage::CopyDst;
  desc.size = cap;
  // Error scopes turn a failed allocation into a typed error instead of a sticky one.
  dev_->push_scope(ErrorFilter::OutOfMemory);
  dev_->push_scope(ErrorFilter::Validation);
  Buffer b = dev_->p().DeviceCreateBuffer(dev_->handle(), &desc);
  std::string verr = dev_->pop_scope();
  std::string oerr = dev_->pop_scope();
  if (!b || !verr.empty() || !oerr.empty()) {
    if (b) dev_->p().BufferRelease(b);
    clear();  // give pooled memory back before the caller retries or falls back
    throw_error(ErrorKind::OutOfMemory, "allocate",
                "device allocation of " + std::to_string(cap) + " bytes failed: " + (oerr.empty() ? verr : oerr) +
                    "; free tensors, lower WGT_MEMORY_BUDGET or run on cpu");
  }
  std::lock_guard<std::mutex> lock(mu_);
  allocated_ += cap;
  in_use_ += cap;
  ++created_;
  return std::make_shared<WebGPUBuffer>(shared_from_this(), b, nbytes, cap, domain_);
}

void BufferPool::release(Buffer buf, size_t cap) {
  std::lock_guard<std::mutex> lock(mu_);
  in_use_ -= cap;
  if (!dev_) {  // detached: the device is gone, only the handle is left to drop
    dawn_procs(nullptr)->BufferRelease(buf);
    allocated_ -= cap;
    return;
  }
  if (allocated_ - in_use_ > limit_) {
    // Not released to Dawn here: a tensor may die on any thread, and Dawn is only called by
    // the holder of the runtime lock. The next acquire() or clear() releases it.
    doomed_.push_back({buf, cap});
    return;
  }
  free_[cap].push_back(buf);
}

void BufferPool::release_doomed() {
  if (doomed_.empty()) return;
  for (const auto& [b, cap] : doomed_) {
    // Release (not Destroy): Dawn keeps it alive until submitted work using it completes.
    dawn_procs(nullptr)->BufferRelease(b);
    allocated_ -= cap;
  }
  doomed_.clear();
  generation_.fetch_add(1, std::memory_order_relaxed);
}

void BufferPool::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  release_doomed();
  for (auto& [cap, v] : free_) {
    for (Buffer b : v) dawn_procs(nullptr)->BufferRelease(b);
    allocated_ -= cap * v.size();
  }
  if (!free_.empty()) generation_.fetch_add(1, std::memory_order_relaxed);
  free_.clear();
}

void BufferPool::detach() {
  clear();
  std::lock_guard<std::mutex> lock(mu_);
  dev_ = nullptr;
}

}  // namespace wgt::webgpu
