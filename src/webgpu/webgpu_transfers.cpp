// WebGPU backend: host <-> device transfers (queue writes, staged reads with map and wait),
// waiting for the queue, synchronize.
#include "webgpu/webgpu_backend.hpp"

#include <cstring>

#include "runtime/host_profile.hpp"
#include "runtime/settings.hpp"
#include "webgpu/buffer_pool.hpp"
#include "webgpu/webgpu_backend_impl.hpp"

namespace wgt::webgpu {

using namespace api;

void WebGPUBackend::write(const DeviceBuffer& dst, size_t offset, const void* src, size_t nbytes) {
  session_guard("write");
  Buffer buf = raw(dst, "write");
  if (offset + nbytes > dst.nbytes() || offset + nbytes < offset)
    throw_error(ErrorKind::OutOfRange, "write", "range [" + std::to_string(offset) + ", +" + std::to_string(nbytes) +
                                                    ") exceeds the " + std::to_string(dst.nbytes()) + "-byte buffer");
  if (nbytes == 0) return;
  const size_t begin = offset & ~size_t{3};
  const size_t end = round_up(offset + nbytes, 4);
  const bool whole_words = begin == offset && (end == offset + nbytes || offset + nbytes == dst.nbytes());
  // Queue writes run before the batch still being recorded: submit it first so a recorded
  // kernel never sees data written "after" it. Inside a session the write is recorded after
  // that work instead, so the session stays one submission.
  if (batch_ && batch_->dispatches) {
    if (session_depth_ && whole_words && record_write(buf, offset, src, nbytes)) return;
    if (session_depth_) ++stats_.session_splits;
    flush();
  }
  if (whole_words) {
    const size_t main = nbytes & ~size_t{3};
    if (main) dev_->p().QueueWriteBuffer(dev_->queue(), buf, offset, src, main);
    if (main != nbytes) {
      uint8_t tail[4] = {0, 0, 0, 0};  // bytes past nbytes() are padding
      std::memcpy(tail, static_cast<const uint8_t*>(src) + main, nbytes - main);
      dev_->p().QueueWriteBuffer(dev_->queue(), buf, offset + main, tail, 4);
    }
    in_flight_->submitted(0, nbytes, "write");  // Dawn holds a staging copy until it ran
    return;
  }
  // Unaligned edges: read the boundary words, merge, write whole words (rare: views of u8/f16).
  std::vector<uint8_t> tmp(end - begin);
  const size_t avail = std::min(end, static_cast<const WebGPUBuffer&>(dst).capacity()) - begin;
  read(dst, begin, tmp.data(), std::min(avail, dst.nbytes() - begin));
  std::memcpy(tmp.data() + (offset - begin), src, nbytes);
  dev_->p().QueueWriteBuffer(dev_->queue(), buf, begin, tmp.data(), tmp.size());
  in_flight_->submitted(0, tmp.size(), "write");
}

void WebGPUBackend::read(const DeviceBuffer& src, size_t offset, void* dst, size_t nbytes) {
  session_guard("read");
  Buffer buf = raw(src, "read");
  if (offset + nbytes > src.nbytes() || offset + nbytes < offset)
    throw_error(ErrorKind::OutOfRange, "read", "range [" + std::to_string(offset) + ", +" + std::to_string(nbytes) +
                                                   ") exceeds the " + std::to_string(src.nbytes()) + "-byte buffer");
  if (nbytes == 0) {
    flush();
    dev_->check("read");
    return;
  }
  dev_->check("read");
  const size_t begin = offset & ~size_t{3};
  const size_t size = round_up(offset + nbytes, 4) - begin;
  // The status word rides behind the data when a kernel may have set it (see status_flag).
  const bool with_status = status_armed_;
  const size_t mapped = size + (with_status ? 4 : 0);
  // Small reads reuse one staging buffer; large ones use a temporary one, so no big
  // allocation outlives the read (it would count against the memory budget).
  constexpr size_t kKeepStaging = 64 * 1024;
  Buffer staging = staging_;
  if (mapped > staging_size_) {
    if (mapped <= kKeepStaging) {
      if (staging_) dev_->p().BufferRelease(staging_);
      staging_ = nullptr;
      staging_size_ = 0;
      staging_ = create_buffer(*dev_, usage::MapRead | usage::CopyDst, kKeepStaging, "read");
      staging_size_ = kKeepStaging;
      staging = staging_;
    } else {
      staging = create_buffer(*dev_, usage::MapRead | usage::CopyDst, mapped, "read");
    }
  }
  struct TempRelease {
    const Procs& p;
    Buffer b;
    bool temp;
    ~TempRelease() { if (temp) p.BufferRelease(b); }
  } temp_release{dev_->p(), staging, staging != staging_};
  const Procs& p = dev_->p();
  if (batch_) {
    // The copy rides at the end of the recorded batch: a step of work plus the read of its
    // result is one submission and one wait.
    const TailCopy tail{buf, begin, staging, size, with_status};
    flush_with(&tail);
  } else {
    CommandEncoderDescriptor ed;
    CommandEncoder enc = p.DeviceCreateCommandEncoder(dev_->handle(), &ed);
    p.CommandEncoderCopyBufferToBuffer(enc, buf, begin, staging, 0, size);
    if (with_status) p.CommandEncoderCopyBufferToBuffer(enc, status_handle(), 0, staging, size, 4);
    CommandBufferDescriptor cd;
    CommandBuffer cb = p.CommandEncoderFinish(enc, &cd);
    p.QueueSubmit(dev_->queue(), 1, &cb);
    p.CommandBufferRelease(cb);
    p.CommandEncoderRelease(enc);
    ++stats_.submits;
    in_flight_->submitted(0, size, "read");
  }
  uint32_t status = 0;
  map_read(staging, mapped, offset - begin, dst, nbytes, "read", [&] {
    // A map still pending on the kept staging buffer would poison the next read: drop it
    // (releasing aborts the map) and let the next read create a fresh one.
    if (staging == staging_) {
      p.BufferRelease(staging_);
      staging_ = nullptr;
      staging_size_ = 0;
    }
  }, with_status ? &status : nullptr);
  if (with_status) check_status(status, "read");
}

void WebGPUBackend::map_read(api::Buffer buf, size_t size, size_t off, void* dst, size_t n, const char* op,
                             const std::function<void()>& on_wait_error, uint32_t* last_word) {
  const Procs& p = dev_->p();
  struct R { MapAsyncStatus st = MapAsyncStatus::Error; std::string msg; } r;
  BufferMapCallbackInfo mi;
  mi.callback = [](MapAsyncStatus st, StringView m, void* u1, void*) {
    static_cast<R*>(u1)->st = st;
    static_cast<R*>(u1)->msg = to_string(m);
  };
  mi.userdata1 = &r;
  // Everything before the mapped copy first, oldest first: each wait has the timeout, so a
  // long queue in front of the read is no timeout while the device makes progress.
  in_flight_->drain(op);
  ++stats_.host_waits;
  try {
    dev_->wait(p.BufferMapAsync(buf, map_mode::Read, 0, size, mi), op);
  } catch (const Error&) {
    on_wait_error();
    throw;
  }
  if (r.st != MapAsyncStatus::Success) {
    dev_->check(op);  // a device error explains a failed map best
    throw_error(ErrorKind::RuntimeState, op, "mapping the read-back buffer failed: " + r.msg);
  }
  // Copy out and unmap before anything can throw: a buffer left mapped fails the next map.
  const void* mapped = p.BufferGetConstMappedRange(buf, 0, size);
  if (mapped) std::memcpy(dst, static_cast<const uint8_t*>(mapped) + off, n);
  if (mapped && last_word) std::memcpy(last_word, static_cast<const uint8_t*>(mapped) + size - 4, 4);
  p.BufferUnmap(buf);
  if (!mapped) throw_error(ErrorKind::RuntimeState, op, "wgpuBufferGetConstMappedRange returned null");
  dev_->check(op);
}

void WebGPUBackend::wait_idle(const char* op) {
  // Queue work completes in order: once this tiny copy is mappable, everything before it ran.
  const Procs& p = dev_->p();
  in_flight_->drain(op);  // as map_read: each submission waited for with its own timeout
  if (!sync_dst_) sync_dst_ = create_buffer(*dev_, usage::MapRead | usage::CopyDst, 4, "webgpu");  // see below
  CommandEncoderDescriptor ed;
  CommandEncoder enc = p.DeviceCreateCommandEncoder(dev_->handle(), &ed);
  // The copied word is the status word (status_flag): this wait reads it back for free.
  const bool with_status = status_armed_;
  p.CommandEncoderCopyBufferToBuffer(enc, status_handle(), 0, sync_dst_, 0, 4);
  CommandBufferDescriptor cd;
  CommandBuffer cb = p.CommandEncoderFinish(enc, &cd);
  p.QueueSubmit(dev_->queue(), 1, &cb);
  p.CommandBufferRelease(cb);
  p.CommandEncoderRelease(enc);
  BufferMapCallbackInfo mi;
  mi.callback = [](MapAsyncStatus, StringView, void*, void*) {};
  ++stats_.host_waits;
  try {
    dev_->wait(p.BufferMapAsync(sync_dst_, map_mode::Read, 0, 4, mi), op);
  } catch (const Error&) {
    // Timed out: the map stays pending on this buffer, so drop it (the work continues); the
    // next wait creates a fresh one. Not here: creating a buffer waits for its error scope
    // under the same short timeout, and a throw there left the released handle in place
    // (the next synchronize then mapped a freed buffer and crashed inside Dawn).
    p.BufferRelease(sync_dst_);
    sync_dst_ = nullptr;
    throw;
  }
  uint32_t status = 0;
  if (const void* m = p.BufferGetConstMappedRange(sync_dst_, 0, 4)) std::memcpy(&status, m, 4);
  p.BufferUnmap(sync_dst_);
  if (with_status) check_status(status, op);
}

void WebGPUBackend::synchronize() {
  session_guard("synchronize");
  flush();
  dev_->check("synchronize");
  wait_idle("synchronize");
  dev_->p().InstanceProcessEvents(dev_->instance_handle());
  dev_->check("synchronize");
}

}  // namespace wgt::webgpu
