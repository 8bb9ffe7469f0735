// Back-pressure for one WebGPU queue: the work submitted and not yet known to be complete,
// bounded by dispatches, bytes and entries. Without a bound a program that never reads kept
// recording and submitting: Dawn's per-submission bookkeeping grew without end on the host,
// and the first wait then covered the whole queue, so a deep queue hit the wait timeout
// although the device was only busy. Here each wait is on the oldest submission, so the
// timeout (WGT_WEBGPU_TIMEOUT_MS) measures a device that makes no progress, not a long queue.
#pragma once
#include <cstdint>
#include <deque>

#include "webgpu/device.hpp"

namespace wgt::webgpu {

struct InFlightLimits {
  uint64_t dispatches = 4096;       // compute dispatches submitted and not complete
  uint64_t bytes = 256ull << 20;    // queue-write, params and copy bytes likewise
  uint32_t submissions = 64;        // entries (submissions and queue writes)
};

class SubmissionQueue {
 public:
  explicit SubmissionQueue(const DawnDevice& dev) : dev_(dev) {}
  // Records work just handed to the queue (a submission or a queue write), then retires what
  // finished and, while over the limits, waits on the oldest entry (each wait with the
  // timeout). Throws RuntimeState when the oldest entry makes no progress within it.
  void submitted(uint64_t dispatches, uint64_t bytes, const char* op);
  // Waits for every entry, oldest first, each wait with the timeout.
  void drain(const char* op);
  // Whether everything handed to the queue has completed (polls without blocking).
  bool idle();

  InFlightLimits limits;
  uint64_t dispatches() const { return dispatches_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t size() const { return entries_.size(); }
  uint64_t throttle_waits() const { return throttle_waits_; }

 private:
  struct Entry {
    api::Future done;
    uint64_t dispatches, bytes;
  };
  bool over() const;
  void retire_finished();       // polls the oldest entries without blocking
  void wait_oldest(const char* op);
  void pop();
  const DawnDevice& dev_;
  std::deque<Entry> entries_;
  uint64_t dispatches_ = 0, bytes_ = 0, throttle_waits_ = 0;
};

}  // namespace wgt::webgpu
