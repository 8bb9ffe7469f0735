// Placeholder until the Dawn runtime lands: reports WebGPU as unavailable.
#include "webgpu/webgpu_factory.hpp"

namespace wgt {
std::vector<std::unique_ptr<DeviceBackend>> create_webgpu_backends(std::string* why_none) {
  if (why_none) *why_none = "WebGPU backend not built";
  return {};
}
}  // namespace wgt
