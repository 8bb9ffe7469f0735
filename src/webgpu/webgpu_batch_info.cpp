// Public view of a WebGPU device's command batching (wgt/webgpu_info.hpp): the counters the
// backend keeps for itself, and its batch size, for programs and tests that check how many
// submissions and host waits a step costs.
#include "webgpu/webgpu_backend.hpp"
#include "wgt/runtime.hpp"
#include "wgt/webgpu_info.hpp"

namespace wgt {

namespace {

webgpu::WebGPUBackend& webgpu_device(int index, const char* op) {
  std::string why;
  auto* b = dynamic_cast<webgpu::WebGPUBackend*>(Runtime::get().webgpu_backend(index, &why));
  if (!b) throw_error(ErrorKind::Unsupported, op, "webgpu:" + std::to_string(index) + " is not available: " + why);
  return *b;
}

}  // namespace

// Both take the runtime lock: the backend's counters change under every op.
WebGPUBatchStats webgpu_batch_stats(int device_index) {
  auto lk = Runtime::get().lock();
  webgpu::WebGPUBackend& b = webgpu_device(device_index, "webgpu_batch_stats");
  const webgpu::BatchStats& s = b.batch_stats();
  WebGPUBatchStats out;
  out.dispatches = s.dispatches;
  out.submits = s.submits;
  out.host_waits = s.host_waits;
  out.max_batch = b.max_batch();
  out.early_batch = b.early_batch();
  out.early_submits = s.early_submits;
  const webgpu::SubmissionQueue& q = b.in_flight();
  out.in_flight_dispatches = q.dispatches();
  out.in_flight_bytes = q.bytes();
  out.in_flight_entries = q.size();
  out.max_in_flight_dispatches = q.limits.dispatches;
  out.max_in_flight_bytes = q.limits.bytes;
  out.max_in_flight_entries = q.limits.submissions;
  out.throttle_waits = q.throttle_waits();
  return out;
}

void set_webgpu_max_batch(uint32_t dispatches, int device_index) {
  auto lk = Runtime::get().lock();
  webgpu_device(device_index, "set_webgpu_max_batch").set_max_batch(dispatches);
}

void set_webgpu_early_batch(uint32_t dispatches, int device_index) {
  auto lk = Runtime::get().lock();
  webgpu_device(device_index, "set_webgpu_early_batch").set_early_batch(dispatches);
}

}  // namespace wgt

namespace wgt {

void set_webgpu_max_in_flight(uint64_t dispatches, uint64_t bytes, uint32_t entries, int device_index) {
  auto lk = Runtime::get().lock();
  webgpu::WebGPUBackend& b = webgpu_device(device_index, "set_webgpu_max_in_flight");
  webgpu::InFlightLimits l = b.in_flight().limits;
  if (dispatches) l.dispatches = dispatches;
  if (bytes) l.bytes = bytes;
  if (entries) l.submissions = entries;
  b.set_in_flight_limits(l);
}

}  // namespace wgt
