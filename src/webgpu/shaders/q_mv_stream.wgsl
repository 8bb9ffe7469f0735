// Streaming quantized matvec, workgroup-memory reduction (any device; the subgroup variant
// is q_mv_stream_sg). See q_mv_stream_common for the work split. Each row's 32 lanes sit in
// their own 32-slot segment of `red`, so all ROWS rows reduce together in log2(32) steps.
#include "q_mv_stream_common"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = row_group(wid, nwg);
  if (g.x >= params.m) { return; }  // uniform per workgroup
  let r = lid / LANES;
  let lane = lid % LANES;
  var s = 0.0;
  if (r < g.z) { s = row_partial(g.x, g.y + r, lane); }
  red[lid] = s;
  workgroupBarrier();
  for (var h = LANES / 2u; h > 0u; h = h >> 1u) {
    if (lane < h) { red[lid] = red[lid] + red[lid + h]; }
    workgroupBarrier();
  }
  if (lane == 0u && r < g.z) { y[g.x * params.n + g.y + r] = red[lid]; }
}
