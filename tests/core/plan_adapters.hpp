// Adapter capabilities for the kernel-plan tests (plans make no Dawn call, so the capabilities
// are plain structs): one like the H200's and WebGPU's defaults.
#pragma once
#include <cstdint>

#include "webgpu/plans/plan.hpp"

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

}  // namespace wgt::webgpu::test
