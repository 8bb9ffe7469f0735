// Creates the WebGPU backends (one per real adapter) and answers webgpu_adapters().
#include "webgpu/webgpu_factory.hpp"

#include "webgpu/webgpu_backend.hpp"
#include "wgt/runtime.hpp"
#include "wgt/webgpu_info.hpp"

namespace wgt {

std::vector<std::unique_ptr<DeviceBackend>> create_webgpu_backends(std::string* why_none) {
  std::vector<std::unique_ptr<DeviceBackend>> out;
  std::string why;
  webgpu::DawnInstance* inst = webgpu::DawnInstance::get(&why);
  if (!inst) {
    if (why_none) *why_none = why;
    return out;
  }
  for (size_t i = 0; i < inst->adapter_count(); ++i) {
    try {
      out.push_back(std::make_unique<webgpu::WebGPUBackend>(*inst, i, static_cast<int>(out.size())));
    } catch (const Error& e) {
      why += std::string(why.empty() ? "" : "; ") + e.what();
    }
  }
  if (out.empty() && why_none) *why_none = why.empty() ? "no WebGPU device could be created" : why;
  return out;
}

std::unique_ptr<DeviceBackend> adopt_webgpu_device(void* wgpu_instance, void* wgpu_device, int device_index) {
  std::string why;
  const webgpu::Procs* procs = webgpu::dawn_procs(&why);
  if (!procs) throw_error(ErrorKind::BackendInit, "BackendHandle::from_dawn", "Dawn is not available: " + why);
  auto dev = std::make_unique<webgpu::DawnDevice>(*procs, static_cast<webgpu::api::Instance>(wgpu_instance),
                                                  static_cast<webgpu::api::Device>(wgpu_device));
  return std::make_unique<webgpu::WebGPUBackend>(std::move(dev), device_index);
}

std::vector<WebGPUInfo> webgpu_adapters(std::string* why_none) {
  std::vector<WebGPUInfo> out;
  std::string why;
  auto lk = Runtime::get().lock();  // the pool counters change under every op
  for (int i = 0;; ++i) {
    auto* b = dynamic_cast<webgpu::WebGPUBackend*>(Runtime::get().webgpu_backend(i, i == 0 ? &why : nullptr));
    if (!b) break;
    const auto& d = b->dawn().desc();
    WebGPUInfo info;
    info.index = i;
    info.name = d.name;
    info.vendor = d.vendor;
    info.architecture = d.architecture;
    info.device_description = d.description;
    info.backend = d.backend;
    info.adapter_type = d.adapter_type;
    info.features = d.feature_names;
    info.adapter_toggles = d.adapter_toggles;
    for (const auto& c : d.matrix_configs) info.subgroup_matrix_configs.push_back(webgpu::to_string(c));
    info.limits = d.limit_list;
    info.limits.emplace_back("subgroupMinSize", d.subgroup_min);
    info.limits.emplace_back("subgroupMaxSize", d.subgroup_max);
    // not a WebGPU limit: our table by adapter name (0 = unknown), used by the matvec's wave rule
    info.limits.emplace_back("wgt:computeUnits", webgpu::known_compute_units(d.name));
    info.toggles = b->dawn().toggles();
    for (const auto& h : d.heaps) info.memory_heaps.push_back({h.size, h.properties, webgpu::heap_property_names(h.properties)});
    info.memory_heap_bytes = b->memory_heap_bytes();
    info.memory_heap_basis = d.memory_heap_basis;
    auto ps = b->pool_stats();
    info.bytes_allocated = ps.bytes_allocated;
    info.bytes_in_use = ps.bytes_in_use;
    out.push_back(std::move(info));
  }
  if (out.empty() && why_none) *why_none = why;
  return out;
}

}  // namespace wgt
