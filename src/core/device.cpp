// Device names: "cpu", "webgpu:N".
#include "wgt/device.hpp"

#include <cstdlib>

#include "wgt/error.hpp"

namespace wgt {

std::string Device::str() const {
  return type == DeviceType::CPU ? std::string("cpu") : "webgpu:" + std::to_string(index);
}

Device Device::parse(const std::string& s) {
  if (s == "cpu") return cpu();
  if (s == "webgpu" || s == "gpu") return webgpu(0);
  const std::string p = "webgpu:";
  if (s.rfind(p, 0) == 0 && s.size() > p.size()) {
    char* end = nullptr;
    long v = std::strtol(s.c_str() + p.size(), &end, 10);
    if (*end == '\0' && v >= 0 && v < 64) return webgpu(static_cast<int>(v));
  }
  throw_error(ErrorKind::InvalidArgument, "Device::parse",
              "unknown device '" + s + "'; use 'cpu', 'webgpu' or 'webgpu:N'");
}

}  // namespace wgt
