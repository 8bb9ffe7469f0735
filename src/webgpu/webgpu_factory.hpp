// Creates the WebGPU backends (one per adapter) or explains why there are none.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "wgt/backend.hpp"

namespace wgt {
std::vector<std::unique_ptr<DeviceBackend>> create_webgpu_backends(std::string* why_none);
}
