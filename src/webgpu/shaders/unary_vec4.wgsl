// Fast path of unary f32 ops on contiguous data (see binary_vec4.wgsl). Bindings: a, out, params.
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> params: Params;
#include "ew_common"

#include "ew_ops"

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;
  if (i >= params.n) { return; }
  let v = a[params.off[0] + i];
  out[params.out_off + i] = vec4<f32>(op1(v.x), op1(v.y), op1(v.z), op1(v.w));
}
