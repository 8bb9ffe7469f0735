// What the WebGPU runtime sees: one entry per usable adapter (for `wgt info` and diagnostics).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wgt {

struct WebGPUInfo {
  int index = 0;  // device index: Device::webgpu(index)
  std::string name, vendor, architecture, device_description, backend, adapter_type;
  std::vector<std::string> features;                       // known feature names the adapter offers
  std::vector<std::pair<std::string, uint64_t>> limits;    // the limits that matter for compute
  std::vector<std::string> toggles;                        // device toggles: "+on" / "-off"
  uint64_t bytes_allocated = 0, bytes_in_use = 0;          // device buffer pool accounting
};

// Every adapter the runtime uses (creating the devices if not done yet). Empty with *why_none
// set when Dawn or a real (non-Null) adapter is missing.
std::vector<WebGPUInfo> webgpu_adapters(std::string* why_none);

}  // namespace wgt
