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
  std::vector<std::string> adapter_toggles;                // instance and adapter toggles enabled
  // The adapter's subgroup-matrix configs (tensor cores), e.g. "f16->f32 16x16x16" (M x N x K);
  // empty without the feature chromium-experimental-subgroup-matrix.
  std::vector<std::string> subgroup_matrix_configs;
  uint64_t bytes_allocated = 0, bytes_in_use = 0;          // device buffer pool accounting
  std::vector<WebGPUMemoryHeap> memory_heaps;              // empty when the adapter does not report them
  uint64_t memory_heap_bytes = 0;  // DeviceBackend::memory_heap_bytes(): basis of the default budget (0 = unknown)
  std::string memory_heap_basis;   // how memory_heap_bytes was derived from the heaps
};

// The Dawn library ("engine") the WebGPU backend loads: the npm build (bun-webgpu) or Debian's
// libwebgpu-dawn0 (shader-f16 and subgroup matrices on NVIDIA), chosen by WGT_DAWN or below.
struct WebGPUEngineInfo {
  std::string request;          // auto, npm, debian or a path
  std::string engine;           // npm, debian (system), debian (private runtime), path
  std::string library, version; // the library's path; its package version ("" if unknown)
  std::string abi;              // the webgpu.h ABI it implements (empty until loaded)
  std::string private_runtime;  // the runtime directory it runs under ("" = the system's)
  std::string error;            // why the engine cannot be used ("" = fine so far)
};
WebGPUEngineInfo webgpu_engine_info();
// Chooses the engine like WGT_DAWN (auto, npm, debian, or a path to a libwebgpu_dawn.so), before
// the first WebGPU use: InvalidArgument for an engine that is not installed, RuntimeState once
// Dawn is loaded from another library. When the engine needs its private runtime (Debian's on
// a glibc older than 2.43) the program re-starts under it with the same arguments and
// WGT_DAWN set, so call it first thing in main, before any thread or open state.
void set_dawn_engine(const std::string& engine);

// Every adapter the runtime uses (creating the devices if not done yet). Empty with *why_none
// set when Dawn or a real (non-Null) adapter is missing.
std::vector<WebGPUInfo> webgpu_adapters(std::string* why_none);

// Command batching of one WebGPU device: monotonic counters since the device was created
// (diff two snapshots). Dispatches are recorded into one command encoder and submitted when
// max_batch of them are pending, when a read or a queue write needs the device up to date,
// or at synchronize(); the host blocks in reads and synchronize(), and when the work in flight
// reaches its bounds (back-pressure: see set_webgpu_max_in_flight).
struct WebGPUBatchStats {
  uint64_t dispatches = 0;  // compute dispatches recorded
  uint64_t submits = 0;     // queue submissions: dispatch batches, plus one copy per read
  uint64_t host_waits = 0;  // times the host blocked on the device (reads, synchronize)
  uint32_t max_batch = 0;   // dispatches per submission before an automatic one
  uint32_t early_batch = 0;     // see set_webgpu_early_batch (0 = off)
  uint64_t early_submits = 0;   // batches submitted early because the device was idle
  // Work handed to the queue and not yet known to be complete (a snapshot), its bounds, and
  // the waits the bounds caused (monotonic).
  uint64_t in_flight_dispatches = 0, in_flight_bytes = 0, in_flight_entries = 0;
  uint64_t max_in_flight_dispatches = 0, max_in_flight_bytes = 0, max_in_flight_entries = 0;
  uint64_t throttle_waits = 0;
};
// Throws Unsupported when webgpu:device_index is not available.
WebGPUBatchStats webgpu_batch_stats(int device_index = 0);
// Dispatches per submission (default 256, or env WGT_WEBGPU_BATCH; 0 means 1). Larger batches
// cost fewer submissions, smaller ones start the device sooner on long programs.
void set_webgpu_max_batch(uint32_t dispatches, int device_index = 0);
// Early submission (default 8, or env WGT_WEBGPU_EARLY; 0 = off): whenever the open batch holds
// a multiple of this many dispatches and the device has finished everything submitted before
// (one non-blocking poll), the batch is submitted at once. A long program such as a model's
// decode step then keeps the device busy while the host records the rest of it, instead of
// the device waiting for the whole step to be recorded.
void set_webgpu_early_batch(uint32_t dispatches, int device_index = 0);
// Bounds of the work in flight (defaults 4096 dispatches, 256 MiB of queue writes, params and
// copies, 64 submissions or writes; 0 keeps a bound as it is). Past a bound the host waits for
// the oldest submission, with the WGT_WEBGPU_TIMEOUT_MS timeout per submission: a long queue
// on a busy device never times out, a device that stops making progress does.
void set_webgpu_max_in_flight(uint64_t dispatches, uint64_t bytes, uint32_t entries, int device_index = 0);

}  // namespace wgt
