enable subgroups;
// x-stationary quantized matvec, subgroup reduction (see q_mv_xstat_common). Chosen, like
// q_mv_stream_sg, only when the device's largest subgroup is at most 32 invocations. Per
// batch: subgroupAdd of each of the RB sums, subgroup leaders store them, one barrier, then
// invocation r < RB adds the WG / subgroup_size leaders' sums of row r and stores y.
#include "q_mv_xstat_common"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) sgs: u32) {
  let g = row_group(wid, nwg);
  if (g.x >= params.m) { return; }  // uniform per workgroup
  let warp = lid / LANES;
  let lane = lid % LANES;
  var xs = load_xs(g.x, warp, lane);
  let end = min(g.y + GROUP_ROWS, params.n);  // this workgroup's rows: g.y .. end - 1
  for (var i = 0u; i < NBATCH; i = i + 1u) {
    let n0 = g.y + i * RB;
    if (n0 >= end) { break; }  // uniform per workgroup
    let acc = batch_partials(&xs, n0, end - 1u, warp, lane);
    let buf = (i % 2u) * RB * WG;
    for (var r = 0u; r < RB; r = r + 1u) {
      let t = subgroupAdd(acc[r]);
      if (sid == 0u) { red[buf + r * WG + lid] = t; }
    }
    workgroupBarrier();
    if (lid < RB && n0 + lid < end) {
      let base = buf + lid * WG;
      var s = 0.0;
      for (var j = 0u; j < WG; j = j + sgs) { s = s + red[base + j]; }
      y[g.x * params.n + n0 + lid] = s;
    }
  }
}
