enable subgroups;
// Streaming quantized matvec, subgroup reduction. The launcher picks it only when the
// device's largest subgroup is at most 32 invocations, so that a subgroup never spans two
// weight rows: this relies on subgroups being consecutive, aligned runs of
// local_invocation_index in a 1-D workgroup, which holds on the Vulkan, D3D12 and Metal
// drivers we know of (and is covered by the lavapipe tests). subgroupAdd sums each subgroup,
// its leader stores the sum, and lane 0 of the row adds the 32 / subgroup_size leaders'
// sums (one read on a 32-wide device) after a single barrier.
#include "q_mv_stream_common"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) sgs: u32) {
  let g = row_group(wid, nwg);
  if (g.x >= params.m) { return; }  // uniform per workgroup
  let r = lid / LANES;
  let lane = lid % LANES;
  var s = 0.0;
  if (r < g.z) { s = row_partial(g.x, g.y + r, lane); }
  let t = subgroupAdd(s);
  if (sid == 0u) { red[lid] = t; }
  workgroupBarrier();
  if (lane == 0u && r < g.z) {
    var acc = 0.0;
    for (var i = 0u; i < LANES; i = i + sgs) { acc = acc + red[lid + i]; }
    y[g.x * params.n + g.y + r] = acc;
  }
}
