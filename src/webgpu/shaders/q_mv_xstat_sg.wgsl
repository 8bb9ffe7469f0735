enable subgroups;
// x-stationary quantized matvec, subgroup reduction (see q_mv_xstat_common). Chosen, like
// q_mv_stream_sg, only when the device's largest subgroup is at most 32 invocations. Per
// batch: subgroupAdd of each of the RB sums, subgroup leaders store them, one barrier, then
// invocation r < RB adds the WG / subgroup_size leaders' sums of row r and stores y.
#include "q_mv_xstat_common"

fn reduce_store(acc: array<f32, RB>, buf: u32, y0: u32, n_rows: u32, lid: u32, lane: u32, sub: vec2<u32>) {
  for (var r = 0u; r < RB; r = r + 1u) {
    let t = subgroupAdd(acc[r]);
    if (sub.x == 0u) { red[buf + r * WG + lid] = t; }
  }
  workgroupBarrier();
  if (lid < n_rows) {
    let base = buf + lid * WG;
    var s = 0.0;
    for (var j = 0u; j < WG; j = j + sub.y) { s = s + red[base + j]; }
    y[y0 + lid] = s;
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) sgs: u32) {
  sweep(wid, nwg, lid, vec2<u32>(sid, sgs));
}
