// One Dawn device on one adapter: instance + adapter discovery, device creation with the
// adapter's full limits and useful features, toggles, the sticky error state fed by Dawn's
// callbacks, error scopes and bounded waits. The backend (webgpu_backend.*) builds on it.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu/dawn_loader.hpp"
#include "wgt/error.hpp"

namespace wgt::webgpu {

// One memory heap of the adapter (Dawn's AdapterPropertiesMemoryHeaps).
struct HeapDesc {
  uint64_t properties = 0;  // api::heap_property bits
  uint64_t size = 0;
};

// What we learned about an adapter (also what `wgt info` prints).
struct AdapterDesc {
  std::string name, vendor, architecture, description, backend, adapter_type;
  api::BackendType backend_type = api::BackendType::Undefined;
  uint32_t vendor_id = 0, device_id = 0, subgroup_min = 0, subgroup_max = 0;
  std::vector<uint32_t> feature_values;
  std::vector<std::string> feature_names;  // of the features we know by name
  std::vector<std::pair<std::string, uint64_t>> limit_list;
  // Memory heaps, when the adapter offers the feature AdapterPropertiesMemoryHeaps (empty
  // otherwise), and what we derive from them for the runtime's memory budget.
  std::vector<HeapDesc> heaps;
  uint64_t memory_heap_bytes = 0;  // 0 = unknown: the runtime uses its fixed default
  std::string memory_heap_basis;   // how memory_heap_bytes was derived (for `wgt info`)
  std::vector<MatrixConfig> matrix_configs;  // subgroup-matrix configs (empty without the feature)
  std::vector<std::string> adapter_toggles;  // instance + adapter toggles we enabled
};
// "f16->f32 16x16x16" (component -> result, M x N x K).
std::string to_string(const MatrixConfig& c);

// "device-local|host-visible|..." for a heap_property mask.
std::string heap_property_names(uint64_t properties);
// Multiprocessors (SMs / CUs) of an adapter we know by name (0 = unknown; WebGPU reports none).
uint32_t known_compute_units(const std::string& adapter_name);
// Device memory for the budget: the sum of the device-local heaps; on adapters that share
// system RAM with the host (software, integrated) half of it. Fills memory_heap_bytes/basis.
void derive_memory_heap_bytes(AdapterDesc& d);

// The process-wide Dawn instance and the real (non-Null) adapters it offers, in order:
// high-performance first, then low-power, de-duplicated.
class DawnInstance {
 public:
  // nullptr with *why when Dawn or a real adapter is missing.
  static DawnInstance* get(std::string* why);
  const Procs& procs() const { return *procs_; }
  api::Instance handle() const { return instance_; }
  size_t adapter_count() const { return adapters_.size(); }
  api::Adapter adapter(size_t i) const { return adapters_[i].first; }
  const AdapterDesc& desc(size_t i) const { return adapters_[i].second; }

  // Waits for one future with the configured timeout; throws RuntimeState on timeout/error.
  void wait(api::Future f, const char* what) const;
  static uint64_t timeout_ms();  // env WGT_WEBGPU_TIMEOUT_MS, default 60000

 private:
  DawnInstance() = default;
  bool init(std::string* why);
  const Procs* procs_ = nullptr;
  api::Instance instance_ = nullptr;
  std::vector<std::pair<api::Adapter, AdapterDesc>> adapters_;
};

// Waits for one future of `instance` with the configured timeout; throws RuntimeState on
// timeout or error.
void wait_future(const Procs& p, api::Instance instance, api::Future f, const char* what);
// What an adapter reports (info, features, limits, heaps), without the toggles we enable.
AdapterDesc describe_adapter(const Procs& p, api::Instance instance, api::Adapter a);

// A device with its queue and sticky error state: one we create on an adapter of the
// process-wide instance, or one created by the caller with the same Dawn library and adopted.
class DawnDevice {
 public:
  DawnDevice(DawnInstance& inst, size_t adapter_index);  // throws RuntimeState on failure
  // Adopts the caller's device of `instance`: takes a reference to each (released in the
  // destructor, which never destroys the device), reads the features and limits the device
  // was created with and its adapter's description. Its lost / uncaptured-error callbacks are
  // the caller's, so errors surface through error scopes only. The instance must have been
  // created with TimedWaitAny (every wait here has a timeout).
  DawnDevice(const Procs& procs, api::Instance instance, api::Device device);
  ~DawnDevice();
  DawnDevice(const DawnDevice&) = delete;
  DawnDevice& operator=(const DawnDevice&) = delete;

  const Procs& p() const { return *procs_; }
  api::Instance instance_handle() const { return instance_; }
  // Waits for one future of the device's instance (wait_future).
  void wait(api::Future f, const char* what) const;
  api::Device handle() const { return device_; }
  api::Queue queue() const { return queue_; }
  const AdapterDesc& desc() const { return desc_; }
  bool adopted() const { return adopted_; }
  const Features& features() const { return features_; }
  const Limits& limits() const { return limits_; }
  // Tests shrink a limit to make the backend's checks refuse a call (restore it after).
  Limits& limits_for_testing() { return limits_; }
  const std::vector<std::string>& toggles() const { return toggles_; }
  bool validation() const { return validate_; }

  // Raises the sticky error (device lost / uncaptured error) as a typed wgt::Error.
  void check(const char* op);
  // Error scope around creation calls: push, then pop returning "" or the error message.
  void push_scope(api::ErrorFilter f) const;
  std::string pop_scope(api::ErrorType* type = nullptr) const;

 private:
  static void on_lost(const api::Device*, api::DeviceLostReason, api::StringView, void*, void*);
  static void on_error(const api::Device*, api::ErrorType, api::StringView, void*, void*);
  void query_device();
  const Procs* procs_;
  api::Instance instance_;
  AdapterDesc desc_;
  bool adopted_ = false;
  api::Device device_ = nullptr;
  api::Queue queue_ = nullptr;
  Features features_;
  Limits limits_;
  std::vector<std::string> toggles_;
  bool validate_ = false;
  bool destroying_ = false;
  std::mutex err_mu_;
  std::string sticky_;
  ErrorKind sticky_kind_ = ErrorKind::RuntimeState;
};

std::string to_string(api::StringView s);

}  // namespace wgt::webgpu
