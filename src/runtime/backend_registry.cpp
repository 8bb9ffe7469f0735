// BackendRegistry: CPU backends by mode, device backends by index (providers probed once).
#include "runtime/backend_registry.hpp"

namespace wgt {

void BackendRegistry::add_cpu(CpuMode mode, std::unique_ptr<Backend> b) { cpu_[mode == CpuMode::Fast] = std::move(b); }

Backend& BackendRegistry::cpu(CpuMode mode) const { return *cpu_[mode == CpuMode::Fast]; }

void BackendRegistry::probe() {
  if (probed_) return;
  probed_ = true;
  for (const Provider& p : providers_) {
    std::string why;
    auto made = p(&why);
    if (made.empty() && !why.empty()) why_none_ += (why_none_.empty() ? "" : "; ") + why;
    for (auto& b : made) devices_.push_back(std::move(b));
  }
}

DeviceBackend* BackendRegistry::device(int index, std::string* why) {
  probe();
  if (index >= 0 && index < static_cast<int>(devices_.size())) return devices_[index].get();
  if (why) {
    *why = devices_.empty() ? (why_none_.empty() ? "no device backend is available" : why_none_)
                            : "adapter index " + std::to_string(index) + " not present (" +
                                  std::to_string(devices_.size()) + " adapter(s))";
  }
  return nullptr;
}

}  // namespace wgt
