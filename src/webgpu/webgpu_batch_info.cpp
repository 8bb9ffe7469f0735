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

WebGPUBatchStats webgpu_batch_stats(int device_index) {
  webgpu::WebGPUBackend& b = webgpu_device(device_index, "webgpu_batch_stats");
  const webgpu::BatchStats& s = b.batch_stats();
  WebGPUBatchStats out;
  out.dispatches = s.dispatches;
  out.submits = s.submits;
  out.host_waits = s.host_waits;
  out.max_batch = b.max_batch();
  return out;
}

void set_webgpu_max_batch(uint32_t dispatches, int device_index) {
  webgpu_device(device_index, "set_webgpu_max_batch").set_max_batch(dispatches);
}

}  // namespace wgt
