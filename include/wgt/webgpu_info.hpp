// What the WebGPU runtime sees: one entry per usable adapter (for `wgt info` and diagnostics).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wgt {

struct WebGPUMemoryHeap {
  uint64_t size = 0;
  uint64_t properties = 0;  // WGPUHeapProperty bits: 1 device-local, 2 host-visible, 4 host-coherent, ...
  std::string property_names;  // e.g. "device-local|host-visible"
};

struct WebGPUInfo {
  int index = 0;  // device index: Device::webgpu(index)
  std::string name, vendor, architecture, device_description, backend, adapter_type;
  std::vector<std::string> features;                       // known feature names the adapter offers
  std::vector<std::pair<std::string, uint64_t>> limits;    // the limits that matter for compute
  std::vector<std::string> toggles;                        // device toggles: "+on" / "-off"
  uint64_t bytes_allocated = 0, bytes_in_use = 0;          // device buffer pool accounting
  std::vector<WebGPUMemoryHeap> memory_heaps;              // empty when the adapter does not report them
  uint64_t memory_heap_bytes = 0;  // DeviceBackend::memory_heap_bytes(): basis of the default budget (0 = unknown)
  std::string memory_heap_basis;   // how memory_heap_bytes was derived from the heaps
};

// Every adapter the runtime uses (creating the devices if not done yet). Empty with *why_none
// set when Dawn or a real (non-Null) adapter is missing.
std::vector<WebGPUInfo> webgpu_adapters(std::string* why_none);

}  // namespace wgt
