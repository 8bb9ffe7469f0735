// Placement of a tensor: host memory ("cpu") or a WebGPU device ("webgpu:N").
#pragma once
#include <string>

namespace wgt {

enum class DeviceType : uint8_t { CPU, WebGPU };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static Device cpu() { return {DeviceType::CPU, 0}; }
  static Device webgpu(int index = 0) { return {DeviceType::WebGPU, index}; }
  static Device parse(const std::string& s);  // "cpu", "webgpu", "webgpu:1"; throws InvalidArgument
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_webgpu() const { return type == DeviceType::WebGPU; }
  std::string str() const;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

}  // namespace wgt
