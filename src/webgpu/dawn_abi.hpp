// The values of the WebGPU C ABI that differ between the two Dawn engines we load, as one
// table per ABI: the npm build (bun-webgpu-linux-x64 0.1.7, a 2025 Dawn) and the standard
// webgpu.h of 2026 that Debian's libwebgpu-dawn0 implements. Everything not in the table
// (struct layouts, the other enums) is the same in both and lives in wgpu_api.hpp.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace wgt::webgpu {

enum class DawnAbiKind {
  Npm2025,       // instance capabilities struct; features numbered DepthClipControl = 1
  Standard2026,  // InstanceDescriptor.requiredFeatures; CoreFeaturesAndLimits = 1
};

struct FeatureName {
  uint32_t value;
  const char* name;
};

struct DawnAbi {
  DawnAbiKind kind;
  const char* name;  // for `wgt info`
  // WGPUFeatureName values.
  uint32_t timestamp_query, shader_f16, subgroups;
  uint32_t buffer_map_extended_usages, adapter_properties_memory_heaps, subgroup_matrix;
  // WGPUSType of AdapterPropertiesSubgroupMatrixConfigs; 0 where it is not known (npm build:
  // its GetInfo refuses the configs on every adapter we have, so nothing could verify it).
  uint32_t stype_subgroup_matrix_configs;
  // Standard2026: instance features go in InstanceDescriptor.requiredFeatures (TimedWaitAny);
  // Npm2025: InstanceDescriptor.capabilities.timedWaitAnyEnable.
  bool instance_required_features;
  std::span<const FeatureName> feature_names;  // the features `wgt info` names
  const char* feature_name(uint32_t value) const;  // nullptr when not in feature_names
};

const DawnAbi& dawn_abi(DawnAbiKind kind);

// Which ABI a library implements, told by the entry points it exports (has_symbol("wgpuX")):
// the standard 2026 header renamed wgpuGetInstanceCapabilities to wgpuGetInstanceFeatures /
// wgpuGetInstanceLimits. False with *why when it exports neither (not a Dawn we know).
template <class HasSymbol>
bool detect_dawn_abi(HasSymbol has_symbol, DawnAbiKind* out, std::string* why) {
  const bool std26 = has_symbol("wgpuGetInstanceFeatures") && has_symbol("wgpuGetInstanceLimits");
  const bool npm25 = has_symbol("wgpuGetInstanceCapabilities");
  if (std26 == npm25) {
    *why = std26 ? "exports both the 2025 and the 2026 instance entry points"
                 : "exports neither wgpuGetInstanceCapabilities (2025 webgpu.h) nor wgpuGetInstanceFeatures (2026)";
    return false;
  }
  *out = std26 ? DawnAbiKind::Standard2026 : DawnAbiKind::Npm2025;
  return true;
}

// The component type of a subgroup-matrix config (WGPUSubgroupMatrixComponentType, the same
// in both headers): "f32", "f16", "u32", "i32", "u8", "i8", else "type<N>".
std::string subgroup_matrix_component_name(uint32_t t);

}  // namespace wgt::webgpu
