// Quantized matvec, workgroup-memory reduction (runs on any device; the subgroup variant is
// q_matvec_sg). See q_matvec_common for the work split.
#include "q_matvec_common"

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = row_group(wid, nwg);
  if (g.x >= params.m) { return; }  // uniform per workgroup
  accumulate(g.x, g.y, g.z, lid);
  for (var r = 0u; r < ROWS; r = r + 1u) { red[r * WG + lid] = acc[r]; }
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      for (var r = 0u; r < ROWS; r = r + 1u) { red[r * WG + lid] = red[r * WG + lid] + red[r * WG + lid + s]; }
    }
    workgroupBarrier();
  }
  if (lid < g.z) { y[g.x * params.n + g.y + lid] = red[lid * WG]; }
}
