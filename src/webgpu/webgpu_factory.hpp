// Creates the WebGPU backends (one per adapter) or explains why there are none.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "wgt/backend.hpp"

namespace wgt {
std::vector<std::unique_ptr<DeviceBackend>> create_webgpu_backends(std::string* why_none);
// A backend over a WGPUDevice the caller created (with the Dawn library wgtensor loaded) on
// `wgpu_instance`, registered as Device::webgpu(device_index). wgtensor takes its own
// references and never destroys the device. BackendInit when Dawn cannot be loaded.
std::unique_ptr<DeviceBackend> adopt_webgpu_device(void* wgpu_instance, void* wgpu_device, int device_index);
}
