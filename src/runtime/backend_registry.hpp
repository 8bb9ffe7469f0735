// The runtime's backends: the two CPU modes, and the device backends that providers create
// at the first use of a device (one per adapter).
// Device::webgpu(i) names the i-th registered device backend. Owned by the Runtime and used
// under its lock; entries are never removed (tensors and handles refer to them by index).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wgt/backend.hpp"
#include "wgt/runtime.hpp"

namespace wgt {

class BackendRegistry {
 public:
  // Creates the device backends of one kind, or none with the reason.
  using Provider = std::function<std::vector<std::unique_ptr<DeviceBackend>>(std::string* why_none)>;

  void add_cpu(CpuMode mode, std::unique_ptr<Backend> b);
  Backend& cpu(CpuMode mode) const;

  // Run at the first device lookup, in the order added.
  void add_provider(Provider p) { providers_.push_back(std::move(p)); }
  // The device backend of `index`, probing the providers first; nullptr with *why when absent.
  DeviceBackend* device(int index, std::string* why);
  // Registers a device backend made outside the providers (an adopted Dawn device) after the
  // probed ones; returns its index.
  int add_device(std::unique_ptr<DeviceBackend> b) {
    probe();
    devices_.push_back(std::move(b));
    return static_cast<int>(devices_.size()) - 1;
  }
  // The backends registered so far (no probing): for synchronize() and lookups by identity.
  const std::vector<std::unique_ptr<DeviceBackend>>& devices() const { return devices_; }

 private:
  void probe();
  std::unique_ptr<Backend> cpu_[2];
  std::vector<Provider> providers_;
  bool probed_ = false;
  std::string why_none_;
  std::vector<std::unique_ptr<DeviceBackend>> devices_;
};

}  // namespace wgt
