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
// The H200 under Debian's Dawn: f16 subgroup matrices (and the integer ones, which the plans
// ignore).
inline Adapter tensor_core_gpu() {
  Adapter a = big_gpu();
  a.f.subgroup_matrix = true;
  a.f.subgroup_matrix_configs = {{6, 4, 16, 16, 32}, {2, 1, 16, 8, 16}, {2, 1, 16, 16, 16}, {2, 2, 16, 8, 8}};
  return a;
}
// sid's Mesa 26 lavapipe: subgroups of 8, 32 KiB of workgroup memory, only 8x8x8 matrices
// (f16 -> f16, f16 -> f32, u8 -> u32, i8 -> i32).
inline Adapter lavapipe_sid() {
  Adapter a = big_gpu();
  a.l.subgroup_min_size = a.l.subgroup_max_size = 8;
  a.l.max_compute_workgroup_storage_size = 32768;
  a.f.subgroup_matrix = true;
  a.f.subgroup_matrix_configs = {{2, 2, 8, 8, 8}, {2, 1, 8, 8, 8}, {5, 3, 8, 8, 8}, {6, 4, 8, 8, 8}};
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
