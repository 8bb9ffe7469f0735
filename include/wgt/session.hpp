// Sessions: an explicit scope that records the device work of the ops issued inside it into one
// submission and waits for it when the scope ends (or on demand). Beside the implicit batching
// of the WebGPU backend (a submission every WGT_WEBGPU_BATCH dispatches, early submission of an
// idle device, WGT_WEBGPU_EARLY), which a session suspends on its device while it is open.
//
//   {
//     wgt::Session s(wgt::Device::webgpu(0));
//     Tensor y = wgt::add(wgt::mul(a, b), c);   // recorded, not submitted
//     ...
//   }                                           // one submission, then a wait
//
// Rules (docs/architecture.md, "Sessions"):
// - Per device: a session covers one device; sessions of several devices may be open at once.
//   A session on the CPU is a valid, empty scope (CPU ops run synchronously: nothing to batch).
// - Nesting: sessions of one thread on one device nest. Only the outermost one submits and
//   waits when it ends; flush() / synchronize() of any of them act on everything the device
//   has recorded (the device has one command encoder: work is not partitioned by scope).
// - Reads: a read of a device tensor inside a session (item(), to_vector(), cpu(), map_read,
//   an eviction's download) submits what the session recorded so far, with the read's copy at
//   its end, and waits; later ops of the session go to the next submission. A read depends on
//   the work recorded before it, and submitting all of it is always correct.
// - Uploads inside a session do not split it: a queue write after recorded work goes through
//   a staging buffer copied inside the session's command buffer, so it keeps its place in the
//   order of the session's ops.
// - Threads: a session belongs to the thread that opened it. While it is open, device work of
//   any other thread on its device (ops, uploads, reads, synchronize, another session) is
//   refused with ErrorKind::RuntimeState; nothing of it is recorded. Other devices and CPU ops
//   are not affected. A Session must be destroyed on the thread that made it.
// - Exceptions: when the scope is left by an exception, the work recorded so far is submitted
//   (never discarded: tensors made inside the scope may have escaped it, and their values must
//   be those of the ops that made them) but not waited for. An error of that submission cannot
//   be thrown during unwinding: it is written to stderr, and a device error stays pending on
//   the device and is raised by its next use.
// - A normal end submits and waits; an error of the wait (device lost, a kernel's status
//   flag, a timeout) is thrown from the destructor. Call synchronize() before the end to get it
//   at a point of your choosing.
// - A session splits its submission only where a device bound forces it: the params arena of
//   one submission (about a thousand dispatches) and per-dispatch profiling's query set.
//   stats().splits counts those.
#pragma once
#include <cstdint>
#include <thread>

#include "wgt/device.hpp"

namespace wgt {

class DeviceBackend;

// Counters of the session's device since the session was opened (monotonic differences).
struct SessionStats {
  uint64_t dispatches = 0;   // compute dispatches recorded
  uint64_t submissions = 0;  // queue submissions (dispatch batches and read copies)
  uint64_t host_waits = 0;   // times the host blocked on the device
  uint64_t splits = 0;       // submissions a device bound forced inside the session
};

class Session {
 public:
  // Opens a session on `device` (webgpu:0 by default). Unsupported when the device is absent;
  // RuntimeState when another thread has a session open on it.
  explicit Session(Device device = Device::webgpu(0));
  // Outermost session: submits and waits (see above); nested: nothing.
  ~Session() noexcept(false);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;

  // Ends the session now, as its destructor would, which then does nothing: the outermost
  // level submits, and waits when `wait` (errors of the wait are thrown here); wait=false
  // is the exception path (submitted, not waited for, nothing thrown). For bindings whose
  // scopes are not C++ scopes (Python's `with`). RuntimeState when already ended or called
  // from another thread.
  void end(bool wait = true);
  // Submits what the device has recorded, without waiting; the session stays open.
  void flush();
  // Submits and waits until the device has run everything; the session stays open.
  void synchronize();
  SessionStats stats() const;
  Device device() const { return device_; }
  bool outermost() const { return outermost_; }

 private:
  Device device_;
  DeviceBackend* backend_ = nullptr;  // null on the CPU
  std::thread::id thread_;
  int uncaught_ = 0;
  bool outermost_ = true;
  bool ended_ = false;
  SessionStats base_;
  void close(bool wait);
};

}  // namespace wgt
