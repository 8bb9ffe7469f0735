// Shared by the kernel-plan tests (plans make no Dawn call, so no GPU is needed): adapter
// capabilities as plain structs (one like the H200's, WebGPU's defaults), and the check that a
// plan's shader variant preprocesses cleanly.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "webgpu/plans/plan.hpp"
#include "webgpu/shader_registry.hpp"

namespace wgt::webgpu::test {

struct Adapter {
  Features f;
  Limits l;
  Caps caps() const { return {f, l}; }
};
// Subgroups of 32 (one fixed size), shader-f16, packed dot products, 48 KiB of workgroup
// memory, 1024 invocations: like the H200's.
inline Adapter big_gpu() {
  Adapter a;
  a.f.shader_f16 = a.f.subgroups = a.f.packed_dot = true;
  a.l.max_buffer_size = a.l.max_storage_buffer_binding_size = uint64_t{1} << 32;
  a.l.max_compute_invocations_per_workgroup = a.l.max_compute_workgroup_size_x = 1024;
  a.l.max_compute_workgroup_storage_size = 49152;
  a.l.max_storage_buffers_per_shader_stage = 10;
  a.l.subgroup_min_size = a.l.subgroup_max_size = 32;
  return a;
}
// WebGPU's defaults: no optional feature, 16 KiB of workgroup memory, 256 invocations.
inline Adapter webgpu_defaults() {
  Adapter a;
  a.l.max_buffer_size = a.l.max_storage_buffer_binding_size = uint64_t{1} << 27;
  return a;
}

// The WGSL of a plan's variant expands: no directive line and no placeholder left.
inline void expect_variant_expands(const ShaderVariant& v, const std::string& what = {}) {
  const std::string label = what.empty() ? v.key() : what;
  std::string src;
  ASSERT_NO_THROW(src = expand_shader(v.shader, v.defines)) << label;
  EXPECT_EQ(src.find("{{"), std::string::npos) << label;
  for (size_t b = 0; b < src.size();) {
    size_t e = src.find('\n', b);
    if (e == std::string::npos) e = src.size();
    const size_t p = src.find_first_not_of(" \t", b);
    EXPECT_FALSE(p < e && src[p] == '#') << label << ": " << src.substr(b, e - b);
    b = e + 1;
  }
}

}  // namespace wgt::webgpu::test
