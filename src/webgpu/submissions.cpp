// Bounded work in flight on a WebGPU queue (see submissions.hpp).
#include "webgpu/submissions.hpp"

namespace wgt::webgpu {

using namespace api;

void SubmissionQueue::submitted(uint64_t dispatches, uint64_t bytes, const char* op) {
  QueueWorkDoneCallbackInfo ci;
  ci.callback = [](uint32_t, StringView, void*, void*) {};  // completion is read from WaitAny
  entries_.push_back({dev_.p().QueueOnSubmittedWorkDone(dev_.queue(), ci), dispatches, bytes});
  dispatches_ += dispatches;
  bytes_ += bytes;
  retire_finished();
  while (over()) {
    ++throttle_waits_;
    wait_oldest(op);
  }
}

void SubmissionQueue::drain(const char* op) {
  while (!entries_.empty()) wait_oldest(op);
}

bool SubmissionQueue::idle() {
  retire_finished();
  return entries_.empty();
}

bool SubmissionQueue::over() const {
  // A single entry above a limit (one large write) is waited for too: it is then the oldest.
  return !entries_.empty() &&
         (dispatches_ > limits.dispatches || bytes_ > limits.bytes || entries_.size() > limits.submissions);
}

void SubmissionQueue::retire_finished() {
  const Procs& p = dev_.p();
  bool any = false;
  while (!entries_.empty()) {
    FutureWaitInfo w{entries_.front().done, 0};
    // Timeout 0: a poll (allowed without timed waits too).
    const uint32_t st = p.InstanceWaitAny(dev_.instance_handle(), 1, &w, 0);
    if (st != static_cast<uint32_t>(WaitStatus::Success) || !w.completed) break;
    pop();
    any = true;
  }
  // Lets Dawn free what the finished submissions held (command buffers, bind groups): it
  // does so when the device ticks, which nothing else does while the program never reads.
  if (any) p.InstanceProcessEvents(dev_.instance_handle());
}

void SubmissionQueue::wait_oldest(const char* op) {
  // On timeout the entry stays: the work goes on, and a later wait waits for it again.
  dev_.wait(entries_.front().done, op);
  pop();
  dev_.p().InstanceProcessEvents(dev_.instance_handle());
}

void SubmissionQueue::pop() {
  dispatches_ -= entries_.front().dispatches;
  bytes_ -= entries_.front().bytes;
  entries_.pop_front();
}

}  // namespace wgt::webgpu
