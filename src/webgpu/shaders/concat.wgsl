// Concat, one dispatch per input: copies a strided input into its slice of the output (the
// destination strides/offset already point at the slice). One invocation per element.
// Defines: EB (element bytes).
#include "index_common"

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> p: IndexParams;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = gid.x + gid.y * nwg.x * WG;
  if (e >= p.numel) { return; }
  let o = offsets(e);
  copy_elem(p.x_off + o.x, p.y_off + o.y, false);
}
