// The two ABI tables (see dawn_abi.hpp). Npm2025 values were found on the npm build (docs/
// webgpu.md: the probe and Dawn's error messages naming values); Standard2026 values are those
// of Debian's libwebgpu-dawn-dev 0.0~git20260909.1a75cb7f-1 header dawn/webgpu.h, checked
// against it by tests/core/test_dawn_abi.cpp whenever the header is present.
#include "webgpu/dawn_abi.hpp"

namespace wgt::webgpu {

namespace {

constexpr FeatureName kNpmNames[] = {
    {0x01, "depth-clip-control"},
    {0x02, "depth32float-stencil8"},
    {0x03, "timestamp-query"},
    {0x04, "texture-compression-bc"},
    {0x09, "indirect-first-instance"},
    {0x0A, "shader-f16"},
    {0x0D, "float32-filterable"},
    {0x11, "subgroups"},
    {0x12, "core-features-and-limits"},
    {0x50014, "buffer-map-extended-usages"},
    {0x50015, "adapter-properties-memory-heaps"},
    {0x50037, "chromium-experimental-subgroup-matrix"},
};

// WGPUFeatureName_* of the 2026 header.
constexpr FeatureName kStdNames[] = {
    {0x01, "core-features-and-limits"},
    {0x02, "depth-clip-control"},
    {0x03, "depth32float-stencil8"},
    {0x04, "texture-compression-bc"},
    {0x09, "timestamp-query"},
    {0x0A, "indirect-first-instance"},
    {0x0B, "shader-f16"},
    {0x0E, "float32-filterable"},
    {0x12, "subgroups"},
    {0x17, "subgroup-size-control"},
    {0x50013, "buffer-map-extended-usages"},
    {0x50014, "adapter-properties-memory-heaps"},
    {0x50034, "chromium-experimental-subgroup-matrix"},
};

constexpr DawnAbi kNpm{DawnAbiKind::Npm2025,
                       "webgpu.h 2025 (bun-webgpu build)",
                       /*timestamp_query*/ 0x03,
                       /*shader_f16*/ 0x0A,
                       /*subgroups*/ 0x11,
                       /*buffer_map_extended_usages*/ 0x50014,
                       /*adapter_properties_memory_heaps*/ 0x50015,
                       // Not verifiable on this build (no adapter offers it); Dawn's list order.
                       /*subgroup_matrix*/ 0x50037,
                       /*stype_subgroup_matrix_configs*/ 0,
                       /*instance_required_features*/ false,
                       kNpmNames};

constexpr DawnAbi kStd{DawnAbiKind::Standard2026,
                       "webgpu.h 2026 (standard)",
                       /*timestamp_query*/ 0x09,
                       /*shader_f16*/ 0x0B,
                       /*subgroups*/ 0x12,
                       /*buffer_map_extended_usages*/ 0x50013,
                       /*adapter_properties_memory_heaps*/ 0x50014,
                       /*subgroup_matrix*/ 0x50034,
                       /*stype_subgroup_matrix_configs*/ 0x5003B,
                       /*instance_required_features*/ true,
                       kStdNames};

}  // namespace

const char* DawnAbi::feature_name(uint32_t value) const {
  for (const FeatureName& f : feature_names)
    if (f.value == value) return f.name;
  return nullptr;
}

const DawnAbi& dawn_abi(DawnAbiKind kind) { return kind == DawnAbiKind::Npm2025 ? kNpm : kStd; }

std::string subgroup_matrix_component_name(uint32_t t) {
  switch (t) {
    case 1: return "f32";
    case 2: return "f16";
    case 3: return "u32";
    case 4: return "i32";
    case 5: return "u8";
    case 6: return "i8";
    default: return "type" + std::to_string(t);
  }
}

}  // namespace wgt::webgpu
