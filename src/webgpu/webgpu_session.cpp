// WebGPU backend: explicit sessions (wgt/session.hpp). A session suspends the automatic
// submissions of the batch (its limit and early submission, webgpu_batching.cpp) so that
// the ops of the scope become one submission, and keeps other threads' work out of the
// command buffer it is recording.
#include <cstring>
#include <sstream>
#include <vector>

#include "webgpu/webgpu_backend.hpp"
#include "webgpu/webgpu_backend_impl.hpp"

namespace wgt::webgpu {

using namespace api;

namespace {
std::string thread_str(std::thread::id id) {
  std::ostringstream o;
  o << id;
  return o.str();
}
}  // namespace

SubmissionCounters WebGPUBackend::counters() const {
  SubmissionCounters c;
  c.dispatches = stats_.dispatches;
  c.submissions = stats_.submits;
  c.host_waits = stats_.host_waits;
  c.session_splits = stats_.session_splits;
  return c;
}

void WebGPUBackend::refuse_other_thread(const char* op) const {
  throw_error(ErrorKind::RuntimeState, op,
              name() + " is inside a session of thread " + thread_str(session_owner_) +
                  ": a session belongs to its thread, and device work of another thread would land in its "
                  "submission; run it after that session ends, or on another device");
}

bool WebGPUBackend::open_session() {
  session_guard("Session");
  if (session_depth_++ > 0) return false;
  session_owner_ = std::this_thread::get_id();
  // The work recorded before the session is not the session's: submit it now, so that the
  // session's own work is one submission of its own.
  try {
    flush_with(nullptr);
  } catch (...) {
    session_depth_ = 0;
    throw;
  }
  return true;
}

void WebGPUBackend::close_session() {
  if (session_depth_ == 0) return;
  if (--session_depth_ == 0) session_owner_ = {};
}

bool WebGPUBackend::record_write(Buffer dst, size_t offset, const void* src, size_t nbytes) {
  if (!batch_ || batch_->profiled || batch_->pass_timed) return false;
  const Procs& p = dev_->p();
  const size_t size = round_up(nbytes, 4);  // copies move whole words; the tail word is padding
  // A fresh buffer: no recorded dispatch can use it, so the queue write landing before them
  // is harmless. Dawn keeps it alive until the command buffer that copies from it has run.
  Buffer staging = create_buffer(*dev_, usage::CopySrc | usage::CopyDst, size, "write");
  if (size == nbytes) {
    p.QueueWriteBuffer(dev_->queue(), staging, 0, src, nbytes);
  } else {
    std::vector<uint8_t> padded(size, 0);
    std::memcpy(padded.data(), src, nbytes);
    p.QueueWriteBuffer(dev_->queue(), staging, 0, padded.data(), size);
  }
  // Copies are recorded outside compute passes: end this one; the next dispatch opens another.
  if (batch_->pass) {
    p.ComputePassEncoderEnd(batch_->pass);
    p.ComputePassEncoderRelease(batch_->pass);
    batch_->pass = nullptr;
  }
  p.CommandEncoderCopyBufferToBuffer(batch_->encoder, staging, 0, dst, offset, size);
  p.BufferRelease(staging);
  ++stats_.session_copies;
  in_flight_->submitted(0, size, "write");  // Dawn holds the written bytes until they ran
  return true;
}

}  // namespace wgt::webgpu
