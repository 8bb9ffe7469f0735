enable subgroups;
// Quantized matvec, subgroup reduction (devices with the `subgroups` feature): subgroupAdd
// sums each row inside a subgroup, then one barrier and a short pass over the subgroup
// partials replace the log2(WG) barriers of the workgroup tree (q_matvec).
// Subgroup leaders store their sum in their own slot and the others store 0, so nothing
// assumes how invocations map to subgroups.
#include "q_matvec_common"

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32) {
  let g = row_group(wid, nwg);
  if (g.x >= params.m) { return; }  // uniform per workgroup
  accumulate(g.x, g.y, g.z, lid);
  for (var r = 0u; r < ROWS; r = r + 1u) {
    let s = subgroupAdd(acc[r]);
    red[r * WG + lid] = select(0.0, s, sid == 0u);
  }
  workgroupBarrier();
  if (lid < g.z) {
    var t = 0.0;
    for (var i = 0u; i < WG; i = i + 1u) { t = t + red[lid * WG + i]; }
    y[g.x * params.n + g.y + lid] = t;
  }
}
